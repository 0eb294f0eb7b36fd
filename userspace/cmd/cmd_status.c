// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_status.c - `blitz status [ifname]`: one aligned row per interface
 * blitz is on, read from the pinned config map and the program attached
 * to the interface; then one row per running `blitz serve` of this
 * network namespace, read from its state file (serve_state.h), which is
 * all there is of an epoll-only or dpdk serve.
 *
 * Owns: the status tables and the stale-state hints. Read-only: must
 * never change an attachment, a pin or a state file.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "kernel_listener.h"
#include "loader.h"
#include "log.h"
#include "nic_info.h"
#include "serve_state.h"
#include "tc_handoff.h"

#define MAX_ROWS 256
#define MAX_SERVES 64

struct row {
	char ifname[IF_NAMESIZE];
	char mode[8], engine[8], handoff[8], owner[8], prog[16], port[8],
		resp[12];
	char since[24];
	char addrs[BLITZ_MAX_ADDRS * 2 * (INET6_ADDRSTRLEN + 1)];
	char note[320];
	char listen[320];    /* a kernel listener on the port or not */
	char nonlocal[1400]; /* -a addresses this namespace does not own */
	char ksock[200];     /* the kernel-socket filter (loader.h) */
	char tcpopts[320];   /* tcp_sack / tcp_window_scaling changed since */
	char csum[160];	     /* which TCP checksum forms are accepted */
	char xsk[1024];	     /* one line per AF_XDP socket on the interface */
};

const struct cmd_spec cmd_status_spec = {
	.name = "status",
	.operands = "[ifname]",
	.summary = "show where blitz is loaded",
	.about = "Show where blitz is loaded: every interface with pins "
		 "under " BLITZ_PIN_ROOT "/ or with blitz's program attached, "
		 "or just <ifname>; and every running `blitz serve`.",
	.groups = {options_common},
};

static void format_addrs(const struct blitz_config *c, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	size_t used = 0;
	__u32 i;

	out[0] = '\0';
	if (!c->n_addr4 && !c->n_addr6) {
		snprintf(out, len, "*");
		return;
	}
	for (i = 0; i < c->n_addr4 && i < BLITZ_MAX_ADDRS; i++) {
		inet_ntop(AF_INET, &c->addr4_be[i], a, sizeof(a));
		used += snprintf(out + used, len - used, "%s%s",
				 used ? "," : "", a);
	}
	for (i = 0; i < c->n_addr6 && i < BLITZ_MAX_ADDRS; i++) {
		inet_ntop(AF_INET6, c->addr6_be[i], a, sizeof(a));
		used += snprintf(out + used, len - used, "%s%s",
				 used ? "," : "", a);
	}
}

/*
 * One line per AF_XDP socket bound to ifindex, with its mode and why:
 * what the kernel reports (sock_diag's XDP_DU_F_ZEROCOPY), explained by
 * what the driver offers (its xdp-features).
 */
#define MAX_XSKS 64
static void xsk_lines(const char *ifname, int ifindex, char *out, size_t len)
{
	struct nic_xsk xs[MAX_XSKS];
	uint64_t feat = 0;
	uint32_t segs;
	bool known;
	size_t used = 0;
	int n, i;

	out[0] = '\0';
	n = nic_xsk_list(ifindex, xs, MAX_XSKS);
	if (n <= 0)
		return;
	known = !nic_xdp_features(ifindex, &feat, &segs);
	for (i = 0; i < n && i < MAX_XSKS && used < len; i++)
		used += (size_t)snprintf(
			out + used, len - used,
			"%s: AF_XDP socket on queue %u: %s\n", ifname,
			xs[i].queue,
			xs[i].zerocopy
				? "zero-copy (the driver DMAs into the UMEM)"
			: !known ? "copy mode"
			: !(feat & NIC_XDP_XSK_ZEROCOPY)
				? "copy mode (the driver offers no zero-copy "
				  "AF_XDP: the kernel copies each frame)"
				: "copy mode (the driver offers zero-copy but "
				  "the bind did not get it: see serve's log)");
}

