// SPDX-License-Identifier: GPL-2.0
/*
 * bench_tcp.c - the TCP client of the load generator (bench_int.h): handshakes,
 * batches of requests, ACKs, retransmission timers, the RX loop.
 *
 * Owns: every segment the generator sends and the connection table's
 * states. Must never send to an address other than the one it was given,
 * never verify incoming checksums (veth delivers locally made frames with
 * partial ones), and never allocate or make per-segment syscalls.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "bench_int.h"
#include "log.h"
#include "wire.h"

/* ---- TX ---- */

/* Publish what was queued and kick the kernel: in copy mode every TX needs
 * a sendto, which moves at most a small batch per call. */
void bg_flush_tx(struct gen *g)
{
	blitz_xsk_complete(&g->x);
	blitz_xsk_kick_tx(&g->x, 64);
	blitz_xsk_complete(&g->x);
}

static inline uint16_t slot_port(const struct gen *g, uint32_t slot)
{
	return (uint16_t)(g->p->port_lo + slot / g->n_src);
}

/* Queue one segment from slot's address and port to the server. 0, or -1
 * when no TX frame or ring slot is free right now (the caller's timer
 * retries). */
int bg_send_seg(struct gen *g, const struct conn *c, uint32_t slot,
		uint32_t seq, uint32_t ack, uint8_t flags, const void *data,
		uint32_t len, bool syn_opts)
{
	const struct bench_params *p = g->p;
	struct wire_seg sg = {
		.src_mac = p->src_mac,
		.dst_mac = p->dst_mac,
		.v6 = p->v6,
		.saddr = g->src[slot % g->n_src],
		.daddr = p->dst_addr,
		.sport_be = htons(slot_port(g, slot)),
		.dport_be = htons(p->dst_port),
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.win = OUR_WINDOW,
		.ip_id = g->ip_id++,
	};
	bool ts = syn_opts || (c && c->ts_ok);
	uint32_t optlen = (syn_opts ? 4 : 0) + (ts ? 12 : 0), l4, flen;
	uint8_t *frame, *o;
	uint64_t addr;

	if (!blitz_xsk_tx_alloc(&g->x, &addr)) {
		bg_flush_tx(g);
		if (!blitz_xsk_tx_alloc(&g->x, &addr)) {
			g->r->tx_no_frame++;
			return -1;
		}
	}
	frame = blitz_xsk_data(&g->x, addr);
	l4 = wire_write_tcp_hdrs(frame, &sg, optlen, len);
	o = frame + l4 + WIRE_TCP_HLEN;
	if (syn_opts)
		o += wire_opt_mss(o, p->v6 ? OUR_MSS6 : OUR_MSS);
	/* Timestamps (RFC 7323) on every segment once agreed: a stateless
	 * server (the xdp engine) checks its MAC in our TSecr. TSval is a
	 * millisecond clock. */
	if (ts)
		wire_opt_timestamps(o, (uint32_t)(g->now / 1000000),
				    c ? c->ts_recent : 0);
	if (len)
		memcpy(frame + l4 + WIRE_TCP_HLEN + optlen, data, len);
	/* Full checksum: the receiving kernel verifies frames that arrive
	 * without offload metadata. */
	wire_tcp_csum(frame, p->v6, l4, WIRE_TCP_HLEN + optlen + len);
	flen = l4 + WIRE_TCP_HLEN + optlen + len;
	return blitz_xsk_tx_queue(&g->x, &addr, &flen, 1) == 1 ? 0 : -1;
}

static inline bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool seq_after(uint32_t a, uint32_t b)
{
	return seq_before(b, a);
}

/* ---- connections ---- */

static uint32_t next_rand(struct gen *g)
{
	g->seed ^= g->seed << 13;
	g->seed ^= g->seed >> 17;
	g->seed ^= g->seed << 5;
	return g->seed;
}

/* Give c's header buffer back to the pool, if it holds one. */
void bg_hdr_put(struct gen *g, struct conn *c)
{
	if (c->hbuf != NO_BUF) {
		g->hdr_free[g->n_hdr_free++] = c->hbuf;
		c->hbuf = NO_BUF;
	}
}

