/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_tspt.h - the points of a timestamp connection's track that its
 * last replies were made at and ended at, per flow and CPU: a second check
 * of a segment whose TSecr verified (docs/cookie-v2.md, "An honest segment
 * at a point nothing proves"). The TSecr binds seq + ack with a 23-bit
 * MAC; a segment the client sent before our reply arrived (pipelined)
 * echoes an older TSval, and when its MAC matches by chance, the entry
 * still knows that its point is off our track. Such a segment is dropped
 * (drop_off_point); the client's retransmission, with a fresh TSecr, is
 * answered.
 *
 * The track: pos(x), our sequence number after the responses to the
 * client's bytes before x (bpf/blitz_seq.h). Every point we mint a TSval
 * at is (x, pos(x)), and pos only grows with x, strictly before our FIN
 * (every request gets a response of some bytes, a FIN a FIN), flat after
 * it (data acked and discarded). A segment at (seq, ack) is off the track
 * when the entry holds a point (x, w) it is out of order with: seq past x
 * and ack before w, or the reverse, or one equal and the other not (the
 * last one weak after our FIN: then seq past x at ack w is on it).
 *
 * Owns: the entry's layout, its update and its verdict (pure functions,
 * shared by the XDP program and the tests). Must never refuse a segment at
 * a point of the track: only a contradiction with a point it holds
 * refuses (points minted elsewhere, a TC burst or another CPU, contradict
 * nothing), an entry lives only while its cookie epoch does, and a new
 * connection on the same 4-tuple is told by its handshake (the caller's
 * ISN check). Must never hold anything whose loss changes a byte we send:
 * no entry, the cookie alone decides.
 */
#ifndef BLITZ_TSPT_H
#define BLITZ_TSPT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "blitz_seq.h"

/* Direct-mapped by the flow hash: 16384 entries of 48 bytes per CPU. */
#define BLITZ_TSPT_SLOTS 16384
#define BLITZ_TSPT_PTS 4

struct blitz_tspt {
	__u64 flow0; /* the flow hash under key slot 0; 0: empty */
	/* track points (client seq x, our seq w there) as w << 32 | x: one
	 * compare per point; [last] the newest end */
	__u64 pt[BLITZ_TSPT_PTS];
	__u32 epoch; /* cookie epoch of the last reply (low bits) */
	__u8 last;   /* the newest point */
	__u8 closed; /* bit i: our FIN was sent before point i */
	__u16 pad;
};

BLITZ_INLINE __u64 blitz_tspt_pt(__u32 x, __u32 w)
{
	return (__u64)w << 32 | x;
}

BLITZ_INLINE __u32 blitz_tspt_idx(__u64 flow0)
{
	return (__u32)(flow0 >> 40) & (BLITZ_TSPT_SLOTS - 1);
}

/* The entry of flow0, alive at cookie epoch e_now (the cookie's own
 * validity: one epoch since its last reply)? */
BLITZ_INLINE int blitz_tspt_live(const struct blitz_tspt *p, __u64 flow0,
				 __u64 e_now)
{
	return p->flow0 && p->flow0 == flow0 && (__u32)e_now - p->epoch <= 1;
}

/* Is (seq, ack) out of order with point i (see the header)? */
BLITZ_INLINE int blitz_tspt_off_one(const struct blitz_tspt *p, __u32 i,
				    __u32 seq, __u32 ack)
{
	__u64 pt = p->pt[i & (BLITZ_TSPT_PTS - 1)];
	__s32 ds = (__s32)(seq - (__u32)pt),
	      da = (__s32)(ack - (__u32)(pt >> 32));

	if ((ds > 0 && da < 0) || (ds < 0 && da > 0) || (!ds && da))
		return 1;
	return ds && !da && !((p->closed >> (i & (BLITZ_TSPT_PTS - 1))) & 1);
}

