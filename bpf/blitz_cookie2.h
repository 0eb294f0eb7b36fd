/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_cookie2.h - cookie v2 of the xdp engine: the ISN of our SYN-ACK and
 * the TSval of every segment we send, with a clock (epochs), per-epoch keys
 * derived from the load's key, the client's MSS class, window scale and
 * SACK-permitted, a "timestamps negotiated" bit, and the arithmetic that
 * keeps TSval monotonic per connection and across hosts sharing a key.
 * docs/cookie-v2.md is the specification: layout, proofs, bounds.
 *
 * Owns: the cookie layouts, the key schedule (KDF), the epoch clock rules
 * and the verdict of a segment (ours now / ours once: RST / not ours). Used
 * by the XDP and TC programs and the tests, so it compiles with clang
 * -target bpf and with the userspace compiler: plain values in, plain
 * values out. It must never touch packets, maps or libc; the caller reads
 * the clock and owns the key ring's storage.
 *
 * Orientation: the 4-tuple is taken as the client's segment sees it
 * (saddr = client), addresses and ports in network order as in the
 * headers; seq, ack, ISNs, TSvals in host order.
 *
 *   TSval = O + a + x + (e mod 8) * 2^29 + opts6 * 2^23 + mac23   (mod 2^32)
 *   ISN   = mac25 * 2^7 + opts6 * 2 + (e mod 2)
 *
 * O: low half of the flow hash (offset key, 4-tuple); a: our sequence
 * number after the segment; x: the ack we send; e: epoch the cookie was
 * minted in; opts6: MSS class, SACK, window-scale class.
 */
#ifndef BLITZ_COOKIE2_H
#define BLITZ_COOKIE2_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "blitz_siphash.h"

/* ---- the clock ------------------------------------------------------ */

/* An epoch is 2^36 ns (68.7 s) of unix time (CLOCK_REALTIME, which fleet
 * hosts keep in step with NTP/PTP). */
#define BLITZ_CK2_EPOCH_SHIFT 36
#define BLITZ_CK2_EPOCH_NS (1ULL << BLITZ_CK2_EPOCH_SHIFT)
/* Most any two hosts sharing a key may disagree on the time: 2.15 s. */
#define BLITZ_CK2_SKEW_NS (1ULL << 31)
/* A cookie is accepted for at least EPOCH - 2 * SKEW = 64.4 s after it was
 * minted, anywhere in the fleet; responses advertise a keep-alive timeout
 * below that (the epoll engine and the TCP core close idle connections
 * after the same time). */
#define BLITZ_CK2_KEEPALIVE_S 60
/* Epoch numbers kept in a key ring: the current one, the previous one
 * (both accepted) and six older ones (verified for a RST only). */
#define BLITZ_CK2_RING 8

/* ---- the layouts ---------------------------------------------------- */

#define BLITZ_CK2_OPT_BITS 6
#define BLITZ_CK2_OPT_MASK 0x3fU
#define BLITZ_CK2_TS_EPOCH_SHIFT 29 /* 3 bits: e mod 8 */
/*
 * The options sit above the MAC (bits 23..28), the MAC in the low bits
 * (0..22), and the MAC never takes the top BLITZ_CK2_TS_MAC_GAP values of
 * its field: a segment whose seq + ack is off the point its TSecr was
 * minted for by 0 < d <= GAP (sent before our reply arrived: d is the
 * bytes since) either leaves the options alone and moves the MAC field
 * (fails), or borrows from the options, which leaves the field in the
 * gap (fails). No chance at all, and no state: docs/cookie-v2.md.
 */
#define BLITZ_CK2_TS_OPT_SHIFT 23
#define BLITZ_CK2_TS_MAC_FIELD 23 /* bits 0..22 */
#define BLITZ_CK2_TS_MAC_GAP (1U << 14)
#define BLITZ_CK2_TS_MAC_RANGE \
	((1U << BLITZ_CK2_TS_MAC_FIELD) - BLITZ_CK2_TS_MAC_GAP)
#define BLITZ_CK2_ISN_MAC_FIELD 25 /* bits 7..31 */

/*
 * How many MAC bits a check compares: all of them, unless a test build
 * cuts them (BLITZ_CK2_MAC_BITS, e.g. 10) to measure the acceptance rate
 * against the formulas of docs/cookie-v2.md. The layout never changes.
 */