/* What fill_row learnt about an interface, for the parts of its row. */
struct row_facts {
	struct blitz_attached a;
	enum blitz_pins_owner owner;
	struct blitz_config c; /* valid when pins */
	__u32 user;
	bool pins, here, handoff;
	int ifindex;
};

/* The table's columns. */
static void fill_columns(struct row *r, const struct row_facts *f)
{
	const struct blitz_config *c = &f->c;
	struct tm tm;
	time_t t;

	snprintf(r->mode, sizeof(r->mode), "%s", f->a.mode ? f->a.mode : "-");
	/* n/a: this kernel cannot hand a connection to its TCP stack. */
	snprintf(r->handoff, sizeof(r->handoff), "%s",
		 !tc_handoff_supported() ? "n/a"
		 : f->handoff		 ? "tc"
					 : "-");
	snprintf(r->owner, sizeof(r->owner), "%s",
		 !f->a.prog_id ? "-"
		 : f->a.link   ? "serve"
			       : "load");
	if (f->a.prog_id)
		snprintf(r->prog, sizeof(r->prog), "%u", f->a.prog_id);
	else
		snprintf(r->prog, sizeof(r->prog), "-");
	if (!f->pins) {
		snprintf(r->engine, sizeof(r->engine), "-");
		snprintf(r->port, sizeof(r->port), "-");
		snprintf(r->addrs, sizeof(r->addrs), "-");
		snprintf(r->resp, sizeof(r->resp), "-");
		snprintf(r->since, sizeof(r->since), "-");
		return;
	}
	snprintf(r->engine, sizeof(r->engine), "%s",
		 c->mode == BLITZ_MODE_AFXDP ? "afxdp" : "xdp");
	snprintf(r->port, sizeof(r->port), "%u", ntohs(c->port_be));
	format_addrs(c, r->addrs, sizeof(r->addrs));
	/* afxdp: no templates in the kernel, userspace answers. */
	if (c->resp[BLITZ_RESP_GET_KA].len)
		snprintf(r->resp, sizeof(r->resp), "%u",
			 c->resp[BLITZ_RESP_GET_KA].len);
	else
		snprintf(r->resp, sizeof(r->resp), "-");
	t = (time_t)c->loaded_unix;
	if (t && localtime_r(&t, &tm))
		strftime(r->since, sizeof(r->since), "%Y-%m-%d %H:%M:%S", &tm);
	else
		snprintf(r->since, sizeof(r->since), "-");
}

/* The lines under the table about this namespace's program: AF_XDP
 * sockets, the kernel listener, the kernel-socket filter, the SYN-ACK's
 * options, the checksums. */
static void fill_lines(const char *ifname, struct row *r,
		       const struct row_facts *f)
{
	const struct blitz_config *c = &f->c;
	bool ours =
		f->pins && f->a.prog_id && f->owner != BLITZ_PINS_OTHER_NETNS;
	struct nic_drvinfo d;
	size_t n;

	if (f->here)
		xsk_lines(ifname, f->ifindex, r->xsk, sizeof(r->xsk));
	if (!ours)
		return;
	/* What the xdp engine passes needs a kernel listener behind it. */
	if (c->mode != BLITZ_MODE_AFXDP) {
		n = (size_t)snprintf(r->listen, sizeof(r->listen),
				     "%s: ", ifname);
		kernel_listener_line(ntohs(c->port_be), f->handoff,
				     r->listen + n, sizeof(r->listen) - n);
		cli_not_local(
			ifname, c->addr4_be,
			(int)(c->n_addr4 < BLITZ_MAX_ADDRS ? c->n_addr4
							   : BLITZ_MAX_ADDRS),
			c->addr6_be,
			(int)(c->n_addr6 < BLITZ_MAX_ADDRS ? c->n_addr6
							   : BLITZ_MAX_ADDRS),
			r->nonlocal, sizeof(r->nonlocal));
	}
	blitz_ksock_line(ifname, f->a.prog_id, r->ksock, sizeof(r->ksock));
	/* The SYN-ACK follows the sysctls read at load (tc_handoff.h). */
	if (c->mode == BLITZ_MODE_XDP)
		tc_handoff_opts_drift(ifname, c->flags, f->a.link, r->tcpopts,
				      sizeof(r->tcpopts));
	/* The partial form: veth and its kin only (blitz_shared.h). */
	if (nic_drvinfo(ifname, &d))
		snprintf(d.driver, sizeof(d.driver), "unknown");
	snprintf(r->csum, sizeof(r->csum), "%s: checksums: %s (driver %s)",
		 ifname,
		 c->flags & BLITZ_CFG_CSUM_PARTIAL
			 ? "full, or a local stack's partial sum"
			 : "full only",
		 d.driver);
}