/* Does p hold the point (x, w) with that closed state? */
BLITZ_INLINE int blitz_tspt_held(const struct blitz_tspt *p, __u32 x, __u32 w,
				 int closed)
{
	__u64 pt = blitz_tspt_pt(x, w);
	__u32 i;

	for (i = 0; i < BLITZ_TSPT_PTS; i++)
		if (p->pt[i] == pt && !closed == !((p->closed >> i) & 1))
			return 1;
	return 0;
}

/*
 * Is (seq, ack) off the track the live entry p holds, for a TSecr that
 * verified with the FIN mark (fin) or without? Marked, it says our FIN
 * was sent before seq: not so at or before a point we were open at;
 * unmarked, the reverse at or after a point we were closed at. A held
 * point is on it (asked first: the usual case, cheap).
 */
BLITZ_INLINE int blitz_tspt_off(const struct blitz_tspt *p, __u32 seq,
				__u32 ack, int fin)
{
	__u32 i, c;
	__s32 ds;

	if (blitz_tspt_held(p, seq, ack, fin))
		return 0;
	for (i = 0; i < BLITZ_TSPT_PTS; i++) {
		if (blitz_tspt_off_one(p, i, seq, ack))
			return 1;
		ds = (__s32)(seq - (__u32)p->pt[i]);
		c = (p->closed >> i) & 1;
		if ((fin && !c && ds <= 0) || (!fin && c && ds >= 0))
			return 1;
	}
	return 0;
}

/* Start p afresh for flow0 from the point (x, w). */
BLITZ_INLINE void blitz_tspt_fresh(struct blitz_tspt *p, __u64 flow0,
				   __u64 e_now, __u32 x, __u32 w, int closed)
{
	__u32 i;

	p->flow0 = flow0;
	for (i = 0; i < BLITZ_TSPT_PTS; i++)
		p->pt[i] = blitz_tspt_pt(x, w);
	p->closed = closed ? 0xf : 0;
	p->last = 0;
	p->epoch = (__u32)e_now;
}

/*
 * A point (x, w) of flow0's track (closed: our FIN was sent before it),
 * at epoch e_now, into p: the point of a segment whose TSecr verified, or
 * the end of a reply. 0 when p now holds it (an entry of another flow or
 * a dead one starts afresh from it); 1 when it contradicts the live entry
 * and nothing changed: a segment there is off the track, unless it is a
 * new connection on the same 4-tuple (the caller checks its handshake,
 * then starts the entry afresh).
 */
BLITZ_INLINE int blitz_tspt_see(struct blitz_tspt *p, __u64 flow0, __u64 e_now,
				__u32 x, __u32 w, int closed)
{
	__u32 i;

	if (!blitz_tspt_live(p, flow0, e_now)) {
		blitz_tspt_fresh(p, flow0, e_now, x, w, closed);
		return 0;
	}
	if (p->epoch != (__u32)e_now) /* no store on the usual path */
		p->epoch = (__u32)e_now;
	if (blitz_tspt_held(p, x, w, closed))
		return 0;
	if (blitz_tspt_off(p, x, w, closed))
		return 1;
	i = (p->last + 1U) & (BLITZ_TSPT_PTS - 1);
	p->pt[i] = blitz_tspt_pt(x, w);
	p->closed = (__u8)((p->closed & ~(1U << i)) | (closed ? 1U << i : 0));
	p->last = (__u8)i;
	return 0;
}

/*
 * The end (x, w) of a reply made at a point the live entry p accepted
 * (blitz_tspt_see() left it live at this epoch, and nothing touched it
 * since): on the track, so it needs no check; held as the newest point
 * unless already held.
 */
BLITZ_INLINE void blitz_tspt_end_live(struct blitz_tspt *p, __u32 x, __u32 w,
				      int closed)
{
	__u32 i;

	if (blitz_tspt_held(p, x, w, closed))
		return;
	i = (p->last + 1U) & (BLITZ_TSPT_PTS - 1);
	p->pt[i] = blitz_tspt_pt(x, w);
	p->closed = (__u8)((p->closed & ~(1U << i)) | (closed ? 1U << i : 0));
	p->last = (__u8)i;
}

#endif /* BLITZ_TSPT_H */
