// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_timers.c - the TCP core's timer wheel (1 ms slots, and a coarse
 * wheel for deadlines seconds away) and what fires on it: the RTO with
 * its backoff and zero-window probes, RFC 8985 tail-loss probes and
 * RACK's reordering timer, idle and header deadlines.
 *
 * Must never walk the connection table: a connection is reached only
 * through the wheel slot of its earliest deadline.
 */
#include "tcp_core_int.h"

/* Move the coarse slot's connections on: those due within the fine
 * wheel's reach into it, the ones a coarse revolution later back. */
static void timer_cascade(struct tcp_core *c, uint32_t slot)
{
	uint32_t idx = c->wheel1[slot];

	c->wheel1[slot] = NIL;
	while (idx != NIL) {
		struct tcp_conn *k = &c->conns[idx];
		uint32_t next = c->tl[idx].next;
		uint64_t at = k->linked_at;

		c->tl[idx].prev = c->tl[idx].next = NIL;
		k->linked_at = 0;
		timer_link(c, k, at);
		idx = next;
	}
}

/*
 * The probe: one new segment when the peer's window has room for it,
 * else the last segment sent again (RFC 8985 7.3); then the RTO is armed
 * from now. It opens an episode (7.4: TLP.end_seq, TLP.is_retrans) that
 * only an ACK (tlp_ack_in), a recovery or the RTO closes; no other probe
 * goes before (tlp_arm arms none).
 */
static void tlp_send(struct tcp_core *c, struct tcp_conn *k)
{
	uint32_t end = k->snd_una + k->q_bytes;
	uint32_t wedge = k->snd_una + k->snd_wnd;

	if (k->tlp_out)
		return;
	if (k->snd_nxt == k->snd_max && seq_lt(k->snd_nxt, end) &&
	    seq_lt(k->snd_nxt, wedge)) {
		uint32_t n = min_u32(min_u32(k->mss, end - k->snd_nxt),
				     wedge - k->snd_nxt);
		bool fin = k->fin_pending && n == end - k->snd_nxt;

		send_data(c, k, k->snd_nxt, n, fin);
		if (fin) {
			k->fin_sent = 1;
			k->fin_seq = end;
		}
		k->snd_nxt += n + fin;
		k->snd_max = k->snd_nxt;
		c->cnt.replies++;
		k->tlp_rtx = 0;
	} else {
		uint32_t sent = k->snd_max - k->snd_una - (k->fin_sent ? 1 : 0);
		uint32_t n = min_u32(k->mss, sent);
		bool fin = k->fin_sent;

		if (!n && !fin)
			return;
		send_data(c, k, k->snd_una + sent - n, n, fin);
		c->cnt.retransmits++;
		k->rtt_on = 0;
		k->tlp_rtx = 1;
	}
	c->cnt.tlp_probes++;
	k->tlp_out = 1;
	k->tlp_end = k->snd_max;
	k->rto_at = c->now_ms + k->rto_ms;
}

