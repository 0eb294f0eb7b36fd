// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_reload.c - `blitz reload <ifname> [options]` (and `blitz load
 * <ifname> --replace`, or `load --secret-file` where blitz is loaded):
 * change what a loaded xdp engine serves, or its key, or its program
 * build, while it keeps answering every connection.
 *
 * The new configuration goes into new maps read by a new instance of the
 * programs, switched in atomically (loader.c, blitz_loader_reload): a
 * running program never reads a configuration half-written. Options not
 * given keep their loaded values; the port cannot change (a new port
 * moves the service: its connections would end).
 *
 * Owns: reload's command line and how the new configuration is made from
 * the loaded one. Must never change anything before every argument has
 * been checked: a bad argument leaves the loaded state as it was.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "blitz_cookie2.h"
#include "cli.h"
#include "http.h"
#include "kernel_listener.h"
#include "loader.h"
#include "log.h"
#include "secret_file.h"

#define OPT_RELOAD_MAC OPT_CMD_BASE
#define OPT_RELOAD_ACCEPT_KEY (OPT_CMD_BASE + 1)

/* The test knob of the cookie clock (docs/cookie-v2.md, clock skew). */
#define CLOCK_OFFSET_ENV "BLITZ_TEST_COOKIE_CLOCK_OFFSET_NS"

static const struct opt_spec reload_opts[] = {
	{OPT_RELOAD_ACCEPT_KEY, "accept-key", "FILE",
	 "also accept cookies of the key in FILE without minting with it: a "
	 "fleet's next key, staged on every host before any host's "
	 "--secret-file makes it current",
	 0, 0},
	{OPT_RELOAD_MAC, "mac", "MAC",
	 "frames to MAC are ours too, replacing the loaded list (up to %d)",
	 BLITZ_MAX_MACS - 1, OPT_REPEAT},
	{'p', "port", "PORT",
	 "the loaded port, accepted and kept (default: it); another is "
	 "refused: a new port moves the service (unload, then load)",
	 0, 0},
	{0},
};

const struct cmd_spec cmd_reload_spec = {
	.name = "reload",
	.operands = "<ifname>",
	.summary = "change a loaded engine's body, key or program; no "
		   "connection breaks",
	.about = "Change what `blitz load` left on <ifname>: the body, its "
		 "content type, the addresses, the MACs, the cookie key "
		 "(--secret-file: the old key stays accepted for 142 s), or "
		 "the program itself (this build's). The new configuration "
		 "goes into new maps read by new program instances, which "
		 "replace the running ones atomically; connections carry on. "
		 "An option not given keeps its loaded value; the port cannot "
		 "change (a new port moves the service: unload, then load). "
		 "`blitz load <ifname> --replace` is the same.",
	/* The service options after -p (options_service's first row), whose
	 * "default 80" would be wrong here: reload_opts says what -p does. */
	.groups = {reload_opts, options_service + 1, options_common},
};

void reload_args_init(struct reload_args *a)
{
	memset(a, 0, sizeof(*a));
	service_init(&a->svc);
}

void reload_args_free(struct reload_args *a)
{
	service_free(&a->svc);
	explicit_bzero(a->accept_key, sizeof(a->accept_key));
}

int reload_service_opt(struct reload_args *a, int opt, const char *arg)
{
	int r = options_service_apply(&a->svc, opt, arg);

	if (r <= 0)
		return r;
	switch (opt) {
	case 'p':
		a->port_set = true;
		break;
	case 'a':
		a->addr_set = true;
		break;
	case OPT_BODY:
	case OPT_BODY_FILE:
		a->body_set = true;
		break;
	case OPT_CONTENT_TYPE:
		a->ctype_set = true;
		break;
	default:
		break;
	}
	return 1;
}

/*
 * The body and content type of a loaded GET template (http.c's layout:
 * "Content-Type: X\r\n" among the headers, the body after the blank
 * line). 0, or -1 when the template is not one of ours.
 */
static int template_parts(const struct blitz_resp *r, __u16 len, char *ctype,
			  size_t ctype_len, const char **body, size_t *body_len)
{
	static const char ct[] = "\r\nContent-Type: ";
	const char *p = (const char *)r->bytes, *end, *c, *ce;

	if (len > BLITZ_RESP_MAX)
		return -1;
	end = memmem(p, len, "\r\n\r\n", 4);
	c = end ? memmem(p, (size_t)(end - p), ct, sizeof(ct) - 1) : NULL;
	if (!c)
		return -1;
	c += sizeof(ct) - 1;
	ce = memmem(c, (size_t)(end + 2 - c), "\r\n", 2);
	if (!ce || (size_t)(ce - c) >= ctype_len)
		return -1;
	memcpy(ctype, c, (size_t)(ce - c));
	ctype[ce - c] = '\0';
	*body = end + 4;
	*body_len = (size_t)(p + len - *body);
	return 0;
}

static uint64_t now_unix_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void add_change(char *buf, size_t len, const char *what)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%s%s", n ? ", " : "", what);
}

/* A key option refused while the previous key is still accepted: how
 * long, and what to do (then). */
static void prev_key_busy(const struct reload_args *a,
			  const struct blitz_config *c, uint64_t now,
			  const char *then)
{
	pr_warn("%s: the previous key is still accepted for %llu s "
		"(connections may use it): %s\n",
		a->ifname,
		(unsigned long long)((c->prev_accept_unix_ns - now) /
				     1000000000ULL),
		then);
}

/* The key options: rotate to svc's key and/or stage the accept key. 0,
 * or -1 with a line printed; same set when the current key was given. */
static int apply_keys(const struct reload_args *a, struct blitz_config *c,
		      char *changes, size_t clen, bool *same)
{
	uint64_t now = now_unix_ns();
	int r;

	*same = false;
	if (a->svc.has_secret && a->has_accept) {
		pr_warn("give --secret-file or --accept-key, not both: stage "
			"the next key on every host first, then make it "
			"current with --secret-file\n");
		return -1;
	}
	if (a->svc.has_secret) {
		r = blitz_config_rotate_key(c, a->svc.secret, now);
		if (r == -EBUSY) {
			prev_key_busy(a, c, now,
				      "rotate again after that, or stage this "
				      "key with --accept-key");
			return -1;
		}
		if (r == 1)
			*same = true;
		else
			add_change(changes, clen,
				   "key (the previous one accepted 142 s "
				   "more)");
	}
	if (a->has_accept) {
		r = blitz_config_stage_key(c, a->accept_key, now);
		if (r == -EEXIST) {
			pr_warn("%s: the --accept-key key is the current key "
				"already\n",
				a->ifname);
			return -1;
		}
		if (r == -EBUSY) {
			prev_key_busy(a, c, now,
				      "stage the next key after that");
			return -1;
		}
		if (r == 0)
			add_change(changes, clen,
				   "next key staged (accepted, not minted)");
	}
	return 0;
}

/* The responses of the new configuration into cfg and resp. */
static int apply_body(struct reload_args *a,
		      const struct blitz_loaded_state *st,
		      struct blitz_config *cfg, struct blitz_resp *resp,
		      char *changes, size_t clen)
{
	static struct http_responses r;
	static char ctype[256];
	const char *body = NULL;
	size_t body_len = 0;
	char err[160] = "";
	int ok;

	ok = !template_parts(&st->resp[BLITZ_RESP_GET_KA],
			     st->cfg.resp[BLITZ_RESP_GET_KA].len, ctype,
			     sizeof(ctype), &body, &body_len);
	if (!ok && !(a->body_set && a->ctype_set)) {
		if (a->body_set || a->ctype_set) {
			pr_warn("%s: cannot read the loaded body and content "
				"type back: give both --body (or --body-file) "
				"and --content-type\n",
				a->ifname);
			return -1;
		}
		/* Keep the loaded bytes as they are (their Date is kept
		 * current by the program). */
		memcpy(resp, st->resp, sizeof(st->resp));
		return 0;
	}
	if (a->body_set) {
		body = a->svc.body;
		body_len = a->svc.body_len;
		add_change(changes, clen, "body");
	}
	if (a->ctype_set) {
		snprintf(ctype, sizeof(ctype), "%s", a->svc.content_type);
		add_change(changes, clen, "content type");
	}
	if (http_responses_build(&r, body, body_len, ctype, time(NULL), err,
				 sizeof(err))) {
		pr_warn("%s\n", err[0] ? err : "cannot build the responses");
		return -1;
	}
	return blitz_loader_templates(&r, st->mss, st->mtu, cfg, resp) ? -1 : 0;
}

static int apply_addrs(const struct reload_args *a, struct blitz_config *c,
		       char *changes, size_t clen)
{
	const struct blitz_service *svc = &a->svc;
	int i;

	if (a->port_set && htons(svc->port) != c->port_be) {
		pr_warn("%s serves port %u: a reload keeps the port (a new one "
			"moves the service and ends its connections): `blitz "
			"unload %s`, then `blitz load %s -p %u`\n",
			a->ifname, ntohs(c->port_be), a->ifname, a->ifname,
			svc->port);
		return -1;
	}
	if (a->addr_set) {
		if (service_xdp_addrs_ok(svc))
			return -1;
		c->n_addr4 = (__u32)svc->n_addr4;
		c->n_addr6 = (__u32)svc->n_addr6;
		memset(c->addr4_be, 0, sizeof(c->addr4_be));
		memset(c->addr6_be, 0, sizeof(c->addr6_be));
		for (i = 0; i < svc->n_addr4; i++)
			c->addr4_be[i] = svc->addr4[i].s_addr;
		for (i = 0; i < svc->n_addr6; i++)
			memcpy(c->addr6_be[i], &svc->addr6[i], 16);
		add_change(changes, clen, "addresses");
	}
	if (a->n_macs) {
		/* [0] is the interface's own (when it has one). */
		c->n_macs = c->n_macs ? 1 : 0;
		for (i = 0; i < a->n_macs && c->n_macs < BLITZ_MAX_MACS; i++)
			c->macs[c->n_macs++] = blitz_mac_u64(a->macs[i]);
		add_change(changes, clen, "MACs");
	}
	return 0;
}

