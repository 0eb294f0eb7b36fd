// SPDX-License-Identifier: GPL-2.0
/*
 * engine_dpdk.c - the dpdk engine as serve runs it: blitz-dpdk, forked
 * and exec'd by serve, supervised (supervisor.h). On a kernel interface
 * (the af_packet PMD) it takes the interface over: its addresses and
 * routes move to a TAP and it gets disable_ipv6=1, rp_filter=1,
 * arp_ignore=8, accept_ra=0 (dpdk/takeover.c); blitz-dpdk gives them back
 * only on a clean exit. So serve records the interface as it was before
 * the first child (prepare) and puts it back after every child, whatever
 * killed it: the kernel then owns the NIC again and serve's epoll
 * listener (bound before the takeover, on the wildcard unless -a) answers
 * on it until the engine is restarted.
 *
 *   blitz serve (epoll listener, interface record, supervisor)
 *     `- blitz-dpdk child (EAL, af_packet port, TAP)
 *
 * Owns: blitz-dpdk's command line (its options: dpdk_options.c), the
 * interface record and the TAP cleanup. Must never leave the interface
 * taken over after finish().
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "log.h"
#include "netif_state.h"
#include "supervisor.h"

#define DPDK_BIN "blitz-dpdk"
#define DPDK_STOP_MS 8000 /* EAL teardown and the restore take a while */

struct dpdk_child {
	char *args[SERVE_MAX_FWD + 32];
	char bin[PATH_MAX + 16], vdev[IF_NAMESIZE + 96], port[16],
		prefix[IF_NAMESIZE + 16], tap[IF_NAMESIZE], lcores[256],
		table[16], idle[16];
	struct netif_state st;
};

/* "-l" for EAL: the first n CPUs this process may run on, one lcore per
 * queue (so `taskset` still decides where the engine runs). */
static void dpdk_lcores(int n, char *buf, size_t len)
{
	cpu_set_t set;
	size_t off = 0;
	int cpu, k = 0;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set))
		CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE && k < n && off + 8 < len; cpu++)
		if (CPU_ISSET(cpu, &set))
			off += (size_t)snprintf(buf + off, len - off, "%s%d",
						k++ ? "," : "", cpu);
	if (!k)
		snprintf(buf, len, "0");
}

/*
 * blitz-dpdk lives next to the blitz binary. With an interface name the
 * port is that kernel interface through the af_packet PMD, so blitz-dpdk
 * takes it over (--takeover: its addresses move to a TAP, the exception
 * path; see dpdk/engine.h). EAL runs without hugepages (--no-huge is
 * refused together with --in-memory, hence --no-shconf and a file prefix
 * per interface).
 */
static int dpdk_args(struct serve_ctx *c, struct dpdk_child *d)
{
	char self[PATH_MAX], *slash;
	int i, k = 0, nq = c->queues > 0 ? c->queues : 1;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		pr_warn("cannot find the blitz binary: %s\n", strerror(errno));
		return -1;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		slash[1] = '\0';
	snprintf(d->bin, sizeof(d->bin), "%s%s", slash ? self : "./", DPDK_BIN);
	if (access(d->bin, X_OK)) {
		pr_warn("dpdk engine not available: %s not found (build it "
			"with `make`; needs libdpdk-dev)\n",
			d->bin);
		return -1;
	}
	/* 4,096 frames a ring, not af_packet's 512: at 100,000 connections
	 * a burst that arrives while the lcore sleeps or is descheduled
	 * overflowed 512, and what it dropped came back as retransmissions
	 * (8 MiB a ring). */
	snprintf(d->vdev, sizeof(d->vdev),
		 "--vdev=net_af_packet0,iface=%s,qpairs=%d,qdisc_bypass=1,"
		 "framecnt=4096",
		 c->ifname, nq);
	snprintf(d->prefix, sizeof(d->prefix), "blitz-%s", c->ifname);
	snprintf(d->tap, sizeof(d->tap), "bz%.*s", IF_NAMESIZE - 3, c->ifname);
	snprintf(d->port, sizeof(d->port), "%u", c->svc->port);
	dpdk_lcores(nq, d->lcores, sizeof(d->lcores));
	d->args[k++] = d->bin;
	d->args[k++] = "--no-huge";
	d->args[k++] = "-m";
	d->args[k++] = "512";
	d->args[k++] = "--no-pci";
	d->args[k++] = "--no-shconf";
	d->args[k++] = "--no-telemetry";
	d->args[k++] = "--file-prefix";
	d->args[k++] = d->prefix;
	d->args[k++] = "-l";
	d->args[k++] = d->lcores;
	d->args[k++] = d->vdev;
	d->args[k++] = "--";
	d->args[k++] = "-p";
	d->args[k++] = d->port;
	d->args[k++] = "--takeover";
	d->args[k++] = (char *)c->ifname;
	d->args[k++] = "--tap";
	d->args[k++] = d->tap;
	if (c->max_conns > 0) {
		/* --max-conns over the queues: blitz-dpdk's --table is per
		 * queue. */
		snprintf(d->table, sizeof(d->table), "%d",
			 (c->max_conns + nq - 1) / nq);
		d->args[k++] = "--table";
		d->args[k++] = d->table;
	}
	if (c->idle_ms > 0) {
		snprintf(d->idle, sizeof(d->idle), "%d", c->idle_ms / 1000);
		d->args[k++] = "--idle-timeout";
		d->args[k++] = d->idle;
	}
	if (blitz_log_level >= LOG_DEBUG)
		d->args[k++] = "-v";
	for (i = 0; i < c->n_fwd; i++) {
		/* -p is given above from the parsed value; drop duplicates. */
		if (!strcmp(c->fwd[i], "-p") || !strcmp(c->fwd[i], "--port")) {
			i++;
			continue;
		}
		if (!strncmp(c->fwd[i], "-p", 2) ||
		    !strncmp(c->fwd[i], "--port=", 7))
			continue;
		d->args[k++] = c->fwd[i];
	}
	d->args[k] = NULL;
	return 0;
}