#ifdef BLITZ_CK2_MAC_BITS
#define BLITZ_CK2_TS_MAC_BITS BLITZ_CK2_MAC_BITS
#define BLITZ_CK2_ISN_MAC_BITS BLITZ_CK2_MAC_BITS
#elif defined(BLITZ_CK2_TS_MAC_CUT) /* the TSval MAC alone (test_seq_narrow) \
				     */
#define BLITZ_CK2_TS_MAC_BITS BLITZ_CK2_TS_MAC_CUT
#define BLITZ_CK2_ISN_MAC_BITS BLITZ_CK2_ISN_MAC_FIELD
#else
#define BLITZ_CK2_TS_MAC_BITS BLITZ_CK2_TS_MAC_FIELD
#define BLITZ_CK2_ISN_MAC_BITS BLITZ_CK2_ISN_MAC_FIELD
#endif
#if BLITZ_CK2_TS_MAC_BITS < BLITZ_CK2_TS_MAC_FIELD
/* A cut build compares the low b - 1 bits and bit 12, the one the FIN
 * mark of bpf/blitz_seq.h moves: a marked TSecr never passes unmarked. */
#define BLITZ_CK2_TS_MAC_CMP \
	(((1U << (BLITZ_CK2_TS_MAC_BITS - 1)) - 1) | (1U << 12))
#else
#define BLITZ_CK2_TS_MAC_CMP ((1U << BLITZ_CK2_TS_MAC_BITS) - 1)
#endif
#define BLITZ_CK2_ISN_MAC_CMP ((1U << BLITZ_CK2_ISN_MAC_BITS) - 1)

/* Domain tags: no two messages of the key schedule are alike. */
#define BLITZ_CK2_TAG_OFF 0x626c69747a4f4646ULL	  /* "blitzOFF" */
#define BLITZ_CK2_TAG_EPOCH 0x626c69747a45504bULL /* "blitzEPK" */
#define BLITZ_CK2_TAG_TS (0x54ULL << 56)	  /* 'T' */
#define BLITZ_CK2_TAG_ISN (0x49ULL << 56)	  /* 'I' */

/* ---- options: the client's MSS class, SACK, window scale ------------ */

/*
 * MSS classes, Linux's msstab: a client announcing m gets the largest class
 * <= m, and the smallest class (the floor bpf_sk_assign_tcp_reqsk()
 * accepts, and the protocol default when no MSS option is sent) when m is
 * below it. IPv4 536, 1300, 1440, 1460; IPv6 1220, 1420, 1440, 8940.
 */
BLITZ_INLINE __u32 blitz_ck2_class_mss(__u32 cls, int v6)
{
	cls &= 3;
	if (v6)
		return cls == 0	  ? 1220
		       : cls == 1 ? 1420
		       : cls == 2 ? 1440
				  : 8940;
	return cls == 0 ? 536 : cls == 1 ? 1300 : cls == 2 ? 1440 : 1460;
}

/* mss: the SYN's MSS option, 0 when it had none. */
BLITZ_INLINE __u32 blitz_ck2_mss_class(__u32 mss, int v6)
{
	__u32 cls = 3;

	if (!mss)
		return 0;
	while (cls && mss < blitz_ck2_class_mss(cls, v6))
		cls--;
	return cls;
}

/*
 * Window-scale classes: 0 = no window scaling (the client offered none, or
 * a shift below 6: our SYN-ACK then offers none either, so neither side
 * scales); k in 1..7 = shift k + 5 (6..12). A client's shift of 13 or 14 is
 * kept as 12: its window then reads up to 4 times smaller than it is,
 * which is safe (we and the kernel send less, never more).
 */
#define BLITZ_CK2_WS_NONE 0xff
#define BLITZ_CK2_WS_MIN 6
#define BLITZ_CK2_WS_MAX 12

/* wscale: the SYN's window-scale shift, BLITZ_CK2_WS_NONE when absent. */
BLITZ_INLINE __u32 blitz_ck2_ws_class(__u32 wscale)
{
	if (wscale == BLITZ_CK2_WS_NONE || wscale < BLITZ_CK2_WS_MIN)
		return 0;
	if (wscale > BLITZ_CK2_WS_MAX)
		wscale = BLITZ_CK2_WS_MAX;
	return wscale - (BLITZ_CK2_WS_MIN - 1);
}

