// SPDX-License-Identifier: GPL-2.0
/*
 * bench_hist.c - the latency histogram of `blitz bench` (bench_gen.h:
 * HdrHistogram's log-linear layout).
 *
 * Owns: bucket arithmetic and percentiles. Must never allocate.
 */
#include <stdint.h>

#include "bench_gen.h"

/* ---- histogram ---- */

#define HIST_EXACT (2 * BENCH_HIST_SUB) /* values below are their bucket */

static unsigned int hist_bucket(uint64_t v)
{
	unsigned int k;

	if (v < HIST_EXACT)
		return (unsigned int)v;
	k = 63 - __builtin_clzll(v); /* > BENCH_HIST_SUB_BITS */
	return HIST_EXACT + (k - BENCH_HIST_SUB_BITS - 1) * BENCH_HIST_SUB +
	       (unsigned int)((v >> (k - BENCH_HIST_SUB_BITS)) &
			      (BENCH_HIST_SUB - 1));
}

/* The middle of bucket b. */
static uint64_t hist_value(unsigned int b)
{
	unsigned int k, sub;
	uint64_t lo;

	if (b < HIST_EXACT)
		return b;
	k = (b - HIST_EXACT) / BENCH_HIST_SUB + BENCH_HIST_SUB_BITS + 1;
	sub = (b - HIST_EXACT) % BENCH_HIST_SUB;
	lo = (uint64_t)(BENCH_HIST_SUB + sub) << (k - BENCH_HIST_SUB_BITS);
	return lo + ((1ULL << (k - BENCH_HIST_SUB_BITS)) >> 1);
}

void bench_hist_add(struct bench_hist *h, uint64_t ns)
{
	h->count[hist_bucket(ns)]++;
	h->n++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

uint64_t bench_hist_percentile(const struct bench_hist *h, double q)
{
	uint64_t want, seen = 0;
	unsigned int b;

	if (!h->n)
		return 0;
	want = (uint64_t)(q * (double)h->n);
	if (want >= h->n)
		want = h->n - 1;
	for (b = 0; b < BENCH_HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen > want) {
			uint64_t v = hist_value(b);

			return v > h->max_ns ? h->max_ns : v;
		}
	}
	return h->max_ns;
}
