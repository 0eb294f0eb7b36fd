// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_input.c - frames into the TCP core: parsing and checksums, the
 * RFC 5961 and window checks of a segment on a connection, cumulative
 * ACKs, RTT samples and NewReno, the end of a tail-loss probe's episode,
 * in-order data into the request loop (http_conn.h), a SACK peer's
 * out-of-order range into its buffer and the D-SACK its duplicates earn.
 *
 * Must never keep a pointer into an RX frame past tcp_core_rx_burst(),
 * nor act on a segment whose checksum was not verified, nor D-SACK a byte
 * that did not come twice.
 */
#include <arpa/inet.h>

#include "tcp_core_int.h"

static void enqueue_resp(struct tcp_core *c, struct tcp_conn *k, int kind)
{
	struct resp_ent *e =
		&k->q[(k->q_head + k->q_count) % TCP_CORE_RESP_QUEUE];

	e->kind = (uint8_t)kind;
	e->date16 = (uint16_t)c->date_sec;
	k->q_count++;
	k->q_bytes += resp_len(c, (uint8_t)kind);
	c->cnt.requests++;
	if (kind >= BLITZ_RESP_OK_KINDS)
		c->cnt.http_errors++;
}

/* Whether the connection takes no more requests (closing either way). */
static bool conn_closing(const struct tcp_conn *k)
{
	return k->fin_pending || k->fin_rcvd;
}

/*
 * Answer the requests at buf[0..len) into the response queue (the request
 * loop is http_conn's): stops at an incomplete request or a full queue.
 * Returns the bytes consumed; everything when the connection is closing
 * (the rest is discarded).
 */
static uint32_t parse_requests(struct tcp_core *c, struct tcp_conn *k,
			       const uint8_t *buf, uint32_t len)
{
	uint8_t kind[TCP_CORE_RESP_QUEUE];
	struct http_conn_out out = {kind, 0, TCP_CORE_RESP_QUEUE - k->q_count};
	uint32_t n;

	if (k->fin_pending)
		return len;
	n = (uint32_t)http_conn_consume(&k->http, buf, len, &out, 0);
	for (unsigned int i = 0; i < out.n; i++)
		enqueue_resp(c, k, kind[i]);
	if (http_conn_closing(&k->http))
		k->fin_pending = 1;
	return n;
}

static uint8_t *rxbuf_of(struct tcp_core *c, const struct tcp_conn *k)
{
	return c->rxbufs + (size_t)k->rxb * RXBUF_SIZE;
}

/* Parse what the reassembly buffer holds; give the buffer back when
 * emptied. */
static void parse_buffered(struct tcp_core *c, struct tcp_conn *k)
{
	uint8_t *b;
	uint32_t n;

	if (k->rxb == NIL)
		return;
	b = rxbuf_of(c, k);
	n = parse_requests(c, k, b, k->rxlen);
	if (n >= k->rxlen && !k->ooo_len) {
		rxbuf_put(c, k);
		return;
	}
	if (n) {
		/* The out-of-order range held behind moves with the rest. */
		uint32_t used = k->rxlen;

		if (k->ooo_len && k->ooo_off + k->ooo_len > used)
			used = k->ooo_off + k->ooo_len;
		memmove(b, b + n, used - n);
		k->rxlen -= n;
		k->ooo_off -= n;
		/* A request was answered; what is left starts the next one,
		 * whose header deadline runs from now. */
		k->hdr_at = c->now_ms + c->p.header_ms;
	}
}

/*
 * RFC 2883 (Linux's tcp_dsack_set / tcp_dsack_extend): the next ACK leads
 * with [s, e), bytes that came twice. The first duplicate a segment shows
 * sets it; another extends it when they touch, else is left out.
 */
static void dsack_note(struct tcp_conn *k, uint32_t s, uint32_t e)
{
	if (!seq_lt(s, e))
		return;
	if (!k->dsack_owed) {
		k->dsack_s = s;
		k->dsack_e = e;
		k->dsack_owed = 1;
		return;
	}
	if (seq_gt(s, k->dsack_e) || seq_gt(k->dsack_s, e))
		return;
	if (seq_lt(s, k->dsack_s))
		k->dsack_s = s;
	if (seq_gt(e, k->dsack_e))
		k->dsack_e = e;
}

/* A SACK peer's duplicate [s, e), e at or below RCV.NXT: only what we
 * received, from IRS + 1 on; a segment claiming bytes from before the
 * connection began gets none of them named. Distances, not seq_lt: a
 * connection may take more than 2^31 bytes. */