/* opts6 = MSS class (bits 0-1) | SACK-permitted (bit 2) | ws class (3-5). */
BLITZ_INLINE __u32 blitz_ck2_opts(__u32 mss, __u32 wscale, int sack, int v6)
{
	return blitz_ck2_mss_class(mss, v6) | (sack ? 4U : 0U) |
	       blitz_ck2_ws_class(wscale) << 3;
}

/* The MSS our segments to this client may not exceed. */
BLITZ_INLINE __u32 blitz_ck2_opts_mss(__u32 opts, int v6)
{
	return blitz_ck2_class_mss(opts & 3, v6);
}

BLITZ_INLINE int blitz_ck2_opts_sack(__u32 opts)
{
	return (opts >> 2) & 1;
}

/* Does window scaling apply on the connection (both SYNs carry it)? */
BLITZ_INLINE int blitz_ck2_opts_wscale_ok(__u32 opts)
{
	return ((opts >> 3) & 7) != 0;
}

/* The client's shift (what its window field is scaled by), 0 if none. */
BLITZ_INLINE __u32 blitz_ck2_opts_wscale(__u32 opts)
{
	__u32 k = (opts >> 3) & 7;

	return k ? k + (BLITZ_CK2_WS_MIN - 1) : 0;
}

/* ---- keys ------------------------------------------------------------ */

struct blitz_ck2_key {
	__u64 k0, k1;
};

/* KDF: a 128-bit key from the master key, a label and a number. */
BLITZ_INLINE void blitz_ck2_kdf(struct blitz_ck2_key *out, __u64 m0, __u64 m1,
				__u64 label, __u64 n)
{
	__u64 msg[2];

	msg[0] = label;
	msg[1] = n << 1;
	out->k0 = blitz_siphash(m0, m1, msg, 2);
	msg[1] = n << 1 | 1;
	out->k1 = blitz_siphash(m0, m1, msg, 2);
}

/* The epoch of a unix time in ns. */
BLITZ_INLINE __u64 blitz_ck2_epoch(__u64 unix_ns)
{
	return unix_ns >> BLITZ_CK2_EPOCH_SHIFT;
}

/*
 * The epoch new cookies are minted in: that of now - SKEW, so that no host
 * whose clock is at most SKEW behind ours ever sees an epoch it does not
 * know yet (it accepts its current and its previous epoch).
 */
BLITZ_INLINE __u64 blitz_ck2_mint_epoch(__u64 unix_ns)
{
	return blitz_ck2_epoch(unix_ns - BLITZ_CK2_SKEW_NS);
}

/* What a key slot may be used for. */
#define BLITZ_CK2_MINT 1U   /* new SYN-ACKs are minted with it */
#define BLITZ_CK2_ACCEPT 2U /* its cookies of the last 2 epochs are good */
#define BLITZ_CK2_RST 4U    /* its verified but expired cookies get a RST */

/*
 * One master key as the programs use it: the offset key, and the epoch
 * keys of the last RING epochs (ek[e % 8] is the key of epoch ep[e % 8]).
 */
struct blitz_ck2_slot {
	__u64 master[2];
	struct blitz_ck2_key off;
	struct blitz_ck2_key ek[BLITZ_CK2_RING];
	__u64 ep[BLITZ_CK2_RING];
	__u32 flags; /* BLITZ_CK2_MINT | ACCEPT | RST; 0: empty slot */
	__u32 pad;
};

#define BLITZ_CK2_SLOTS 2 /* [0]: the current key, [1]: the previous one */

struct blitz_ck2_ring {
	__u64 e_now;  /* epoch of the clock */
	__u64 e_mint; /* blitz_ck2_mint_epoch() of the clock */
	struct blitz_ck2_slot slot[BLITZ_CK2_SLOTS];
};

/* Is the key of epoch e in the slot's ring? (Then it is ek[e % 8]; no
 * pointer-or-NULL here: the BPF verifier loses track of merged ones.) */
BLITZ_INLINE int blitz_ck2_has(const struct blitz_ck2_slot *s, __u64 e)
{
	return s->ep[e & (BLITZ_CK2_RING - 1)] == e;
}

#define BLITZ_CK2_EK(s, e) (&(s)->ek[(e) & (BLITZ_CK2_RING - 1)])