/* Into name, the interface of this namespace prog_id is attached to: pins
 * keep the name of load time, and an interface renamed since keeps its
 * program. "" when none is. */
static void attached_here_as(__u32 prog_id, char name[IF_NAMESIZE])
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	struct blitz_attached a;

	name[0] = '\0';
	for (i = ifs; i && i->if_index; i++)
		if (!blitz_find_attached((int)i->if_index, &a) &&
		    a.prog_id == prog_id) {
			snprintf(name, IF_NAMESIZE, "%s", i->if_name);
			break;
		}
	if (ifs)
		if_freenameindex(ifs);
}

/* The note under the table when something is off: another namespace's
 * pins, stale pins, a program without pins. */
static void fill_note(const char *ifname, struct row *r,
		      const struct row_facts *f)
{
	char why[160], now[IF_NAMESIZE] = "";

	if (f->owner == BLITZ_PINS_OTHER_NETNS && !f->a.prog_id && !f->handoff)
		attached_here_as(f->user, now);
	if (now[0]) {
		snprintf(r->note, sizeof(r->note),
			 "%s: its program (prog id %u) runs on %s in this "
			 "namespace, renamed since load: `blitz unload %s` "
			 "detaches it, then `blitz unload %s` removes these "
			 "pins",
			 ifname, f->user, now, now, ifname);
	} else if (f->owner == BLITZ_PINS_OTHER_NETNS && !f->a.prog_id &&
		   !f->handoff) {
		snprintf(r->note, sizeof(r->note),
			 "%s: loaded in another network namespace (prog id "
			 "%u), not this one: run status there",
			 ifname, f->user);
	} else if (f->owner == BLITZ_PINS_OTHER_NETNS) {
		snprintf(r->note, sizeof(r->note),
			 "%s: attached here without pins: those under %s/%s "
			 "are another network namespace's (prog id %u)",
			 ifname, BLITZ_PIN_ROOT, ifname, f->user);
	} else if (f->owner == BLITZ_PINS_STALE && !f->a.prog_id && !f->here) {
		/* No load can reclaim them: it needs the interface. */
		blitz_stale_pins_why(ifname, why, sizeof(why));
		snprintf(r->note, sizeof(r->note),
			 "%s: %s; the interface is gone: `blitz unload %s` "
			 "removes them",
			 ifname, why, ifname);
	} else if (f->owner == BLITZ_PINS_STALE && !f->a.prog_id) {
		blitz_stale_pins_why(ifname, why, sizeof(why));
		snprintf(r->note, sizeof(r->note),
			 "%s: %s: `blitz load %s` (or serve) reclaims them, "
			 "`blitz unload %s` removes them",
			 ifname, why, ifname, ifname);
	} else if (!f->here) {
		snprintf(r->note, sizeof(r->note),
			 "%s: stale: the interface is gone: run `blitz "
			 "unload %s`",
			 ifname, ifname);
	} else if (!f->a.prog_id) {
		snprintf(r->note, sizeof(r->note),
			 "%s: stale: %s but no program attached: run `blitz "
			 "unload %s`",
			 ifname,
			 f->owner != BLITZ_PINS_NONE ? "pins present"
						     : "a tc hand-off",
			 ifname);
	} else if (!f->pins) {
		snprintf(r->note, sizeof(r->note),
			 "%s: attached but its pins are missing: run `blitz "
			 "unload %s`",
			 ifname, ifname);
	}
}