static void dsack_below(struct tcp_conn *k, uint32_t s, uint32_t e)
{
	uint32_t got = k->rcv_nxt - k->irs1;

	if (!k->sack_ok || k->rcv_nxt - e > got)
		return;
	if (k->rcv_nxt - s > got)
		s = k->irs1;
	dsack_note(k, s, e);
}

/* The part of [s, s + len) the out-of-order range we hold already had
 * (SACK peers only hold one). */
static void dsack_held(struct tcp_conn *k, uint32_t s, uint32_t len)
{
	uint32_t e = s + len, hs = k->ooo_seq, he = hs + k->ooo_len;

	if (!k->ooo_len)
		return;
	dsack_note(k, seq_lt(s, hs) ? hs : s, seq_gt(e, he) ? he : e);
}

/*
 * Take in-order payload. Returns the bytes accepted (the rest is left for
 * the peer to retransmit: our buffer was full), or -1 when a partial
 * request needs a buffer and the pool is empty.
 */
static long conn_consume(struct tcp_core *c, struct tcp_conn *k,
			 const uint8_t *data, uint32_t len)
{
	uint32_t n = 0, take;

	if (k->rxb == NIL) {
		n = parse_requests(c, k, data, len);
		if (n == len)
			return len;
		if (!rxbuf_get(c, k))
			return -1;
	}
	/* Over what was held ahead (SACK peers): that part came twice. */
	if (k->ooo_len)
		dsack_held(k, k->rcv_nxt + n, len - n);
	take = min_u32(len - n, RXBUF_SIZE - k->rxlen);
	memcpy(rxbuf_of(c, k) + k->rxlen, data + n, take);
	k->rxlen += take;
	if (k->ooo_len && k->rxlen >= k->ooo_off) {
		/* The hole is filled: what was held joins the stream. */
		uint32_t end = k->ooo_off + k->ooo_len;

		if (end > k->rxlen) {
			take += end - k->rxlen;
			k->rxlen = end;
		}
		k->ooo_len = 0;
	}
	parse_buffered(c, k);
	/* Closing: whatever did not fit is discarded, not refused. */
	if (conn_closing(k))
		return n + take > len ? n + take : len;
	return n + take;
}

/*
 * Hold an out-of-order segment of a SACK peer (it is then SACKed) in the
 * reassembly buffer, at its distance from RCV.NXT after the bytes held:
 * one range per connection, within the buffer's 8 KiB, and a buffer only
 * if one is free (never one taken from another connection). Otherwise
 * it is dropped as without SACK; the peer sends it again.
 */
static void ooo_hold(struct tcp_core *c, struct tcp_conn *k, uint32_t seq,
		     const uint8_t *data, uint32_t len)
{
	uint32_t off, s = seq, e = seq + len;

	if (conn_closing(k) || !len)
		return;
	if (k->ooo_len) {
		uint32_t oe = k->ooo_seq + k->ooo_len;

		if (seq_gt(s, oe) || seq_lt(e, k->ooo_seq))
			return; /* a second range: not kept */
		if (seq_gt(s, k->ooo_seq))
			s = k->ooo_seq;
		if (seq_lt(e, oe))
			e = oe;
	}
	off = k->rxlen + (s - k->rcv_nxt);
	if (off + (e - s) > RXBUF_SIZE)
		return;
	if (k->rxb == NIL && (!c->nrxfree || !rxbuf_get(c, k)))
		return;
	memcpy(rxbuf_of(c, k) + k->rxlen + (seq - k->rcv_nxt), data, len);
	k->ooo_seq = s;
	k->ooo_len = e - s;
	k->ooo_off = off;
}

/*
 * An in-order FIN at fin_seq ends the stream: what is held out of order
 * past it can never be delivered and must be neither acked nor SACKed
 * (Linux's tcp_fin purges its out-of-order queue). The part before the
 * FIN stays: the segment carrying the FIN brings those bytes too.
 */
static void ooo_trim_at_fin(struct tcp_core *c, struct tcp_conn *k,
			    uint32_t fin_seq)
{
	if (!k->ooo_len)
		return;
	if (!seq_lt(k->ooo_seq, fin_seq))
		k->ooo_len = 0;
	else if (seq_gt(k->ooo_seq + k->ooo_len, fin_seq))
		k->ooo_len = fin_seq - k->ooo_seq;
	if (!k->ooo_len && k->rxb != NIL && !k->rxlen)
		rxbuf_put(c, k);
}

/* Free the connection once both FINs are through. */
static bool conn_maybe_done(struct tcp_core *c, struct tcp_conn *k)
{
	if (k->fin_acked && k->fin_rcvd) {
		c->cnt.connections_finished++;
		conn_free(c, k);
		return true;
	}
	return false;
}

