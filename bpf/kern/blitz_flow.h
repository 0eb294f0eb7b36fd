/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_flow.h - the xdp engine's per-flow soft state (bpf/blitz_seq.h's
 * struct blitz_flow): a per-CPU, 4-way set-associative table with LRU
 * replacement within each set, indexed and tagged by the cookie's keyed
 * flow hash (no extra hashing), and a cap on the entries one source
 * address (an IPv6 /64) may create per cookie epoch.
 *
 * Owns: the "flows" and "flow_src" maps of the XDP program and where an
 * entry lives. Must never create an entry for a segment that did not
 * verify (the callers note replies only), nor hold anything whose loss
 * changes a byte we send (blitz_seq.h's rules fall back to no answer).
 * A flow's segments reach one CPU (RSS, or the veth's sending CPU); a
 * flow that moves simply finds no entry there.
 */
#ifndef BLITZ_FLOW_H
#define BLITZ_FLOW_H

#include "blitz_ring.h"
#include "blitz_seq.h"

/* 4096 sets x 4 ways = 16384 flows per CPU, 104 bytes each: 1.6 MiB. */
#define BLITZ_FLOW_SETS 4096
#define BLITZ_FLOW_WAYS 4
/* New entries per source address (IPv6: per /64) per CPU and epoch. */
#define BLITZ_FLOW_SRC_CAP 1024
#define BLITZ_FLOW_SRC_BUCKETS 4096

struct blitz_flow_set {
	struct blitz_flow w[BLITZ_FLOW_WAYS];
	__u32 tick; /* the set's clock: a way's stamp is its last tick */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BLITZ_FLOW_SETS);
	__type(key, __u32);
	__type(value, struct blitz_flow_set);
} flows SEC(".maps");

struct blitz_flow_src {
	__u32 epoch; /* low bits of the epoch n counts in */
	__u32 n;     /* entries this source created in it */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BLITZ_FLOW_SRC_BUCKETS);
	__type(key, __u32);
	__type(value, struct blitz_flow_src);
} flow_src SEC(".maps");

static __always_inline struct blitz_flow_set *blitz_flow_set_of(__u64 flow0)
{
	__u32 idx = (__u32)(flow0 >> 32) & (BLITZ_FLOW_SETS - 1);

	return bpf_map_lookup_elem(&flows, &idx);
}

/* The live entry of flow0 in its set, or 0. */
static __always_inline struct blitz_flow *
blitz_flow_find(struct blitz_flow_set *set, __u64 flow0)
{
	__u32 i;

	if (!set || !flow0)
		return 0;
	for (i = 0; i < BLITZ_FLOW_WAYS; i++)
		if (set->w[i].h.flow0 == flow0)
			return &set->w[i];
	return 0;
}

/* The cap bucket of a source (keyed: k0, k1 are the offset key). */
static __always_inline __u32 blitz_flow_src_idx(__u64 src, __u64 k0, __u64 k1)
{
	return (__u32)(((src ^ k0) * (k1 | 1)) >> 52) &
	       (BLITZ_FLOW_SRC_BUCKETS - 1);
}

/*
 * The way a new entry of the source saddr (its first two words, network
 * order: an IPv4 address, or an IPv6 /64) takes: a dead one, else the one
 * used least recently. 0 when the source is over its cap this epoch.
 * The bucket index is keyed (k0, k1: the cookie's offset key), so no one
 * can aim at another source's bucket.
 */
static __always_inline struct blitz_flow *
blitz_flow_victim(struct blitz_flow_set *set, __u64 e_now, __u64 src, __u64 k0,
		  __u64 k1)
{
	struct blitz_flow *v = 0;
	struct blitz_flow_src *b;
	__u32 i, idx, best = 0;

	if (!set)
		return 0;
	idx = blitz_flow_src_idx(src, k0, k1);
	b = bpf_map_lookup_elem(&flow_src, &idx);
	if (!b)
		return 0;
	if (b->epoch != (__u32)e_now) {
		b->epoch = (__u32)e_now;
		b->n = 0;
	}
	if (b->n >= BLITZ_FLOW_SRC_CAP) {
		cnt_add(BLITZ_CNT_FLOW_SRC_CAP, 1);
		return 0;
	}
	b->n++;
	for (i = 0; i < BLITZ_FLOW_WAYS; i++) {
		struct blitz_flow *w = &set->w[i];

		if (!blitz_flow_live(w, e_now)) {
			v = w;
			break;
		}
		if (!v || (__s32)(w->stamp - best) < 0) {
			v = w;
			best = w->stamp;
		}
	}
	if (v && blitz_flow_live(v, e_now))
		cnt_add(BLITZ_CNT_FLOW_EVICT, 1);
	cnt_add(BLITZ_CNT_FLOW_NEW, 1);
	return v;
}

/*
 * Put entry f's cookie in rc->q.h, only while a slot that accepts holds
 * the key it was made under (it mints there): 1 with q->h.slot that slot,
 * else 0.
 */
static __always_inline int blitz_flow_take(struct blitz_ring_cache *rc,
					   const struct blitz_flow *f)
{
	__u32 i;

	rc->q.h = f->h;
	for (i = 0; i < 2; i++) {
		if ((rc->r.slot[i].flags & BLITZ_CK2_ACCEPT) &&
		    rc->r.slot[i].off.k0 == f->key) {
			rc->q.h.slot = i;
			return 1;
		}
	}
	return 0;
}

