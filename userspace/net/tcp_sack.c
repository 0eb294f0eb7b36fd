// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_sack.c - the TCP core's SACK side (RFC 2018, RFC 6675, RFC 8985):
 * send-time records, the scoreboard of SACKed ranges, D-SACK, RACK loss
 * detection and the recovery it starts.
 *
 * Must never grow a connection's state past SB_RANGES ranges and
 * XMIT_RECS records: past them it forgets (at the cost of a needless
 * resend), never allocates.
 */
#include "tcp_core_int.h"

static inline bool ts_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* RFC 8985 RACK_sent_after(t1, seq1, t2, seq2). */
static inline bool sent_after(uint32_t t1, uint32_t e1, uint32_t t2,
			      uint32_t e2)
{
	return ts_after(t1, t2) || (t1 == t2 && seq_gt(e1, e2));
}

/* How far the resends of one microsecond may carry a connection's send
 * time ahead of the clock (2 us each: far below a second). */
#define REC_TS_LEAD_MAX_US 1000000u

static inline uint32_t rec_ts(const struct xmit_rec *r)
{
	return r->ts & ~1u;
}

static inline bool rec_rtx(const struct xmit_rec *r)
{
	return r->ts & 1u;
}

/* Full: merge the neighbours sent closest in time. Two first sends keep
 * the older time (RACK may then find a loss in the pair sooner, never
 * later); a pair with a resend keeps the newer: the older would make the
 * resend look lost again at once, and it went out again on every scan
 * (up to the step's budget) while the holes outnumbered the records. */
static void rec_merge_closest(struct tcp_conn *k)
{
	uint32_t best = UINT32_MAX, i, bi = 0, rtx;

	for (i = 0; i + 1 < k->nrec; i++) {
		uint32_t d = rec_ts(&k->rec[i]) - rec_ts(&k->rec[i + 1]);

		if ((int32_t)d < 0)
			d = 0u - d;
		if (d < best) {
			best = d;
			bi = i;
		}
	}
	rtx = (k->rec[bi].ts | k->rec[bi + 1].ts) & 1u;
	if (ts_after(rec_ts(&k->rec[bi]), rec_ts(&k->rec[bi + 1])) != !!rtx)
		k->rec[bi].ts = rec_ts(&k->rec[bi + 1]);
	k->rec[bi].ts = rec_ts(&k->rec[bi]) | rtx;
	k->rec[bi].end = k->rec[bi + 1].end;
	memmove(&k->rec[bi + 1], &k->rec[bi + 2],
		(k->nrec - bi - 2) * sizeof(k->rec[0]));
	k->nrec--;
}

static inline void rec_push(struct tcp_conn *k, const struct xmit_rec *r)
{
	if (k->nrec) {
		struct xmit_rec *l = &k->rec[k->nrec - 1];

		if (l->ts == r->ts && l->end == r->start) {
			l->end = r->end;
			return;
		}
	}
	if (k->nrec == XMIT_RECS)
		rec_merge_closest(k);
	k->rec[k->nrec++] = *r;
}

/* A resend of [nr->start, nr->end): it overwrites the part of the
 * records it covers. Apart so rec_mark's new data stays a leaf. */
static __attribute__((noinline)) void rec_mark_resend(struct tcp_conn *k,
						      struct xmit_rec nr)
{
	struct xmit_rec tmp[XMIT_RECS + 2];
	uint32_t i, n = 0, s = nr.start, e = nr.end;
	bool ins = false;

	if (nr.ts == k->last_ts && k->nrec)
		nr.ts += 2;
	k->last_ts = nr.ts;
	nr.ts |= 1u;
	for (i = 0; i < k->nrec; i++) {
		struct xmit_rec r = k->rec[i];

		if (seq_le(r.end, s)) {
			tmp[n++] = r;
			continue;
		}
		if (seq_lt(r.start, s))
			tmp[n++] = (struct xmit_rec){r.start, s, r.ts};
		if (!ins) {
			tmp[n++] = nr;
			ins = true;
		}
		if (seq_gt(r.end, e))
			tmp[n++] = (struct xmit_rec){
				seq_gt(r.start, e) ? r.start : e, r.end, r.ts};
	}
	if (!ins)
		tmp[n++] = nr;
	k->nrec = 0;
	for (i = 0; i < n; i++)
		rec_push(k, &tmp[i]);
}

