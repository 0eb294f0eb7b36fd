// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_load.c - `blitz load <ifname> ...`: attach the xdp engine and exit;
 * the program keeps serving from the driver.
 *
 * Owns: load's command line. Leaves attaching, pinning and undoing a
 * failed attempt to loader.c; must never leave anything behind on error.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "loader.h"
#include "log.h"
#include "tc_handoff.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blitz load <ifname> [options]\n"
		"Attach blitz's XDP program to <ifname> and exit; it keeps "
		"answering HTTP\nin the driver until `blitz unload "
		"<ifname>`.\n\n"
		"  -m, --mode native|skb    XDP mode (default: native, else "
		"skb)\n"
		"  -p, --port PORT          TCP port to serve (default %d)\n"
		"  -a, --addr ADDR          serve only this IPv4/IPv6 address "
		"(repeatable,\n"
		"                           up to %d of each; default: every "
		"address)\n"
		"      --body TEXT          response body (default \"Hello "
		"World!\")\n"
		"      --body-file FILE     response body read from FILE\n"
		"      --secret-file FILE   cookie key: 32 hex digits in a "
		"file "
		"owned by root,\n"
		"                           mode 600; one file for every host "
		"of "
		"a fleet\n"
		"                           (default: a random key each load)\n"
		"      --content-type TYPE  Content-Type (default text/plain)\n"
		"      --mac MAC            frames to MAC are ours too (VRRP, "
		"bond; up to %d)\n"
		"  -v, --verbose            show libbpf/libxdp messages\n"
		"  -h, --help               this text\n"
		"      --version            print the version\n",
		BLITZ_DEFAULT_PORT, BLITZ_MAX_ADDRS, BLITZ_MAX_MACS - 1);
}

/* load's own option code, clear of cli.h's. */
#define OPT_LOAD_MAC 0x200

/* --mac aa:bb:cc:dd:ee:ff: one more destination MAC that is ours. */
static int parse_mac(struct blitz_loader_opts *lo, const char *arg)
{
	unsigned int b[6];
	char end;
	int i;

	if (sscanf(arg, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) != 6 ||
	    b[0] > 255 || b[1] > 255 || b[2] > 255 || b[3] > 255 ||
	    b[4] > 255 || b[5] > 255 || (b[0] & 1)) {
		pr_warn("bad --mac '%s': use a unicast MAC like "
			"00:00:5e:00:01:07\n",
			arg);
		return -1;
	}
	if (lo->n_macs >= BLITZ_MAX_MACS - 1) {
		pr_warn("too many --mac: at most %d\n", BLITZ_MAX_MACS - 1);
		return -1;
	}
	for (i = 0; i < 6; i++)
		lo->macs[lo->n_macs][i] = (unsigned char)b[i];
	lo->n_macs++;
	return 0;
}

int cmd_load(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"mac", required_argument, NULL, OPT_LOAD_MAC},
		BLITZ_COMMON_LONGOPTS,
		BLITZ_SERVICE_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct blitz_loader_opts lo = {.engine = BLITZ_MODE_XDP,
				       .persist = true};
	struct blitz_service_opts svc;
	struct blitz_loaded *l = NULL;
	struct tc_handoff *h = NULL;
	int opt, ret = 1, r;

	service_opts_init(&svc);
	cli_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":m:p:a:vh", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case OPT_LOAD_MAC:
			if (parse_mac(&lo, optarg))
				goto out;
			break;
		case 'm':
			if (!strcmp(optarg, "native")) {
				lo.xdp_mode = BLITZ_XDP_NATIVE;
			} else if (!strcmp(optarg, "skb")) {
				lo.xdp_mode = BLITZ_XDP_SKB;
			} else {
				pr_warn("bad mode '%s': use native or skb\n",
					optarg);
				goto out;
			}
			break;
		default:
			r = service_opt_parse(&svc, opt, optarg);
			if (r < 0)
				goto out;
			if (r > 0)
				break;
			r = cli_common_opt("load", opt, argv, usage);
			if (r != CLI_CONTINUE) {
				ret = r;
				goto out;
			}
			break;
		}
	}
	/* load's own line for a missing <ifname>: it names the options. */
	if (optind >= argc) {
		pr_warn("missing <ifname>: blitz load <ifname> [options]\n");
		goto out;
	}
	if (cli_operands("load", argc, argv, 1, 1, "<ifname>"))
		goto out;
	lo.ifname = argv[optind];
	if (service_opts_finish(&svc))
		goto out;
	lo.svc = &svc;
	blitz_log_quiet_libs();

	if (blitz_loader_attach(&lo, &l))
		goto out;
	/*
	 * What XDP does not answer goes to the kernel on the same
	 * connection through the TC hand-off, where the kernel can take it.
	 */
	if (!tc_handoff_supported()) {
		pr_info("blitz: this kernel cannot hand connections over to "
			"its TCP stack (no bpf_sk_assign_tcp_reqsk): requests "
			"XDP does not answer get no reply\n");
	} else if (tc_handoff_attach(lo.ifname, blitz_ifindex(lo.ifname),
				     blitz_loaded_config_fd(l),
				     blitz_loaded_counters_fd(l), true, &h)) {
		blitz_loader_detach(l); /* nothing half-attached */
		goto out;
	}
	printf("blitz: serving http on %s port %u (xdp, %s mode, prog id %u)\n",
	       lo.ifname, svc.port, blitz_loaded_mode(l),
	       blitz_loaded_prog_id(l));
	/*
	 * Only free our handles: libxdp's attachment and the pins keep the
	 * program and its maps alive after we exit.
	 */
	tc_handoff_release(h);
	blitz_loaded_release(l);
	ret = 0;
out:
	service_opts_free(&svc);
	return ret;
}