/*
 * Fill r for ifname; 0 when blitz has anything on it, -ENOENT if not.
 * The MODE/HANDOFF/BY/PROG columns are this network namespace's only.
 * Pins are shared by every namespace (by interface name): pins another
 * namespace's program uses get a note saying so, never this one's row.
 */
static int fill_row(const char *ifname, struct row *r)
{
	struct row_facts f = {0};

	memset(r, 0, sizeof(*r));
	snprintf(r->ifname, sizeof(r->ifname), "%s", ifname);
	if (strlen(ifname) < IF_NAMESIZE)
		f.ifindex = (int)if_nametoindex(ifname);
	f.here = f.ifindex > 0;
	if (f.here && blitz_find_attached(f.ifindex, &f.a))
		memset(&f.a, 0, sizeof(f.a));
	f.handoff = f.here && tc_handoff_present(f.ifindex);
	f.owner = blitz_pins_owner(ifname, f.a.prog_id, &f.user);
	/* Another namespace's config is shown only when nothing of blitz
	 * is here to mix it with. */
	f.pins = f.owner != BLITZ_PINS_NONE &&
		 (f.owner != BLITZ_PINS_OTHER_NETNS ||
		  (!f.a.prog_id && !f.handoff)) &&
		 !blitz_pinned_config(ifname, &f.c, NULL);
	if (f.owner == BLITZ_PINS_NONE && !f.a.prog_id && !f.handoff)
		return -ENOENT;
	fill_columns(r, &f);
	fill_lines(ifname, r, &f);
	fill_note(ifname, r, &f);
	return 0;
}

static int add_row(struct row *rows, int n, const char *ifname)
{
	int i;

	if (n >= MAX_ROWS)
		return n;
	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].ifname, ifname))
			return n;
	return fill_row(ifname, &rows[n]) ? n : n + 1;
}

enum {
	C_IF,
	C_MODE,
	C_ENG,
	C_HAND,
	C_OWN,
	C_PROG,
	C_PORT,
	C_ADDR,
	C_RESP,
	C_SINCE,
	C_N
};

static void row_cells(const struct row *r, const char *cell[C_N])
{
	cell[C_IF] = r->ifname;
	cell[C_MODE] = r->mode;
	cell[C_ENG] = r->engine;
	cell[C_HAND] = r->handoff;
	cell[C_OWN] = r->owner;
	cell[C_PROG] = r->prog;
	cell[C_PORT] = r->port;
	cell[C_ADDR] = r->addrs;
	cell[C_RESP] = r->resp;
	cell[C_SINCE] = r->since;
}

static void print_cells(const char *const cell[C_N], const size_t width[C_N])
{
	int j;

	/* The last column is not padded: no trailing blanks. */
	for (j = 0; j + 1 < C_N; j++)
		printf("%-*s  ", (int)width[j], cell[j]);
	printf("%s\n", cell[C_N - 1]);
}

/* The lines of a row printed under the table, in this order. */
static const size_t row_lines[] = {
	offsetof(struct row, note),	offsetof(struct row, listen),
	offsetof(struct row, nonlocal), offsetof(struct row, ksock),
	offsetof(struct row, tcpopts),	offsetof(struct row, csum),
};

static void print_table(const struct row *rows, int n)
{
	static const char *const head[C_N] = {
		"INTERFACE", "MODE", "ENGINE",	  "HANDOFF",  "BY",
		"PROG",	     "PORT", "ADDRESSES", "RESPONSE", "LOADED SINCE",
	};
	const char *cell[C_N];
	size_t width[C_N];
	int i, j;

	for (j = 0; j < C_N; j++)
		width[j] = strlen(head[j]);
	for (i = 0; i < n; i++) {
		row_cells(&rows[i], cell);
		for (j = 0; j < C_N; j++)
			if (strlen(cell[j]) > width[j])
				width[j] = strlen(cell[j]);
	}
	print_cells(head, width);
	for (i = 0; i < n; i++) {
		row_cells(&rows[i], cell);
		print_cells(cell, width);
	}
	/* Under the table, one kind of line after another, every row's. */
	for (j = 0; j < (int)(sizeof(row_lines) / sizeof(row_lines[0])); j++)
		for (i = 0; i < n; i++) {
			const char *line =
				(const char *)&rows[i] + row_lines[j];

			if (line[0])
				printf("%s\n", line);
		}
	for (i = 0; i < n; i++)
		printf("%s", rows[i].xsk);
}

