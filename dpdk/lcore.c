// SPDX-License-Identifier: GPL-2.0
/*
 * lcore.c - the poll loop of one queue: burst RX, classify, dispatch,
 * burst TX.
 *
 * Owns: the per-queue TX staging arrays (port and TAP), the decision of
 * where each received frame goes (engine.h has the picture), and the
 * accounting of busy time (polls that did work) for the cost per request.
 * Must never: block, allocate outside the mempool, or make a syscall on
 * the service path (the TAP bursts are the exception path's syscalls; the
 * only wait is idle.c's, after IDLE_SPIN_US without work or once spinning
 * took IDLE_SPIN_PCT of the recent time);
 * leave an mbuf unfreed: every frame is sent, handed on, or freed.
 */
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "dpdk_engine.h"
#include "rx_csum.h"
#include "tcp_core.h"

#define TAP_POLL_US 50 /* the kernel's frames wait at most this long */

static void tx_flush_one(struct worker *w, uint16_t port,
			 struct rte_mbuf **pkts, uint16_t *n, bool is_port)
{
	uint16_t sent = 0, left = *n;

	/* A few retries absorb a momentarily full ring; what still does not
	 * fit is freed (TCP retransmits) rather than stalling the loop. */
	for (int tries = 0; left && tries < 4; tries++) {
		uint16_t k =
			rte_eth_tx_burst(port, w->queue, pkts + sent, left);
		sent += k;
		left -= k;
	}
	if (is_port)
		w->st.tx_frames += sent;
	if (left) {
		w->st.drop_tx_full += left;
		rte_pktmbuf_free_bulk(pkts + sent, left);
	}
	*n = 0;
}

void worker_flush(struct worker *w)
{
	if (w->n_tx_port)
		tx_flush_one(w, w->eng->port_id, w->tx_port, &w->n_tx_port,
			     true);
	if (w->n_tx_tap)
		tx_flush_one(w, w->eng->tap_port_id, w->tx_tap, &w->n_tx_tap,
			     false);
}

void worker_tx_port(struct worker *w, struct rte_mbuf *m)
{
	if (w->n_tx_port == TXBUF)
		tx_flush_one(w, w->eng->port_id, w->tx_port, &w->n_tx_port,
			     true);
	w->tx_port[w->n_tx_port++] = m;
}

void worker_tx_tap(struct worker *w, struct rte_mbuf *m)
{
	if (!w->eng->have_tap) {
		w->st.drop_no_tap++;
		rte_pktmbuf_free(m);
		return;
	}
	if (w->n_tx_tap == TXBUF)
		tx_flush_one(w, w->eng->tap_port_id, w->tx_tap, &w->n_tx_tap,
			     false);
	w->tx_tap[w->n_tx_tap++] = m;
	w->st.to_tap_frames++;
}

/*
 * A frame the engine made: the destination MAC comes from the neighbour
 * table. On a miss the MAC already in the frame (the TCP core writes the
 * one its connection came from) is kept and an ARP request refreshes the
 * table; a frame with no MAC at all is dropped and counted.
 */
void worker_tx_ip(struct worker *w, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ether_addr mac;
	uint8_t addr[16];
	uint16_t type = eth->ether_type;

	eth->src_addr = w->eng->mac;
	if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

		neigh_addr4(addr, ip->dst_addr);
		if (neigh_lookup(w->eng->neigh, addr, &mac)) {
			eth->dst_addr = mac;
		} else {
			neigh_resolve(w, ip->dst_addr, ip->src_addr);
			if (rte_is_zero_ether_addr(&eth->dst_addr))
				goto drop;
		}
	} else if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(eth + 1);

		/* IPv6 neighbours are learnt from packets; discovery itself
		 * is the kernel's, through the TAP. */
		if (neigh_lookup(w->eng->neigh, ip6->dst_addr, &mac))
			eth->dst_addr = mac;
		else if (rte_is_zero_ether_addr(&eth->dst_addr))
			goto drop;
	}
	worker_tx_port(w, m);
	return;
drop:
	w->st.drop_no_neigh++;
	rte_pktmbuf_free(m);
}

/* Is this IPv4 frame a TCP segment for the service? Learns the sender. */
static int classify_ipv4(struct worker *w, struct rte_ether_hdr *eth,
			 uint32_t len)
{
	struct engine *eng = w->eng;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	uint32_t ihl;
	uint8_t addr[16];

	if (len < sizeof(*eth) + sizeof(*ip))
		return -1;
	ihl = (uint32_t)(ip->version_ihl & 0x0f) * 4;
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) ||
	    len < sizeof(*eth) + ihl + 8)
		return -1;
	if (!engine_has_addr4(eng, ip->dst_addr))
		return 0; /* not ours: the kernel's */
	if (eng->learn_from_ip) {
		neigh_addr4(addr, ip->src_addr);
		neigh_learn(eng->neigh, addr, &eth->src_addr);
	}
	/* Fragments are the kernel's to reassemble. */
	if (ip->fragment_offset &
	    rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK | RTE_IPV4_HDR_MF_FLAG))
		return 0;
	if (ip->next_proto_id == IPPROTO_TCP) {
		struct rte_tcp_hdr *th =
			(struct rte_tcp_hdr *)((uint8_t *)ip + ihl);

		return th->dst_port == eng->port_be ? 1 : 0;
	}
	if (ip->next_proto_id == IPPROTO_ICMP)
		return 2;
	return 0;
}