/* [s, e) leaves now: new data extends the records, a resend overwrites
 * the part of them it covers (so the records keep tiling SND.UNA to
 * SND.MAX, each byte with the time it was last sent). */
void rec_mark_slow(struct tcp_core *c, struct tcp_conn *k, uint32_t s,
		   uint32_t e)
{
	struct xmit_rec nr = {s, e, c->now_us & ~1u};

	/* Send times strictly ordered per connection: a resend is later
	 * than all sent before it even within one microsecond (RACK tells
	 * segments sent at the same time apart by sequence, which a resend
	 * would get wrong). Only a last_ts that such steps put a little
	 * ahead of the clock is kept: a time 36-72 min past is "after" a
	 * clock in the other half of its 2^32 us lap, and every send would
	 * take it (RACK then never finds a loss). */
	if (!ts_after(nr.ts, k->last_ts) &&
	    k->last_ts - nr.ts < REC_TS_LEAD_MAX_US)
		nr.ts = k->last_ts;
	if (seq_lt(s, k->snd_max)) {
		rec_mark_resend(k, nr);
		return;
	}
	k->last_ts = nr.ts;
	rec_push(k, &nr);
}

/* Forget what the cumulative ACK covers. */
void rec_sb_trim(struct tcp_conn *k, uint32_t ack)
{
	uint32_t i = 0;

	while (i < k->nrec && seq_le(k->rec[i].end, ack))
		i++;
	if (i == k->nrec) {
		k->nrec = 0;
	} else if (i) {
		memmove(k->rec, k->rec + i, (k->nrec - i) * sizeof(k->rec[0]));
		k->nrec = (uint8_t)(k->nrec - i);
	}
	if (k->nrec && seq_lt(k->rec[0].start, ack))
		k->rec[0].start = ack;
	if (!k->nsb)
		return;
	i = 0;
	while (i < k->nsb && seq_le(k->sb[i].end, ack))
		i++;
	if (i) {
		memmove(k->sb, k->sb + i, (k->nsb - i) * sizeof(k->sb[0]));
		k->nsb = (uint8_t)(k->nsb - i);
	}
	if (k->nsb && seq_lt(k->sb[0].start, ack))
		k->sb[0].start = ack;
	k->sacked = 0;
	for (i = 0; i < k->nsb; i++)
		k->sacked += k->sb[i].end - k->sb[i].start;
}

/* Add [s, e) to the scoreboard, merging; past SB_RANGES the highest
 * range is forgotten (its bytes may be sent again, nothing worse). */
static void sb_insert(struct tcp_conn *k, uint32_t s, uint32_t e)
{
	struct seq_range tmp[SB_RANGES + 1];
	uint32_t i, n = 0;
	bool ins = false;

	for (i = 0; i < k->nsb; i++) {
		struct seq_range r = k->sb[i];

		if (seq_lt(r.end, s)) {
			tmp[n++] = r;
		} else if (seq_gt(r.start, e)) {
			if (!ins) {
				tmp[n++] = (struct seq_range){s, e};
				ins = true;
			}
			tmp[n++] = r;
		} else {
			if (seq_lt(r.start, s))
				s = r.start;
			if (seq_gt(r.end, e))
				e = r.end;
		}
	}
	if (!ins)
		tmp[n++] = (struct seq_range){s, e};
	if (n > SB_RANGES)
		n = SB_RANGES;
	memcpy(k->sb, tmp, n * sizeof(tmp[0]));
	k->nsb = (uint8_t)n;
	k->sacked = 0;
	for (i = 0; i < n; i++)
		k->sacked += k->sb[i].end - k->sb[i].start;
}

/* RFC 8985 6.2 steps 1-3 for one record's bytes up to end, sent at ts
 * (rtx: a resend), just delivered: RACK follows the most recently sent,
 * and one never resent below the highest SACKed byte shows reordering.
 * A resend delivered sooner than the minimum RTT may be the original's
 * ACK: it does not count (step 2). */
