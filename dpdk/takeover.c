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
 * Owns: the list of what it moved, so exit restores exactly that.
 * Must never: touch another interface than IFNAME and the TAP, run a
 * shell (`ip` is run with an argv), or run after setup except to restore.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine.h"
#include "log.h"

extern char **environ;

#define TK_MAX_ADDRS 16
#define TK_MAX_ROUTES 16
#define TK_LINE 256

struct takeover {
	char ifname[IF_NAMESIZE];
	char tap[IF_NAMESIZE];
	int n_addr;
	char addr[TK_MAX_ADDRS][INET6_ADDRSTRLEN + 16]; /* "a/len" */
	bool addr6[TK_MAX_ADDRS];
	int n_route;
	char route[TK_MAX_ROUTES][TK_LINE];
	bool route6[TK_MAX_ROUTES];
	char old_sysctl[4][16];
	bool applied;
};

static struct takeover tk;

static const char *const tk_sysctl[4] = {
	"net/ipv6/conf/%s/disable_ipv6",
	"net/ipv4/conf/%s/rp_filter",
	"net/ipv4/conf/%s/arp_ignore",
	"net/ipv6/conf/%s/accept_ra",
};
static const char *const tk_value[4] = {"1", "1", "8", "0"};

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

/* Run `ip` with the words of line (split on spaces), then more words. */
static int run_ip(const char *line, const char *const *more)
{
	char buf[TK_LINE * 2], *argv[64], *save = NULL, *w;
	int argc = 0, status;
	pid_t pid;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "ip";
	for (w = strtok_r(buf, " \t\n", &save); w && argc < 50;
	     w = strtok_r(NULL, " \t\n", &save))
		argv[argc++] = w;
	for (; more && *more && argc < 62; more++)
		argv[argc++] = (char *)*more;
	argv[argc] = NULL;
	if (posix_spawnp(&pid, "ip", NULL, NULL, argv, environ)) {
		pr_warn("cannot run ip: %s (iproute2 installed?)\n",
			strerror(errno));
		return -1;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		pr_warn("`ip %s%s%s` failed\n", line, more ? " ... " : "",
			more && *more ? *more : "");
		return -1;
	}
	return 0;
}

static int sysctl_rw(const char *fmt, const char *ifname, char *old,
		     size_t oldlen, const char *val)
{
	char path[160], rel[128];
	FILE *f;

	snprintf(rel, sizeof(rel), fmt, ifname);
	snprintf(path, sizeof(path), "/proc/sys/%s", rel);
	if (old) {
		f = fopen(path, "r");
		if (!f || !fgets(old, (int)oldlen, f)) {
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		old[strcspn(old, "\n")] = '\0';
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(val, f);
	return fclose(f) ? -1 : 0;
}

static int prefix_len(const struct sockaddr *mask)
{
	const uint8_t *b;
	int n, len = 0, i;

	if (!mask)
		return -1;
	if (mask->sa_family == AF_INET) {
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

/* Routes through ifname that the kernel did not make itself. */
static void collect_routes(const char *ifname, bool v6)
{
	char cmd[64], line[TK_LINE];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ip %s route show dev %s", v6 ? "-6" : "-4",
		 ifname);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p) && tk.n_route < TK_MAX_ROUTES) {
		line[strcspn(line, "\n")] = '\0';
		if (strstr(line, "proto kernel") || !strncmp(line, "fe80", 4) ||
		    !strncmp(line, "multicast", 9) || !line[0])
			continue;
		snprintf(tk.route[tk.n_route], TK_LINE, "%s", line);
		tk.route6[tk.n_route++] = v6;
	}
	pclose(p);
}

int takeover_prepare(const char *ifname, struct blitz_service_opts *svc)
{
	bool serve_them = !svc->n_addr4 && !svc->n_addr6;
	struct ifaddrs *ifa, *i;
	char a[INET6_ADDRSTRLEN];

	if (!ifname_ok(ifname) || !if_nametoindex(ifname)) {
		pr_warn("--takeover %s: no such interface here\n", ifname);
		return -1;
	}
	snprintf(tk.ifname, sizeof(tk.ifname), "%s", ifname);
	if (getifaddrs(&ifa)) {
		pr_warn("getifaddrs: %s\n", strerror(errno));
		return -1;
	}
	for (i = ifa; i; i = i->ifa_next) {
		const void *src;
		int fam, plen;

		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		fam = i->ifa_addr->sa_family;
		if (fam != AF_INET && fam != AF_INET6)
			continue;
		if (fam == AF_INET)
			src = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		else
			src = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		if (fam == AF_INET6 &&
		    IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)src))
			continue; /* the TAP makes its own */
		plen = prefix_len(i->ifa_netmask);
		inet_ntop(fam, src, a, sizeof(a));
		if (tk.n_addr < TK_MAX_ADDRS) {
			snprintf(tk.addr[tk.n_addr], sizeof(tk.addr[0]),
				 "%s/%d", a,
				 plen < 0 ? (fam == AF_INET ? 32 : 128) : plen);
			tk.addr6[tk.n_addr++] = fam == AF_INET6;
		}
		if (serve_them && service_opt_parse(svc, 'a', a) < 0) {
			freeifaddrs(ifa);
			return -1;
		}
	}
	freeifaddrs(ifa);
	collect_routes(ifname, false);
	collect_routes(ifname, true);
	if (!tk.n_addr && serve_them) {
		pr_warn("--takeover %s: it has no address to serve; give -a\n",
			ifname);
		return -1;
	}
	return 0;
}

