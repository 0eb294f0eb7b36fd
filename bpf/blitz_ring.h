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
#include "blitz_cookie2.h"

/* One cookie question and its answer (too big for the programs' stacks). */
struct blitz_ck2_q {
	struct blitz_ck2_tuple t;
	struct blitz_ck2_hit h;	       /* out of check, in to tsval */
	__u32 seq, ack, tsecr, has_ts; /* the segment */
	__u32 opts;		       /* SYN: the client's options */
	__u32 isn, tsval;	       /* SYN: out */
	__u32 a, x; /* tsval: where the reply ends, its ack */
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
		return blitz_ck2_check_ts(r, &q->t, q->seq, q->ack, q->tsecr,
					  &q->h);
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
