// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_output.c - frames out of the TCP core: TX frames from the engine,
 * headers, data segments copied from the prebuilt responses (the Date a
 * response was queued with restored), ACKs, RSTs, and what the window,
 * cwnd and (with SACK) pipe let go.
 *
 * Must never copy response bytes anywhere but into a TX frame, nor send
 * a frame without its checksums.
 */
#include "tcp_core_int.h"

void tx_flush(struct tcp_core *c)
{
	if (!c->ntx)
		return;
	c->p.ops->tx_send(c->p.ops_ctx, c->txq, c->ntx);
	c->ntx = 0;
}

static struct tcp_frame *tx_get(struct tcp_core *c)
{
	struct tcp_frame *f;

	if (c->ntx == TCP_CORE_TX_BATCH)
		tx_flush(c);
	f = &c->txq[c->ntx];
	if (c->p.ops->tx_alloc(c->p.ops_ctx, f, 1) != 1) {
		c->cnt.tx_no_buf++;
		return NULL;
	}
	return f;
}

static void tx_put(struct tcp_core *c, struct tcp_frame *f)
{
	c->cnt.tx_bytes += f->len;
	c->ntx++;
}

/*
 * Write Ethernet, IP and TCP headers for a segment with optlen bytes of
 * options and paylen bytes of payload (already at the right place or
 * written after). Returns the offset of the TCP header.
 */
static uint32_t write_hdrs(struct tcp_core *c, uint8_t *d,
			   const struct tcp_tuple *t, uint32_t seq,
			   uint32_t ack, uint8_t flags, uint16_t win,
			   uint32_t optlen, uint32_t paylen)
{
	const struct wire_seg s = {
		.src_mac = c->have_mac ? c->mac : t->lmac,
		.dst_mac = t->rmac,
		.v6 = t->v6,
		.saddr = t->v6 ? t->laddr : t->laddr + 12,
		.daddr = t->v6 ? t->raddr : t->raddr + 12,
		.sport_be = t->lport_be,
		.dport_be = t->rport_be,
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.win = win,
	};

	return wire_write_tcp_hdrs(d, &s, optlen, paylen);
}

/* Fill the TCP checksum once header, options and payload are written.
 * Not inlined into its callers: there GCC does not vectorize the sum's
 * loop (+100 instructions a request, tests/perf/tcp_core_cost.c). */
static __attribute__((noinline)) void
tcp_csum(uint8_t *d, const struct tcp_tuple *t, uint32_t off, uint32_t tcplen)
{
	wire_tcp_csum(d, t->v6, off, tcplen);
}

/* A segment without payload (ACK, RST, FIN, SYN-ACK with options). */
void send_ctl(struct tcp_core *c, const struct tcp_tuple *t, uint32_t seq,
	      uint32_t ack, uint8_t flags, const uint8_t *opts, uint32_t optlen)
{
	struct tcp_frame *f = tx_get(c);
	uint32_t off;

	if (!f)
		return;
	off = write_hdrs(c, f->data, t, seq, ack, flags,
			 flags & TCPHDR_RST ? 0 : OUR_WINDOW, optlen, 0);
	if (optlen)
		memcpy(f->data + off + WIRE_TCP_HLEN, opts, optlen);
	tcp_csum(f->data, t, off, WIRE_TCP_HLEN + optlen);
	f->len = off + WIRE_TCP_HLEN + optlen;
	tx_put(c, f);
}

void send_rst(struct tcp_core *c, const struct tcp_tuple *t, uint32_t seq,
	      uint32_t ack, bool with_ack)
{
	send_ctl(c, t, seq, ack, TCPHDR_RST | (with_ack ? TCPHDR_ACK : 0), NULL,
		 0);
	c->cnt.rst_sent++;
}

/*
 * A pure ACK; with SACK, the blocks of RFC 2018 and 2883: the D-SACK owed
 * first (once: it is forgotten whether this frame goes or not, as Linux
 * clears it on the segment that carries it), then the out-of-order range
 * we hold (the only one). Two blocks at most, 20 bytes: no timestamps are
 * sent, so four would fit (three beside timestamps).
 */