/* ---- the serve table ---- */

/* The pid first: a row never starts with an interface name, which is
 * what the interface table's rows start with. */
enum { S_PID, S_TIER, S_IF, S_PORT, S_ADDR, S_ENG, S_SINCE, S_N };

struct serve_row {
	char cell[S_N][BLITZ_MAX_ADDRS * 2 * 48];
	char note[320];
	char xsk[2048]; /* its afxdp engine's sockets, when the kernel has
			 * no AF_XDP socket diagnostics to show them */
};

static void serve_row_fill(const struct serve_state *st, bool gone,
			   struct serve_row *r)
{
	struct tm tm;
	time_t t = (time_t)st->started;

	memset(r, 0, sizeof(*r));
	snprintf(r->cell[S_IF], sizeof(r->cell[0]), "%s",
		 st->ifname[0] ? st->ifname : "*");
	snprintf(r->cell[S_PID], sizeof(r->cell[0]), "%d%s", (int)st->pid,
		 gone ? " (gone)" : "");
	snprintf(r->cell[S_TIER], sizeof(r->cell[0]), "%s",
		 st->tier[0] ? st->tier : "-");
	snprintf(r->cell[S_PORT], sizeof(r->cell[0]), "%u", st->port);
	snprintf(r->cell[S_ADDR], sizeof(r->cell[0]), "%s",
		 st->addrs[0] ? st->addrs : "*");
	if (st->engine_pid > 0)
		snprintf(r->cell[S_ENG], sizeof(r->cell[0]), "%d",
			 (int)st->engine_pid);
	else
		snprintf(r->cell[S_ENG], sizeof(r->cell[0]), "-");
	if (t && localtime_r(&t, &tm))
		strftime(r->cell[S_SINCE], sizeof(r->cell[0]),
			 "%Y-%m-%d %H:%M:%S", &tm);
	else
		snprintf(r->cell[S_SINCE], sizeof(r->cell[0]), "-");
	if (!gone && st->engine_pid > 0 && st->ifname[0] &&
	    nic_xsk_list(0, NULL, 0) < 0)
		serve_state_xsk_lines(st->engine_pid, st->ifname, r->xsk,
				      sizeof(r->xsk));
	if (!gone)
		return;
	if (st->ifname[0])
		snprintf(r->note, sizeof(r->note),
			 "%s: stale: serve pid %d is gone: its XDP link went "
			 "with it; run `blitz unload %s` if pins remain (it "
			 "also removes %s)",
			 st->ifname, (int)st->pid, st->ifname, st->path);
	else
		snprintf(r->note, sizeof(r->note),
			 "stale: serve pid %d (every interface, port %u) is "
			 "gone: nothing of it is left but %s (the next serve "
			 "removes it)",
			 (int)st->pid, st->port, st->path);
}

/*
 * The serves of this network namespace (only those on ifname when not
 * NULL) as a table, after a blank line when gap (the interface table
 * came first), with a line per stale one. Serves of another
 * namespace are not shown as if they were here: one line counts them.
 * Returns how many rows it printed.
 */
