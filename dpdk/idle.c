// SPDX-License-Identifier: GPL-2.0
/*
 * idle.c - an lcore sleeps when it has nothing to do, on ports whose frames
 * come through kernel sockets (the af_packet and af_xdp PMDs).
 *
 * Why: a spinning lcore on a CPU it shares with other work (a veth
 * testbed, a VM, a busy host) is an ordinary task that has used its share,
 * so a frame that arrives waits for the scheduler's next turn, milliseconds
 * under load; a task asleep in poll() is woken by the frame itself and runs
 * at once. The af_packet and af_xdp PMDs read kernel sockets, so poll() on
 * those sockets (and on the TAP's queues) tells when there is work. A port
 * without such sockets (a NIC on vfio) keeps spinning, as does --busy-poll.
 *
 * Owns: finding the descriptors (the PMD's packet or XDP sockets of the
 * port's interface, the TAP's attached queues) once the ports are started,
 * and the wait itself.
 * Must never: sleep past the TCP core's next timer or past a frame (the
 * loop calls idle_wait only after an empty poll; poll() sees a frame that
 * arrived before it was called), or run on the packet path of
 * a poll that did work.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "dpdk_engine.h"
#include "log.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

enum { FD_NONE, FD_PORT, FD_TAP };

/* What the descriptor fd is to us: the port's socket, the TAP's queue. */
static int fd_kind(int fd, int port_ifindex, bool port_xdp, const char *tap)
{
	char path[64], link[64];
	socklen_t len;
	ssize_t n;
	int dom;

	len = sizeof(dom);
	if (!getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len)) {
		struct sockaddr_ll sll;

		if (dom == AF_XDP)
			/* XDP sockets have no name; only the PMD makes them. */
			return port_xdp ? FD_PORT : FD_NONE;
		if (dom != AF_PACKET || port_xdp)
			return FD_NONE;
		len = sizeof(sll);
		memset(&sll, 0, sizeof(sll));
		if (getsockname(fd, (struct sockaddr *)&sll, &len))
			return FD_NONE;
		return sll.sll_ifindex == port_ifindex ? FD_PORT : FD_NONE;
	}
	if (!tap)
		return FD_NONE;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return FD_NONE;
	link[n] = '\0';
	if (strcmp(link, "/dev/net/tun") == 0) {
		struct ifreq ifr;

		/* A queue net_tap keeps detached (its keep-alive) has no
		 * interface: TUNGETIFF fails on it. */
		memset(&ifr, 0, sizeof(ifr));
		if (!ioctl(fd, TUNGETIFF, &ifr) &&
		    !strncmp(ifr.ifr_name, tap, IFNAMSIZ))
			return FD_TAP;
	}
	return FD_NONE;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Queue q's descriptors: its own when there is one per queue (the PMDs
 * open them in queue order), else all of them (a wake-up too many). */
static void give(struct worker *w, uint16_t q, uint16_t nq, const int *fds,
		 int n)
{
	int i;

	if (n == nq) {
		if (w->n_idle_fds < IDLE_MAX_FDS)
			w->idle_fds[w->n_idle_fds++].fd = fds[q];
		return;
	}
	for (i = 0; i < n && w->n_idle_fds < IDLE_MAX_FDS; i++)
		w->idle_fds[w->n_idle_fds++].fd = fds[i];
}

int idle_setup(struct engine *eng, const char *ifname, bool port_xdp)
{
	int port_fds[IDLE_MAX_FDS], tap_fds[IDLE_MAX_FDS];
	int n_port = 0, n_tap = 0, ifindex, self;
	struct dirent *de;
	DIR *d;
	uint16_t q;

	ifindex = ifname ? (int)if_nametoindex(ifname) : 0;
	if (!ifindex)
		return 0;
	d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	self = dirfd(d);
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || fd == self)
			continue;
		switch (fd_kind((int)fd, ifindex, port_xdp,
				eng->have_tap ? eng->tap_ifname : NULL)) {
		case FD_PORT:
			if (n_port < IDLE_MAX_FDS)
				port_fds[n_port++] = (int)fd;
			break;
		case FD_TAP:
			if (n_tap < IDLE_MAX_FDS)
				tap_fds[n_tap++] = (int)fd;
			break;
		}
	}
	closedir(d);
	if (!n_port)
		return 0;
	qsort(port_fds, (size_t)n_port, sizeof(int), cmp_int);
	qsort(tap_fds, (size_t)n_tap, sizeof(int), cmp_int);
	for (q = 0; q < eng->nb_queues; q++) {
		struct worker *w = &eng->workers[q];
		int i;

		w->n_idle_fds = 0;
		give(w, q, eng->nb_queues, port_fds, n_port);
		give(w, q, eng->nb_queues, tap_fds, n_tap);
		for (i = 0; i < w->n_idle_fds; i++)
			w->idle_fds[i].events = POLLIN;
		/* Without the TAP's descriptors the kernel's frames would
		 * wait for the timer: sleep 1 ms at most then. */
		w->idle_cap_ms = eng->have_tap && !n_tap ? 1 : IDLE_MAX_MS;
	}
	return n_port + n_tap;
}

void idle_wait(struct worker *w, int ms)
{
	int i, r;

	if (ms > w->idle_cap_ms)
		ms = w->idle_cap_ms;
	if (ms < 1)
		ms = 1;
	w->st.idle_sleeps++;
	r = poll(w->idle_fds, (nfds_t)w->n_idle_fds, ms);
	if (r <= 0)
		return;
	for (i = 0; i < w->n_idle_fds; i++)
		if (w->idle_fds[i].revents & POLLIN) {
			w->st.idle_woken++;
			return;
		}
}
