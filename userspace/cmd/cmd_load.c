// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_load.c - `blitz load <ifname> ...`: attach the xdp engine and exit;
 * the program keeps serving from the driver.
 *
 * Owns: load's command line. Leaves attaching, pinning and undoing a
 * failed attempt to loader.c; must never leave anything behind on error.
 */
#include <getopt.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "http.h"
#include "kernel_listener.h"
#include "loader.h"
#include "log.h"
#include "tc_handoff.h"

/* load's own option codes. */
#define OPT_LOAD_MAC OPT_CMD_BASE
#define OPT_LOAD_REPLACE (OPT_CMD_BASE + 1)

static const struct opt_spec load_opts[] = {
	{'m', "mode", "native|skb", "XDP mode (default: native, else skb)", 0,
	 0},
	{OPT_LOAD_MAC, "mac", "MAC",
	 "frames to MAC are ours too (VRRP, bond; up to %d)",
	 BLITZ_MAX_MACS - 1, OPT_REPEAT},
	{OPT_LOAD_REPLACE, "replace", NULL,
	 "where blitz is loaded on <ifname> already, change it as `blitz "
	 "reload` does (options not given keep their values)",
	 0, 0},
	{0},
};

int cli_parse_mac(unsigned char (*macs)[6], int *n, const char *arg)
{
	unsigned int b[6];
	char end;
	int i;

	if (sscanf(arg, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) != 6 ||
	    b[0] > 255 || b[1] > 255 || b[2] > 255 || b[3] > 255 ||
	    b[4] > 255 || b[5] > 255 || (b[0] & 1) ||
	    !(b[0] | b[1] | b[2] | b[3] | b[4] | b[5])) {
		pr_warn("bad --mac '%s': use a unicast MAC like "
			"00:00:5e:00:01:07\n",
			arg);
		return -1;
	}
	if (*n >= BLITZ_MAX_MACS - 1) {
		pr_warn("too many --mac: at most %d\n", BLITZ_MAX_MACS - 1);
		return -1;
	}
	for (i = 0; i < 6; i++)
		macs[*n][i] = (unsigned char)b[i];
	(*n)++;
	return 0;
}

/* Is blitz's XDP program attached to ifname in this namespace? */
static bool loaded_here(const char *ifname)
{
	struct blitz_attached att;
	int idx = (int)if_nametoindex(ifname);

	return idx > 0 && !blitz_find_attached(idx, &att) && att.prog_id;
}

const struct cmd_spec cmd_load_spec = {
	.name = "load",
	.operands = "<ifname>",
	.summary = "attach the XDP engine to an interface and exit",
	.about = "Attach blitz's XDP program to <ifname> and exit; it keeps "
		 "answering HTTP in the driver until `blitz unload <ifname>`. "
		 "Where it is loaded already, --secret-file with a new key "
		 "rotates the key (as `blitz reload`).",
	.groups = {load_opts, options_service, options_common},
};

struct load_args {
	struct reload_args *ra;
	struct blitz_loader_opts *lo;
	bool replace;
};

/* One of load's options into ctx (struct load_args): cli_parse_opts. */
static int load_opt(int opt, char *arg, void *ctx)
{
	struct load_args *a = ctx;

	switch (opt) {
	case 'm':
		if (!strcmp(arg, "native")) {
			a->lo->xdp_mode = BLITZ_XDP_NATIVE;
		} else if (!strcmp(arg, "skb")) {
			a->lo->xdp_mode = BLITZ_XDP_SKB;
		} else {
			pr_warn("bad mode '%s': use native or skb\n", arg);
			return -1;
		}
		return 1;
	case OPT_LOAD_MAC:
		return cli_parse_mac(a->ra->macs, &a->ra->n_macs, arg) ? -1 : 1;
	case OPT_LOAD_REPLACE:
		a->replace = true;
		return 1;
	default:
		return reload_service_opt(a->ra, opt, arg);
	}
}

int cmd_load(int argc, char **argv)
{
	struct blitz_loader_opts lo = {.engine = BLITZ_MODE_XDP,
				       .persist = true};
	static struct http_responses resp;
	struct reload_args ra;
	struct blitz_service *svc = &ra.svc;
	struct blitz_loaded *l = NULL;
	struct tc_handoff *h = NULL;
	struct load_args a = {&ra, &lo, false};
	int ret = 1, r;

	reload_args_init(&ra);
	r = cli_parse(&cmd_load_spec, argc, argv, load_opt, &a, 1, 1);
	if (r != CLI_CONTINUE) {
		ret = r;
		goto out;
	}
	lo.ifname = argv[optind];
	blitz_log_quiet_libs();

	/* Loaded already: --replace, or a (new) --secret-file, is a reload
	 * (docs/cookie-v2.md, key rotation); what was not given is kept. */
	if ((a.replace || svc->has_secret) && loaded_here(lo.ifname)) {
		ra.ifname = lo.ifname;
		ra.rotate_only = !a.replace;
		ret = blitz_reload(&ra);
		goto out;
	}
	lo.n_macs = ra.n_macs;
	memcpy(lo.macs, ra.macs, sizeof(lo.macs));
	if (service_finish(svc) || service_responses(svc, &resp))
		goto out;
	lo.svc = svc;
	lo.resp = &resp;
	lo.hold = true; /* answering only once the hand-off is there */
	if (blitz_loader_attach(&lo, &l))
		goto out;
	/*
	 * What XDP does not answer goes to the kernel on the same
	 * connection through the TC hand-off, where the kernel can take it
	 * (the loader refused the xdp engine when it could not).
	 */
	if (tc_handoff_attach(lo.ifname, blitz_ifindex(lo.ifname),
			      blitz_loaded_config_fd(l),
			      blitz_loaded_counters_fd(l),
			      blitz_loaded_responses_fd(l),
			      blitz_loaded_flows_fd(l), true, &h)) {
		blitz_loader_detach(l); /* nothing half-attached */
		goto out;
	}
	if (blitz_loaded_arm(l)) {
		tc_handoff_detach(h);
		blitz_loader_detach(l);
		goto out;
	}
	printf("blitz: serving http on %s port %u (xdp, %s mode, prog id %u)\n",
	       lo.ifname, svc->port, blitz_loaded_mode(l),
	       blitz_loaded_prog_id(l));
	{
		char why[320];

		kernel_listener_line(svc->port, true, why, sizeof(why));
		printf("blitz: %s\n", why);
	}
	{
		char line[1400];

		cli_not_local("blitz", svc->addr4, svc->n_addr4, svc->addr6,
			      svc->n_addr6, line, sizeof(line));
		if (line[0])
			printf("%s\n", line);
	}
	/*
	 * Only free our handles: libxdp's attachment and the pins keep the
	 * program and its maps alive after we exit.
	 */
	tc_handoff_release(h);
	blitz_loaded_release(l);
	ret = 0;
out:
	reload_args_free(&ra);
	return ret;
}