static inline void rack_record(struct tcp_core *c, struct tcp_conn *k,
			       uint32_t ts, uint32_t end, bool rtx)
{
	uint32_t rtt = ts_after(ts, c->now_us) ? 0 : c->now_us - ts;

	if (rtx) {
		if (rtt < k->min_rtt_us)
			return;
	} else {
		if (!k->min_rtt_us || rtt < k->min_rtt_us)
			k->min_rtt_us = rtt ? rtt : 1;
		if (seq_lt(end, k->fack))
			k->reord_seen = 1;
	}
	if (!k->rack_valid || sent_after(ts, end, k->rack_ts, k->rack_end)) {
		k->rack_ts = ts;
		k->rack_end = end;
		k->rack_rtt_us = rtt;
		k->rack_valid = 1;
	}
}

/* The bytes [s, e) just delivered (ACKed or SACKed for the first time),
 * record by record, to rack_record. */
static void rack_delivered(struct tcp_core *c, struct tcp_conn *k, uint32_t s,
			   uint32_t e)
{
	uint32_t i;

	for (i = 0; i < k->nrec; i++) {
		const struct xmit_rec *r = &k->rec[i];

		if (seq_le(r->end, s))
			continue;
		if (!seq_lt(r->start, e))
			break;
		rack_record(c, k, rec_ts(r), seq_lt(r->end, e) ? r->end : e,
			    rec_rtx(r));
	}
}

/* The parts of [s, e) the scoreboard does not hold, to rack_delivered. */
static void deliver_new(struct tcp_core *c, struct tcp_conn *k, uint32_t s,
			uint32_t e)
{
	uint32_t i;

	for (i = 0; i < k->nsb && seq_lt(s, e); i++) {
		const struct seq_range *g = &k->sb[i];

		if (seq_le(g->end, s))
			continue;
		if (!seq_lt(g->start, e))
			break;
		if (seq_lt(s, g->start))
			rack_delivered(c, k, s, g->start);
		s = g->end;
	}
	if (seq_lt(s, e))
		rack_delivered(c, k, s, e);
}

/* RFC 8985 6.2 step 4: the reordering window, microseconds. */
static uint32_t rack_reo_wnd(const struct tcp_conn *k)
{
	uint32_t w;

	if (!k->reord_seen && (k->in_recovery || k->sacked >= 3u * k->mss))
		return 0;
	w = k->reo_mult * (k->min_rtt_us / 4);
	return w < k->srtt_us ? w : k->srtt_us;
}

static void rack_piece(struct rack_scan_out *o, uint32_t a, uint32_t b,
		       int32_t left)
{
	if (left <= 0) {
		o->lost += b - a;
		if (!o->first_len) {
			o->first_start = a;
			o->first_len = b - a;
		}
	} else if (!o->has_wait || (uint32_t)left < o->wait_us) {
		o->wait_us = (uint32_t)left;
		o->has_wait = true;
	}
}

/*
 * RFC 8985 6.2 step 5: a byte neither ACKed nor SACKed is lost when it
 * was sent before the segment RACK follows and RACK.rtt + reo_wnd have
 * passed since it was sent; for the others, how long until they would
 * be. Walks the records and the scoreboard (both bounded and sorted).
 */
void rack_scan(struct tcp_core *c, const struct tcp_conn *k,
	       struct rack_scan_out *o)
{
	uint32_t reo = rack_reo_wnd(k), i, j;

	memset(o, 0, sizeof(*o));
	if (!k->rack_valid)
		return;
	for (i = 0; i < k->nrec; i++) {
		const struct xmit_rec *r = &k->rec[i];
		uint32_t ts = rec_ts(r), a = r->start, b = r->end;
		int32_t left;

		if (ts_after(ts, k->rack_ts))
			continue;
		if (ts == k->rack_ts) {
			if (!seq_lt(a, k->rack_end))
				continue;
			if (seq_gt(b, k->rack_end))
				b = k->rack_end;
		}
		left = (int32_t)(ts + k->rack_rtt_us + reo - c->now_us);
		for (j = 0; j < k->nsb && seq_lt(a, b); j++) {
			const struct seq_range *g = &k->sb[j];

			if (seq_le(g->end, a))
				continue;
			if (!seq_lt(g->start, b))
				break;
			if (seq_lt(a, g->start))
				rack_piece(o, a, g->start, left);
			a = g->end;
		}
		if (seq_lt(a, b))
			rack_piece(o, a, b, left);
	}
}

/* RFC 6675 pipe: in flight, neither SACKed nor deemed lost. */
uint32_t sack_pipe(const struct tcp_conn *k, const struct rack_scan_out *o)
{
	uint32_t flight = k->snd_max - k->snd_una;
	uint32_t out = k->sacked + o->lost;

	return flight > out ? flight - out : 0;
}