/* Derive the epoch key for entry i (epoch e_now - i) of a slot, if missing. */
BLITZ_INLINE void blitz_ck2_slot_fill_one(struct blitz_ck2_slot *s, __u64 e_now,
					  __u32 i)
{
	__u64 e = e_now - i;
	__u32 idx = (__u32)e & (BLITZ_CK2_RING - 1);

	if (s->ep[idx] == e)
		return;
	blitz_ck2_kdf(&s->ek[idx], s->master[0], s->master[1],
		      BLITZ_CK2_TAG_EPOCH, e);
	s->ep[idx] = e;
}

/* Make a slot hold master key (m0, m1): derive its offset key and forget
 * its epoch keys, unless it holds that key already (9 SipHashes... 2). */
BLITZ_INLINE void blitz_ck2_slot_rekey(struct blitz_ck2_slot *s, __u64 m0,
				       __u64 m1)
{
	__u32 i;

	if (s->master[0] == m0 && s->master[1] == m1 && s->off.k0)
		return;
	s->master[0] = m0;
	s->master[1] = m1;
	blitz_ck2_kdf(&s->off, m0, m1, BLITZ_CK2_TAG_OFF, 0);
	/* A zero offset key marks an unsynced slot: never derive one. */
	if (!s->off.k0)
		s->off.k0 = 1;
	/* no epoch ~0 - 8 - i is ever asked for */
	for (i = 0; i < BLITZ_CK2_RING; i++)
		s->ep[i] = ~0ULL - BLITZ_CK2_RING;
}

/*
 * Make a slot hold master key (m0, m1) at epoch e_now with flags. Work is
 * done only for what changed: a new key derives the offset key and all
 * RING epoch keys (18 SipHashes), a new epoch one epoch key (2). (The BPF
 * programs run the same steps, the loop through bpf_loop.)
 */
BLITZ_INLINE void blitz_ck2_slot_sync(struct blitz_ck2_slot *s, __u64 m0,
				      __u64 m1, __u64 e_now, __u32 flags)
{
	__u32 i;

	s->flags = flags;
	blitz_ck2_slot_rekey(s, m0, m1);
	for (i = 0; i < BLITZ_CK2_RING; i++)
		blitz_ck2_slot_fill_one(s, e_now, i);
}

/* ---- the flow -------------------------------------------------------- */

/* The 4-tuple as SipHash words, the family in the last one. */
struct blitz_ck2_tuple {
	__u64 w[5];
	__u32 v6;
	__u32 pad;
};

BLITZ_INLINE void blitz_ck2_tuple_v4(struct blitz_ck2_tuple *t, __u32 saddr_be,
				     __u32 daddr_be, __u16 sport_be,
				     __u16 dport_be)
{
	t->w[0] = (__u64)saddr_be | (__u64)daddr_be << 32;
	t->w[1] = (__u64)sport_be | (__u64)dport_be << 16 | 4ULL << 32;
	t->w[2] = t->w[3] = t->w[4] = 0;
	t->v6 = 0;
	t->pad = 0;
}

BLITZ_INLINE void blitz_ck2_tuple_v6(struct blitz_ck2_tuple *t,
				     const __u32 *saddr_be,
				     const __u32 *daddr_be, __u16 sport_be,
				     __u16 dport_be)
{
	t->w[0] = (__u64)saddr_be[0] | (__u64)saddr_be[1] << 32;
	t->w[1] = (__u64)saddr_be[2] | (__u64)saddr_be[3] << 32;
	t->w[2] = (__u64)daddr_be[0] | (__u64)daddr_be[1] << 32;
	t->w[3] = (__u64)daddr_be[2] | (__u64)daddr_be[3] << 32;
	t->w[4] = (__u64)sport_be | (__u64)dport_be << 16 | 6ULL << 32;
	t->v6 = 1;
	t->pad = 0;
}

/*
 * The flow hash under a slot's offset key. Its low half is O, the offset
 * that hides the epoch in TSval; all 64 bits stand for the 4-tuple in the
 * MAC messages (one word instead of two or five).
 */
BLITZ_INLINE __u64 blitz_ck2_flow(const struct blitz_ck2_slot *s,
				  const struct blitz_ck2_tuple *t)
{
	if (t->v6)
		return blitz_siphash(s->off.k0, s->off.k1, t->w, 5);
	return blitz_siphash(s->off.k0, s->off.k1, t->w, 2);
}