/*
 * The flow entry's verdict on the segment of rc->q that the cookie did
 * not prove (blitz_flow_at): 1 with rec->at filled and q->h the entry's
 * cookie (to mint the reply), else 0. Global functions: the verifier
 * checks each once, not once per path of the program.
 */
__noinline int blitz_flow_locate(struct blitz_ring_cache *rc,
				 struct blitz_seq_rec *rec)
{
	struct blitz_seq_at *at;
	struct blitz_flow_set *set;
	struct blitz_flow *f;
	struct blitz_ck2_q *q;

	if (!rc || !rec)
		return 0;
	at = &rec->at;
	q = &rc->q;
	set = blitz_flow_set_of(q->h.flow0);
	f = blitz_flow_find(set, q->h.flow0);
	if (!f || q->has_ts ||
	    !blitz_flow_at(f, rc->r.e_now, q->seq, q->ack, at))
		return 0;
	return blitz_flow_take(rc, f);
}

/*
 * Can a reply to the segment of rc->q (no timestamps, proved by the ISN
 * cookie: q->h.flow0 set) be remembered? 0 only when its flow has no
 * entry and its source src is at its cap this epoch: its later segments
 * could then never be proved. Reads, never counts or changes anything.
 */
__noinline int blitz_flow_room(struct blitz_ring_cache *rc, __u64 src)
{
	struct blitz_flow_src *b;
	__u32 idx;

	if (!rc)
		return 1;
	if (blitz_flow_find(blitz_flow_set_of(rc->q.h.flow0), rc->q.h.flow0))
		return 1;
	idx = blitz_flow_src_idx(src, rc->r.slot[0].off.k0,
				 rc->r.slot[0].off.k1);
	b = bpf_map_lookup_elem(&flow_src, &idx);
	return !b || b->epoch != (__u32)rc->r.e_now ||
	       b->n < BLITZ_FLOW_SRC_CAP;
}

/*
 * May the kernel take the connection from the segment of rc->q (no
 * timestamps, its cookie failed: q->h.flow0 set by the check)? Only at
 * its entry's frontier: seq == rcv_nxt and ack == snd_nxt after our last
 * reply (the kernel takes both ISNs from this segment, so nothing we sent
 * may lie past its ack, and every byte before its seq is answered), our
 * FIN not sent, the entry alive under a key an accepting slot holds.
 * 1 with q->h the entry's cookie (its options go to the kernel), else 0.
 * The TC hand-off's check: the XDP program answers from any point.
 */
__noinline int blitz_flow_frontier(struct blitz_ring_cache *rc)
{
	struct blitz_flow_set *set;
	struct blitz_flow *f;
	struct blitz_ck2_q *q;

	if (!rc)
		return 0;
	q = &rc->q;
	set = blitz_flow_set_of(q->h.flow0);
	f = blitz_flow_find(set, q->h.flow0);
	if (!f || q->has_ts || !blitz_flow_live(f, rc->r.e_now) ||
	    (f->flags & BLITZ_FLOW_CLOSED) || q->seq != f->rcv_nxt ||
	    q->ack != f->snd_nxt)
		return 0;
	return blitz_flow_take(rc, f);
}

/*
 * Remember the reply rec to the segment of rc->q (verified; q->h its
 * cookie) in its flow's entry, made here if the flow has none (and its
 * source is under its cap): every reply, so that a segment the client
 * sends before our reply arrives can be answered in sequence.
 */
__noinline int blitz_flow_record(struct blitz_ring_cache *rc,
				 const struct blitz_seq_rec *rec)
{
	struct blitz_flow_set *set;
	struct blitz_flow *f;
	struct blitz_ck2_q *q;

	if (!rc || !rec || rc->q.has_ts)
		return 0;
	q = &rc->q;
	set = blitz_flow_set_of(q->h.flow0);
	f = blitz_flow_find(set, q->h.flow0);
	if (!f) {
		f = blitz_flow_victim(set, rc->r.e_now, rec->src,
				      rc->r.slot[0].off.k0,
				      rc->r.slot[0].off.k1);
		if (!f)
			return 0;
		f->h.flow0 = 0; /* a new entry, whatever was there */
	}
	if (!set)
		return 0;
	set->tick++;
	blitz_flow_note(f, &q->h, rc->r.slot[q->h.slot & 1].off.k0, rc->r.e_now,
			set->tick, &rec->at, q->ack, &rec->sent);
	return 1;
}

/*
 * The last multi-segment reply (TC burst) of a connection, so that a lost
 * segment of it can be sent again (docs/tcp-security.md, "Pipelined
 * batches"): what the client lacks is rebuilt from the response kinds and
 * the Date it carried, never from anything the triggering segment says.
 * Made only by the TC program, right after it sent a burst to a segment
 * whose cookie verified; shared by every CPU (a flow that moves CPU still
 * finds it); keyed by the cookie's keyed flow hash. Losing a record never
 * changes a byte we send: without it nothing is re-sent.
 */
#define BLITZ_BURST_ENTRIES 16384

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BLITZ_BURST_ENTRIES);
	__type(key, __u64);
	__type(value, struct blitz_burst);
} bursts SEC(".maps");

/* The burst record of flow0, or 0. */
static __always_inline struct blitz_burst *blitz_burst_of(__u64 flow0)
{
	struct blitz_burst *b;

	if (!flow0)
		return 0;
	b = bpf_map_lookup_elem(&bursts, &flow0);
	return b && b->flow0 == flow0 ? b : 0;
}

#endif /* BLITZ_FLOW_H */
