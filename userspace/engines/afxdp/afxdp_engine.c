// SPDX-License-Identifier: GPL-2.0
/*
 * afxdp_engine.c - AF_XDP sockets, one per RX queue, each with its own UMEM,
 * poll thread and TCP core (see afxdp_engine.h for the contract).
 *
 * Owns: UMEM memory, the four rings of each socket, the xsks map entries
 * this process inserted, the poll threads. Must never load or attach an
 * XDP program, never allocate on the packet path, and never make a
 * syscall per packet: the only syscalls in the loop are a sendto() kick
 * when the TX ring asks for one, a recvfrom() kick when the fill ring asks,
 * and poll() when idle (not with busy_poll).
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_xdp.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afxdp_engine.h"
#include "counters.h"
#include "nic_info.h"
#include "log.h"
#include "tcp_core.h"
#include "xsk.h"

#define FRAME_SIZE 2048
#define RX_BATCH 64
#define DEFAULT_FRAMES 4096
/* A queue whose table holds more than TCP_CORE_DEFAULT_TABLE connections
 * gets BIG_FRAMES (32 MiB of UMEM, half for RX): the bursts its RX ring
 * must hold while its thread waits for the CPU grow with the connections
 * it serves. At 100,000 connections on one queue (conns.sh, fair
 * placement: veth's NAPI thread preempts the engine) 4,096 frames lost
 * frames in steady state (13,103 server retransmissions in a 10 s row);
 * 16,384 lost almost none (1,436). */
#define BIG_FRAMES 16384
#define MIN_FRAMES 256
#define IDLE_POLL_MS 100 /* upper bound on a sleep: *stop is checked */

struct xq {
	const struct afxdp_engine_opts *o;
	volatile sig_atomic_t *stop;
	int qid;
	int cpu;

	struct blitz_xsk x; /* half RX (fill ring), half TX (free stack) */
	bool in_map;

	struct tcp_core *core;
	uint32_t table_size;  /* connections of this queue's core */
	bool csum_partial_ok; /* the device may deliver partial sums */
	pthread_t th;
	bool started;

	/* stats */
	uint64_t busy_ns, polls_busy, rx_frames;
};

static struct afxdp_engine_totals last_totals;