static void conn_timer(struct tcp_core *c, struct tcp_conn *k)
{
	if (k->hdr_at && k->hdr_at <= c->now_ms) {
		/* A partial request past its header deadline: as the epoll
		 * engine closes such a socket (with unread data: a RST). */
		c->cnt.header_timeouts++;
		conn_reset(c, k, true);
		return;
	}
	if (k->tlp_at && k->tlp_at <= c->now_ms && !k->rack_tmr) {
		/* Before the RTO: a probe due at the RTO's time goes in its
		 * place and re-arms it (tlp_arm). */
		k->tlp_at = 0;
		tlp_send(c, k);
	}
	if (k->rto_at && k->rto_at <= c->now_ms) {
		bool persist = !k->snd_wnd;

		if (persist && !k->persist_since)
			k->persist_since = c->now_ms;
		if (persist &&
		    c->now_ms - k->persist_since >= c->p.persist_max_ms) {
			/* A peer that keeps its window shut (and our
			 * response in memory) for longer is let go. */
			c->cnt.persist_giveup++;
			conn_reset(c, k, true);
			return;
		}
		if (++k->retries > c->p.max_retries) {
			c->cnt.rto_giveup++;
			conn_reset(c, k, true);
			return;
		}
		k->sack_rec = 0;
		k->rack_tmr = 0;
		if (k->retries >= 2) {
			/* Twice unanswered: the peer may have dropped what
			 * it SACKed (RFC 2018 allows it): send it all. */
			k->nsb = 0;
			k->sacked = 0;
		}
		if (!persist) {
			c->cnt.rto_timeouts++;
			/* RFC 5681 3.1: ssthresh from the flight (kept on
			 * a repeated timeout of the same data), cwnd = the
			 * loss window, one MSS; RFC 6582: recover = what was
			 * sent, so its duplicate ACKs start no recovery. */
			if (k->retries == 1)
				k->ssthresh = loss_ssthresh(k);
			k->cwnd = k->mss;
			k->bytes_acked = 0;
			k->in_recovery = 0;
			k->recover = k->snd_max;
		}
		k->rto_ms = min_u32(k->rto_ms * 2, c->p.rto_max_ms);
		k->rto_at = 0;
		k->tlp_at = 0;
		k->tlp_out = 0;
		k->rtt_on = 0;
		k->snd_nxt = k->snd_una;
		conn_output(c, k, true);
		if (!k->rto_at)
			arm_rto(c, k);
	}
	if (k->tlp_at && k->tlp_at <= c->now_ms && k->rack_tmr) {
		rack_step(c, k);
		conn_output(c, k, false);
		tlp_arm(c, k);
	}
	if (k->idle_at <= c->now_ms && !k->rto_at) {
		if (!k->fin_pending) {
			/* Idle keep-alive: close gracefully (FIN), as a kernel
			 * server would; a peer that never answers is reset by
			 * the RTO, one that never sends its FIN below. */
			c->cnt.idle_timeouts++;
			k->fin_pending = 1;
			conn_output(c, k, false);
			k->idle_at = c->now_ms + FIN_WAIT_MS;
			timer_update(c, k);
			return;
		}
		conn_reset(c, k, true);
		return;
	}
	if (k->idle_at <= c->now_ms)
		k->idle_at = c->now_ms + c->p.idle_ms;
	timer_update(c, k);
}

void tcp_core_poll_timers(struct tcp_core *c, uint64_t now_ns)
{
	uint64_t t, end;

	update_date(c, now_ns);
	end = c->now_ms;
	if (end > c->wheel_ms + WHEEL_SLOTS) {
		/* Not polled for a while: skip to one fine revolution before
		 * now (every fine slot is still visited once), and cascade
		 * the coarse slots whose turn was skipped. */
		uint64_t from = c->wheel_ms / L1_MS + 1, p;

		c->wheel_ms = end - WHEEL_SLOTS;
		for (p = from; p <= c->wheel_ms / L1_MS && p < from + L1_SLOTS;
		     p++)
			timer_cascade(c, (uint32_t)((p + 3) % L1_SLOTS));
	}
	for (t = c->wheel_ms + 1; t <= end; t++) {
		uint32_t slot = (uint32_t)(t % WHEEL_SLOTS);
		uint32_t idx;

		c->wheel_ms = t;
		/* A coarse slot holds deadlines of one 1024 ms period: 3
		 * periods ahead they come within the fine wheel's reach. */
		if (t % L1_MS == 0)
			timer_cascade(c,
				      (uint32_t)((t / L1_MS + 3) % L1_SLOTS));
		idx = c->wheel[slot];
		/* Detach the slot, then fire or re-link each entry: an entry
		 * re-armed into this same slot is not seen twice. */
		c->wheel[slot] = NIL;
		while (idx != NIL) {
			struct tcp_conn *k = &c->conns[idx];
			uint32_t next = c->tl[idx].next;

			/* The next one's deadlines, while this one runs. */
			if (next != NIL)
				__builtin_prefetch(&c->conns[next].linked_at);
			c->tl[idx].prev = c->tl[idx].next = NIL;
			if (k->linked_at > end) {
				/* A later revolution: put it back. */
				uint64_t at = k->linked_at;

				k->linked_at = 0;
				timer_link(c, k, at);
			} else {
				k->linked_at = 0;
				conn_timer(c, k);
			}
			idx = next;
		}
	}
	tx_flush(c);
}

int tcp_core_next_timer_ms(const struct tcp_core *c, uint64_t now_ns)
{
	uint64_t now = now_ns / 1000000ull, t;

	if (!c->active)
		return 1000;
	for (t = now + 1; t <= now + 1000; t++)
		if (c->wheel[t % WHEEL_SLOTS] != NIL)
			return (int)(t - now);
	return 1000;
}
