/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_ring.h - the cookie key ring of the BPF programs (the XDP engine
 * and the TC hand-off): cookie v2's keys (bpf/blitz_cookie2.h) at the
 * current epoch, derived from the config's keys and kept per CPU.
 *
 * Owns: the cookie clock (unix time from bpf_ktime_get_tai_ns() and the
 * config's offsets, read at most once per jiffy) and when the ring is
 * re-derived: a new epoch (2 SipHashes per slot), a new key or new
 * previous-key times (the config changed). Must never write the config.
 */
#ifndef BLITZ_RING_H
#define BLITZ_RING_H

#include "blitz_maps.h"

/* The PRF memo of cookie v2's timestamp check (blitz_cookie2.h's hooks),
 * defined below: one handle per check, its entry looked up once. */
struct blitz_ck2_slot;
struct blitz_ck2_tuple;
struct blitz_ck2_key;
struct blitz_memo_ent;
struct blitz_memo_hd {
	struct blitz_memo_ent *e; /* the tuple's entry, or 0 */
	/* bit 0: the flow hash came from e, bit 1: the MAC did (then e
	 * holds them already) */
	__u64 hits;
};
static __always_inline struct blitz_memo_hd
blitz_memo_at(const struct blitz_ck2_tuple *t);
static __always_inline __u64 blitz_memo_flow(struct blitz_memo_hd *m,
					     const struct blitz_ck2_slot *s,
					     const struct blitz_ck2_tuple *t);
static __always_inline __u32 blitz_memo_ts_mac(struct blitz_memo_hd *m,
					       const struct blitz_ck2_key *ek,
					       __u64 flow, __u32 opts);
static __always_inline void blitz_memo_put(const struct blitz_memo_hd *m,
					   const struct blitz_ck2_slot *s,
					   const struct blitz_ck2_tuple *t,
					   const struct blitz_ck2_key *ek,
					   __u64 flow, __u32 opts, __u32 mac);
#define BLITZ_CK2_MEMO_DECL(m, t) struct blitz_memo_hd m = blitz_memo_at(t)
#define BLITZ_CK2_FLOW_OF(m, s, t) blitz_memo_flow(&(m), s, t)
#define BLITZ_CK2_TS_MAC_OF(m, t, ek, flow, opts) \
	blitz_memo_ts_mac(&(m), ek, flow, opts)
#define BLITZ_CK2_TS_VERIFIED(m, s, t, ek, flow, opts, mac) \
	blitz_memo_put(&(m), s, t, ek, flow, opts, mac)

#include "blitz_cookie2.h"

/*
 * The memo: per CPU, BLITZ_MEMO_WAYS entries picked by a hash of the
 * 4-tuple, each holding the inputs and outputs of the two SipHashes of a
 * segment that verified (flow hash: the tuple and the offset key; MAC: the
 * flow, the epoch key and the options). A value is used only when every
 * input matches exactly, so a hit changes no verdict; a keep-alive
 * connection's later segments then cost no SipHash. Only verified
 * segments write it: a spoof costs its own SipHashes and evicts nothing.
 */
#define BLITZ_MEMO_WAYS 64

struct blitz_memo_ent {
	__u64 w[5]; /* the tuple */
	__u64 off0, off1;
	__u64 flow;
	__u64 ek0, ek1;
	__u32 v6, opts;
	__u32 mac, valid;
};

struct blitz_memo {
	struct blitz_memo_ent e[BLITZ_MEMO_WAYS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_memo);
} ck2_memo SEC(".maps");

static __always_inline struct blitz_memo_hd
blitz_memo_at(const struct blitz_ck2_tuple *t)
{
	struct blitz_memo_hd hd = {};
	__u32 key = 0, h;
	struct blitz_memo *m = bpf_map_lookup_elem(&ck2_memo, &key);
	__u64 x;

	if (!m)
		return hd;
	x = t->w[0] ^ t->w[1] ^ t->w[2] ^ t->w[3] ^ t->w[4];
	x ^= x >> 32;
	h = (__u32)x;
	h ^= h >> 16;
	h ^= h >> 8;
	hd.e = &m->e[h & (BLITZ_MEMO_WAYS - 1)];
	return hd;
}

static __always_inline int
blitz_memo_same_tuple(const struct blitz_memo_ent *e,
		      const struct blitz_ck2_tuple *t)
{
	return e->valid && e->v6 == t->v6 && e->w[0] == t->w[0] &&
	       e->w[1] == t->w[1] && e->w[2] == t->w[2] && e->w[3] == t->w[3] &&
	       e->w[4] == t->w[4];
}

static __always_inline __u64 blitz_memo_flow(struct blitz_memo_hd *m,
					     const struct blitz_ck2_slot *s,
					     const struct blitz_ck2_tuple *t)
{
	struct blitz_memo_ent *e = m->e;

	if (e && blitz_memo_same_tuple(e, t) && e->off0 == s->off.k0 &&
	    e->off1 == s->off.k1) {
		m->hits = 1;
		return e->flow;
	}
	m->hits = 0;
	return blitz_ck2_flow(s, t);
}

/* The MAC is a function of the flow hash, the epoch key and the options
 * alone: a memoized one is good for whatever tuple left it. */
static __always_inline __u32 blitz_memo_ts_mac(struct blitz_memo_hd *m,
					       const struct blitz_ck2_key *ek,
					       __u64 flow, __u32 opts)
{
	struct blitz_memo_ent *e = m->e;

	if (e && e->valid && e->flow == flow && e->ek0 == ek->k0 &&
	    e->ek1 == ek->k1 && e->opts == opts) {
		m->hits |= 2;
		return e->mac;
	}
	m->hits &= 1;
	return blitz_ck2_ts_mac(ek, flow, opts);
}

static __always_inline void blitz_memo_put(const struct blitz_memo_hd *m,
					   const struct blitz_ck2_slot *s,
					   const struct blitz_ck2_tuple *t,
					   const struct blitz_ck2_key *ek,
					   __u64 flow, __u32 opts, __u32 mac)
{
	struct blitz_memo_ent *e = m->e;

	/* a hit leaves it as it is: no stores on the common path (both
	 * values from e: it holds every input and output already) */
	if (!e || m->hits == 3)
		return;
	if (e->valid && e->flow == flow && e->mac == mac && e->opts == opts &&
	    e->ek0 == ek->k0 && e->ek1 == ek->k1 && blitz_memo_same_tuple(e, t))
		return;
	e->w[0] = t->w[0];
	e->w[1] = t->w[1];
	e->w[2] = t->w[2];
	e->w[3] = t->w[3];
	e->w[4] = t->w[4];
	e->v6 = t->v6;
	e->off0 = s->off.k0;
	e->off1 = s->off.k1;
	e->flow = flow;
	e->ek0 = ek->k0;
	e->ek1 = ek->k1;
	e->opts = opts;
	e->mac = mac;
	e->valid = 1;
}

/* One cookie question and its answer (too big for the programs' stacks). */
struct blitz_ck2_q {
	struct blitz_ck2_tuple t;
	struct blitz_ck2_hit h;	       /* out of check, in to tsval */
	__u32 seq, ack, tsecr, has_ts; /* the segment */
	__u32 opts;		       /* SYN: the client's options */
	__u32 isn, tsval;	       /* SYN: out */
	__u32 a, x; /* tsval: where the reply ends, its ack */
	/* check: also accept the FIN mark (bpf/blitz_seq.h), 0: never.
	 * The XDP program sets it; the TC hand-off leaves it 0. */
	__u32 mark;
};

struct blitz_ring_cache {
	struct blitz_ck2_ring r;
	struct blitz_ck2_q q;
	__u64 jiffies; /* when the clock was last read; 0: never */
	/* the config the ring was made from */
	__s64 tai_to_unix_ns, adj_ns;
	__u64 secret[2], prev[2], prev_accept, prev_rst;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_ring_cache);
} ck2_ring SEC(".maps");