void afxdp_engine_last_totals(struct afxdp_engine_totals *t)
{
	*t = last_totals;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Once a second: the core's cookie periods follow the wall clock, which
 * NTP may step after we started (a fleet's hosts must agree on it). */
static void sync_wallclock(struct tcp_core *core, uint64_t now, uint64_t *next)
{
	struct timespec rt;

	if (now < *next)
		return;
	clock_gettime(CLOCK_REALTIME, &rt);
	tcp_core_set_wallclock(core, now,
			       (uint64_t)rt.tv_sec * 1000000000ull +
				       (uint64_t)rt.tv_nsec);
	*next = now + 1000000000ull;
}

/* ------------------------------------------------------------------ */
/* The TCP core's TX side: UMEM frames from the TX half                */
/* ------------------------------------------------------------------ */

static uint32_t xq_tx_alloc(void *ctx, struct tcp_frame *f, uint32_t n)
{
	struct xq *q = ctx;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t addr;

		if (!blitz_xsk_tx_alloc(&q->x, &addr))
			break;
		f[i].handle = addr;
		f[i].data = blitz_xsk_data(&q->x, addr);
		f[i].cap = FRAME_SIZE;
		f[i].len = 0;
	}
	return i;
}

static void xq_tx_send(void *ctx, struct tcp_frame *f, uint32_t n)
{
	struct xq *q = ctx;
	uint64_t addr[TCP_CORE_TX_BATCH];
	uint32_t len[TCP_CORE_TX_BATCH], i, k;

	/* The ring cannot be fuller than the TX frames we own, so frames not
	 * queued are only a guard case: they go back, retransmission
	 * repairs. */
	for (k = 0; k < n; k += i) {
		for (i = 0; i < TCP_CORE_TX_BATCH && k + i < n; i++) {
			addr[i] = f[k + i].handle;
			len[i] = f[k + i].len;
		}
		blitz_xsk_tx_queue(&q->x, addr, len, i);
	}
}

static void xq_tx_release(void *ctx, struct tcp_frame *f, uint32_t n)
{
	struct xq *q = ctx;
	uint32_t i;

	for (i = 0; i < n; i++)
		blitz_xsk_tx_free(&q->x, f[i].handle);
}

static const struct tcp_io_ops xq_ops = {
	.tx_alloc = xq_tx_alloc,
	.tx_send = xq_tx_send,
	.tx_release = xq_tx_release,
};

/* ------------------------------------------------------------------ */
/* Setup and teardown of one queue                                     */
/* ------------------------------------------------------------------ */

static void xq_fini(struct xq *q)
{
	if (q->in_map) {
		uint32_t key = (uint32_t)q->qid;

		bpf_map_delete_elem(q->o->xsks_fd, &key);
		q->in_map = false;
	}
	blitz_xsk_close(&q->x);
	tcp_core_free(q->core);
	q->core = NULL;
}

static uint32_t umem_frames(const struct afxdp_engine_opts *o, uint32_t table)
{
	if (o->umem_frames)
		return o->umem_frames;
	return table > TCP_CORE_DEFAULT_TABLE ? BIG_FRAMES : DEFAULT_FRAMES;
}

static int xq_init(struct xq *q, const struct afxdp_engine_opts *o)
{
	const struct blitz_service *svc = o->svc;
	struct tcp_core_params p = {
		.port = svc->port,
		.n_addr4 = svc->n_addr4,
		.n_addr6 = svc->n_addr6,
		.addr4 = svc->addr4,
		.addr6 = svc->addr6,
		.resp = o->resp,
		.secret = {svc->secret[0], svc->secret[1]}, /* 0: random */
		.table_size = q->table_size,
		.idle_ms = o->idle_ms,
		.frame_cap = FRAME_SIZE,
		.csum_partial_ok = q->csum_partial_ok,
		.ops = &xq_ops,
		.ops_ctx = q,
	};
	struct blitz_xsk_cfg xc = {
		.ifname = o->ifname,
		.queue = (uint32_t)q->qid,
		.frames = umem_frames(o, q->table_size),
		.min_frames = MIN_FRAMES,
		.frame_size = FRAME_SIZE,
		.force_copy = o->force_copy,
	};
	uint32_t key = (uint32_t)q->qid;
	int ret;

	q->core = tcp_core_new(&p);
	if (!q->core)
		return -errno;
	ret = blitz_xsk_open(&q->x, &xc);
	if (ret)
		return ret;

	/* Last: traffic starts arriving once the socket is in the map. */
	if (bpf_map_update_elem(o->xsks_fd, &key, &q->x.fd, 0)) {
		ret = -errno;
		pr_warn("bpf_map_update_elem(xsks, queue %d, fd %d): %s\n",
			q->qid, q->x.fd, strerror(-ret));
		return ret;
	}
	q->in_map = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The poll loop                                                       */
/* ------------------------------------------------------------------ */

/* One RX batch: to the core, then the frames back to the fill ring.
 * Returns frames received. */
static uint32_t xq_rx(struct xq *q, uint64_t now)
{
	struct tcp_frame fr[RX_BATCH];
	struct xdp_desc d[RX_BATCH];
	uint32_t n, i;

	n = blitz_xsk_rx_burst(&q->x, d, RX_BATCH);
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		fr[i].data = blitz_xsk_data(&q->x, d[i].addr);
		fr[i].len = d[i].len;
		fr[i].cap = d[i].len;
		fr[i].handle = blitz_xsk_frame_of(&q->x, d[i].addr);
		fr[i].rx_csum = 0; /* no verdict from AF_XDP: the core sums */
	}
	/* Frames not for the service (the XDP program only redirects the
	 * service's, so this is rare) are simply recycled with the rest. */
	tcp_core_rx_burst(q->core, fr, n, now);
	q->rx_frames += n;
	blitz_xsk_refill(&q->x, d, n);
	return n;
}

static void *xq_thread(void *arg)
{
	struct xq *q = arg;
	uint64_t next_wall = 0;

	if (q->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(q->cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
			pr_warn("queue %d: cannot pin to CPU %d\n", q->qid,
				q->cpu);
	}
	while (!*q->stop) {
		uint64_t t0 = mono_ns(), t1;
		uint32_t n;
		bool work;

		sync_wallclock(q->core, t0, &next_wall);

		blitz_xsk_complete(&q->x);
		n = xq_rx(q, t0);
		tcp_core_poll_timers(q->core, t0);
		/* A poll did work when it received or sent something: a
		 * kick for frames still unsent counts too, so that the
		 * busy time holds every kick's (kick_ns is part of it). */
		work = n || q->x.tx_unkicked;
		if (blitz_xsk_kick_tx(&q->x, 1))
			work = true;
		if (work) {
			if (n)
				blitz_xsk_kick_rx(&q->x);
			t1 = mono_ns();
			q->busy_ns += t1 - t0;
			q->polls_busy++;
			continue;
		}
		if (!q->o->busy_poll) {
			struct pollfd pfd = {.fd = q->x.fd, .events = POLLIN};
			int ms = tcp_core_next_timer_ms(q->core, t0);

			if (ms > IDLE_POLL_MS)
				ms = IDLE_POLL_MS;
			poll(&pfd, 1, ms);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Engine                                                              */
/* ------------------------------------------------------------------ */

/* The RX queues to serve: the channels in use (rx or combined), 1 when
 * the driver has no `ethtool -l`. */
static int rx_queue_count(const char *ifname)
{
	struct nic_channels c;
	uint32_t m;
	int n = 1;

	if (!nic_channels(ifname, &c)) {
		m = c.rx > c.combined ? c.rx : c.combined;
		if (m)
			n = (int)m;
	}
	return n > AFXDP_MAX_QUEUES ? AFXDP_MAX_QUEUES : n;
}

/* The counter registry's area (o->registry): a slot per queue, each
 * queue's core counters plus what the area held when it was made (an
 * engine that serve restarted carries on from the killed one's totals).
 * This thread alone writes it. */
struct registry {
	struct counters_area area;
	uint64_t *base; /* [nq][TCP_CORE_N_COUNTERS] */
	int nq;
};

static void registry_open(struct registry *r, const struct afxdp_engine_opts *o,
			  int nq)
{
	int i;

	memset(r, 0, sizeof(*r));
	if (!o->registry ||
	    counters_create(&r->area, "afxdp", o->ifname, o->svc->port,
			    tcp_core_counter_names, TCP_CORE_N_COUNTERS,
			    (unsigned int)nq))
		return;
	r->base = calloc((size_t)nq * TCP_CORE_N_COUNTERS, sizeof(uint64_t));
	if (!r->base) {
		counters_close(&r->area, true);
		return;
	}
	for (i = 0; i < nq; i++)
		memcpy(r->base + (size_t)i * TCP_CORE_N_COUNTERS,
		       counters_slot(&r->area, (unsigned int)i),
		       TCP_CORE_N_COUNTERS * sizeof(uint64_t));
	r->nq = nq;
}

static void registry_publish(struct registry *r, struct xq *qs)
{
	int i;

	for (i = 0; r->base && i < r->nq; i++)
		if (qs[i].core)
			tcp_core_counters_publish(
				tcp_core_counters(qs[i].core),
				r->base + (size_t)i * TCP_CORE_N_COUNTERS,
				counters_slot(&r->area, (unsigned int)i));
}

static void registry_close(struct registry *r)
{
	if (r->base)
		counters_close(&r->area, true);
	free(r->base);
	r->base = NULL;
}

/* The i-th CPU (wrapping) of the set, -1 when it is empty. */
static int nth_cpu(const cpu_set_t *set, int i)
{
	int n = CPU_COUNT(set), cpu, k = 0;

	if (!n)
		return -1;
	i %= n;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, set) && k++ == i)
			return cpu;
	return -1;
}

/* o->mode_report: each queue's mode and why, written whole (rename). */
static void write_mode_report(const struct afxdp_engine_opts *o,
			      const struct xq *qs, int nq)
{
	char tmp[PATH_MAX];
	FILE *f;
	int i;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o->mode_report) >=
	    (int)sizeof(tmp))
		return;
	f = fopen(tmp, "we");
	if (!f) {
		pr_debug("afxdp: cannot write %s: %s\n", tmp, strerror(errno));
		return;
	}
	for (i = 0; i < nq; i++)
		fprintf(f, "%d %s %s\n", i, blitz_xsk_mode(&qs[i].x),
			qs[i].x.mode_why);
	if (fclose(f) || rename(tmp, o->mode_report))
		unlink(tmp);
}

/* The options' checks and the number of queues: 0 or -errno. */
static int opts_check(const struct afxdp_engine_opts *o, int *nq)
{
	if (!o || !o->ifname || !o->svc || o->xsks_fd < 0) {
		pr_warn("afxdp engine: missing interface, service or xsks "
			"map\n");
		return -EINVAL;
	}
	if (!if_nametoindex(o->ifname)) {
		pr_warn("afxdp engine: no interface %s\n", o->ifname);
		return -ENODEV;
	}
	*nq = o->queues > 0 ? o->queues : rx_queue_count(o->ifname);
	if (*nq > AFXDP_MAX_QUEUES) {
		pr_warn("afxdp engine: %d queues: at most %d\n", *nq,
			AFXDP_MAX_QUEUES);
		return -EINVAL;
	}
	return 0;
}

/* Each queue's socket, UMEM and core, on its CPU: 0 or -errno (the
 * queues made so far are left for queues_finish). */
static int queues_init(struct xq *qs, int nq, const struct afxdp_engine_opts *o,
		       volatile sig_atomic_t *stop)
{
	cpu_set_t allowed;
	bool csum_partial;
	int i, ret, ncpu;

	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	/* veth and its kin hand over a local stack's frames with the TCP
	 * sum of the pseudo-header alone: the cores take that form from
	 * such a device only (a NIC's frames carry the full sum). */
	csum_partial = nic_csum_partial(o->ifname);
	for (i = 0; i < nq; i++) {
		qs[i].o = o;
		qs[i].csum_partial_ok = csum_partial;
		qs[i].table_size = o->max_conns ? (o->max_conns + (uint32_t)nq -
						   1) / (uint32_t)nq
						: o->table_size;
		qs[i].stop = stop;
		qs[i].qid = i;
		qs[i].cpu = o->cpu_first >= 0 ? (o->cpu_first + i) % ncpu
					      : nth_cpu(&allowed, i);
		ret = xq_init(&qs[i], o);
		if (ret)
			return ret;
		pr_info("afxdp: %s queue %d: %s mode (%s), %u UMEM frames of "
			"%u bytes, need_wakeup%s, CPU %d, checksums %s, "
			"%u connections (%zu MiB)\n",
			o->ifname, i, blitz_xsk_mode(&qs[i].x),
			qs[i].x.mode_why, qs[i].x.nframes, FRAME_SIZE,
			o->busy_poll ? ", busy poll" : "", qs[i].cpu,
			csum_partial ? "full or a local stack's partial sum"
				     : "full only",
			qs[i].table_size ? qs[i].table_size
					 : TCP_CORE_DEFAULT_TABLE,
			tcp_core_table_bytes(
				qs[i].table_size ? qs[i].table_size
						 : TCP_CORE_DEFAULT_TABLE) >>
				20);
	}
	return 0;
}

/* Run the poll threads until *stop; this thread publishes the counters
 * meanwhile. Returns 0 or the -errno of a thread that did not start. */
static int queues_run(struct xq *qs, int nq, const struct afxdp_engine_opts *o,
		      volatile sig_atomic_t *stop)
{
	struct registry reg = {0};
	int i, ret = 0;

	registry_open(&reg, o, nq);
	for (i = 0; i < nq; i++) {
		ret = -pthread_create(&qs[i].th, NULL, xq_thread, &qs[i]);
		if (ret) {
			pr_warn("afxdp engine: pthread_create: %s\n",
				strerror(-ret));
			*stop = 1;
			break;
		}
		qs[i].started = true;
	}
	/* The main thread publishes the counters while the queues work. */
	while (!*stop) {
		struct timespec ts = {.tv_nsec = 250 * 1000000L};

		registry_publish(&reg, qs);
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < nq; i++)
		if (qs[i].started)
			pthread_join(qs[i].th, NULL);
	registry_publish(&reg, qs);
	registry_close(&reg);
	return ret;
}

/* Sum the queues' counters into last_totals, free the queues, and say
 * what was done (when ret is 0: the run went as asked). */
static void queues_finish(struct xq *qs, int nq, int ret)
{
	struct tcp_core_counters tot;
	uint64_t busy = 0, polls = 0, rxf = 0, kick = 0, kicks = 0;
	int i;

	memset(&tot, 0, sizeof(tot));
	for (i = 0; i < nq; i++) {
		if (qs[i].core) {
			const struct tcp_core_counters *c =
				tcp_core_counters(qs[i].core);
			const uint64_t *src = (const uint64_t *)c;
			uint64_t *dst = (uint64_t *)&tot;
			size_t k;

			for (k = 0; k < sizeof(tot) / sizeof(uint64_t); k++)
				dst[k] += src[k];
		}
		if (qs[i].core && nq > 1)
			pr_info("afxdp: queue %d: %llu frames in, %llu "
				"requests\n",
				i, (unsigned long long)qs[i].rx_frames,
				(unsigned long long)tcp_core_counters(
					qs[i].core)
					->requests);
		busy += qs[i].busy_ns;
		polls += qs[i].polls_busy;
		rxf += qs[i].rx_frames;
		kick += qs[i].x.kick_ns;
		kicks += qs[i].x.kicks;
		xq_fini(&qs[i]);
	}
	free(qs);
	last_totals.requests = tot.requests;
	last_totals.busy_ns = busy;
	last_totals.polls_busy = polls;
	last_totals.kick_ns = kick;
	if (!ret) {
		pr_info("afxdp: %llu requests, %llu connections (%llu reset, "
			"%llu refused: table full), %llu retransmits, %llu "
			"frames in\n",
			(unsigned long long)tot.requests,
			(unsigned long long)tot.connections_opened,
			(unsigned long long)tot.connections_reset,
			(unsigned long long)tot.table_full,
			(unsigned long long)tot.retransmits,
			(unsigned long long)rxf);
		if (tot.requests)
			pr_info("afxdp: cost %.0f ns per request (%.3f s in "
				"%llu polls that did work), of which %.0f ns "
				"in "
				"%llu TX kicks (sendto)\n",
				(double)busy / (double)tot.requests,
				(double)busy / 1e9, (unsigned long long)polls,
				(double)kick / (double)tot.requests,
				(unsigned long long)kicks);
	}
}

int afxdp_engine_run(const struct afxdp_engine_opts *o,
		     volatile sig_atomic_t *stop)
{
	struct xq *qs;
	int nq, ret;

	ret = opts_check(o, &nq);
	if (ret)
		return ret;
	qs = calloc((size_t)nq, sizeof(*qs));
	if (!qs)
		return -ENOMEM;
	ret = queues_init(qs, nq, o, stop);
	if (!ret) {
		if (o->mode_report)
			write_mode_report(o, qs, nq);
		ret = queues_run(qs, nq, o, stop);
	}
	if (o->mode_report)
		unlink(o->mode_report);
	queues_finish(qs, nq, ret);
	return ret;
}