static void conn_ack(struct tcp_core *c, struct tcp_conn *k, uint32_t ack)
{
	uint32_t bytes = ack - k->snd_una;

	if (k->fin_sent && ack == k->fin_seq + 1) {
		k->fin_acked = 1;
		bytes--;
	}
	k->q_bytes -= bytes;
	while (bytes) {
		const struct resp_ent *e = &k->q[k->q_head];
		uint32_t rem = resp_len(c, e->kind) - k->una_off;

		if (bytes >= rem) {
			bytes -= rem;
			k->una_off = 0;
			k->q_head = (uint8_t)((k->q_head + 1) %
					      TCP_CORE_RESP_QUEUE);
			k->q_count--;
		} else {
			k->una_off += bytes;
			bytes = 0;
		}
	}
	/* Zero-length responses (none today) still leave the queue. */
	while (k->q_count && k->una_off == 0 &&
	       resp_len(c, k->q[k->q_head].kind) == 0) {
		k->q_head = (uint8_t)((k->q_head + 1) % TCP_CORE_RESP_QUEUE);
		k->q_count--;
	}
	if (k->nrec | k->nsb) /* only with SACK */
		rec_sb_trim(k, ack);
	k->snd_una = ack;
	if (seq_lt(k->snd_nxt, k->snd_una))
		k->snd_nxt = k->snd_una;
	k->retries = 0;
	k->rto_ms = k->rto_base_ms;
	k->rto_at = 0;
	k->tlp_at = 0;
}

/* RFC 6298 2.2/2.3 on one sample r (us); the RTO has rto_initial_ms as
 * its floor (200 ms, as Linux's TCP_RTO_MIN) and rto_max_ms as cap. */
void rtt_update(struct tcp_core *c, struct tcp_conn *k, uint32_t r)
{
	uint32_t rto;

	if (!r)
		r = 1;
	if (!k->min_rtt_us || r < k->min_rtt_us)
		k->min_rtt_us = r; /* RACK's reordering window */
	if (!k->srtt_us) {
		k->srtt_us = r;
		k->rttvar_us = r / 2;
	} else {
		uint32_t d = k->srtt_us > r ? k->srtt_us - r : r - k->srtt_us;

		k->rttvar_us = k->rttvar_us - k->rttvar_us / 4 + d / 4;
		k->srtt_us = k->srtt_us - k->srtt_us / 8 + r / 8;
	}
	rto = (k->srtt_us +
	       (k->rttvar_us * 4 > 1000 ? k->rttvar_us * 4 : 1000) + 999) /
	      1000;
	if (rto < c->p.rto_initial_ms)
		rto = c->p.rto_initial_ms;
	if (rto > c->p.rto_max_ms)
		rto = c->p.rto_max_ms;
	k->rto_base_ms = k->rto_ms = rto;
}

/*
 * Congestion control on an ACK of `acked` new bytes (snd_una already
 * advanced): NewReno (RFC 5681, RFC 6582). In recovery, a partial ACK
 * resends the next hole and deflates the window; the full ACK ends it
 * with cwnd = min(ssthresh, FlightSize + MSS). Otherwise slow start
 * below ssthresh (cwnd += bytes acknowledged, as Linux), and congestion
 * avoidance above: one MSS per cwnd of bytes acknowledged.
 */
static void cc_on_ack(struct tcp_core *c, struct tcp_conn *k, uint32_t acked)
{
	if (k->in_recovery) {
		if (!seq_lt(k->snd_una, k->recover)) {
			uint32_t flight = k->snd_max - k->snd_una;

			k->in_recovery = 0;
			k->sack_rec = 0;
			k->cwnd = min_u32(k->ssthresh,
					  (flight > k->mss ? flight : k->mss) +
						  k->mss);
			k->bytes_acked = 0;
			return;
		}
		/* With SACK, RACK finds the holes and pipe paces the
		 * sending (RFC 6675): cwnd stays at ssthresh. */
		if (k->sack_rec)
			return;
		/* Partial ACK: the next hole is lost too. */
		if (k->snd_una != k->snd_max)
			resend_una(c, k);
		k->cwnd = k->cwnd > acked ? k->cwnd - acked : 0;
		if (acked >= k->mss)
			k->cwnd += k->mss;
		if (k->cwnd < k->mss)
			k->cwnd = k->mss;
		return;
	}
	if (k->cwnd < k->ssthresh) {
		/* Every byte acknowledged, as Linux counts (packets acked),
		 * not RFC 3465's L = 2 MSS: a GRO'd client ACKs ten segments
		 * at once, and L would hold such a flow to 2 MSS per RTT. No
		 * more than ssthresh by slow start; the rest in avoidance. */
		uint32_t room = k->ssthresh - k->cwnd;

		k->cwnd += min_u32(acked, room);
		if (acked > room)
			k->bytes_acked += acked - room;
	} else {
		k->bytes_acked += acked;
		if (k->bytes_acked >= k->cwnd) {
			k->bytes_acked -= k->cwnd;
			k->cwnd += k->mss;
		}
	}
	if (k->cwnd > TCP_CORE_MAX_INFLIGHT)
		k->cwnd = TCP_CORE_MAX_INFLIGHT;
}

