/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_xdp.h - what every part of the XDP program (bpf/progs/blitz_xdp.bpf.c
 * and its bpf/kern/blitz_xdp_*.h) shares: its limits, the per-CPU scratch
 * map, the pass/drop verdicts that count their reason, and the segment's
 * 4-tuple as the cookie hashes it.
 *
 * Owns: the scratch map. Must never be included by another program (the
 * TC hand-off has its own scratch, blitz_pipe.h): each map defined here
 * is the XDP program's.
 * Include after blitz_maps.h, blitz_cookie2.h, blitz_http_dfa.h,
 * blitz_seg.h and blitz_seq.h.
 */
#ifndef BLITZ_XDP_H
#define BLITZ_XDP_H

#define L4_V4 BLITZ_L4_V4
#define L4_V6 BLITZ_L4_V6

#define PAYLOAD_MAX 2048 /* longest request segment parsed here */
#define MAX_PIPELINE 8	 /* most responses put in one reply */
#define HEAD_GROW 192	 /* headroom surely left after the xdp_frame */

#include "blitz_xsks.h"

/* Per-CPU scratch: too big for the 512-byte BPF stack. */
struct blitz_scratch {
	__u8 buf[PAYLOAD_MAX];	      /* the segment's payload */
	__u8 opts[64];		      /* its TCP options */
	__u64 slots[BLITZ_DFA_SLOTS]; /* per-request DFA lanes */
	__u8 kinds[MAX_PIPELINE];     /* response kind of each request */
	struct blitz_seq_rec rec;     /* where the reply goes, what it sent */
	/* Always 0. Loop state starts from it so the verifier sees an
	 * unknown value: from a constant it would walk every iteration of a
	 * bpf_loop callback and the rest of the program after each. */
	__u32 zero;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_scratch);
} scratch SEC(".maps");

static __always_inline int pass(__u32 reason)
{
	cnt_add(reason, 1);
	return XDP_PASS;
}

static __always_inline int drop(__u32 reason)
{
	cnt_add(reason, 1);
	return XDP_DROP;
}

/* The segment's 4-tuple as cookie v2 hashes it (blitz_cookie2.h). */
static __always_inline void seg_tuple(const struct seg *s,
				      struct blitz_ck2_tuple *t)
{
	if (s->v6)
		blitz_ck2_tuple_v6(t, s->saddr, s->daddr, s->sport, s->dport);
	else
		blitz_ck2_tuple_v4(t, s->saddr[0], s->daddr[0], s->sport,
				   s->dport);
}

/* The cookie ring at the current time with its query filled from s (the
 * 4-tuple, seq, ack, TSecr and whether s had timestamps), or 0. */
static __always_inline struct blitz_ring_cache *
ring_query(const struct blitz_config *cfg, const struct seg *s, __u8 has_ts)
{
	struct blitz_ring_cache *rc = blitz_ring_now(cfg);

	if (!rc)
		return 0;
	seg_tuple(s, &rc->q.t);
	rc->q.seq = s->seq;
	rc->q.ack = s->ack;
	rc->q.tsecr = s->tsecr;
	rc->q.has_ts = has_ts;
	return rc;
}

#endif /* BLITZ_XDP_H */