static int print_serves(const char *ifname, bool gap)
{
	static const char *const head[S_N] = {
		[S_PID] = "SERVE PID",	[S_TIER] = "TIER",
		[S_IF] = "INTERFACE",	[S_PORT] = "PORT",
		[S_ADDR] = "ADDRESSES", [S_ENG] = "ENGINE PID",
		[S_SINCE] = "STARTED",
	};
	struct serve_state *st;
	struct serve_row *rows;
	enum serve_state_life life;
	int i, j, n, shown = 0, other = 0;
	size_t width[S_N];

	st = calloc(MAX_SERVES, sizeof(*st));
	rows = calloc(MAX_SERVES, sizeof(*rows));
	if (!st || !rows) {
		free(st);
		free(rows);
		return 0;
	}
	n = serve_state_list(st, MAX_SERVES);
	for (i = 0; i < n; i++) {
		if (ifname && strcmp(st[i].ifname, ifname))
			continue;
		life = serve_state_life(&st[i]);
		/* A gone serve's namespace is not ours to judge either. */
		if (life == SERVE_OTHER_NETNS ||
		    (st[i].netns && st[i].netns != serve_state_netns_here())) {
			other++;
			continue;
		}
		serve_row_fill(&st[i], life == SERVE_GONE, &rows[shown++]);
	}
	if (shown) {
		if (gap) /* after the interface table */
			printf("\n");
		for (j = 0; j < S_N; j++)
			width[j] = strlen(head[j]);
		for (i = 0; i < shown; i++)
			for (j = 0; j < S_N; j++)
				if (strlen(rows[i].cell[j]) > width[j])
					width[j] = strlen(rows[i].cell[j]);
		for (j = 0; j + 1 < S_N; j++)
			printf("%-*s  ", (int)width[j], head[j]);
		printf("%s\n", head[S_N - 1]);
		for (i = 0; i < shown; i++) {
			for (j = 0; j + 1 < S_N; j++)
				printf("%-*s  ", (int)width[j],
				       rows[i].cell[j]);
			printf("%s\n", rows[i].cell[S_N - 1]);
		}
		for (i = 0; i < shown; i++)
			if (rows[i].note[0])
				printf("%s\n", rows[i].note);
		for (i = 0; i < shown; i++)
			printf("%s", rows[i].xsk);
	}
	if (other)
		printf("%d serve%s in another network namespace not shown: "
		       "run `blitz status` there\n",
		       other, other == 1 ? "" : "s");
	free(st);
	free(rows);
	return shown;
}

int cmd_status(int argc, char **argv)
{
	struct if_nameindex *ifs, *it;
	struct blitz_attached a;
	struct dirent *de;
	struct row *rows;
	int ret, n = 0;
	DIR *d;

	ret = cli_parse(&cmd_status_spec, argc, argv, NULL, NULL, 0, 1);
	if (ret != CLI_CONTINUE)
		return ret;
	blitz_log_quiet_libs();
	if (blitz_check_privileges() || blitz_check_bpffs())
		return 1;
	rows = calloc(MAX_ROWS, sizeof(*rows));
	if (!rows) {
		pr_warn("out of memory\n");
		return 1;
	}

	if (optind < argc) {
		n = add_row(rows, n, argv[optind]);
		if (n)
			print_table(rows, n);
		/* A serve with nothing in BPF (epoll alone, dpdk) counts. */
		if (!print_serves(argv[optind], n > 0) && !n) {
			if (!if_nametoindex(argv[optind]))
				pr_warn("no interface '%s' and no pins for "
					"it: see `ip link`\n",
					argv[optind]);
			else
				pr_warn("not loaded on %s\n", argv[optind]);
			free(rows);
			return 1;
		}
		free(rows);
		return 0;
	}
	d = opendir(BLITZ_PIN_ROOT);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			n = add_row(rows, n, de->d_name);
	if (d)
		closedir(d);
	/* Also interfaces of this namespace with blitz attached but no pins
	 * (or only a hand-off left). */
	ifs = if_nameindex();
	for (it = ifs; it && it->if_index; it++)
		if ((!blitz_find_attached((int)it->if_index, &a) &&
		     a.prog_id) ||
		    tc_handoff_present((int)it->if_index))
			n = add_row(rows, n, it->if_name);
	if (ifs)
		if_freenameindex(ifs);
	if (n)
		print_table(rows, n);
	if (!print_serves(NULL, n > 0) && !n)
		printf("blitz is not loaded on any interface\n");
	free(rows);
	return 0;
}