/* RFC 5961 5.2: an ACK of no more than we sent, and not older than any
 * window the peer gave. */
static bool ack_acceptable(const struct tcp_conn *k, uint32_t ack)
{
	return !seq_gt(ack, k->snd_max) &&
	       !seq_lt(ack, k->snd_una - k->max_snd_wnd);
}

/*
 * The checks before a segment may touch a connection (RFC 5961, RFC 9293
 * 3.10.7.4): a RST, a SYN, no ACK, a segment wholly outside the receive
 * window, an unacceptable ACK. True when the segment stops here (the
 * connection may then be gone).
 */
static bool seg_refused(struct tcp_core *c, struct tcp_conn *k,
			const struct seg *s)
{
	uint32_t len = s->len, seq = s->seq;
	bool fin = s->flags & TCPHDR_FIN;

	if (s->flags & TCPHDR_RST) {
		/* RFC 5961 3.2: only a RST at exactly RCV.NXT resets (or at
		 * the FIN we took, as Linux's tcp_reset_check); one elsewhere
		 * in the window gets a challenge ACK, so a blind attacker
		 * must guess the exact number, and the real peer, whose RST
		 * it was, answers with one at the ACK's number. */
		if (seq == k->rcv_nxt ||
		    (k->fin_rcvd && seq == k->rcv_nxt - 1)) {
			c->cnt.drop_rst++;
			conn_reset(c, k, false);
		} else if (seq_gt(seq, k->rcv_nxt) &&
			   seq_lt(seq, k->rcv_nxt + OUR_WINDOW)) {
			send_ack_limited(c, k, true);
		}
		return true;
	}
	if (s->flags & TCPHDR_SYN) {
		/* RFC 5961 4.2: a SYN, wherever it falls, on a synchronized
		 * connection never resets it: a challenge ACK. A peer that
		 * really restarted answers it with a RST at RCV.NXT and its
		 * next SYN finds the tuple free. */
		send_ack_limited(c, k, true);
		return true;
	}
	if (!(s->flags & TCPHDR_ACK))
		return true;
	if (seq_lt(seq + len + fin, k->rcv_nxt) ||
	    seq_gt(seq, k->rcv_nxt + OUR_WINDOW)) {
		/* Wholly outside the receive window (RFC 9293 3.10.7.4):
		 * an ACK of where we are, rate-limited; nothing else. Old
		 * data there is D-SACKed (as Linux's tcp_send_dupack), only
		 * when its ACK is one we accept: a blind segment must hit
		 * both windows to have a range named to the peer. */
		if ((len || fin) && seq_lt(seq + len + fin, k->rcv_nxt) &&
		    ack_acceptable(k, s->ack))
			dsack_below(k, seq, seq + len + fin);
		send_ack_limited(c, k, false);
		return true;
	}
	if (!ack_acceptable(k, s->ack)) {
		/* RFC 5961 5.2: acknowledges what we never sent, or older
		 * than any window: dropped, data and all; at most a
		 * rate-limited ACK tells the peer where we are. */
		c->cnt.ack_unacceptable++;
		send_ack_limited(c, k, true);
		return true;
	}
	return false;
}

/*
 * RFC 8985 7.4.2, TLP_process_ack() (Linux's tcp_process_tlp_ack()): an
 * ACK at or past the probe's end (TLP.end_seq) closes its episode. A
 * probe of new data hid no loss. A resend hid none when the ACK D-SACKs
 * it, or is a bare duplicate ACK without SACK blocks: original and probe
 * both came. An ACK beyond its end with neither: the probe alone repaired
 * a loss, which takes a loss's congestion response (RFC 5681: ssthresh
 * from the flight when the loss is found, cwnd no more than that, as the
 * SACK recovery; once, staying out of recovery, as Linux). An ACK of
 * exactly its end may be the original's or the probe's: the episode
 * stays open (and no other probe goes) until one of the above.
 * una0: SND.UNA before this ACK; wnd: its window, scaled.
 */