/* Going back after an RTO: step snd_nxt over what the peer SACKed, and
 * return how much may go before the next SACKed range. */
uint32_t sb_skip(struct tcp_conn *k)
{
	uint32_t i;

	for (i = 0; i < k->nsb; i++) {
		const struct seq_range *g = &k->sb[i];

		if (seq_le(g->end, k->snd_nxt))
			continue;
		if (seq_le(g->start, k->snd_nxt)) {
			k->snd_nxt = g->end;
			continue;
		}
		return g->start - k->snd_nxt;
	}
	return UINT32_MAX;
}

/*
 * The SACK blocks of an acceptable ACK. RFC 2883: a first block below
 * the cumulative ACK, or inside the second block, reports a duplicate
 * (D-SACK), not a hole; it widens RACK's reordering window (RFC 8985
 * 6.2 step 4). Blocks beyond SND.MAX are ignored; the rest are clipped
 * to the cumulative ACK.
 */
static void sack_on_ack(struct tcp_core *c, struct tcp_conn *k,
			const struct seg *s)
{
	uint32_t i, fack, lo = seq_gt(s->ack, k->snd_una) ? s->ack : k->snd_una;

	if (seq_lt(k->fack, lo))
		k->fack = lo;
	fack = k->fack;

	for (i = 0; i < s->nsack; i++) {
		uint32_t a = s->sack[i].start, b = s->sack[i].end;

		if (i == 0 && (seq_lt(a, s->ack) ||
			       (s->nsack > 1 && !seq_lt(a, s->sack[1].start) &&
				!seq_gt(b, s->sack[1].end)))) {
			c->cnt.dsacks++;
			/* A probe's needless resend tells nothing of
			 * reordering (Linux's RACK ignores such D-SACKs). */
			if (dsack_of_probe(k, a, b))
				continue;
			k->reord_seen = 1;
			if (k->reo_mult < REO_MULT_MAX)
				k->reo_mult++;
			continue;
		}
		if (seq_lt(a, lo))
			a = lo;
		if (!seq_lt(a, b) || seq_gt(b, k->snd_max))
			continue;
		deliver_new(c, k, a, b);
		sb_insert(k, a, b);
		if (seq_gt(b, fack))
			fack = b;
	}
	k->fack = fack;
}

/* sack_ack_in's general case: SACK blocks, a scoreboard, resends or
 * several records. Apart so the clean case stays a leaf. */
static __attribute__((noinline)) void
sack_ack_walk(struct tcp_core *c, struct tcp_conn *k, const struct seg *s)
{
	/* What the cumulative ACK delivers first: it was sent before what
	 * the blocks report. */
	if (seq_gt(s->ack, k->snd_una))
		deliver_new(c, k, k->snd_una, s->ack);
	if (s->nsack)
		sack_on_ack(c, k, s);
	if (seq_gt(s->ack, k->fack))
		k->fack = s->ack;
}

/*
 * What an acceptable ACK that moves SND.UNA or carries SACK blocks
 * delivers, to RACK and the scoreboard (before conn_ack trims them). A
 * clean link's ACK, of everything sent, one record never resent, with no
 * SACK information anywhere, is O(1): that record is what RACK follows,
 * and nothing lies below FACK.
 */
void sack_ack_in(struct tcp_core *c, struct tcp_conn *k, const struct seg *s)
{
	const struct xmit_rec *r = &k->rec[0];

	if (k->nrec == 1 && s->ack == k->snd_max && !(s->nsack | k->nsb) &&
	    !rec_rtx(r) && !seq_gt(k->fack, k->snd_una)) {
		/* rack_record(r) knowing it was never resent and ends above
		 * FACK. */
		uint32_t rtt =
			ts_after(r->ts, c->now_us) ? 0 : c->now_us - r->ts;

		if (!k->min_rtt_us || rtt < k->min_rtt_us)
			k->min_rtt_us = rtt ? rtt : 1;
		if (!k->rack_valid ||
		    sent_after(r->ts, s->ack, k->rack_ts, k->rack_end)) {
			k->rack_ts = r->ts;
			k->rack_end = s->ack;
			k->rack_rtt_us = rtt;
			k->rack_valid = 1;
		}
		k->nrec = 0;
		k->fack = s->ack;
		return;
	}
	sack_ack_walk(c, k, s);
}

