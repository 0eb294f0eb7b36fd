/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_seq.h - the sequence-number rules of the xdp engine
 * (docs/tcp-security.md, "Known sequence numbers"): at which of our
 * sequence numbers a reply starts, what it acknowledges, what a segment
 * gets (an answer, a FIN-ACK, a bare ACK, a RST, nothing), and the
 * per-flow soft state that answers what the cookie alone cannot prove.
 *
 * The invariant every rule keeps: a reply is always the responses to the
 * complete requests of a segment whose seq is a point x where we had
 * consumed exactly the client's bytes before x, sent at our position
 * pos(x) (our ISN + 1 + the length of the responses to those bytes).
 * pos() is a function of the client's byte stream, so two replies that
 * cover the same range carry the same kind of bytes (only the Date
 * differs), and an ack never covers a byte we did not receive. (x, pos(x))
 * pairs are proved by a verified TSecr (cookie v2 mints TSval with
 * a = where our reply ends and x = what it acks, and checks seq + ack) or
 * recorded in a flow entry that such a segment created.
 *
 * Owns: the FIN mark, the per-flow entry's layout and its update and
 * lookup rules. Pure functions on plain values: the XDP program, the TC
 * program (its multi-segment replies must start at blitz_seq_at.snd and
 * mint their TSval with blitz_seq_mint_x()) and the tests share them.
 * Must never touch packets or maps (bpf/blitz_flow.h holds the XDP map).
 */
#ifndef BLITZ_SEQ_H
#define BLITZ_SEQ_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "blitz_cookie2.h"

/*
 * The FIN mark: every segment we send at or after our FIN mints its TSval
 * with x + BLITZ_SEQ_FIN_MARK, so a segment that echoes it proves that our
 * side is closed (blitz_ck2_check_ts_mark() sets h.fin). It moves MAC bits
 * only (bit 12 of the MAC field: compared in the cut test builds too), and
 * it is one step of 2^12 in TSval: PAWS-monotonic (docs/cookie-v2.md).
 */
#define BLITZ_SEQ_FIN_MARK (1U << 12)

/* a before b in sequence space */
BLITZ_INLINE int blitz_seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

/* lo <= v <= hi in sequence space (hi not before lo) */
BLITZ_INLINE int blitz_seq_within(__u32 v, __u32 lo, __u32 hi)
{
	return v - lo <= hi - lo;
}

/* The x a reply's TSval is minted with: its ack, marked at or after our FIN. */
BLITZ_INLINE __u32 blitz_seq_mint_x(__u32 ack, int closed)
{
	return ack + (closed ? BLITZ_SEQ_FIN_MARK : 0);
}

/* Where a reply to a segment goes. */
struct blitz_seq_at {
	__u32 snd; /* our first sequence number in the reply */
	__u32 rcv; /* the client's first byte it answers (== the segment's seq)
		    */
	__u32 closed;	/* our FIN is already sent, at snd - 1 */
	__u32 by_state; /* proved by a flow entry, not by the cookie alone */
};

/* A segment whose TSecr verified: its ack is pos(its seq). */
BLITZ_INLINE void blitz_seq_at_cookie(struct blitz_seq_at *at, __u32 seq,
				      __u32 ack, int fin_marked)
{
	at->snd = ack;
	at->rcv = seq;
	at->closed = fin_marked ? 1 : 0;
	at->by_state = 0;
}

enum blitz_seq_act {
	BLITZ_SEQ_DROP = 0, /* nothing to send (pure ACK), or not provable */
	BLITZ_SEQ_ANSWER,   /* the requests (and FIN) at at.snd */
	BLITZ_SEQ_FINACK,   /* a bare FIN: FIN|ACK at at.snd, acking seq + 1 */
	/* after our FIN: ACK at at.snd, acking seq + len (+1 for a FIN) */
	BLITZ_SEQ_ACK,
};

/*
 * What a segment at at (its seq == at.rcv) gets. After our FIN the
 * connection is half-closed: a client FIN or data is acked and the data
 * discarded (no second FIN, no answer), as the kernel path does (the epoll
 * engine keeps reading after its FIN, RFC 9112 section 9.6), but data only
 * once the client has our FIN (ack == at.snd; before that its
 * retransmission comes back with our FIN acked).
 */
BLITZ_INLINE int blitz_seq_action(const struct blitz_seq_at *at, __u32 ack,
				  __u32 plen, int fin)
{
	if (at->closed) {
		if (plen)
			return ack == at->snd ? BLITZ_SEQ_ACK : BLITZ_SEQ_DROP;
		return fin ? BLITZ_SEQ_ACK : BLITZ_SEQ_DROP;
	}
	if (plen)
		return BLITZ_SEQ_ANSWER;
	return fin ? BLITZ_SEQ_FINACK : BLITZ_SEQ_DROP;
}

/* ---- per-flow soft state -------------------------------------------- */