/* ---- the MACs -------------------------------------------------------- */

BLITZ_INLINE __u32 blitz_ck2_ts_mac(const struct blitz_ck2_key *ek, __u64 flow,
				    __u32 opts)
{
	__u64 m[2];

	m[0] = flow;
	m[1] = (__u64)(opts & BLITZ_CK2_OPT_MASK) | BLITZ_CK2_TAG_TS;
	/* uniform on [0, RANGE) within 2^-9 (of 2^32 values, 512 or 513
	 * each): never in the gap */
	return (__u32)(((blitz_siphash(ek->k0, ek->k1, m, 2) >> 32) *
			BLITZ_CK2_TS_MAC_RANGE) >>
		       32);
}

/* ts: the SYN offered timestamps (the "timestamps negotiated" bit). */
BLITZ_INLINE __u32 blitz_ck2_isn_mac(const struct blitz_ck2_key *ek, __u64 flow,
				     __u32 peer_isn, __u32 opts, int ts)
{
	__u64 m[2];

	m[0] = flow;
	m[1] = (__u64)peer_isn | (__u64)(opts & BLITZ_CK2_OPT_MASK) << 32 |
	       (ts ? 1ULL << 38 : 0) | BLITZ_CK2_TAG_ISN;
	return (__u32)blitz_siphash(ek->k0, ek->k1, m, 2) &
	       ((1U << BLITZ_CK2_ISN_MAC_FIELD) - 1);
}

/* The TSval layout, given the MAC. */
BLITZ_INLINE __u32 blitz_ck2_tsval_mac(__u64 e, __u64 flow, __u32 opts,
				       __u32 mac, __u32 a, __u32 x)
{
	return (__u32)flow + a + x + ((__u32)e << BLITZ_CK2_TS_EPOCH_SHIFT) +
	       ((opts & BLITZ_CK2_OPT_MASK) << BLITZ_CK2_TS_OPT_SHIFT) + mac;
}

/* The TSval of a segment minted in epoch e whose sequence space ends at a
 * (seq + SYN + payload + FIN) and that acknowledges x. */
BLITZ_INLINE __u32 blitz_ck2_tsval(const struct blitz_ck2_key *ek, __u64 e,
				   __u64 flow, __u32 opts, __u32 a, __u32 x)
{
	return blitz_ck2_tsval_mac(e, flow, opts,
				   blitz_ck2_ts_mac(ek, flow, opts), a, x);
}

BLITZ_INLINE __u32 blitz_ck2_isn(const struct blitz_ck2_key *ek, __u64 e,
				 __u64 flow, __u32 peer_isn, __u32 opts, int ts)
{
	return blitz_ck2_isn_mac(ek, flow, peer_isn, opts, ts)
		       << (BLITZ_CK2_OPT_BITS + 1) |
	       (opts & BLITZ_CK2_OPT_MASK) << 1 | ((__u32)e & 1);
}

/* ---- verdicts --------------------------------------------------------- */

#define BLITZ_CK2_BAD 0	    /* not ours: drop silently */
#define BLITZ_CK2_OK 1	    /* ours: answer or hand off */
#define BLITZ_CK2_EXPIRED 2 /* ours once (older epoch or retired key): RST */

/* What a verified cookie says. */
struct blitz_ck2_hit {
	__u64 flow;  /* flow hash under the slot that verified it */
	__u64 epoch; /* epoch it was minted in */
	__u32 opts;
	__u32 slot;
	__u32 mac; /* the TSval MAC of that epoch (timestamps only) */
	/* The TSecr carried the FIN mark (blitz_ck2_check_ts_mark): it
	 * echoes a segment we sent after our FIN. */
	__u32 fin;
	/* The flow hash under slot 0, set whatever the verdict (the key of
	 * the per-flow state, bpf/blitz_seq.h). */
	__u64 flow0;
};

/* The age (in epochs, 0..7) a TSval's epoch field says, relative to e_now. */
BLITZ_INLINE __u32 blitz_ck2_ts_age(__u64 e_now, __u32 d)
{
	return ((__u32)e_now - (d >> BLITZ_CK2_TS_EPOCH_SHIFT)) &
	       (BLITZ_CK2_RING - 1);
}