struct blitz_ring_fill {
	struct blitz_ck2_slot *s;
	__u64 e_now;
};

static long blitz_ring_fill_one(__u64 i, void *arg)
{
	struct blitz_ring_fill *f = arg;

	if (!f->s)
		return 1;
	blitz_ck2_slot_fill_one(f->s, f->e_now, (__u32)i);
	return 0;
}

/* blitz_ck2_slot_sync(), its loop through bpf_loop so that the verifier
 * walks the KDF once, not once per epoch and path. */
static __noinline void blitz_ring_sync_slot(struct blitz_ck2_slot *s, __u64 m0,
					    __u64 m1, __u64 e_now, __u32 flags)
{
	struct blitz_ring_fill f = {.s = s, .e_now = e_now};

	if (!s)
		return;
	s->flags = flags;
	blitz_ck2_slot_rekey(s, m0, m1);
	bpf_loop(BLITZ_CK2_RING, blitz_ring_fill_one, &f, 0);
}

static __always_inline int blitz_ring_same_cfg(const struct blitz_ring_cache *c,
					       const struct blitz_config *cfg)
{
	return c->tai_to_unix_ns == cfg->tai_to_unix_ns &&
	       c->adj_ns == cfg->cookie_clock_adj_ns &&
	       c->secret[0] == cfg->secret[0] &&
	       c->secret[1] == cfg->secret[1] &&
	       c->prev[0] == cfg->secret_prev[0] &&
	       c->prev[1] == cfg->secret_prev[1] &&
	       c->prev_accept == cfg->prev_accept_unix_ns &&
	       c->prev_rst == cfg->prev_rst_unix_ns;
}

