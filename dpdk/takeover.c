// SPDX-License-Identifier: GPL-2.0
/*
 * takeover.c - `--takeover IFNAME`: move a kernel interface's addresses
 * and routes to the TAP while blitz-dpdk drives that interface through the
 * af_packet (or af_xdp) PMD, and give them back at exit.
 *
 * Why: those PMDs leave the interface in the kernel, which keeps seeing
 * every frame; with the addresses still on it the kernel would answer
 * beside blitz (a second ARP reply, RSTs for the service port). Moved to
 * the TAP (same MAC as the port), the addresses stay the host's: the
 * kernel answers what blitz does not, through the exception path, and
 * routes (the default route too) keep working. On the interface itself:
 * no address, IPv6 off, rp_filter=1 and arp_ignore=8 (engine.h).
 *
 * Owns: when the interface is recorded, moved and restored. The record
 * and the restore are userspace/netif_state.c's, the same ones `blitz
 * serve` uses to give the interface back after a blitz-dpdk that died.
 * Must never: touch another interface than IFNAME and the TAP, run a
 * shell (`ip` is run with an argv), or run after setup except to restore.
 */
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "dpdk_engine.h"
#include "log.h"
#include "netif_state.h"

struct takeover {
	struct netif_state st; /* the interface as it was */
	char tap[IF_NAMESIZE];
	bool applied;
};

static struct takeover tk;

/* What the interface gets while blitz-dpdk drives it (netif_sysctl). */
static const char *const tk_value[NETIF_N_SYSCTL] = {
	[NETIF_DISABLE_IPV6] = "1",
	[NETIF_RP_FILTER] = "1",
	[NETIF_ARP_IGNORE] = "8",
	[NETIF_ACCEPT_RA] = "0",
};

static bool ifname_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= IF_NAMESIZE)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		      *s == '.'))
			return false;
	return true;
}

/* netif_run_ip, saying what failed (ip's own words show with -v). */
static int run_ip(const char *const *words, const char *line)
{
	char what[NETIF_LINE + 64];
	size_t used = 0;

	if (!netif_run_ip(words, line, NULL, 0))
		return 0;
	for (; *words && used < sizeof(what); words++)
		used += (size_t)snprintf(what + used, sizeof(what) - used,
					 "%s ", *words);
	pr_warn("`ip %s%s` failed\n", what, line);
	return -1;
}

int takeover_prepare(const char *ifname, struct blitz_service *svc)
{
	bool serve_them = !svc->n_addr4 && !svc->n_addr6;
	char a[2 * INET6_ADDRSTRLEN + 16];
	int k;

	if (!ifname_ok(ifname) || !if_nametoindex(ifname)) {
		pr_warn("--takeover %s: no such interface here\n", ifname);
		return -1;
	}
	if (netif_record(&tk.st, ifname))
		return -1;
	/* Without -a: serve the addresses it takes (the bare address of
	 * each "a/len [brd b]"). */
	for (k = 0; serve_them && k < tk.st.n_addr; k++) {
		snprintf(a, sizeof(a), "%s", tk.st.addr[k]);
		a[strcspn(a, "/ ")] = '\0';
		if (service_add_addr(svc, a))
			return -1;
	}
	if (!tk.st.n_addr && serve_them) {
		pr_warn("--takeover %s: it has no address to serve; give -a\n",
			ifname);
		return -1;
	}
	return 0;
}

int takeover_apply(const char *tap)
{
	const char *const flush[] = {"addr", "flush", "dev", NULL};
	const char *const a4[] = {"-4", "addr", "add", NULL};
	const char *const a6[] = {"-6", "addr", "add", NULL};
	const char *const r4[] = {"-4", "route", "add", NULL};
	const char *const r6[] = {"-6", "route", "add", NULL};
	const struct netif_state *st = &tk.st;
	char line[NETIF_LINE + IF_NAMESIZE + 16];
	int k;

	snprintf(tk.tap, sizeof(tk.tap), "%s", tap);
	/* Only what could be read is changed: restore puts that back. */
	for (k = 0; k < NETIF_N_SYSCTL; k++)
		if (st->sysctl[k][0])
			netif_sysctl_write(netif_sysctl[k], st->ifname,
					   tk_value[k]);
	tk.applied = true;
	if (run_ip(flush, st->ifname))
		return -1;
	for (k = 0; k < st->n_addr; k++) {
		snprintf(line, sizeof(line), "%s dev %s%s", st->addr[k], tk.tap,
			 st->addr6[k] ? " nodad" : "");
		if (run_ip(st->addr6[k] ? a6 : a4, line))
			return -1;
	}
	for (k = 0; k < st->n_route; k++) {
		snprintf(line, sizeof(line), "%s dev %s", st->route[k], tk.tap);
		run_ip(st->route6[k] ? r6 : r4, line); /* best effort */
	}
	pr_info("took over %s: %d address(es), %d route(s) moved to %s\n",
		st->ifname, st->n_addr, st->n_route, tk.tap);
	return 0;
}

void takeover_restore(void)
{
	int bad;

	if (!tk.applied)
		return;
	bad = netif_restore(&tk.st);
	tk.applied = false;
	if (bad)
		pr_warn("%s: %d of its addresses, routes and settings could "
			"not be given back (see `ip addr show %s`)\n",
			tk.st.ifname, bad, tk.st.ifname);
	else
		pr_info("gave %s its addresses back\n", tk.st.ifname);
}