static pid_t dpdk_spawn(struct serve_ctx *c)
{
	struct dpdk_child *d = c->priv;
	pid_t pid;
	int i;

	printf("blitz: dpdk engine: exec");
	for (i = 0; d->args[i]; i++)
		printf(" %s", d->args[i]);
	printf("\n");
	/* A dead serve cannot restore the interface: blitz-dpdk must then
	 * stop and restore it itself (SIGTERM). The death signal survives
	 * execv. */
	pid = supervisor_fork("dpdk engine", SIGTERM, NULL, 0);
	if (pid < 0)
		return -1;
	if (!pid) {
		signal(SIGPIPE, SIG_DFL);
		execv(d->bin, d->args);
		fprintf(stderr, "blitz: cannot run %s: %s\n", d->bin,
			strerror(errno));
		_exit(127);
	}
	printf("blitz: dpdk engine pid %d on %s\n", (int)pid, c->ifname);
	fflush(stdout);
	return pid;
}

/* blitz-dpdk exits non-zero only when its setup failed; at run time it
 * stops on a signal (0 after SIGINT/SIGTERM, a crash by the signal). */
static bool dpdk_nostart(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status);
}

/* The TAP goes with the process that opened it; a leftover one (net_tap
 * not done closing, or persistent) would make the next start refuse. */
static void dpdk_drop_tap(const struct dpdk_child *d)
{
	const char *const del[] = {"link", "del", "dev", d->tap, NULL};
	struct timespec nap = {.tv_nsec = 50 * 1000 * 1000};
	int i;

	for (i = 0; i < 20 && if_nametoindex(d->tap); i++)
		nanosleep(&nap, NULL);
	if (if_nametoindex(d->tap) && netif_run_ip(del, NULL, NULL, 0))
		pr_warn("dpdk engine left its TAP %s: `ip link del %s`\n",
			d->tap, d->tap);
}

static const char *dpdk_cleanup(struct serve_ctx *c)
{
	struct dpdk_child *d = c->priv;

	dpdk_drop_tap(d);
	if (netif_restore(&d->st)) {
		pr_warn("%s: could not restore all of its addresses, routes "
			"and settings (see `ip addr show %s`)\n",
			c->ifname, c->ifname);
		return "interface restored in part, ";
	}
	return "interface restored, ";
}

static int dpdk_prepare(struct serve_ctx *c)
{
	struct dpdk_child *d = calloc(1, sizeof(*d));

	if (!d) {
		pr_warn("out of memory\n");
		return -1;
	}
	c->priv = d;
	if (dpdk_args(c, d))
		return -1;
	/* Another engine on this interface: its TAP is there and the
	 * interface is not in the state to record (nor is that TAP ours to
	 * remove after a child of ours). */
	if (if_nametoindex(d->tap)) {
		pr_warn("interface %s already exists: another `blitz serve %s "
			"--engine dpdk` (or blitz-dpdk) running?\n",
			d->tap, c->ifname);
		return -1;
	}
	return netif_record(&d->st, c->ifname) ? -1 : 0;
}

static int dpdk_run(struct serve_ctx *c)
{
	static const struct supervised s = {
		.name = "dpdk",
		.stop_ms = DPDK_STOP_MS,
		.spawn = dpdk_spawn,
		.nostart = dpdk_nostart,
		.cleanup = dpdk_cleanup,
	};

	printf("blitz: serving on %s port %u: tier dpdk + epoll fallback\n",
	       c->ifname, c->svc->port);
	fflush(stdout);
	return supervise(c, &s);
}

static int dpdk_finish(struct serve_ctx *c)
{
	free(c->priv);
	c->priv = NULL;
	return 0;
}

const struct engine_desc engine_dpdk = {
	.name = "dpdk",
	.about = "the TCP core on a DPDK port (blitz-dpdk, a supervised "
		 "child that takes the interface over)",
	.xdp = ENGINE_XDP_NONE,
	.needs_ifname = true,
	.prepare = dpdk_prepare,
	.run = dpdk_run,
	.finish = dpdk_finish,
	.usr1 = true,
};