/*
 * Hooks for a memo of the two PRF values the timestamp check needs (the
 * flow hash of a 4-tuple under a slot's offset key, the TSval MAC of a
 * flow under an epoch key, which depends on neither seq nor ack): the BPF
 * programs' bpf/blitz_ring.h keeps the values of segments that verified,
 * per CPU, and returns them only for the exact same inputs, so every
 * verdict is the one SipHash gives. Elsewhere: plain SipHash, no memo.
 * BLITZ_CK2_MEMO_DECL(m, t) declares the handle m the hooks share for one
 * tuple (its entry looked up once).
 */
#ifndef BLITZ_CK2_FLOW_OF
#define BLITZ_CK2_MEMO_DECL(m, t) int m = 0
#define BLITZ_CK2_FLOW_OF(m, s, t) ((void)(m), blitz_ck2_flow(s, t))
#define BLITZ_CK2_TS_MAC_OF(m, t, ek, flow, opts) \
	((void)(m), blitz_ck2_ts_mac(ek, flow, opts))
#define BLITZ_CK2_TS_VERIFIED(m, s, t, ek, flow, opts, mac) \
	do {                                                \
	} while (0)
#endif

/*
 * One slot's verdict on a TSecr for a segment with seq and ack. mark != 0
 * also accepts the TSval of a segment minted with x + mark (the FIN mark
 * of bpf/blitz_seq.h: sent after our FIN), and says so in h->fin. The
 * mark is below 2^23: it moves only MAC bits (bit 12, compared in the cut
 * test builds too), so the marked variant needs a second MAC only when
 * it borrows from the options or the epoch field.
 */
BLITZ_INLINE int blitz_ck2_ts_check_slot(const struct blitz_ck2_slot *s,
					 __u64 e_now,
					 const struct blitz_ck2_tuple *t,
					 __u32 seq, __u32 ack, __u32 tsecr,
					 __u32 mark, struct blitz_ck2_hit *h)
{
	const struct blitz_ck2_key *ek;
	__u64 flow, e;
	__u32 d, age, opts, mac = 0, i, have = 0, age_mac = 0, opts_mac = 0;

	if (!(s->flags & (BLITZ_CK2_ACCEPT | BLITZ_CK2_RST)))
		return BLITZ_CK2_BAD;
	/* the memo's entry for t, found once for the three hooks */
	BLITZ_CK2_MEMO_DECL(memo, t);
	flow = BLITZ_CK2_FLOW_OF(memo, s, t);
	h->flow = flow;
	d = tsecr - (__u32)flow - ack - seq;
	for (i = 0; i < 2; i++, d -= mark) {
		if (i && !mark)
			break;
		age = blitz_ck2_ts_age(e_now, d);
		e = e_now - age;
		if (!blitz_ck2_has(s, e))
			continue;
		opts = (d >> BLITZ_CK2_TS_OPT_SHIFT) & BLITZ_CK2_OPT_MASK;
		if (!have || age != age_mac || opts != opts_mac) {
			ek = BLITZ_CK2_EK(s, e);
			mac = BLITZ_CK2_TS_MAC_OF(memo, t, ek, flow, opts);
			have = 1;
			age_mac = age;
			opts_mac = opts;
		}
		/* (in the gap: never a MAC; explicit for the cut builds) */
		if ((d & ((1U << BLITZ_CK2_TS_MAC_FIELD) - 1)) >=
			    BLITZ_CK2_TS_MAC_RANGE ||
		    ((d ^ mac) & BLITZ_CK2_TS_MAC_CMP))
			continue;
		BLITZ_CK2_TS_VERIFIED(memo, s, t, BLITZ_CK2_EK(s, e), flow,
				      opts, mac);
		h->epoch = e;
		h->opts = opts;
		h->mac = mac;
		h->fin = i;
		if (age <= 1 && (s->flags & BLITZ_CK2_ACCEPT))
			return BLITZ_CK2_OK;
		return BLITZ_CK2_EXPIRED;
	}
	return BLITZ_CK2_BAD;
}

/*
 * A check through both key slots, after slot 1 answered v1 for a segment
 * slot 0 refused with v0 (flow0: slot 0's flow hash): slot 1's verdict
 * unless it is BAD, else slot 0's; h then says which slot decided, and
 * h->flow0 is slot 0's flow whatever the verdict.
 */
