// SPDX-License-Identifier: GPL-2.0
/*
 * test_seq_narrow.c - test_seq.c against the XDP program built with the
 * TSval MAC compared on 10 bits (BLITZ_CK2_TS_MAC_CUT; the Makefile builds
 * its own skeleton): a segment sent before our reply arrived now matches
 * by chance often enough to count, and every one must be refused at its
 * point and every connection still complete. The layout is the real one.
 */
#define SEQ_NARROW 1
#include "test_seq.c"