#define BLITZ_FLOW_PTS 4    /* earlier points replies were made at */
#define BLITZ_FLOW_CLOSED 2 /* our FIN is at snd_nxt - 1 */

/*
 * One flow's entry (104 bytes), for a connection without timestamps. Made only
 * from a segment that verified (cookie or entry) and the reply we sent to it;
 * losing it never yields wrong bytes, only a segment left to the client's
 * retransmission.
 */
struct blitz_flow {
	/* The cookie that verified (h.flow0 tags the entry; 0: empty): its
	 * epoch, options, slot and MAC mint the replies made from it. */
	struct blitz_ck2_hit h;
	/* The key it was made under (its offset key's first word): an entry
	 * is used only while a key slot that accepts still holds that key. */
	__u64 key;
	__u32 rcv_nxt, snd_nxt; /* after our last reply: pos(rcv_nxt) */
	/* The points (x, pos(x)) our last replies were made at, for a
	 * request retransmitted before its reply arrived. */
	__u32 pt_rcv[BLITZ_FLOW_PTS], pt_snd[BLITZ_FLOW_PTS];
	__u32 snd_una; /* the highest ack we took */
	__u32 stamp;   /* last use (LRU within the set) */
	__u32 epoch;   /* cookie epoch of the last use */
	__u8 flags;
	__u8 pad, pt_next;
	__u8 pt_closed; /* bit i: our FIN was sent before point i */
};

BLITZ_INLINE void blitz_flow_pt_push(struct blitz_flow *f, __u32 rcv, __u32 snd,
				     int closed)
{
	__u32 i;

	for (i = 0; i < BLITZ_FLOW_PTS; i++)
		if (f->pt_rcv[i] == rcv && f->pt_snd[i] == snd)
			return;
	i = f->pt_next & (BLITZ_FLOW_PTS - 1);
	f->pt_rcv[i] = rcv;
	f->pt_snd[i] = snd;
	f->pt_closed =
		(__u8)((f->pt_closed & ~(1U << i)) | (closed ? 1U << i : 0));
	f->pt_next = (__u8)((i + 1) & (BLITZ_FLOW_PTS - 1));
}

/* Is the entry alive at cookie epoch e_now (used within the last epoch:
 * the cookie's own validity)? */
BLITZ_INLINE int blitz_flow_live(const struct blitz_flow *f, __u64 e_now)
{
	return f->h.flow0 && (__u32)e_now - f->epoch <= 1;
}

/*
 * Where the entry puts a segment of a connection without timestamps that
 * is not the one completing the handshake (the ISN cookie proves only
 * that one). It is authenticated by the entry: its seq and its ack are
 * exactly a point we recorded (the client's ISN is unknown to a blind
 * spoofer: 2^-32 for the seq alone, the ack too must be exact).
 * The point must be (seq, ack) itself, both exact: seq == x (in order:
 * no hole, no byte acked that we did not get) and ack == pos(x) (the
 * client has every byte we sent before the reply, so the ack the reply
 * carries never runs ahead of data the client may have lost: we never
 * retransmit, the client's retransmission of its request does). A
 * request sent before our previous reply arrived (ack below pos(x)) is
 * therefore not answered: its retransmission, with that reply acked, is.
 * Anything else: 0.
 */
BLITZ_INLINE int blitz_flow_at(const struct blitz_flow *f, __u64 e_now,
			       __u32 seq, __u32 ack, struct blitz_seq_at *at)
{
	__u32 i;

	if (!blitz_flow_live(f, e_now))
		return 0;
	at->by_state = 1;
	at->rcv = seq;
	if (seq == f->rcv_nxt && ack == f->snd_nxt) {
		at->snd = f->snd_nxt;
		at->closed = (f->flags & BLITZ_FLOW_CLOSED) ? 1 : 0;
		return 1;
	}
	for (i = 0; i < BLITZ_FLOW_PTS; i++) {
		if (seq != f->pt_rcv[i] || ack != f->pt_snd[i])
			continue;
		at->snd = f->pt_snd[i];
		at->closed = (f->pt_closed >> i) & 1;
		return 1;
	}
	return 0;
}

/* What one reply did, for the entry. */
struct blitz_seq_sent {
	__u32 end_snd; /* our sequence number after it */
	__u32 end_rcv; /* its ack */
	__u32 closed;  /* our FIN is sent (in it or before) */
	/* (Entries are kept for connections without timestamps only: with
	 * them every reply starts at the client's ack, at or before its
	 * rcv_wup, so its ts_recent always moves to our latest TSval and the
	 * cookie alone proves every segment that can be answered.) */
	/* It carried our FIN: the point before the FINs (the end of its
	 * data both ways), where a retransmitted client FIN is answered. */
	__u32 fin_here, mid_rcv, mid_snd;
};