int takeover_apply(const char *tap)
{
	const char *const v6[] = {"nodad", NULL};
	char line[TK_LINE + 32];
	int k;

	snprintf(tk.tap, sizeof(tk.tap), "%s", tap);
	for (k = 0; k < 4; k++)
		if (sysctl_rw(tk_sysctl[k], tk.ifname, tk.old_sysctl[k],
			      sizeof(tk.old_sysctl[k]), tk_value[k]))
			tk.old_sysctl[k][0] = '\0';
	tk.applied = true;
	snprintf(line, sizeof(line), "addr flush dev %s", tk.ifname);
	if (run_ip(line, NULL))
		return -1;
	for (k = 0; k < tk.n_addr; k++) {
		snprintf(line, sizeof(line), "addr add %s dev %s", tk.addr[k],
			 tk.tap);
		if (run_ip(line, tk.addr6[k] ? v6 : NULL))
			return -1;
	}
	for (k = 0; k < tk.n_route; k++) {
		snprintf(line, sizeof(line), "%s route add %s dev %s",
			 tk.route6[k] ? "-6" : "-4", tk.route[k], tk.tap);
		run_ip(line, NULL); /* best effort: say it, go on */
	}
	pr_info("took over %s: %d address(es), %d route(s) moved to %s\n",
		tk.ifname, tk.n_addr, tk.n_route, tk.tap);
	return 0;
}

void takeover_restore(void)
{
	const char *const v6[] = {"nodad", NULL};
	char line[TK_LINE + 32];
	int k;

	if (!tk.applied)
		return;
	for (k = 0; k < 4; k++)
		if (tk.old_sysctl[k][0])
			sysctl_rw(tk_sysctl[k], tk.ifname, NULL, 0,
				  tk.old_sysctl[k]);
	for (k = 0; k < tk.n_addr; k++) {
		snprintf(line, sizeof(line), "addr replace %s dev %s",
			 tk.addr[k], tk.ifname);
		run_ip(line, tk.addr6[k] ? v6 : NULL);
	}
	for (k = 0; k < tk.n_route; k++) {
		snprintf(line, sizeof(line), "%s route replace %s dev %s",
			 tk.route6[k] ? "-6" : "-4", tk.route[k], tk.ifname);
		run_ip(line, NULL);
	}
	tk.applied = false;
	pr_info("gave %s its addresses back\n", tk.ifname);
}