static __attribute__((noinline)) void tlp_ack_in(struct tcp_core *c,
						 struct tcp_conn *k,
						 const struct seg *s,
						 uint32_t una0, uint32_t wnd)
{
	if (seq_lt(s->ack, k->tlp_end))
		return;
	if (!k->tlp_rtx) {
		/* new data, delivered */
	} else if (k->sack_ok && s->nsack &&
		   dsack_of_probe(k, s->sack[0].start, s->sack[0].end)) {
		c->cnt.tlp_spurious++;
	} else if (seq_gt(s->ack, k->tlp_end)) {
		k->ssthresh = loss_ssthresh_of(k, k->snd_max - una0);
		k->cwnd = min_u32(k->cwnd, k->ssthresh);
		k->bytes_acked = 0;
		c->cnt.tlp_recoveries++;
	} else if (s->ack == una0 && !s->len && !s->nsack &&
		   !(s->flags & TCPHDR_FIN) && wnd == k->snd_wnd) {
		c->cnt.tlp_spurious++;
	} else {
		return;
	}
	k->tlp_out = 0;
}

/*
 * What an acceptable ACK tells: what it and its SACK blocks deliver, an
 * RTT sample, the queue and cwnd on new data; duplicate ACKs and
 * NewReno's fast retransmit; the end of a tail-loss probe's episode.
 * wnd: the segment's window, scaled.
 */
static void ack_in(struct tcp_core *c, struct tcp_conn *k, const struct seg *s,
		   uint32_t wnd)
{
	bool fin = s->flags & TCPHDR_FIN;
	uint32_t una0 = k->snd_una;

	/* (An ACK that neither moves SND.UNA nor SACKs delivers nothing;
	 * FACK is never below SND.UNA.) */
	if (k->sack_ok && (s->nsack || seq_gt(s->ack, k->snd_una)))
		sack_ack_in(c, k, s);
	if (seq_gt(s->ack, k->snd_una)) {
		uint32_t acked = s->ack - k->snd_una;

		if (k->rtt_on && !seq_lt(s->ack, k->rtt_seq)) {
			k->rtt_on = 0;
			rtt_update(c, k, c->now_us - k->rtt_t0);
		}
		conn_ack(c, k, s->ack);
		cc_on_ack(c, k, acked);
		k->dupacks = 0;
	} else if (s->ack == k->snd_una && !s->len && !fin &&
		   k->snd_una != k->snd_max && wnd == k->snd_wnd) {
		/* Duplicate ACKs: the third starts NewReno fast recovery
		 * (the segment at snd_una was lost: resend it now, not at
		 * the RTO); each later one inflates cwnd by one MSS, for
		 * the segment that left the network. */
		++k->dupacks;
		if (k->in_recovery) {
			if (!k->sack_rec)
				k->cwnd += k->mss;
		} else if (k->dupacks == 3 && seq_gt(s->ack, k->recover) &&
			   !(k->sack_ok && k->nsb)) {
			/* (With SACK blocks, RACK decides below.) */
			k->ssthresh = loss_ssthresh(k);
			k->recover = k->snd_max;
			k->in_recovery = 1;
			k->tlp_at = 0;
			k->tlp_out = 0; /* the response to any loss it hid */
			resend_una(c, k);
			c->cnt.fast_retransmits++;
			k->cwnd = k->ssthresh + 3u * k->mss;
			k->bytes_acked = 0;
		}
	}
	if (__builtin_expect(k->tlp_out, 0))
		tlp_ack_in(c, k, s, una0, wnd);
}

static void window_update(struct tcp_conn *k, const struct seg *s,
			  uint32_t una0, uint32_t wnd)
{
	uint32_t seq = s->seq;

	/* The send window, only from a segment newer than the one that set
	 * it last (RFC 9293 3.10.7.4, SND.WL1/WL2), as Linux's
	 * tcp_may_update_window reads "newer": an ACK of new data, a later
	 * sequence number, or the same one opening (or closing) the window.
	 * An old ACK (below SND.UNA) never updates it: a reordered older
	 * segment does not undo a newer one. */
	if (!seq_lt(s->ack, una0) &&
	    (seq_gt(s->ack, una0) || seq_lt(k->snd_wl1, seq) ||
	     (k->snd_wl1 == seq && (wnd > k->snd_wnd || !wnd)))) {
		k->snd_wnd = wnd;
		k->snd_wl1 = seq;
		k->snd_wl2 = s->ack;
		if (wnd > k->max_snd_wnd)
			k->max_snd_wnd = wnd;
		if (wnd)
			k->persist_since = 0;
	}
	/* An answer to a zero-window probe: the peer is alive, and a closed
	 * window is probed while the probes are answered (RFC 1122
	 * 4.2.2.17), up to persist_max_ms; only unanswered RTOs count
	 * towards max_retries. */
	if (!k->snd_wnd)
		k->retries = 0;
}

