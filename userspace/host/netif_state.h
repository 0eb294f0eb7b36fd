/* SPDX-License-Identifier: GPL-2.0 */
/*
 * netif_state.h - record a kernel interface's addresses, routes and the
 * sysctls a dpdk takeover changes, and put them back.
 *
 * blitz-dpdk's --takeover (dpdk/takeover.c) moves an interface's
 * addresses and routes to its TAP and changes disable_ipv6, rp_filter,
 * arp_ignore and accept_ra on it, restoring them at a clean exit; `blitz
 * serve --engine dpdk` (cmd_serve.c) records the same interface before
 * starting blitz-dpdk and restores it after the child dies, whatever
 * killed it. Both use this one record and restore.
 *
 * Owns: what is recorded (IPv6 link-local addresses and kernel-made
 * routes aside: the kernel makes those again) and how it is put back
 * (`ip ... replace`: idempotent). Must never: run a shell (`ip` is run
 * with an argv through posix_spawn, safe in a threaded process), or touch
 * another interface than the one it is given.
 */
#ifndef BLITZ_NETIF_STATE_H
#define BLITZ_NETIF_STATE_H

#include <arpa/inet.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#define NETIF_MAX 16   /* addresses, and routes, recorded at most */
#define NETIF_LINE 256 /* one route as `ip route show` prints it */
#define NETIF_OUT 4096 /* what is read of `ip route show` */

/* The sysctls a takeover sets, in the order to put them back: IPv6 on
 * again before its addresses go back. */
enum netif_sysctl_idx {
	NETIF_DISABLE_IPV6,
	NETIF_RP_FILTER,
	NETIF_ARP_IGNORE,
	NETIF_ACCEPT_RA,
	NETIF_N_SYSCTL
};
/* Their paths under /proc/sys/, with %s for the interface name. */
extern const char *const netif_sysctl[NETIF_N_SYSCTL];

struct netif_state {
	char ifname[IF_NAMESIZE];
	int n_addr;
	char addr[NETIF_MAX][2 * INET6_ADDRSTRLEN + 16]; /* "a/len [brd b]" */
	bool addr6[NETIF_MAX];
	int n_route;
	char route[NETIF_MAX][NETIF_LINE]; /* without "dev IFNAME" */
	bool route6[NETIF_MAX];
	char sysctl[NETIF_N_SYSCTL][16]; /* "": could not be read */
};

/* Record ifname as it is now. 0, or -1 with a line said. */
int netif_record(struct netif_state *st, const char *ifname);
/* Put the record back (sysctls, then addresses, then routes, each with
 * `replace`, so it also checks an interface already restored). Returns
 * how many steps failed. */
int netif_restore(const struct netif_state *st);

/*
 * Run `ip` with the fixed words and then the words of line (split on
 * blanks; a route's "linkdown" state dropped), no shell. Its stdout goes
 * to out (NUL-terminated, truncated to len) or /dev/null, its stderr to
 * /dev/null unless -v. 0 when ip exited 0.
 */
int netif_run_ip(const char *const *words, const char *line, char *out,
		 size_t len);
/* /proc/sys/<fmt with ifname>: read (newline dropped; 0 when not empty)
 * or write. */
int netif_sysctl_read(const char *fmt, const char *ifname, char *buf,
		      size_t len);
int netif_sysctl_write(const char *fmt, const char *ifname, const char *val);

#endif /* BLITZ_NETIF_STATE_H */