/* Is (rcv, snd) a point the entry knows: its last reply's end or start? */
BLITZ_INLINE int blitz_flow_knows(const struct blitz_flow *f, __u32 rcv,
				  __u32 snd)
{
	__u32 i;

	if (rcv == f->rcv_nxt && snd == f->snd_nxt)
		return 1;
	for (i = 0; i < BLITZ_FLOW_PTS; i++)
		if (rcv == f->pt_rcv[i] && snd == f->pt_snd[i])
			return 1;
	return 0;
}

/*
 * Record a reply made at at to a verified segment (its ack) in entry f
 * of flow h.flow0, made under key. An entry starts afresh from this reply
 * unless it is the same flow, alive, and the
 * reply was made at a point it knows (a cookie-proved point it does not
 * know may be another connection's sequence space on the same 4-tuple);
 * a resend that ends before the entry's last reply keeps the newer point.
 */
BLITZ_INLINE void blitz_flow_note(struct blitz_flow *f,
				  const struct blitz_ck2_hit *h, __u64 key,
				  __u64 e_now, __u32 stamp,
				  const struct blitz_seq_at *at, __u32 ack,
				  const struct blitz_seq_sent *sent)
{
	int fresh = f->h.flow0 != h->flow0 || !blitz_flow_live(f, e_now) ||
		    f->key != key || !blitz_flow_knows(f, at->rcv, at->snd);
	__u32 i;

	f->h = *h;
	f->key = key;
	if (fresh) {
		f->snd_una = ack;
		f->flags = 0;
		for (i = 0; i < BLITZ_FLOW_PTS; i++) {
			f->pt_rcv[i] = at->rcv;
			f->pt_snd[i] = at->snd;
		}
		f->pt_closed = at->closed ? 0xf : 0;
		f->pt_next = 0;
	} else if (blitz_seq_before(sent->end_snd, f->snd_nxt) ||
		   (sent->end_snd == f->snd_nxt &&
		    blitz_seq_before(sent->end_rcv, f->rcv_nxt))) {
		goto keep;
	}
	/* Every point a client may retransmit from: where this reply was
	 * made, the entry's last end (it acked there), the end of its data. */
	blitz_flow_pt_push(f, at->rcv, at->snd, at->closed);
	if (!fresh)
		blitz_flow_pt_push(f, f->rcv_nxt, f->snd_nxt,
				   f->flags & BLITZ_FLOW_CLOSED);
	if (sent->fin_here)
		blitz_flow_pt_push(f, sent->mid_rcv, sent->mid_snd, 0);
	f->flags &= ~BLITZ_FLOW_CLOSED;
	if (sent->closed)
		f->flags |= BLITZ_FLOW_CLOSED;
	f->rcv_nxt = sent->end_rcv;
	f->snd_nxt = sent->end_snd;
	goto learn;
keep:
	/* A resend that ended earlier: its end is a point the client may
	 * continue from (it acks there). */
	blitz_flow_pt_push(f, sent->end_rcv, sent->end_snd, sent->closed);
learn:
	if (blitz_seq_before(f->snd_una, ack) &&
	    blitz_seq_within(ack, f->snd_una, f->snd_nxt))
		f->snd_una = ack;
	f->stamp = stamp;
	f->epoch = (__u32)e_now;
}

/* A reply to remember (the XDP program's blitz_flow_record). */
struct blitz_seq_rec {
	struct blitz_seq_at at;
	struct blitz_seq_sent sent;
	__u64 src; /* the source address's first two words */
};

/* The record of a TC burst (bpf/kern/blitz_flow.h holds the map;
 * docs/tcp-security.md, "Pipelined batches"). */
#define BLITZ_BURST_KINDS 128 /* requests answered per burst, at most */

#define BLITZ_BURST_TS 1	/* the connection has timestamps */
#define BLITZ_BURST_FIN 2	/* our FIN ends the burst */
#define BLITZ_BURST_WITHHELD 4	/* the last request's ack is held back */
#define BLITZ_BURST_RCV_FIN 8	/* the batch carried the client's FIN */
#define BLITZ_BURST_ACK_SEEN 16 /* last_ack is a client's, not the start */

struct blitz_burst {
	__u64 flow0;	     /* the flow (the map's key, kept to compare) */
	__u32 snd0, snd_end; /* our bytes [snd0, snd_end), FIN not counted */
	__u32 rcv_ack;	     /* what every segment acks */
	__u32 rcv_end;	     /* the end of the answered requests */
	__u32 tsval;	     /* what every segment carries (host order) */
	__u32 tsecr_in;	     /* the batch's TSecr: the TSval before ours */
	__u32 last_ack;	     /* the client's last ack seen */
	__u32 resent_at;     /* the last segment re-sent, and when */
	__u64 resent_ns;
	__u16 seglen; /* payload bytes per segment */
	__u16 gen;    /* the templates' generation it was cut from */
	__u8 nkinds, flags, opts, pad;
	__u8 date[32]; /* the Date it carried (BLITZ_DATE_LEN) */
	__u8 kinds[BLITZ_BURST_KINDS]; /* response kind of each request */
};

#endif /* BLITZ_SEQ_H */