/*
 * The segment's payload and FIN: in order into the request loop (of a
 * retransmission overlapping what we have, the new part); out of order,
 * held (SACK peers) or dropped, and an ACK owed. False when the
 * connection was reset (no buffer for a partial request).
 */
static bool data_in(struct tcp_core *c, struct tcp_conn *k, const struct seg *s,
		    bool *need_ack)
{
	const uint8_t *data = s->data;
	uint32_t len = s->len, seq = s->seq;
	bool fin = s->flags & TCPHDR_FIN;

	if (!len && !fin)
		return true;
	if (seq != k->rcv_nxt) {
		uint32_t d = k->rcv_nxt - seq;

		if (seq_lt(seq, k->rcv_nxt) &&
		    seq_gt(seq + len + fin, k->rcv_nxt)) {
			/* Overlaps what we have: keep the new part, D-SACK
			 * the old. */
			dsack_below(k, seq, k->rcv_nxt);
			*need_ack = true;
			if (d >= len) {
				data += len;
				len = 0;
			} else {
				data += d;
				len -= d;
			}
		} else {
			c->cnt.ooo++;
			if (seq_lt(seq, k->rcv_nxt)) {
				/* All of it had come. */
				dsack_below(k, seq, seq + len + fin);
			} else if (k->sack_ok) {
				dsack_held(k, seq, len);
				if (!k->fin_rcvd)
					ooo_hold(c, k, seq, data, len);
			}
			*need_ack = true;
			len = 0;
			fin = false;
		}
	}
	if (fin)
		ooo_trim_at_fin(c, k, k->rcv_nxt + len);
	if (len && k->fin_rcvd) {
		/* Text after the peer's FIN: ignored (RFC 9293 3.10.7.4),
		 * neither taken nor acked, as Linux in CLOSE-WAIT and
		 * LAST-ACK. */
		len = 0;
		fin = false;
	}
	if (len) {
		long acc = conn_consume(c, k, data, len);

		if (acc < 0) {
			conn_reset(c, k, true);
			return false;
		}
		k->rcv_nxt += (uint32_t)acc;
		if ((uint32_t)acc < len)
			fin = false;
		*need_ack = true;
	}
	if (fin && !k->fin_rcvd) {
		k->rcv_nxt++;
		k->fin_rcvd = 1;
		k->fin_pending = 1;
		*need_ack = true;
	}
	return true;
}

/* After a segment: RACK, requests still buffered, what may be sent, the
 * ACK owed, and the connection's end or its timers. */
static void conn_after_seg(struct tcp_core *c, struct tcp_conn *k,
			   bool need_ack)
{
	if (k->nsb || k->sack_rec || k->rack_tmr) /* only with SACK */
		rack_step(c, k);
	/* The queue may have room again: answer requests still buffered. */
	if (k->rxb != NIL && k->q_count < TCP_CORE_RESP_QUEUE &&
	    !k->fin_pending)
		parse_buffered(c, k);
	/* Data segments carry no SACK option: a D-SACK owed goes in an ACK
	 * of its own. */
	if (conn_output(c, k, false) && !k->dsack_owed)
		need_ack = false;
	if (need_ack)
		send_ack(c, k);
	if (conn_maybe_done(c, k))
		return;
	if (k->snd_una == k->snd_max &&
	    !seq_lt(k->snd_nxt, k->snd_una + k->q_bytes))
		k->rto_at = 0;
	tlp_arm(c, k);
	/* Nothing in flight and no deadline left but the idle one, on a
	 * connection whose ACKs come late (a client's delayed ACK of each
	 * response): leave the fine wheel now. Its slot, the RTO's 200 ms
	 * on, would otherwise fire for nothing, a cache miss on a connection
	 * that at 100,000 has long left the cache. A peer that ACKs at once
	 * is left alone: its next request re-arms the RTO before that slot,
	 * which then serves many requests. */
	if (!k->rto_at && !k->tlp_at && !k->hdr_at && k->linked_at && !k->tl1 &&
	    k->srtt_us >= LATE_ACK_US && k->linked_at < k->idle_at)
		timer_unlink(c, k);
	timer_update(c, k);
}

