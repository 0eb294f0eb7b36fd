// SPDX-License-Identifier: GPL-2.0
/*
 * test_reload.c - the key rules of `blitz reload` (loader.c): a rotation
 * never overwrites a previous key that connections may still use, a
 * rotation back to the previous key is allowed (it is accepted anyway),
 * and a fleet's staged next key is accepted by the ring the programs
 * build (tests/cookie_ring.h) but never minted with, until a rotation
 * makes it current while the old key stays accepted. Cookies are the
 * programs' own functions (bpf/blitz_cookie2.h).
 */
#include <errno.h>
#include <string.h>

#include "cookie_ring.h"
#include "loader.h"
#include "testlib.h"

static const uint64_t KA[2] = {0x1111111111111111ULL, 0x2222222222222222ULL};
static const uint64_t KB[2] = {0x3333333333333333ULL, 0x4444444444444444ULL};
static const uint64_t KC[2] = {0x5555555555555555ULL, 0x6666666666666666ULL};
/* Mid-epoch, so that nothing below straddles an epoch. */
static const uint64_t T0 = (29000000ULL << 36) + (1ULL << 35);
#define WINDOW (2 * BLITZ_CK2_EPOCH_NS + 2 * BLITZ_CK2_SKEW_NS)

static void set_key(struct blitz_config *c, const uint64_t k[2])
{
	memset(c, 0, sizeof(*c));
	c->secret[0] = k[0];
	c->secret[1] = k[1];
}

static void test_rotation_window(void)
{
	struct blitz_config c, before;

	set_key(&c, KA);
	T_EQ_INT(blitz_config_rotate_key(&c, KB, T0), 0);
	before = c;
	/* C inside A's window would cut A's connections: refused, as is. */
	T_EQ_INT(blitz_config_rotate_key(&c, KC, T0 + 1), -EBUSY);
	T_CHECK(!memcmp(&c, &before, sizeof(c)));
	T_EQ_INT(blitz_config_stage_key(&c, KC, T0 + 1), -EBUSY);
	T_CHECK(!memcmp(&c, &before, sizeof(c)));
	/* Back to A: A is accepted anyway, B becomes the previous one. */
	T_EQ_INT(blitz_config_rotate_key(&c, KA, T0 + 2), 0);
	T_CHECK(c.secret[0] == KA[0] && c.secret_prev[0] == KB[0]);
	T_CHECK(c.prev_accept_unix_ns == T0 + 2 + WINDOW);
	/* After the window, C is fine. */
	T_EQ_INT(blitz_config_rotate_key(&c, KC, T0 + 3 + WINDOW), 0);
	T_CHECK(c.secret[0] == KC[0] && c.secret_prev[0] == KA[0]);
}

static void test_staged_key(void)
{
	struct blitz_ck2_tuple t;
	struct blitz_ck2_ring r;
	struct blitz_ck2_hit h;
	struct blitz_config c, b;
	__u32 isn_a = 0, ts_a = 0, isn = 0, ts = 0, peer = 1000;

	blitz_ck2_tuple_v4(&t, 0x0200000a, 0x0100000a, 0x409c, 0x5000);
	/* A host of the fleet that has not staged anything yet: mints A. */
	set_key(&c, KA);
	cookie_ring_at(&r, &c, T0);
	T_EQ_INT(blitz_ck2_synack(&r, &t, peer, 5, 1, &isn_a, &ts_a), 0);
	/* A host that has made B current, unstaged: mints B. */
	set_key(&b, KB);
	cookie_ring_at(&r, &b, T0);
	T_EQ_INT(blitz_ck2_synack(&r, &t, peer, 5, 1, &isn, &ts), 0);
	/* The unstaged A host does not know B's cookie: the negative
	 * control of a one-step fleet rotation. */
	cookie_ring_at(&r, &c, T0 + 1);
	T_EQ_INT(blitz_ck2_check_ts(&r, &t, peer + 1, isn + 1, ts, &h),
		 BLITZ_CK2_BAD);

	/* Stage B on the A host: it accepts B's cookies, mints A's. */
	T_EQ_INT(blitz_config_stage_key(&c, KB, T0), 0);
	T_CHECK(c.prev_accept_unix_ns == BLITZ_KEY_STAGED);
	T_EQ_INT(blitz_config_stage_key(&c, KB, T0 + 1), 1);
	T_EQ_INT(blitz_config_stage_key(&c, KA, T0 + 1), -EEXIST);
	cookie_ring_at(&r, &c, T0 + 1);
	T_EQ_INT(blitz_ck2_check_ts(&r, &t, peer + 1, isn + 1, ts, &h),
		 BLITZ_CK2_OK);
	T_EQ_INT(h.slot, 1);
	T_EQ_INT(blitz_ck2_synack(&r, &t, peer, 5, 1, &isn, &ts), 0);
	T_CHECK(isn == isn_a && ts == ts_a); /* still minted with A */
	/* Staged for as long as it takes: accepted a day later too. */
	cookie_ring_at(&r, &c, T0 + 86400ULL * 1000000000ULL);
	T_CHECK(r.slot[1].flags & BLITZ_CK2_ACCEPT);
	/* A second staged key would drop the first: refused. */
	T_EQ_INT(blitz_config_stage_key(&c, KC, T0 + 2), -EBUSY);

	/* Make B current: A stays accepted for the window. */
	T_EQ_INT(blitz_config_rotate_key(&c, KB, T0 + 10), 0);
	T_CHECK(c.secret[0] == KB[0] && c.secret_prev[0] == KA[0]);
	T_CHECK(c.prev_accept_unix_ns == T0 + 10 + WINDOW);
	cookie_ring_at(&r, &c, T0 + 11);
	T_EQ_INT(blitz_ck2_check_ts(&r, &t, peer + 1, isn_a + 1, ts_a, &h),
		 BLITZ_CK2_OK);
	T_EQ_INT(h.slot, 1);
}

int main(void)
{
	T_RUN(test_rotation_window);
	T_RUN(test_staged_key);
	T_EXIT();
}
