// SPDX-License-Identifier: GPL-2.0
/*
 * netif_state.c - record an interface's addresses, routes and takeover
 * sysctls, and restore them (the contract: netif_state.h).
 *
 * Owns: the `ip` runner and the record's format. Must never run a shell
 * or act on another interface than the record's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_sys.h"
#include "log.h"
#include "netif_state.h"

extern char **environ;

const char *const netif_sysctl[NETIF_N_SYSCTL] = {
	[NETIF_DISABLE_IPV6] = "net/ipv6/conf/%s/disable_ipv6",
	[NETIF_RP_FILTER] = "net/ipv4/conf/%s/rp_filter",
	[NETIF_ARP_IGNORE] = "net/ipv4/conf/%s/arp_ignore",
	[NETIF_ACCEPT_RA] = "net/ipv6/conf/%s/accept_ra",
};

/*
 * Run `ip` with the fixed words argv0.. and then the words of line (split
 * on blanks), no shell. With out: its stdout, NUL-terminated (truncated
 * to len). 0 when ip exited 0.
 */
int netif_run_ip(const char *const *words, const char *line, char *out,
		 size_t len)
{
	char buf[NETIF_LINE * 2], sink[256], *argv[64], *save = NULL, *w;
	int argc = 0, status, err, p[2] = {-1, -1};
	posix_spawn_file_actions_t fa;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	argv[argc++] = "ip";
	for (; *words && argc < 32; words++)
		argv[argc++] = (char *)*words;
	snprintf(buf, sizeof(buf), "%s", line ? line : "");
	for (w = strtok_r(buf, " \t\n", &save); w && argc < 62;
	     w = strtok_r(NULL, " \t\n", &save))
		if (strcmp(w, "linkdown")) /* a state, not a route option */
			argv[argc++] = w;
	argv[argc] = NULL;
	if (out && pipe2(p, O_CLOEXEC))
		return -1;
	/* posix_spawn, not fork: serve has threads (the epoll workers),
	 * blitz-dpdk its lcores. */
	posix_spawn_file_actions_init(&fa);
	if (out)
		posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
						 0);
	if (blitz_log_level < LOG_DEBUG)
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY,
						 0);
	err = posix_spawnp(&pid, "ip", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		pr_warn("cannot run ip: %s (iproute2 installed?)\n",
			strerror(err));
		if (out) {
			close(p[0]);
			close(p[1]);
		}
		return -1;
	}
	if (out) {
		close(p[1]);
		while (got + 1 < len &&
		       ((n = read(p[0], out + got, len - 1 - got)) > 0 ||
			(n < 0 && errno == EINTR)))
			if (n > 0)
				got += (size_t)n;
		out[got] = '\0';
		/* The rest is dropped, but read: a full pipe would block ip. */
		while ((n = read(p[0], sink, sizeof(sink))) > 0 ||
		       (n < 0 && errno == EINTR))
			;
		close(p[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

int netif_sysctl_read(const char *fmt, const char *ifname, char *buf,
		      size_t len)
{
	char rel[128];

	snprintf(rel, sizeof(rel), fmt, ifname);
	return host_sysctl_read(rel, buf, len) ? -1 : 0;
}

int netif_sysctl_write(const char *fmt, const char *ifname, const char *val)
{
	char path[160], rel[128];
	FILE *f;

	snprintf(rel, sizeof(rel), fmt, ifname);
	snprintf(path, sizeof(path), "/proc/sys/%s", rel);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(val, f);
	return fclose(f) ? -1 : 0;
}

static int mask_len(const struct sockaddr *mask, int fam)
{
	const uint8_t *b;
	int n, len = 0, i;

	if (!mask)
		return fam == AF_INET ? 32 : 128;
	if (fam == AF_INET) {
		b = (const uint8_t *)&((const struct sockaddr_in *)mask)
			    ->sin_addr;
		n = 4;
	} else {
		b = (const uint8_t *)&((const struct sockaddr_in6 *)mask)
			    ->sin6_addr;
		n = 16;
	}
	for (i = 0; i < n; i++)
		len += __builtin_popcount(b[i]);
	return len;
}

/* Routes through the interface that the kernel did not make itself:
 * those come back with the addresses. */
static void record_routes(struct netif_state *st, bool v6)
{
	const char *const words[] = {v6 ? "-6" : "-4", "route", "show", "dev",
				     st->ifname,       NULL};
	char out[NETIF_OUT], *line, *save = NULL;

	if (netif_run_ip(words, NULL, out, sizeof(out)))
		return;
	for (line = strtok_r(out, "\n", &save); line && st->n_route < NETIF_MAX;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "proto kernel") || !strncmp(line, "fe80", 4) ||
		    !strncmp(line, "multicast", 9) || !line[0])
			continue;
		snprintf(st->route[st->n_route], NETIF_LINE, "%s", line);
		st->route6[st->n_route++] = v6;
	}
}

int netif_record(struct netif_state *st, const char *ifname)
{
	struct ifaddrs *ifa, *i;
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	size_t k;

	memset(st, 0, sizeof(*st));
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname);
	if (getifaddrs(&ifa)) {
		pr_warn("getifaddrs: %s\n", strerror(errno));
		return -1;
	}
	for (i = ifa; i && st->n_addr < NETIF_MAX; i = i->ifa_next) {
		char *dst = st->addr[st->n_addr];
		size_t dlen = sizeof(st->addr[0]);
		const void *src;
		int fam;

		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		fam = i->ifa_addr->sa_family;
		if (fam == AF_INET)
			src = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		else if (fam == AF_INET6)
			src = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		else
			continue;
		if (fam == AF_INET6 &&
		    IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)src))
			continue;
		inet_ntop(fam, src, a, sizeof(a));
		/* An address added without brd has none, yet getifaddrs
		 * reports the address itself as its broadcast: putting that
		 * back would route our own address as a broadcast. */
		if (fam == AF_INET && (i->ifa_flags & IFF_BROADCAST) &&
		    i->ifa_broadaddr &&
		    ((struct sockaddr_in *)i->ifa_broadaddr)->sin_addr.s_addr !=
			    ((const struct in_addr *)src)->s_addr &&
		    inet_ntop(
			    AF_INET,
			    &((struct sockaddr_in *)i->ifa_broadaddr)->sin_addr,
			    b, sizeof(b)))
			snprintf(dst, dlen, "%s/%d brd %s", a,
				 mask_len(i->ifa_netmask, fam), b);
		else
			snprintf(dst, dlen, "%s/%d", a,
				 mask_len(i->ifa_netmask, fam));
		st->addr6[st->n_addr++] = fam == AF_INET6;
	}
	freeifaddrs(ifa);
	record_routes(st, false);
	record_routes(st, true);
	for (k = 0; k < NETIF_N_SYSCTL; k++)
		netif_sysctl_read(netif_sysctl[k], ifname, st->sysctl[k],
				  sizeof(st->sysctl[k]));
	return 0;
}

int netif_restore(const struct netif_state *st)
{
	const char *const a4[] = {"-4", "addr", "replace", NULL};
	const char *const a6[] = {"-6", "addr", "replace", "nodad", NULL};
	const char *const r4[] = {"-4", "route", "replace", NULL};
	const char *const r6[] = {"-6", "route", "replace", NULL};
	char line[NETIF_LINE + IF_NAMESIZE + 16];
	int k, bad = 0;
	size_t s;

	for (s = 0; s < NETIF_N_SYSCTL; s++)
		if (st->sysctl[s][0] &&
		    netif_sysctl_write(netif_sysctl[s], st->ifname,
				       st->sysctl[s]))
			bad++;
	for (k = 0; k < st->n_addr; k++) {
		snprintf(line, sizeof(line), "%s dev %s", st->addr[k],
			 st->ifname);
		bad += !!netif_run_ip(st->addr6[k] ? a6 : a4, line, NULL, 0);
	}
	for (k = 0; k < st->n_route; k++) {
		snprintf(line, sizeof(line), "%s dev %s", st->route[k],
			 st->ifname);
		bad += !!netif_run_ip(st->route6[k] ? r6 : r4, line, NULL, 0);
	}
	return bad;
}