static int classify_ipv6(struct worker *w, struct rte_ether_hdr *eth,
			 uint32_t len)
{
	struct engine *eng = w->eng;
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(eth + 1);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip6 + 1);

	if (len < sizeof(*eth) + sizeof(*ip6) + 8)
		return -1;
	/* Neighbour solicitations go to a multicast address: icmp6.c looks
	 * at their target. */
	if (ip6->proto == IPPROTO_ICMPV6)
		return 3;
	if (!engine_has_addr6(eng, ip6->dst_addr))
		return 0;
	if (eng->learn_from_ip)
		neigh_learn(eng->neigh, ip6->src_addr, &eth->src_addr);
	if (ip6->proto == IPPROTO_TCP && th->dst_port == eng->port_be)
		return 1;
	return 0;
}

/*
 * Where a frame from the port goes. Returns 1 when it is a TCP segment for
 * the core (left to the caller), else handles or frees it.
 */
static int dispatch(struct worker *w, struct rte_mbuf *m)
{
	struct engine *eng = w->eng;
	struct rte_ether_hdr *eth;
	uint32_t len = rte_pktmbuf_data_len(m);
	int c;

	if (len < sizeof(*eth))
		goto drop;
	if (unlikely(m->nb_segs > 1)) {
		/* The port asks for no LRO and no RX scatter (port.c): one
		 * wire frame per mbuf. A PMD that chains anyway (a frame over
		 * the data room) is not parsed across segments: dropped. */
		w->st.drop_chained++;
		rte_pktmbuf_free(m);
		return 0;
	}
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (rte_is_same_ether_addr(&eth->src_addr, &eng->mac)) {
		/* af_packet shows us our own TX (and the kernel's via the
		 * TAP, which has our MAC). */
		w->st.drop_own++;
		rte_pktmbuf_free(m);
		return 0;
	}
	if (!rte_is_same_ether_addr(&eth->dst_addr, &eng->mac) &&
	    !rte_is_multicast_ether_addr(&eth->dst_addr))
		goto drop;

	switch (eth->ether_type) {
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		arp_input(w, m);
		return 0;
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		c = classify_ipv4(w, eth, len);
		break;
	case RTE_BE16(RTE_ETHER_TYPE_IPV6):
		c = classify_ipv6(w, eth, len);
		break;
	default:
		c = 0;
	}
	if (c == 1)
		return 1;
	if (c == 2) {
		icmp4_input(w, m, sizeof(*eth));
		return 0;
	}
	if (c == 3) {
		icmp6_input(w, m);
		return 0;
	}
	if (c < 0)
		goto drop;
	exception_to_kernel(w, m);
	return 0;
drop:
	w->st.drop_other++;
	rte_pktmbuf_free(m);
	return 0;
}

static void print_periodic(struct worker *w, uint64_t *next_tsc)
{
	if (w->queue != 0)
		return;
	if (stats_now) {
		stats_now = false;
		engine_print_stats(w->eng, false);
	}
	if (!w->eng->stats_interval || w->now_tsc < *next_tsc)
		return;
	*next_tsc = w->now_tsc + w->eng->stats_interval * w->eng->tsc_hz;
	engine_print_stats(w->eng, false);
}

/*
 * CLOCK_MONOTONIC from the TSC: clock_gettime costs ~100 ns where the
 * vDSO cannot read the TSC itself (some VMs), a third of an idle loop.
 * Resynchronised with the real clock once a second, so it never drifts.
 */
struct tsc_clock {
	uint64_t base_tsc, base_ns, mult; /* ns = base + (d * mult) >> 32 */
	uint64_t hz;
	uint64_t base_unix_ns; /* CLOCK_REALTIME at base_ns */
	bool synced;	       /* set by a sync, cleared by its reader */
};