void bg_conn_release(struct gen *g, struct conn *c, uint64_t reconnect_at)
{
	if (c->state != C_IDLE)
		g->slot_conn[c->slot] = NO_CONN;
	if (c->state == C_EST)
		g->n_est--;
	if (c->state == C_SYN_SENT)
		g->n_syn--;
	else if (c->state == C_EST && c->pending)
		g->out--;
	bg_hdr_put(g, c);
	g->inflight -= c->pending;
	c->state = C_IDLE;
	c->pending = 0;
	c->ack_owed = 0;
	c->deadline = reconnect_at;
}

/* Whether to send another batch: running, and -n not yet covered by what
 * is answered or on its way (the last batch may overshoot it). */
static bool want_more(const struct gen *g)
{
	const struct bench_params *p = g->p;

	return g->running && (!p->max_requests ||
			      g->r->responses + g->inflight < p->max_requests);
}

/* Whether one more connection may wait for the server (see max_out). */
static inline bool room(const struct gen *g)
{
	return g->out < g->max_out;
}

/* Open connection c on the next free slot (source address and port).
 * Slots are taken round robin over all of them so that a 4-tuple comes
 * back as late as possible (the server may hold it in TIME_WAIT). With
 * fewer than OPEN_TX_RESERVE TX frames free the SYN waits for the next
 * scan (c stays idle and due), which paces the opening of many
 * connections to what the link takes. */
static void conn_open(struct gen *g, struct conn *c)
{
	uint32_t i, slot = 0;

	if (g->x.n_tx_free < OPEN_TX_RESERVE) {
		bg_flush_tx(g);
		if (g->x.n_tx_free < OPEN_TX_RESERVE)
			return;
	}
	for (i = 0; i < g->n_slots; i++) {
		slot = g->next_slot;
		g->next_slot =
			g->next_slot + 1 == g->n_slots ? 0 : g->next_slot + 1;
		if (g->slot_conn[slot] == NO_CONN)
			break;
	}
	if (i == g->n_slots) { /* cannot happen: n_slots >= 2 * conns */
		c->deadline = g->now + RTO_INIT_NS;
		return;
	}
	c->slot = slot;
	g->slot_conn[slot] = (uint32_t)(c - g->conns);
	/* Clock-driven ISN, like the kernel's: a reused 4-tuple starts above
	 * the old one, which lets the server recycle its TIME_WAIT. */
	c->iss = (uint32_t)(g->now >> 4) + (next_rand(g) & 0xffff);
	c->snd_una = c->iss;
	c->snd_nxt = c->iss + 1;
	c->state = C_SYN_SENT;
	g->n_syn++;
	c->ts_ok = 0;
	c->ack_owed = 0;
	c->ts_recent = 0;
	c->rstate = R_HDR;
	c->hlen = 0;
	c->closing = 0;
	c->pending = 0;
	c->tries = 0;
	c->rto = RTO_INIT_NS;
	c->deadline = g->now + c->rto;
	bg_send_seg(g, c, c->slot, c->iss, 0, F_SYN, NULL, 0, true);
}

/* Open the connections never opened yet, in order, while SYNs may go. */
void bg_open_first(struct gen *g)
{
	while (g->open_next < g->p->conns && g->n_syn < g->max_syn &&
	       want_more(g)) {
		struct conn *c = &g->conns[g->open_next];

		conn_open(g, c);
		if (c->state != C_SYN_SENT)
			return; /* no TX frame to spare: next iteration */
		g->open_next++;
	}
}

/* Send the next batch of pipelined requests; it also ACKs what came in.
 * Its latency runs from t_start: now, or when it was due (open loop). */