void conn_handle(struct tcp_core *c, struct tcp_conn *k, const struct seg *s)
{
	uint32_t una0 = k->snd_una, wnd = (uint32_t)s->win << k->snd_wscale;
	bool need_ack = false;

	if (seg_refused(c, k, s))
		return;
	ack_in(c, k, s, wnd);
	k->idle_at = c->now_ms + (k->fin_acked ? FIN_WAIT_MS : c->p.idle_ms);
	window_update(k, s, una0, wnd);
	if (!data_in(c, k, s, &need_ack))
		return;
	conn_after_seg(c, k, need_ack);
}

/* The SACK blocks of a non-SYN segment's options (wire.c: other options
 * skipped, a malformed one ends the walk, what came before counts, as
 * Linux). */
static void parse_sack_blocks(const struct tcphdr *th, uint32_t doff,
			      struct seg *s)
{
	uint32_t blk[SACK_MAX_BLOCKS][2], i, n;

	wire_tcp_sack_blocks(th, doff, blk, SACK_MAX_BLOCKS, &n);
	for (i = 0; i < n; i++) {
		s->sack[i].start = blk[i][0];
		s->sack[i].end = blk[i][1];
	}
	s->nsack = (uint8_t)n;
}

/* Parse one frame into s. 0: TCP for the service; 1: not ours;
 * -1: ours but malformed; -2: ours but a checksum fails. Reads the headers
 * through the kernel's structs (wire.h) but in its own order: the port is
 * checked before anything is copied, as most frames that are not ours fail
 * there. */
static int parse_frame(struct tcp_core *c, const struct tcp_frame *f,
		       struct seg *s)
{
	const uint8_t *d = f->data;
	const struct ethhdr *eth = (const void *)f->data;
	const struct tcphdr *th;
	uint32_t len = f->len, l3, tcplen, doff, i;
	uint64_t ph;

	if (len < ETH_HLEN + WIRE_IP4_HLEN)
		return 1;
	memset(&s->t, 0, sizeof(s->t));
	memcpy(s->t.lmac, eth->h_dest, ETH_ALEN);
	memcpy(s->t.rmac, eth->h_source, ETH_ALEN);
	if (eth->h_proto == htons(ETH_P_IP)) {
		const struct iphdr *ip = (const void *)(d + ETH_HLEN);
		uint32_t tot;

		if (ip->version != 4 || ip->protocol != IPPROTO_TCP)
			return 1;
		if (len < ETH_HLEN + WIRE_IP4_HLEN + WIRE_TCP_HLEN)
			return 1;
		th = (const void *)((const uint8_t *)ip + ip->ihl * 4u);
		if (ip->ihl < 5 || (const uint8_t *)th + 4 > d + len)
			return 1;
		if (wire_get16(&th->dest) != c->p.port)
			return 1;
		s->t.laddr[10] = s->t.laddr[11] = 0xff;
		s->t.raddr[10] = s->t.raddr[11] = 0xff;
		memcpy(s->t.laddr + 12, &ip->daddr, 4);
		memcpy(s->t.raddr + 12, &ip->saddr, 4);
		if (ip->ihl != 5)
			return -1; /* options */
		/* The addresses' sum serves the header's check and the
		 * pseudo-header's. */
		ph = wire_ph_ip4(ip);
		if (!(f->rx_csum & TCP_RX_CSUM_IP_GOOD) &&
		    ((f->rx_csum & TCP_RX_CSUM_BAD) ||
		     csum_ne_fold(csum_ne_add(ph, ip, 12)) != 0xffff))
			return -2;
		if (wire_get16(&ip->frag_off) & (WIRE_IP_MF | WIRE_IP_OFFMASK))
			return -1; /* a fragment */
		tot = wire_get16(&ip->tot_len);
		if (tot < WIRE_IP4_HLEN + WIRE_TCP_HLEN || tot > len - ETH_HLEN)
			return -1;
		l3 = ETH_HLEN + WIRE_IP4_HLEN;
		tcplen = tot - WIRE_IP4_HLEN;
	} else if (eth->h_proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip = (const void *)(d + ETH_HLEN);
		uint32_t plen;

		if (len < ETH_HLEN + WIRE_IP6_HLEN + WIRE_TCP_HLEN)
			return 1;
		if (ip->version != 6 || ip->nexthdr != IPPROTO_TCP)
			return 1;
		th = (const void *)(ip + 1);
		if (wire_get16(&th->dest) != c->p.port)
			return 1;
		s->t.v6 = 1;
		ph = wire_ph_ip6(ip);
		memcpy(s->t.laddr, &ip->daddr, 16);
		memcpy(s->t.raddr, &ip->saddr, 16);
		plen = wire_get16(&ip->payload_len);
		if (plen < WIRE_TCP_HLEN ||
		    plen > len - ETH_HLEN - WIRE_IP6_HLEN)
			return -1;
		l3 = ETH_HLEN + WIRE_IP6_HLEN;
		tcplen = plen;
	} else {
		return 1;
	}
	if (c->nladdr) {
		for (i = 0; i < (uint32_t)c->nladdr; i++)
			if (!memcmp(&c->laddr[i], s->t.laddr, 16))
				break;
		if (i == (uint32_t)c->nladdr)
			return 1;
	}
	th = (const void *)(d + l3);
	doff = wire_tcp_hlen(th);
	if (doff < WIRE_TCP_HLEN || doff > tcplen)
		return -1;
	/* Before anything reads the segment's fields: a corrupted one is
	 * never answered, acked or allowed to change a connection. */
	if (!(f->rx_csum & TCP_RX_CSUM_L4_GOOD) &&
	    ((f->rx_csum & TCP_RX_CSUM_BAD) ||
	     !wire_tcp_csum_ok(ph, th, tcplen, c->p.csum_partial_ok)))
		return -2;
	memcpy(&s->t.rport_be, &th->source, 2);
	memcpy(&s->t.lport_be, &th->dest, 2);
	s->seq = wire_get32(&th->seq);
	s->ack = wire_get32(&th->ack_seq);
	s->flags = wire_tcp_flags(th);
	s->win = wire_get16(&th->window);
	s->data = (const uint8_t *)th + doff;
	s->len = tcplen - doff;
	s->mss = 536;
	s->wscale = 0xff;
	s->nsack = 0;
	if (s->flags & TCPHDR_SYN) {
		struct wire_tcp_opts o;

		/* What precedes a malformed option counts, as Linux. */
		wire_tcp_opts_parse(th, &o);
		if (o.has_mss)
			s->mss = o.mss;
		if (o.has_wscale)
			s->wscale = o.wscale;
		s->sack_ok = o.sack_ok;
	} else if (doff > WIRE_TCP_HLEN) {
		parse_sack_blocks(th, doff, s);
	}
	return 0;
}

