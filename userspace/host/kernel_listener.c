// SPDX-License-Identifier: GPL-2.0
/*
 * listener.c - a kernel listener on the service port or not, from
 * /proc/net/tcp{,6} (see listener.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel_listener.h"

#define TCP_LISTEN_STATE 0x0A /* TCP_LISTEN in /proc/net/tcp's "st" */

/* The address column of /proc/net/tcp{,6}: hex words in host order. */
static void proc_addr(const char *hex, bool v6, char *out, size_t len)
{
	unsigned int w[4] = {};
	char buf[INET6_ADDRSTRLEN];

	if (!out || !len)
		return;
	if (!v6) {
		if (sscanf(hex, "%8x", &w[0]) == 1 &&
		    inet_ntop(AF_INET, &w[0], buf, sizeof(buf)))
			snprintf(out, len, "%s", buf);
		return;
	}
	if (sscanf(hex, "%8x%8x%8x%8x", &w[0], &w[1], &w[2], &w[3]) == 4 &&
	    inet_ntop(AF_INET6, w, buf, sizeof(buf)))
		snprintf(out, len, "%s", buf);
}

/* 1 found, 0 not, -errno unreadable. */
static int scan(const char *path, bool v6, uint16_t port, char *addr,
		size_t len)
{
	char line[512], hex[40];
	unsigned int p, st;
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		/* "  sl: LOCAL:PORT REMOTE:PORT ST ..." */
		if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x",
			   hex, &p, &st) != 3)
			continue; /* the header */
		if (st == TCP_LISTEN_STATE && p == port) {
			proc_addr(hex, v6, addr, len);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

int kernel_listener(uint16_t port, char *addr, size_t len)
{
	int r4, r6;

	if (addr && len)
		addr[0] = '\0';
	r4 = scan("/proc/net/tcp", false, port, addr, len);
	if (r4 > 0)
		return 1;
	r6 = scan("/proc/net/tcp6", true, port, addr, len);
	if (r6 > 0)
		return 1;
	/* No IPv6 in this kernel is not an error. */
	return r4 < 0 && r6 < 0 ? r4 : 0;
}

void kernel_listener_line(uint16_t port, bool handoff, char *out, size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	int r = kernel_listener(port, addr, sizeof(addr));

	if (r < 0)
		snprintf(out, len,
			 "cannot tell whether a kernel listener is on port "
			 "%u (/proc/net/tcp: %s)",
			 port, strerror(-r));
	else if (!r)
		snprintf(out, len,
			 "nothing listens on port %u: requests the xdp engine "
			 "passes (split requests, bodies) "
			 "are reset; "
			 "start a server on the port or use `blitz serve`",
			 port);
	else if (!handoff)
		snprintf(out, len,
			 "a kernel listener is on port %u (%s), but without "
			 "the tc hand-off requests the xdp engine passes "
			 "(split requests, bodies) are reset",
			 port, addr);
	else
		snprintf(out, len,
			 "a kernel listener is on port %u (%s): requests the "
			 "xdp engine passes (split requests, bodies) "
			 "go to it on the same connection",
			 port, addr);
}