static void conn_send_batch(struct gen *g, struct conn *c, uint64_t t_start)
{
	/* Every response of the last batch came back, so the server had
	 * all of it even if no ACK said so yet. */
	c->snd_una = c->snd_nxt;
	c->batch_seq = c->snd_nxt;
	c->snd_nxt += g->batch_len;
	c->pending = g->p->pipeline;
	g->inflight += c->pending;
	g->out++;
	c->t_sent = t_start;
	c->tries = 0;
	c->rto = RTO_INIT_NS;
	c->deadline = g->now + c->rto;
	c->rstate = R_HDR;
	c->hlen = 0;
	c->unsent = 0;
	c->ack_owed = 0; /* this segment ACKs what came in */
	if (bg_send_seg(g, c, c->slot, c->batch_seq, c->rcv_nxt, F_ACK | F_PSH,
			g->batch, g->batch_len, false)) {
		c->unsent = 1; /* no TX frame: again soon, not a retransmit */
		c->deadline = g->now + 1000000;
	}
}

/* Closed loop: c may send its next batch. Now, when there is room and no
 * one queued before it; else at the back of the ready queue. True when
 * sent. */
static bool closed_send(struct gen *g, struct conn *c)
{
	if (!want_more(g)) {
		c->deadline = UINT64_MAX;
		return false;
	}
	if (!g->n_idle && room(g) && !g->ramping) {
		conn_send_batch(g, c, g->now);
		return true;
	}
	c->deadline = UINT64_MAX;
	if (!c->on_stack) {
		c->on_stack = 1;
		g->idle[(g->idle_head + g->n_idle++) % g->p->conns] =
			(uint32_t)(c - g->conns);
	}
	return false;
}

/* Closed loop: the queued connections, in order, while there is room. */
void bg_dispatch_ready(struct gen *g)
{
	while (g->n_idle && room(g) && want_more(g)) {
		struct conn *c = &g->conns[g->idle[g->idle_head]];

		g->idle_head =
			g->idle_head + 1 == g->p->conns ? 0 : g->idle_head + 1;
		g->n_idle--;
		c->on_stack = 0;
		if (c->state != C_EST || c->pending || c->closing)
			continue; /* stale: it was closed since */
		conn_send_batch(g, c, g->now);
	}
}

/* c is established with nothing outstanding: closed loop, send the next
 * batch (or queue for room); open loop, wait on the idle stack for the
 * next due time. */
static void conn_ready(struct gen *g, struct conn *c)
{
	if (!g->p->rate) {
		closed_send(g, c);
		return;
	}
	c->deadline = UINT64_MAX;
	if (!c->on_stack) {
		c->on_stack = 1;
		g->idle[g->n_idle++] = (uint32_t)(c - g->conns);
	}
}

/* Open loop: every batch that is due goes out on an idle connection,
 * stamped with the time it was due. Due batches with no idle connection
 * wait (their latency grows: the coordinated-omission correction). */
void bg_dispatch_due(struct gen *g)
{
	while (g->next_due <= g->now && g->n_idle && want_more(g) && room(g)) {
		struct conn *c = &g->conns[g->idle[--g->n_idle]];

		c->on_stack = 0;
		if (c->state != C_EST || c->pending || c->closing)
			continue; /* stale: it was closed since */
		if (g->now - g->next_due > g->r->late_max_ns)
			g->r->late_max_ns = g->now - g->next_due;
		conn_send_batch(g, c, g->next_due);
		g->next_due += g->interval_ns;
	}
}

static void conn_ack(struct gen *g, struct conn *c)
{
	c->ack_owed = 0;
	bg_send_seg(g, c, c->slot, c->snd_nxt, c->rcv_nxt, F_ACK, NULL, 0,
		    false);
}

static void delack_push(struct gen *g, struct conn *c)
{
	uint32_t i;

	if (g->dl_n == DELACK_FIFO)
		return; /* the timer scan sends it */
	i = (g->dl_head + g->dl_n++) % DELACK_FIFO;
	g->delack[i].conn = (uint32_t)(c - g->conns);
	g->delack[i].due = c->deadline;
}

/* The delayed ACKs that are due, from the FIFO's front. An entry is stale
 * when its connection sent its batch (which ACKed) or was closed since, or
 * owes a later ACK (a newer entry stands for that one). */
void bg_delack_due(struct gen *g)
{
	while (g->dl_n && g->delack[g->dl_head].due <= g->now) {
		struct conn *c = &g->conns[g->delack[g->dl_head].conn];

		g->dl_head = (g->dl_head + 1) % DELACK_FIFO;
		g->dl_n--;
		if (c->state == C_EST && c->ack_owed && !c->pending &&
		    c->deadline <= g->now) {
			conn_ack(g, c);
			c->deadline = UINT64_MAX;
		}
	}
}