void send_ack(struct tcp_core *c, struct tcp_conn *k)
{
	uint8_t o[4 + 2 * 8];
	uint32_t ol = 4;

	if (k->dsack_owed) {
		wire_put32(o + ol, k->dsack_s);
		wire_put32(o + ol + 4, k->dsack_e);
		ol += 8;
		k->dsack_owed = 0;
		c->cnt.dsacks_sent++;
	}
	if (k->ooo_len) {
		wire_put32(o + ol, k->ooo_seq);
		wire_put32(o + ol + 4, k->ooo_seq + k->ooo_len);
		ol += 8;
		c->cnt.sack_acks++;
	}
	if (ol > 4) {
		o[0] = o[1] = TCPOPT_NOP;
		o[2] = TCPOPT_SACK;
		o[3] = (uint8_t)(ol - 2);
	} else {
		ol = 0;
	}
	send_ctl(c, &k->t, k->snd_nxt, k->rcv_nxt, TCPHDR_ACK, o, ol);
	c->cnt.acks++;
}

/* An ACK answering a segment we do not accept (RFC 5961 challenge ACK,
 * or an out-of-window segment): at most one per OOW_RATELIMIT_MS on this
 * connection, whatever happens on the others. */
void send_ack_limited(struct tcp_core *c, struct tcp_conn *k, bool challenge)
{
	if (k->oow_sent && c->now_ms - k->oow_ms < OOW_RATELIMIT_MS) {
		/* A D-SACK goes with its duplicate's ACK or not at all. */
		k->dsack_owed = 0;
		c->cnt.ratelimited++;
		return;
	}
	k->oow_sent = 1;
	k->oow_ms = c->now_ms;
	if (challenge)
		c->cnt.challenge_acks++;
	send_ack(c, k);
}

/* Copy stream bytes [off, off+n) of the queued responses (off counted
 * from the first unacknowledged byte) into dst; the Date each response
 * was queued with is restored so a retransmission repeats its bytes. */
static void copy_stream(struct tcp_core *c, const struct tcp_conn *k,
			uint32_t off, uint32_t n, uint8_t *dst)
{
	uint32_t qi = k->q_head;

	off += k->una_off;
	while (n) {
		const struct resp_ent *e = &k->q[qi % TCP_CORE_RESP_QUEUE];
		const struct resp_piece *pc = &c->piece[e->kind];
		uint32_t len = pc->head_len + pc->body_len, take;

		if (off >= len) {
			off -= len;
			qi++;
			continue;
		}
		take = min_u32(n, len - off);
		if (off < pc->head_len) {
			uint32_t h = min_u32(take, pc->head_len - off);
			uint32_t ds = pc->date_off, de = ds + BLITZ_DATE_LEN;

			memcpy(dst, c->resp.bytes[e->kind] + off, h);
			if (e->date16 != (uint16_t)c->date_sec && off < de &&
			    off + h > ds) {
				char date[BLITZ_DATE_LEN];
				uint64_t sec =
					c->date_sec -
					(uint16_t)((uint16_t)c->date_sec -
						   e->date16);
				uint32_t a = off > ds ? off : ds;
				uint32_t b = off + h < de ? off + h : de;

				http_format_date((time_t)sec, date);
				memcpy(dst + (a - off), date + (a - ds), b - a);
			}
			if (take > h)
				memcpy(dst + h, c->body, take - h);
		} else {
			memcpy(dst, c->body + (off - pc->head_len), take);
		}
		dst += take;
		n -= take;
		off = 0;
		qi++;
	}
}

void send_data(struct tcp_core *c, struct tcp_conn *k, uint32_t seq, uint32_t n,
	       bool fin)
{
	struct tcp_frame *f = tx_get(c);
	uint32_t off;
	uint8_t flags =
		TCPHDR_ACK | (n ? TCPHDR_PSH : 0) | (fin ? TCPHDR_FIN : 0);

	if (f) {
		off = write_hdrs(c, f->data, &k->t, seq, k->rcv_nxt, flags,
				 OUR_WINDOW, 0, n);
		if (n)
			copy_stream(c, k, seq - k->snd_una, n,
				    f->data + off + WIRE_TCP_HLEN);
		tcp_csum(f->data, &k->t, off, WIRE_TCP_HLEN + n);
		f->len = off + WIRE_TCP_HLEN + n;
		tx_put(c, f);
		if (fin)
			c->cnt.finack++;
	}
	/* Recorded even without a frame: it counts as sent (and lost). */
	if (k->sack_ok)
		rec_mark(c, k, seq, seq + n + fin);
}

