// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_glue.c - the TCP core (userspace/tcp_core.h) on DPDK mbufs.
 *
 * Owns: one core per queue and the frame interface it asks for: a
 * tcp_frame's handle is an mbuf pointer; TX frames are mbufs from the
 * engine's mempool, whole Ethernet frames written by the core.
 * Must never: keep an RX mbuf after tcp_core_rx_burst returns (the core
 * keeps no pointer into it), or send a frame without its length set.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dpdk_engine.h"
#include "log.h"
#include "tcp_core.h"

static uint32_t glue_tx_alloc(void *ctx, struct tcp_frame *f, uint32_t n)
{
	struct worker *w = ctx;
	struct rte_mbuf *m[TCP_CORE_TX_BATCH];
	uint32_t i;

	if (n > TCP_CORE_TX_BATCH)
		n = TCP_CORE_TX_BATCH;
	/* All or nothing in bulk; when the pool runs low, try one. */
	if (rte_pktmbuf_alloc_bulk(w->eng->pool, m, n)) {
		if (n == 1 || rte_pktmbuf_alloc_bulk(w->eng->pool, m, 1)) {
			w->st.no_mbuf++;
			return 0;
		}
		n = 1;
	}
	for (i = 0; i < n; i++) {
		f[i].data = rte_pktmbuf_mtod(m[i], uint8_t *);
		f[i].cap = rte_pktmbuf_tailroom(m[i]);
		f[i].len = 0;
		f[i].handle = (uint64_t)(uintptr_t)m[i];
	}
	return n;
}

static void glue_tx_send(void *ctx, struct tcp_frame *f, uint32_t n)
{
	struct worker *w = ctx;
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = (struct rte_mbuf *)(uintptr_t)f[i].handle;

		m->data_len = (uint16_t)f[i].len;
		m->pkt_len = f[i].len;
		w->st.core_tx_frames++;
		worker_tx_ip(w, m);
	}
}

static void glue_tx_release(void *ctx, struct tcp_frame *f, uint32_t n)
{
	uint32_t i;

	(void)ctx;
	for (i = 0; i < n; i++)
		rte_pktmbuf_free((struct rte_mbuf *)(uintptr_t)f[i].handle);
}

static const struct tcp_io_ops glue_ops = {
	.tx_alloc = glue_tx_alloc,
	.tx_send = glue_tx_send,
	.tx_release = glue_tx_release,
};

int tcp_glue_init(struct worker *w)
{
	const struct engine *eng = w->eng;
	struct tcp_core_params p;

	memset(&p, 0, sizeof(p));
	p.port = eng->svc.port;
	p.n_addr4 = eng->svc.n_addr4;
	p.n_addr6 = eng->svc.n_addr6;
	p.addr4 = eng->svc.addr4;
	p.addr6 = eng->svc.addr6;
	memcpy(p.mac, eng->mac.addr_bytes, 6);
	p.resp = eng->resp;
	p.secret[0] = eng->svc.secret[0]; /* --secret-file; 0: random */
	p.secret[1] = eng->svc.secret[1];
	p.table_size = eng->table_size;
	p.idle_ms = eng->idle_ms;
	p.csum_partial_ok = eng->csum_partial_ok;
	p.frame_cap = RTE_MBUF_DEFAULT_DATAROOM;
	p.ops = &glue_ops;
	p.ops_ctx = w;
	w->tcp = tcp_core_new(&p);
	if (!w->tcp)
		return -errno;
	return 0;
}

void tcp_glue_fini(struct worker *w)
{
	tcp_core_free(w->tcp);
	w->tcp = NULL;
}

void tcp_glue_rx(struct worker *w, struct tcp_frame *f, uint32_t n)
{
	struct rte_mbuf *done[BURST];
	uint32_t back, i;

	back = tcp_core_rx_burst(w->tcp, f, n, w->now_ns);
	/* Handed back (not the core's after all): the kernel's. */
	for (i = 0; i < back; i++)
		exception_to_kernel(w,
				    (struct rte_mbuf *)(uintptr_t)f[i].handle);
	for (i = back; i < n; i++)
		done[i - back] = (struct rte_mbuf *)(uintptr_t)f[i].handle;
	if (n > back)
		rte_pktmbuf_free_bulk(done, n - back);
}

void tcp_glue_set_wallclock(struct worker *w, uint64_t mono_ns,
			    uint64_t unix_ns)
{
	tcp_core_set_wallclock(w->tcp, mono_ns, unix_ns);
}

void tcp_glue_poll(struct worker *w)
{
	tcp_core_poll_timers(w->tcp, w->now_ns);
}

const struct tcp_core_counters *tcp_glue_counters(struct worker *w)
{
	return tcp_core_counters(w->tcp);
}