static void conn_reset(struct gen *g, struct conn *c)
{
	bg_send_seg(g, c, c->slot, c->snd_nxt, c->rcv_nxt, F_RST | F_ACK, NULL,
		    0, false);
	g->r->rst_tx++;
	bg_conn_release(g, c, g->now);
}

/* ---- RX ---- */

static void reply_rst(struct gen *g, uint32_t slot, const struct tcphdr *t,
		      uint32_t plen)
{
	uint8_t fl = wire_tcp_flags(t);
	uint32_t seglen = plen + !!(fl & F_SYN) + !!(fl & F_FIN);

	if (fl & F_RST)
		return;
	if (fl & F_ACK)
		bg_send_seg(g, NULL, slot, ntohl(t->ack_seq), 0, F_RST, NULL, 0,
			    false);
	else
		bg_send_seg(g, NULL, slot, 0, ntohl(t->seq) + seglen,
			    F_RST | F_ACK, NULL, 0, false);
}

static void handle_syn_sent(struct gen *g, struct conn *c,
			    const struct tcphdr *t, uint8_t fl)
{
	uint32_t ack = ntohl(t->ack_seq);

	if ((fl & F_ACK) && ack != c->iss + 1) {
		/* e.g. a challenge ACK from a TIME_WAIT 4-tuple: reset it
		 * and try again right away. */
		if (!(fl & F_RST))
			bg_send_seg(g, c, c->slot, ack, 0, F_RST, NULL, 0,
				    false);
		c->deadline = g->now;
		c->state = C_IDLE;
		g->n_syn--;
		g->slot_conn[c->slot] = NO_CONN;
		return;
	}
	if (fl & F_RST) {
		g->r->rst_rx++;
		if (fl & F_ACK) { /* refused */
			g->r->err_connect++;
			bg_conn_release(g, c, g->now + RTO_INIT_NS / 4);
		}
		return;
	}
	if ((fl & (F_SYN | F_ACK)) != (F_SYN | F_ACK))
		return;
	c->rcv_nxt = ntohl(t->seq) + 1;
	c->snd_una = ack;
	c->state = C_EST;
	g->n_syn--;
	g->last_est_ns = g->now;
	if (++g->n_est > g->r->peak_established)
		g->r->peak_established = g->n_est;
	g->r->connects++;
	g->cur.connects++;
	if (!g->p->rate && closed_send(g, c))
		return;
	conn_ack(g, c);
	if (g->p->rate)
		conn_ready(g, c);
}