/*
 * Send what the window allows: data from snd_nxt, our FIN after the last
 * response when closing. probe: send at least one byte (or the FIN) even
 * into a closed window (zero-window probe and RTO retransmission).
 * Returns the segments sent.
 */
int conn_output(struct tcp_core *c, struct tcp_conn *k, bool probe)
{
	uint32_t cwnd = k->cwnd;
	int sent = 0;

	if (k->fin_acked)
		return 0;
	/* With SACK information, RFC 6675: new data while pipe (what is
	 * still in flight: neither SACKed nor lost) is under cwnd; as a
	 * window from SND.UNA that is cwnd + SACKed + lost. */
	if (__builtin_expect(k->sack_ok && (k->nsb || k->in_recovery), 0) &&
	    !seq_lt(k->snd_nxt, k->snd_max)) {
		struct rack_scan_out o;
		uint32_t pipe;

		rack_scan(c, k, &o);
		pipe = sack_pipe(k, &o);
		cwnd = (k->snd_max - k->snd_una) +
		       (cwnd > pipe ? cwnd - pipe : 0);
	}
	for (;;) {
		uint32_t end = k->snd_una + k->q_bytes;
		uint32_t wnd = min_u32(min_u32(k->snd_wnd, cwnd),
				       TCP_CORE_MAX_INFLIGHT);
		uint32_t limit = k->snd_una + wnd, cap = UINT32_MAX;
		bool fin, forced = false;
		uint32_t n, avail, room;

		if (__builtin_expect(k->nsb, 0) &&
		    seq_lt(k->snd_nxt, k->snd_max))
			cap = sb_skip(k);
		if (seq_lt(k->snd_nxt, end)) {
			avail = min_u32(end - k->snd_nxt, cap);
			room = seq_lt(k->snd_nxt, limit) ? limit - k->snd_nxt
							 : 0;
			forced = !room && probe && !sent;
			if (forced)
				room = 1;
			n = min_u32(min_u32(k->mss, avail), room);
			if (!n)
				break;
			fin = k->fin_pending && n == avail;
		} else if (k->fin_pending && k->snd_nxt == end &&
			   (!k->fin_sent || probe)) {
			n = 0;
			fin = true;
		} else {
			break;
		}
		send_data(c, k, k->snd_nxt, n, fin);
		if (fin) {
			k->fin_sent = 1;
			k->fin_seq = end;
		}
		if (seq_gt(k->snd_nxt + n + fin, k->snd_max)) {
			if (n && !seq_lt(k->snd_nxt, k->snd_max))
				c->cnt.replies++;
			k->snd_max = k->snd_nxt + n + fin;
			if (!k->rtt_on && !forced) {
				k->rtt_on = 1;
				k->rtt_seq = k->snd_max;
				k->rtt_t0 = c->now_us;
			}
		} else {
			c->cnt.retransmits++;
			k->rtt_on = 0; /* Karn: no sample across a resend */
		}
		/* A zero-window probe does not advance snd_nxt: the peer
		 * may well drop it, and the byte goes again when the window
		 * opens (an ACK of it is still accepted: snd_max covers it). */
		if (!forced)
			k->snd_nxt += n + fin;
		sent++;
		if (forced)
			break;
		if (fin)
			break;
	}
	/* Something unacknowledged, or data held back by a closed window:
	 * the RTO timer retransmits or probes. */
	if (k->snd_una != k->snd_max ||
	    seq_lt(k->snd_nxt, k->snd_una + k->q_bytes)) {
		if (!k->rto_at)
			arm_rto(c, k);
	}
	return sent;
}

/* Resend one segment from snd_una (data, or the FIN alone); the send
 * state (snd_nxt, cwnd) is left as it is: one loss, one segment. */
void resend_una(struct tcp_core *c, struct tcp_conn *k)
{
	/* Only bytes sent before: past snd_max the peer's window may be
	 * closed, and an ACK of them would be taken for one of data never
	 * sent. */
	uint32_t sent = k->snd_max - k->snd_una - (k->fin_sent ? 1 : 0);
	uint32_t n = min_u32(min_u32(k->q_bytes, k->mss), sent);
	bool fin = k->fin_sent && n == k->q_bytes;

	send_data(c, k, k->snd_una, n, fin);
	c->cnt.retransmits++;
	k->rtt_on = 0;
}