/* Resend the lost piece at seq (at most one MSS of it, with the FIN when
 * it holds the FIN's number). */
static void rack_resend(struct tcp_core *c, struct tcp_conn *k, uint32_t seq,
			uint32_t len)
{
	uint32_t stream_end = k->snd_una + k->q_bytes;
	uint32_t n = seq_lt(seq, stream_end)
			     ? min_u32(min_u32(len, k->mss), stream_end - seq)
			     : 0;
	bool fin = k->fin_sent && seq + n == k->fin_seq &&
		   seq_lt(k->fin_seq, seq + len);

	if (!n && !fin)
		return;
	send_data(c, k, seq, n, fin);
	c->cnt.retransmits++;
	c->cnt.rack_retransmits++;
	k->rtt_on = 0;
}

/*
 * RACK-TLP loss detection and RFC 6675 recovery, after an ACK or when
 * the reordering timer fires: what RACK deems lost starts a recovery
 * (ssthresh = cwnd = FlightSize / 2, once per window: not again before
 * SND.UNA passes the recovery point) and is resent while pipe is under
 * cwnd, the first at once; what may yet be lost arms the reordering
 * timer. Nothing to do without SACK information or in the go-back-N of
 * an RTO.
 */
void rack_step(struct tcp_core *c, struct tcp_conn *k)
{
	struct rack_scan_out o;
	bool first = false;
	int budget = 64;
	uint32_t next = k->snd_una;

	if (k->rack_tmr) {
		k->rack_tmr = 0;
		k->tlp_at = 0;
	}
	if ((!k->nsb && !k->sack_rec) || !k->rack_valid ||
	    seq_lt(k->snd_nxt, k->snd_max) || k->snd_una == k->snd_max)
		return;
	rack_scan(c, k, &o);
	if (o.lost && !k->in_recovery) {
		if (!seq_lt(k->snd_una, k->recover)) {
			k->ssthresh = loss_ssthresh(k);
			k->cwnd = k->ssthresh;
			c->cnt.sack_recoveries++;
		}
		k->recover = k->snd_max;
		k->in_recovery = 1;
		k->sack_rec = 1;
		k->tlp_at = 0;
		/* The recovery is the loss's congestion response: a probe's
		 * episode ends in it (Linux's tcp_init_cwnd_reduction). */
		k->tlp_out = 0;
		k->bytes_acked = 0;
		first = true;
	}
	while (k->in_recovery && o.lost && budget--) {
		if (!first && sack_pipe(k, &o) >= k->cwnd)
			break;
		/* Holes go in sequence order: never one twice in a step. */
		if (!first && seq_lt(o.first_start, next))
			break;
		first = false;
		next = o.first_start + min_u32(o.first_len, k->mss);
		rack_resend(c, k, o.first_start, o.first_len);
		rack_scan(c, k, &o);
	}
	if (o.has_wait) {
		k->rack_tmr = 1;
		k->tlp_at = c->now_ms + (o.wait_us + 999) / 1000;
		timer_update(c, k);
	}
}

/* The scoreboard sorted, disjoint, within [SND.UNA, SND.MAX] and summed;
 * the send-time records tiling [SND.UNA, SND.MAX) exactly; an
 * out-of-order range only in a buffer. Nonzero when not. */
int sack_check(const struct tcp_conn *k)
{
	uint32_t i, sum = 0, at = k->snd_una;

	for (i = 0; i < k->nsb; i++) {
		const struct seq_range *g = &k->sb[i];

		if (!seq_lt(g->start, g->end) || seq_lt(g->start, at) ||
		    seq_gt(g->end, k->snd_max) || (i && g->start == at))
			return 1;
		sum += g->end - g->start;
		at = g->end;
	}
	if (sum != k->sacked || k->nrec > XMIT_RECS)
		return 2;
	at = k->snd_una;
	for (i = 0; i < k->nrec; i++) {
		if (k->rec[i].start != at || !seq_lt(at, k->rec[i].end))
			return 3;
		at = k->rec[i].end;
	}
	if (at != k->snd_max)
		return 4;
	if (k->ooo_len &&
	    (k->rxb == NIL || k->ooo_off + k->ooo_len > RXBUF_SIZE))
		return 5;
	return 0;
}