void update_date(struct tcp_core *c, uint64_t now_ns)
{
	uint64_t unix_ns = (uint64_t)((int64_t)now_ns + c->mono_to_unix_ns);
	uint64_t sec = unix_ns / 1000000000ull;

	c->unix_ms = unix_ns / 1000000ull;
	c->now_ms = now_ns / 1000000ull;
	c->now_us = (uint32_t)(now_ns / 1000ull);
	if (!c->wheel_started) {
		/* The wheel starts at the engine's clock, whatever it is. */
		c->wheel_ms = c->now_ms;
		c->wheel_started = true;
	}
	if (sec == c->date_sec)
		return;
	c->date_sec = sec;
	http_responses_set_date(&c->resp, (time_t)sec);
}

static void handle_segment(struct tcp_core *c, const struct seg *s, uint32_t h)
{
	struct tcp_conn *k = tbl_lookup(c, &s->t, h);

	if (!k) {
		handle_unknown(c, s, h);
		return;
	}
	conn_handle(c, k, s);
}

/* Frames parsed and hashed at once before any is handled, so that their
 * table and connection misses overlap (slot_prefetch, conn_prefetch). */
#define RX_GROUP 16

uint32_t tcp_core_rx_burst(struct tcp_core *c, struct tcp_frame *frames,
			   uint32_t n, uint64_t now_ns)
{
	struct seg segs[RX_GROUP];
	uint32_t hs[RX_GROUP];
	uint32_t base, i, j, ns, nm = 0;

	update_date(c, now_ns);
	for (base = 0; base < n; base += RX_GROUP) {
		uint32_t end = min_u32(n, base + RX_GROUP);

		ns = 0;
		for (i = base; i < end; i++) {
			int r;

			c->cnt.core_rx_frames++;
			r = parse_frame(c, &frames[i], &segs[ns]);
			if (r > 0) {
				struct tcp_frame tmp = frames[nm];

				frames[nm] = frames[i];
				frames[i] = tmp;
				nm++;
				c->cnt.not_mine++;
				continue;
			}
			c->cnt.service_segments++;
			if (r == -2) {
				c->cnt.bad_csum++;
				continue;
			}
			if (r < 0) {
				c->cnt.drop_malformed++;
				continue;
			}
			hs[ns] = tuple_hash(c, &segs[ns].t);
			slot_prefetch(c, hs[ns]);
			ns++;
		}
		for (j = 0; j < ns; j++)
			conn_prefetch(c, hs[j]);
		for (j = 0; j < ns; j++)
			handle_segment(c, &segs[j], hs[j]);
	}
	tx_flush(c);
	return nm;
}