BLITZ_INLINE int blitz_ck2_slot1_verdict(struct blitz_ck2_hit *h, int v0,
					 int v1, __u64 flow0)
{
	h->flow0 = flow0;
	if (v1 != BLITZ_CK2_BAD) {
		h->slot = 1;
		return v1;
	}
	h->flow = flow0;
	return v0;
}

/*
 * The verdict on a segment with a timestamp option, accepting the FIN
 * mark too when mark != 0: its TSecr must be the TSval we would have sent
 * on a segment ending at its ack and acknowledging its seq (plus mark),
 * in an epoch we accept, under a key we hold. OK fills h (slot, epoch,
 * options, fin) for the reply; h->flow0 is set whatever the verdict.
 */
BLITZ_INLINE int blitz_ck2_check_ts_mark(const struct blitz_ck2_ring *r,
					 const struct blitz_ck2_tuple *t,
					 __u32 seq, __u32 ack, __u32 tsecr,
					 __u32 mark, struct blitz_ck2_hit *h)
{
	__u64 flow0;
	int v0, v1;

	v0 = blitz_ck2_ts_check_slot(&r->slot[0], r->e_now, t, seq, ack, tsecr,
				     mark, h);
	flow0 = h->flow;
	h->flow0 = flow0;
	h->slot = 0;
	if (v0 == BLITZ_CK2_OK)
		return v0;
	v1 = blitz_ck2_ts_check_slot(&r->slot[1], r->e_now, t, seq, ack, tsecr,
				     mark, h);
	return blitz_ck2_slot1_verdict(h, v0, v1, flow0);
}

/* The same without the FIN mark (the TC hand-off: nothing after our FIN
 * is ever handed to the kernel). */
BLITZ_INLINE int blitz_ck2_check_ts(const struct blitz_ck2_ring *r,
				    const struct blitz_ck2_tuple *t, __u32 seq,
				    __u32 ack, __u32 tsecr,
				    struct blitz_ck2_hit *h)
{
	return blitz_ck2_check_ts_mark(r, t, seq, ack, tsecr, 0, h);
}

/* One slot's verdict on a segment without timestamps. */
BLITZ_INLINE int blitz_ck2_isn_check_slot(const struct blitz_ck2_slot *s,
					  __u64 e_now,
					  const struct blitz_ck2_tuple *t,
					  __u32 seq, __u32 ack,
					  struct blitz_ck2_hit *h)
{
	const struct blitz_ck2_key *ek;
	__u32 isn = ack - 1, peer_isn = seq - 1, opts, want, i;
	__u64 flow, e;

	if (!(s->flags & (BLITZ_CK2_ACCEPT | BLITZ_CK2_RST)))
		return BLITZ_CK2_BAD;
	flow = blitz_ck2_flow(s, t);
	h->flow = flow;
	opts = (isn >> 1) & BLITZ_CK2_OPT_MASK;
	/* The parity bit names one of the two accepted epochs; the same
	 * parity two epochs earlier is the expired one a RST is owed. */
	e = e_now - ((e_now ^ isn) & 1);
	for (i = 0; i < 2; i++, e -= 2) {
		if (!blitz_ck2_has(s, e))
			break;
		ek = BLITZ_CK2_EK(s, e);
		want = blitz_ck2_isn_mac(ek, flow, peer_isn, opts, 0);
		if ((want ^ (isn >> (BLITZ_CK2_OPT_BITS + 1))) &
		    BLITZ_CK2_ISN_MAC_CMP)
			continue;
		h->flow = flow;
		h->epoch = e;
		h->opts = opts;
		if (i == 0 && (s->flags & BLITZ_CK2_ACCEPT))
			return BLITZ_CK2_OK;
		return BLITZ_CK2_EXPIRED;
	}
	return BLITZ_CK2_BAD;
}

/*
 * The verdict on a segment without a timestamp option: it must complete
 * the handshake of a SYN-ACK we sent to a SYN without timestamps, Linux's
 * __cookie_v4_check() way: ack - 1 is the ISN we would have sent to a SYN
 * whose seq was this segment's seq - 1. Nothing later is ours statelessly.
 */