static void handle_est(struct gen *g, struct conn *c, const struct tcphdr *t,
		       uint8_t fl, const char *data, uint32_t plen)
{
	uint32_t seq = ntohl(t->seq), ack = ntohl(t->ack_seq);
	bool sent = false, fin = fl & F_FIN, acked_data = false;

	if (fl & F_RST) {
		g->r->rst_rx++;
		if (c->pending)
			g->r->err_reset++;
		bg_conn_release(g, c, g->now);
		return;
	}
	if (fl & F_SYN) { /* our ACK of the SYN-ACK was lost: ACK again */
		conn_ack(g, c);
		return;
	}
	if ((fl & F_ACK) && seq_after(ack, c->snd_una) &&
	    !seq_after(ack, c->snd_nxt))
		c->snd_una = ack;
	if (plen || fin) {
		if (seq_after(seq, c->rcv_nxt) ||
		    !seq_after(seq + plen + fin, c->rcv_nxt)) {
			/* Out of order, or all old: drop and re-ACK. */
			conn_ack(g, c);
			return;
		}
		if (plen) {
			uint32_t skip = c->rcv_nxt - seq;

			if (skip < plen) {
				g->r->bytes_rx += plen - skip;
				c->rcv_nxt += plen - skip;
				if (bg_consume(g, c, data + skip,
					       plen - skip)) {
					conn_reset(g, c);
					return;
				}
				acked_data = true;
			}
		}
		if (fin) {
			c->rcv_nxt++;
			/* Requests behind a "Connection: close" answer are
			 * the server's right to drop, not errors. */
			if (c->pending && !c->closing)
				g->r->err_closed++;
			/* ACK their FIN with ours; the slot reconnects on
			 * another port, so a late segment of this one gets a
			 * RST from reply_rst(). */
			bg_send_seg(g, c, c->slot, c->snd_nxt, c->rcv_nxt,
				    F_FIN | F_ACK, NULL, 0, false);
			bg_conn_release(g, c, g->now);
			/* Connections per second: the next one right away. */
			if (g->p->close_each && want_more(g) &&
			    g->n_syn < g->max_syn)
				conn_open(g, c);
			return;
		}
	}
	if (!c->pending && (c->closing || g->p->close_each))
		c->deadline = g->now + RTO_MAX_NS; /* wait for their FIN */
	if (!c->pending && !c->closing && !g->p->close_each) {
		if (!g->p->rate)
			sent = closed_send(g, c);
		else
			conn_ready(g, c);
	}
	if (acked_data && !sent) {
		if (!c->pending && c->on_stack && want_more(g)) {
			/* Queued for its turn: its batch will ACK. */
			c->ack_owed = 1;
			c->deadline = g->now + DELACK_NS;
			delack_push(g, c);
		} else if (c->pending && !c->ack_owed) {
			/* Part of the batch's responses: every second segment
			 * is ACKed (RFC 9293 3.8.6.3), the rest of the batch
			 * or the next one ACKs this one. */
			c->ack_owed = 1;
		} else {
			conn_ack(g, c);
		}
	}
}

/* The index of our source address a frame is sent to, or n_src when it
 * is none of them. They are consecutive: src[0] + i. */
static uint32_t src_index(const struct gen *g, const struct wire_pkt *pk)
{
	const uint8_t *d;
	uint32_t a, b;

	if (g->p->v6) {
		if (!pk->ip6)
			return g->n_src;
		d = (const uint8_t *)&pk->ip6->daddr;
		if (memcmp(d, g->src[0], 12))
			return g->n_src;
		memcpy(&a, d + 12, 4);
		memcpy(&b, g->src[0] + 12, 4);
	} else {
		if (!pk->ip4)
			return g->n_src;
		a = pk->ip4->daddr;
		memcpy(&b, g->src[0], 4);
	}
	a = ntohl(a) - ntohl(b);
	return a < g->n_src ? a : g->n_src;
}

static void handle_frame(struct gen *g, const uint8_t *f, uint32_t len)
{
	struct wire_pkt pk;
	uint32_t port_off, ci, si, slot;
	uint16_t dport;

	if (wire_parse(f, len, &pk) != WIRE_TCP)
		return;
	dport = ntohs(pk.tcp->dest);
	port_off = (uint32_t)(dport - g->p->port_lo);
	if (port_off >= g->n_ports) {
		/* The XDP program redirects only the generator's ports: this
		 * is another thread's reply, landed on our queue. */
		g->r->misrouted++;
		return;
	}
	si = g->n_src == 1 ? 0 : src_index(g, &pk);
	if (si >= g->n_src)
		return; /* to a port of ours on another address: not ours */
	slot = port_off * g->n_src + si;
	ci = g->slot_conn[slot];
	if (ci == NO_CONN) {
		reply_rst(g, slot, pk.tcp, pk.payload_len);
		return;
	}
	if (wire_tcp_hlen(pk.tcp) > WIRE_TCP_HLEN) {
		struct wire_tcp_opts o;
		struct conn *c = &g->conns[ci];

		wire_tcp_opts_parse(pk.tcp, &o);
		if (o.has_ts) {
			if (c->state == C_SYN_SENT &&
			    (wire_tcp_flags(pk.tcp) & F_SYN))
				c->ts_ok = 1;
			c->ts_recent = o.tsval;
		}
	}
	if (g->conns[ci].state == C_SYN_SENT)
		handle_syn_sent(g, &g->conns[ci], pk.tcp,
				wire_tcp_flags(pk.tcp));
	else
		handle_est(g, &g->conns[ci], pk.tcp, wire_tcp_flags(pk.tcp),
			   (const char *)pk.payload, pk.payload_len);
}