/* The ring at the current time, or 0 (no map value: cannot happen). */
static __always_inline struct blitz_ring_cache *
blitz_ring_now(const struct blitz_config *cfg)
{
	__u32 key = 0, pflags = 0;
	struct blitz_ring_cache *c = bpf_map_lookup_elem(&ck2_ring, &key);
	__u64 j, now, e;

	if (!c)
		return 0;
	j = bpf_jiffies64();
	if (c->jiffies == j && blitz_ring_same_cfg(c, cfg))
		return c;
	now = bpf_ktime_get_tai_ns() + (__u64)cfg->tai_to_unix_ns +
	      (__u64)cfg->cookie_clock_adj_ns;
	e = blitz_ck2_epoch(now);
	if (cfg->prev_accept_unix_ns > now)
		pflags = BLITZ_CK2_ACCEPT | BLITZ_CK2_RST;
	else if (cfg->prev_rst_unix_ns > now)
		pflags = BLITZ_CK2_RST;
	if (e != c->r.e_now || !blitz_ring_same_cfg(c, cfg) ||
	    pflags != c->r.slot[1].flags || !c->jiffies) {
		blitz_ring_sync_slot(
			&c->r.slot[0], cfg->secret[0], cfg->secret[1], e,
			BLITZ_CK2_MINT | BLITZ_CK2_ACCEPT | BLITZ_CK2_RST);
		if (pflags)
			blitz_ring_sync_slot(&c->r.slot[1], cfg->secret_prev[0],
					     cfg->secret_prev[1], e, pflags);
		else
			c->r.slot[1].flags = 0;
		c->tai_to_unix_ns = cfg->tai_to_unix_ns;
		c->adj_ns = cfg->cookie_clock_adj_ns;
		c->secret[0] = cfg->secret[0];
		c->secret[1] = cfg->secret[1];
		c->prev[0] = cfg->secret_prev[0];
		c->prev[1] = cfg->secret_prev[1];
		c->prev_accept = cfg->prev_accept_unix_ns;
		c->prev_rst = cfg->prev_rst_unix_ns;
	}
	c->r.e_now = e;
	c->r.e_mint = blitz_ck2_mint_epoch(now);
	c->jiffies = j;
	return c;
}

/*
 * The cookie operations as global functions: the verifier checks each
 * once, on its own, instead of once per path of the program that calls
 * it (the SipHash rounds are many instructions). Pointers may be NULL to
 * the verifier, hence the checks.
 */

/* The verdict on q's segment (blitz_ck2_check_ts / _isn); fills q->h. */
__noinline int blitz_ck2_q_check(const struct blitz_ck2_ring *r,
				 struct blitz_ck2_q *q)
{
	if (!r || !q)
		return BLITZ_CK2_BAD;
	if (q->has_ts)
		return blitz_ck2_check_ts_mark(r, &q->t, q->seq, q->ack,
					       q->tsecr, q->mark, &q->h);
	return blitz_ck2_check_isn(r, &q->t, q->seq, q->ack, &q->h);
}

/* Our SYN-ACK to q's SYN (seq, opts, has_ts): q->isn, q->tsval. */
__noinline int blitz_ck2_q_synack(const struct blitz_ck2_ring *r,
				  struct blitz_ck2_q *q)
{
	if (!r || !q)
		return -1;
	return blitz_ck2_synack(r, &q->t, q->seq, q->opts, q->has_ts, &q->isn,
				&q->tsval);
}

/* The TSval of a reply to the cookie in q->h, ending at q->a, acking q->x. */
__noinline __u32 blitz_ck2_q_tsval(const struct blitz_ck2_ring *r,
				   struct blitz_ck2_q *q)
{
	if (!r || !q)
		return 0;
	return blitz_ck2_reply_tsval(r, &q->h, q->a, q->x);
}

#endif /* BLITZ_RING_H */
