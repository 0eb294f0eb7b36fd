// SPDX-License-Identifier: GPL-2.0
/*
 * test_cookie_mac10.c - test_cookie.c built with the MAC cut to 10 bits
 * (BLITZ_CK2_MAC_BITS): spoofs now pass often enough to count, and every
 * adversary's acceptance must match its formula (docs/cookie-v2.md) within
 * 3 standard deviations. The layout is the real one; only the comparison
 * is narrowed.
 */
#define BLITZ_CK2_MAC_BITS 10
#include "test_cookie.c"