/* Receive a batch; the number of frames. */
uint32_t bg_poll_rx(struct gen *g)
{
	struct xdp_desc d[BATCH];
	uint32_t n, i;

	n = blitz_xsk_rx_burst(&g->x, d, BATCH);
	if (!n) {
		blitz_xsk_kick_rx(&g->x);
		return 0;
	}
	/* Latencies end when the batch is seen, not a loop later. */
	g->now = now_ns();
	for (i = 0; i < n; i++)
		handle_frame(g, blitz_xsk_data(&g->x, d[i].addr), d[i].len);
	blitz_xsk_refill(&g->x, d, n);
	return n;
}

/* ---- timers ---- */

/* Look at the timers of the connections whose turn it is: as many as the
 * time since the last call is of timer_period, so each is seen once a
 * period. */
void bg_run_timers(struct gen *g)
{
	uint64_t dt = g->now - g->timer_last;
	uint32_t n = g->p->conns, k;

	if (dt < g->timer_period)
		n = (uint32_t)((uint64_t)n * dt / g->timer_period);
	if (!n)
		return;
	g->timer_last = g->now;
	for (k = 0; k < n; k++) {
		struct conn *c = &g->conns[g->timer_pos];

		g->timer_pos =
			g->timer_pos + 1 == g->p->conns ? 0 : g->timer_pos + 1;

		if (g->now < c->deadline)
			continue;
		switch (c->state) {
		case C_IDLE:
			if (want_more(g)) {
				if (g->n_syn < g->max_syn) /* else next scan */
					conn_open(g, c);
			} else if (g->running) /* -n covered: look again later
						*/
				c->deadline = g->now + RTO_INIT_NS / 20;
			else
				c->deadline = UINT64_MAX;
			break;
		case C_SYN_SENT:
			if (++c->tries >= MAX_TRIES) {
				g->r->err_connect++;
				g->r->timeouts++;
				bg_conn_release(g, c, g->now);
				break;
			}
			g->r->retransmits++;
			g->r->syn_retransmits++;
			g->cur.retransmits++;
			c->rto = c->rto * 2 > RTO_MAX_NS ? RTO_MAX_NS
							 : c->rto * 2;
			c->deadline = g->now + c->rto;
			bg_send_seg(g, c, c->slot, c->iss, 0, F_SYN, NULL, 0,
				    true);
			break;
		case C_EST:
			if (!c->pending && c->ack_owed) {
				/* Still waiting for its turn: ACK now. */
				c->ack_owed = 0;
				conn_ack(g, c);
				c->deadline = UINT64_MAX;
				break;
			}
			if (!c->pending) {
				if (c->closing || g->p->close_each)
					conn_reset(g, c); /* no FIN came */
				else
					conn_ready(g, c);
				break;
			}
			if (c->unsent) {
				c->unsent = 0;
				c->deadline = g->now + c->rto;
				if (bg_send_seg(g, c, c->slot, c->batch_seq,
						c->rcv_nxt, F_ACK | F_PSH,
						g->batch, g->batch_len,
						false)) {
					c->unsent = 1;
					c->deadline = g->now + 1000000;
				}
				break;
			}
			if (++c->tries >= MAX_TRIES) {
				g->r->err_timeout += c->pending;
				g->r->timeouts++;
				conn_reset(g, c);
				break;
			}
			g->r->retransmits++;
			g->r->data_retransmits++;
			g->cur.retransmits++;
			c->rto = c->rto * 2 > RTO_MAX_NS ? RTO_MAX_NS
							 : c->rto * 2;
			c->deadline = g->now + c->rto;
			if (c->snd_una != c->snd_nxt) {
				uint32_t off = c->snd_una - c->batch_seq;

				if (off < g->batch_len)
					bg_send_seg(g, c, c->slot, c->snd_una,
						    c->rcv_nxt, F_ACK | F_PSH,
						    g->batch + off,
						    g->batch_len - off, false);
			} else {
				conn_ack(g, c);
			}
			break;
		}
	}
}
