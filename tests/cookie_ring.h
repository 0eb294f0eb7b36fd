/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cookie_ring.h - cookie v2 for the BPF tests: the key ring a program
 * holds for a config at the time it reads (bpf/blitz_ring.h's rule, with
 * the programs' own functions from bpf/blitz_cookie2.h), so a test can
 * make the cookies a peer of our SYN-ACK would carry, and check ours.
 */
#ifndef BLITZ_TEST_COOKIE_RING_H
#define BLITZ_TEST_COOKIE_RING_H

#include <stdint.h>
#include <time.h>

#include "../bpf/blitz_cookie2.h"
#include "../bpf/blitz_shared.h"

/* The cookie clock of a program running with config c: CLOCK_TAI plus
 * the config's offsets, as blitz_ring_now() reads it. */
static inline uint64_t cookie_clock_ns(const struct blitz_config *c)
{
	struct timespec ts;

	clock_gettime(CLOCK_TAI, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec +
	       (uint64_t)c->tai_to_unix_ns + (uint64_t)c->cookie_clock_adj_ns;
}

/* The ring of config c at cookie time now. */
static inline void cookie_ring_at(struct blitz_ck2_ring *r,
				  const struct blitz_config *c, uint64_t now)
{
	r->e_now = blitz_ck2_epoch(now);
	r->e_mint = blitz_ck2_mint_epoch(now);
	blitz_ck2_slot_sync(&r->slot[0], c->secret[0], c->secret[1], r->e_now,
			    BLITZ_CK2_MINT | BLITZ_CK2_ACCEPT | BLITZ_CK2_RST);
	if (c->prev_accept_unix_ns > now || c->prev_rst_unix_ns > now)
		blitz_ck2_slot_sync(&r->slot[1], c->secret_prev[0],
				    c->secret_prev[1], r->e_now,
				    c->prev_accept_unix_ns > now
					    ? BLITZ_CK2_ACCEPT | BLITZ_CK2_RST
					    : BLITZ_CK2_RST);
	else
		r->slot[1].flags = 0;
}

/* The adjustment that puts config c's cookie clock in the middle of an
 * epoch (tests then never straddle one). */
static inline int64_t cookie_clock_mid_epoch(struct blitz_config *c)
{
	c->cookie_clock_adj_ns = 0;
	return (int64_t)(BLITZ_CK2_EPOCH_NS / 2) -
	       (int64_t)(cookie_clock_ns(c) & (BLITZ_CK2_EPOCH_NS - 1));
}

/* The ring as the program holds it now, for config c (kept in *r). */
static inline const struct blitz_ck2_ring *
cookie_ring_now(struct blitz_ck2_ring *r, const struct blitz_config *c)
{
	cookie_ring_at(r, c, cookie_clock_ns(c));
	return r;
}

/* Our ISN for a SYN without timestamps of 4-tuple t with seq peer_isn and
 * options opts (blitz_ck2_opts). */
static inline uint32_t cookie_isn(const struct blitz_ck2_ring *r,
				  const struct blitz_ck2_tuple *t,
				  uint32_t peer_isn, uint32_t opts)
{
	uint32_t isn = 0, tsval = 0;

	blitz_ck2_synack(r, t, peer_isn, opts, 0, &isn, &tsval);
	return isn;
}

/* The TSecr a peer echoes on a segment with seq and ack of a connection
 * whose SYN carried opts: our TSval of a reply ending at ack and
 * acknowledging seq, minted now. */
static inline uint32_t cookie_tsecr(const struct blitz_ck2_ring *r,
				    const struct blitz_ck2_tuple *t,
				    uint32_t opts, uint32_t seq, uint32_t ack)
{
	return blitz_ck2_tsval(BLITZ_CK2_EK(&r->slot[0], r->e_mint), r->e_mint,
			       blitz_ck2_flow(&r->slot[0], t), opts, ack, seq);
}

#endif /* BLITZ_TEST_COOKIE_RING_H */