static void tsc_clock_sync(struct tsc_clock *c, uint64_t tsc)
{
	struct timespec ts, rt;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	clock_gettime(CLOCK_REALTIME, &rt);
	c->base_tsc = tsc;
	c->base_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	c->base_unix_ns =
		(uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	c->synced = true;
}

static uint64_t tsc_clock_ns(struct tsc_clock *c, uint64_t tsc)
{
	uint64_t d = tsc - c->base_tsc;

	if (d >= c->hz) { /* keeps d * mult within 64 bits, too */
		tsc_clock_sync(c, tsc);
		d = 0;
	}
	return c->base_ns + ((d * c->mult) >> 32);
}

int worker_main(void *arg)
{
	struct worker *w = arg;
	struct engine *eng = w->eng;
	struct rte_mbuf *pkts[BURST];
	struct tcp_frame tf[BURST];
	uint64_t next_stats = 0, next_tap = 0, idle_since = 0;
	uint64_t tap_gap = eng->tsc_hz / 1000000 * TAP_POLL_US;
	uint64_t idle_spin = eng->tsc_hz / 1000000 * IDLE_SPIN_US;
	uint64_t spin_window = eng->tsc_hz / 1000000 * IDLE_SPIN_WINDOW_US;
	uint64_t prev_t0 = 0, acc_busy = 0, acc_spin = 0;
	enum { LOOP_BUSY, LOOP_SPIN, LOOP_SLEPT } prev_kind = LOOP_SLEPT;
	struct tsc_clock clk = {
		.hz = eng->tsc_hz,
		.mult = (1000000000ull << 32) / eng->tsc_hz,
	};

	tsc_clock_sync(&clk, rte_rdtsc());
	while (!force_quit) {
		uint64_t t0 = rte_rdtsc(), tx0 = w->st.tx_frames, t_rx = 0;
		uint16_t n, i, n_tap = 0;
		uint32_t nt = 0;

		w->now_tsc = t0;
		w->now_ns = tsc_clock_ns(&clk, t0);
		/* The last loop's time, by what it was (a sleep's is not
		 * counted): what share of the recent time went to spinning. */
		if (prev_kind == LOOP_BUSY)
			acc_busy += t0 - prev_t0;
		else if (prev_kind == LOOP_SPIN)
			acc_spin += t0 - prev_t0;
		if (acc_busy + acc_spin > spin_window) {
			acc_busy /= 2;
			acc_spin /= 2;
		}
		prev_t0 = t0;
		prev_kind = LOOP_BUSY;
		if (clk.synced) { /* once a second: cookie periods follow it */
			tcp_glue_set_wallclock(w, clk.base_ns,
					       clk.base_unix_ns);
			clk.synced = false;
		}

		n = rte_eth_rx_burst(eng->port_id, w->queue, pkts, BURST);
		w->st.rx_frames += n;
		if (n)
			t_rx = rte_rdtsc();
		for (i = 0; i < n; i++) {
			if (dispatch(w, pkts[i])) {
				tf[nt].data =
					rte_pktmbuf_mtod(pkts[i], uint8_t *);
				tf[nt].len = rte_pktmbuf_data_len(pkts[i]);
				tf[nt].cap = tf[nt].len;
				tf[nt].handle = (uint64_t)(uintptr_t)pkts[i];
				tf[nt].rx_csum =
					rx_csum_verdict(pkts[i]->ol_flags);
				nt++;
			}
		}
		if (nt)
			tcp_glue_rx(w, tf, nt);
		/* blitz's own share of the poll: classification and the TCP
		 * core, not the PMD's rx/tx (af_packet: syscalls). */
		if (n)
			w->st.engine_cycles += rte_rdtsc() - t_rx;
		/* Reading the TAP is a syscall: poll it every TAP_POLL_US
		 * (or at once again after a full burst), not every loop. */
		if (eng->have_tap && t0 >= next_tap) {
			n_tap = rte_eth_rx_burst(eng->tap_port_id, w->queue,
						 pkts, BURST);
			if (n_tap)
				exception_from_kernel(w, pkts, n_tap);
			next_tap = n_tap == BURST ? t0 : t0 + tap_gap;
		}
		tcp_glue_poll(w);
		worker_flush(w);
		if (n || n_tap || w->st.tx_frames != tx0) {
			w->st.busy_polls++;
			w->st.busy_cycles += rte_rdtsc() - t0;
			idle_since = 0;
		} else if (w->n_idle_fds && !eng->busy_poll) {
			/* Nothing to do for IDLE_SPIN_US, or spinning took
			 * its share of the recent time already: sleep until a
			 * frame (the port's or the TAP's) or the next timer.
			 * The spin saves a wake-up while the lcore is nearly
			 * busy; an lcore idle between short bursts of work
			 * (many connections, each with little to do) would
			 * spend a fifth of its time on it. */
			bool spun_enough =
				acc_spin * 100 >
				(acc_busy + acc_spin) * IDLE_SPIN_PCT;

			prev_kind = LOOP_SPIN;
			if (!idle_since)
				idle_since = t0;
			if (spun_enough || t0 - idle_since >= idle_spin) {
				prev_kind = LOOP_SLEPT;
				registry_publish(w, true);
				idle_wait(w, tcp_core_next_timer_ms(w->tcp,
								    w->now_ns));
				next_tap =
					0; /* it may be the TAP that woke us */
				idle_since = 0;
			}
		}
		print_periodic(w, &next_stats);
		registry_publish(w, false);
	}
	worker_flush(w);
	registry_publish(w, true);
	return 0;
}