BLITZ_INLINE int blitz_ck2_check_isn(const struct blitz_ck2_ring *r,
				     const struct blitz_ck2_tuple *t, __u32 seq,
				     __u32 ack, struct blitz_ck2_hit *h)
{
	__u64 flow0;
	int v0, v1;

	v0 = blitz_ck2_isn_check_slot(&r->slot[0], r->e_now, t, seq, ack, h);
	flow0 = h->flow;
	h->flow0 = flow0;
	h->fin = 0;
	h->slot = 0;
	if (v0 == BLITZ_CK2_OK)
		return v0;
	v1 = blitz_ck2_isn_check_slot(&r->slot[1], r->e_now, t, seq, ack, h);
	return blitz_ck2_slot1_verdict(h, v0, v1, flow0);
}

/*
 * Is (seq, ack) where the handshake of a SYN with timestamps left its
 * connection: ack - 1 the ISN we send to a SYN whose seq was seq - 1, with
 * the options and under the key slot of h (a TSecr that verified)? The
 * start of a new connection on a 4-tuple whose earlier connection left a
 * point entry (bpf/blitz_tspt.h): one ISN MAC, asked only when that entry
 * refuses a segment.
 */
BLITZ_INLINE int blitz_ck2_ts_handshake(const struct blitz_ck2_ring *r,
					__u32 seq, __u32 ack,
					const struct blitz_ck2_hit *h)
{
	const struct blitz_ck2_slot *s = &r->slot[h->slot & 1];
	__u32 isn = ack - 1, want;
	__u64 e = r->e_now - ((r->e_now ^ isn) & 1);

	if (((isn >> 1) & BLITZ_CK2_OPT_MASK) != h->opts ||
	    !blitz_ck2_has(s, e))
		return 0;
	want = blitz_ck2_isn_mac(BLITZ_CK2_EK(s, e), h->flow, seq - 1, h->opts,
				 1);
	return !((want ^ (isn >> (BLITZ_CK2_OPT_BITS + 1))) &
		 BLITZ_CK2_ISN_MAC_CMP);
}

/* ---- minting ---------------------------------------------------------- */

/*
 * The TSval of our reply to a verified segment (h from blitz_ck2_check_ts),
 * ending at a and acknowledging x: same key, same options, the epoch of
 * the cookie it answers or the mint epoch if later. Every segment of one
 * reply (a burst) carries the TSval of the burst's end.
 */
BLITZ_INLINE __u32 blitz_ck2_reply_tsval(const struct blitz_ck2_ring *r,
					 const struct blitz_ck2_hit *h, __u32 a,
					 __u32 x)
{
	const struct blitz_ck2_slot *s = &r->slot[h->slot & 1];
	__u64 e = h->epoch;

	/* The MAC checked on the way in, unless the mint epoch is later. */
	if (e >= r->e_mint)
		return blitz_ck2_tsval_mac(e, h->flow, h->opts, h->mac, a, x);
	e = r->e_mint;
	if (!blitz_ck2_has(s, e)) /* cannot happen: e_now or e_now - 1 */
		return 0;
	return blitz_ck2_tsval(BLITZ_CK2_EK(s, e), e, h->flow, h->opts, a, x);
}

/*
 * Our SYN-ACK to a SYN with seq peer_isn, options opts and (ts) a
 * timestamp option: *isn, and *tsval when ts. Minted with the MINT slot
 * (slot 0) in the mint epoch. Returns -1 if the ring holds no minting key.
 */
BLITZ_INLINE int blitz_ck2_synack(const struct blitz_ck2_ring *r,
				  const struct blitz_ck2_tuple *t,
				  __u32 peer_isn, __u32 opts, int ts,
				  __u32 *isn, __u32 *tsval)
{
	const struct blitz_ck2_slot *s = &r->slot[0];
	const struct blitz_ck2_key *ek = BLITZ_CK2_EK(s, r->e_mint);
	__u64 flow;

	if (!(s->flags & BLITZ_CK2_MINT) || !blitz_ck2_has(s, r->e_mint))
		return -1;
	flow = blitz_ck2_flow(s, t);
	*isn = blitz_ck2_isn(ek, r->e_mint, flow, peer_isn, opts, ts);
	*tsval = ts ? blitz_ck2_tsval(ek, r->e_mint, flow, opts, *isn + 1,
				      peer_isn + 1)
		    : 0;
	return 0;
}

#endif /* BLITZ_COOKIE2_H */
