/* SPDX-License-Identifier: GPL-2.0 */
/*
 * afxdp_engine.h - the afxdp engine: one AF_XDP socket and one poll thread
 * per RX queue, each feeding its own TCP core (tcp_core.h).
 *
 * Owns: the UMEM areas, the AF_XDP sockets, their entries in the loader's
 * `xsks` map, the poll threads. Must never load or attach an XDP program
 * (the loader did, with engine = BLITZ_MODE_AFXDP, so service traffic is
 * redirected to xsks[rx_queue] and falls back to XDP_PASS when no socket is
 * bound), and must never make a syscall per packet.
 *
 * Rings, per queue (who produces -> who consumes):
 *
 *   fill       engine -> kernel   empty UMEM frames for RX
 *   rx         kernel -> engine   received frames (addr, len)
 *   tx         engine -> kernel   frames to send
 *   completion kernel -> engine   sent frames, back to the engine
 *
 * UMEM per queue: frames of 2048 bytes, half for RX (kept in the fill ring)
 * and half for TX (a free stack refilled from the completion ring). UMEM is
 * locked memory: with `ulimit -l` at 8 MiB (no CAP_SYS_RESOURCE) the total
 * over all queues must fit, so the default is 2048 frames (4 MiB) per queue,
 * halved until the UMEM registers.
 *
 * The XDP bind mode: XDP_ZEROCOPY is tried first, then XDP_COPY; the
 * engine logs which one each queue got. need_wakeup is used: the engine
 * kicks the kernel (sendto / poll) only when the ring asks for it, and
 * sleeps in poll() (bounded by the TCP core's next timer) when idle unless
 * busy_poll is set.
 *
 * Killing the process closes the sockets: their xsks entries disappear and
 * the XDP program passes service traffic to the kernel (epoll listener).
 */
#ifndef BLITZ_AFXDP_ENGINE_H
#define BLITZ_AFXDP_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "service.h"

struct http_responses;

#define AFXDP_MAX_QUEUES 64

struct afxdp_engine_opts {
	const char *ifname;
	/* RX queues served, 0..queues-1; 0: every RX queue of ifname
	 * (nic_channels(), or 1 when the driver does not say). */
	int queues;
	/* The loader's xsks map (blitz_loaded_xsks_fd()). */
	int xsks_fd;
	/* What to serve: port and addresses, and the responses built once
	 * from it (service_responses()); each queue's core copies them. */
	const struct blitz_service *svc;
	const struct http_responses *resp;
	/* Connections per queue; 0: TCP_CORE_DEFAULT_TABLE (65536). */
	uint32_t table_size;
	/* Connections over all queues (serve --max-conns), split evenly:
	 * overrides table_size; 0: table_size per queue. */
	uint32_t max_conns;
	/* Keep-alive idle timeout (serve --idle-timeout); 0: the core's. */
	uint32_t idle_ms;
	/* Pin queue i's thread to CPU (cpu_first + i) % online CPUs;
	 * -1: to the i-th CPU (wrapping) the process may run on, so
	 * `taskset` still decides where the engine runs. */
	int cpu_first;
	/* UMEM frames per queue (serve --umem-frames); 0: 4096, or 16384
	 * for a table over TCP_CORE_DEFAULT_TABLE; halved until it
	 * registers. */
	uint32_t umem_frames;
	/* Spin on the rings instead of sleeping in poll() when idle. */
	bool busy_poll;
	/* Force XDP_COPY (skip the zero-copy attempt). */
	bool force_copy;
	/* The BPF per-CPU "counters" map (blitz_loaded_counters_fd()) or -1.
	 * Not written: that map is the XDP program's, and the engine's own
	 * counts there were counted twice (Prometheus engine="xdp" beside
	 * engine="afxdp"). The engine's counters are the registry's (below);
	 * `blitz stats IF` adds them in (counters_xdp.h). Kept so callers
	 * that set it build unchanged. */
	int counters_fd;
	/* Publish every queue's TCP core counters (all of them: challenge
	 * ACKs, TLP probes, header timeouts, ...) to the counter registry
	 * (counters.h) as engine "afxdp", a slot per queue, every 250 ms,
	 * for `blitz stats` and Prometheus under serve. */
	bool registry;
	/* When set: once every socket is open, one line per queue
	 * "<queue> <zero-copy|copy> <why>" is written to this file (whole,
	 * by rename), for `blitz status`; removed when the engine stops. */
	const char *mode_report;
};

/*
 * Serve until *stop becomes non-zero (set it from a SIGINT/SIGTERM
 * handler). Creates everything, starts one thread per queue, waits, joins,
 * tears everything down, prints the totals (requests, connections, the cost
 * per request: ns spent in polls that did work / requests).
 * Returns 0, or a negative errno after printing one line saying what failed
 * (e.g. "xsk_socket__create(bzs, queue 0): Operation not supported").
 *
 * cmd_serve's call:
 *   struct afxdp_engine_opts eo = { .ifname = ifname, .queues = queues,
 *	.xsks_fd = blitz_loaded_xsks_fd(l), .svc = &svc, .resp = &resp,
 *	.cpu_first = -1,
 *	.counters_fd = blitz_loaded_counters_fd(l) };
 *   ret = afxdp_engine_run(&eo, &stop);
 */
int afxdp_engine_run(const struct afxdp_engine_opts *o,
		     volatile sig_atomic_t *stop);

/* Totals of the last afxdp_engine_run in this process (for tests). */
struct afxdp_engine_totals {
	uint64_t requests;
	uint64_t busy_ns; /* ns spent in polls that did work */
	uint64_t polls_busy;
	uint64_t kick_ns; /* of busy_ns: in sendto() TX kicks */
};
void afxdp_engine_last_totals(struct afxdp_engine_totals *t);

#endif /* BLITZ_AFXDP_ENGINE_H */