/* The test-only cookie clock offset (0 unless the variable is set). */
static int clock_offset(const char *ifname, __s64 *adj)
{
	const char *v = getenv(CLOCK_OFFSET_ENV);
	char *end;

	*adj = 0;
	if (!v || !*v)
		return 0;
	errno = 0;
	*adj = strtoll(v, &end, 10);
	if (errno || *end) {
		pr_warn("bad %s '%s': a number of nanoseconds\n",
			CLOCK_OFFSET_ENV, v);
		return -1;
	}
	pr_info("blitz: %s: test knob %s: the cookie clock runs %lld ns off "
		"(never in service)\n",
		ifname, CLOCK_OFFSET_ENV, (long long)*adj);
	return 0;
}

int blitz_reload(struct reload_args *a)
{
	struct blitz_loaded_state *st;
	struct blitz_reload_result res;
	struct blitz_config cfg;
	struct blitz_resp *resp;
	char changes[256] = "";
	bool same_key = false;
	int ret = 1;

	st = calloc(1, sizeof(*st));
	resp = calloc(BLITZ_RESP_KINDS, sizeof(*resp));
	if (!st || !resp) {
		pr_warn("out of memory\n");
		goto out;
	}
	if (blitz_loader_loaded_state(a->ifname, st))
		goto out;
	cfg = st->cfg;
	if (apply_addrs(a, &cfg, changes, sizeof(changes)) ||
	    apply_keys(a, &cfg, changes, sizeof(changes), &same_key) ||
	    apply_body(a, st, &cfg, resp, changes, sizeof(changes)) ||
	    clock_offset(a->ifname, &cfg.cookie_clock_adj_ns))
		goto out;
	if (a->rotate_only && same_key && !changes[0]) {
		/* `load --secret-file` with the key already in use. */
		printf("blitz: %s already uses this key: nothing to rotate\n",
		       a->ifname);
		ret = 0;
		goto out;
	}
	cfg.mss = st->mss;
	cfg.tai_to_unix_ns = blitz_tai_to_unix_ns();
	if (blitz_loader_reload(a->ifname, st, &cfg, resp, &res))
		goto out;
	if (strstr(changes, "key ("))
		printf("blitz: %s: new cookie key; the previous one is "
		       "accepted for %llu s more (its connections carry on), "
		       "then answered with RST\n",
		       a->ifname,
		       (unsigned long long)((2 * BLITZ_CK2_EPOCH_NS +
					     2 * BLITZ_CK2_SKEW_NS) /
					    1000000000ULL));
	printf("blitz: reloaded %s: prog id %u -> %u, hand-off %u -> %u; %s%s; "
	       "%d state maps kept%s%s\n",
	       a->ifname, res.old_prog_id, res.new_prog_id, res.old_tc_id,
	       res.new_tc_id, changes[0] ? "changed: " : "",
	       changes[0] ? changes
			  : "same configuration, this build's program",
	       res.maps_kept, res.fresh[0] ? ", new (layout changed): " : "",
	       res.fresh);
	if (strstr(res.fresh, "counters"))
		printf("blitz: %s: the counters map had another layout (an "
		       "older blitz's): its counters start again from 0\n",
		       a->ifname);
	{
		char why[320];

		kernel_listener_line(ntohs(cfg.port_be), true, why,
				     sizeof(why));
		printf("blitz: %s\n", why);
	}
	ret = 0;
out:
	if (st)
		explicit_bzero(st, sizeof(*st));
	explicit_bzero(&cfg, sizeof(cfg));
	free(st);
	free(resp);
	return ret;
}

/* One of reload's options into ctx (struct reload_args): cli_parse_opts. */
static int reload_opt(int opt, char *arg, void *ctx)
{
	struct reload_args *a = ctx;

	switch (opt) {
	case OPT_RELOAD_MAC:
		return cli_parse_mac(a->macs, &a->n_macs, arg) ? -1 : 1;
	case OPT_RELOAD_ACCEPT_KEY:
		if (blitz_secret_file_read(arg, a->accept_key))
			return -1;
		a->has_accept = true;
		return 1;
	default:
		return reload_service_opt(a, opt, arg);
	}
}

int cmd_reload(int argc, char **argv)
{
	struct reload_args a;
	int ret;

	reload_args_init(&a);
	ret = cli_parse(&cmd_reload_spec, argc, argv, reload_opt, &a, 1, 1);
	if (ret == CLI_CONTINUE) {
		a.ifname = argv[optind];
		blitz_log_quiet_libs();
		ret = blitz_reload(&a);
	}
	reload_args_free(&a);
	return ret;
}
