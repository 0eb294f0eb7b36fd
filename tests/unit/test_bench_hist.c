// SPDX-License-Identifier: GPL-2.0
/*
 * test_bench_hist.c - the latency histogram of `blitz bench`: exact below
 * 64 ns, then within ~3% (32 buckets per power of two) for percentiles,
 * exact max and mean. Owns no other test.
 */
#include <stdlib.h>

#include "bench_gen.h"
#include "testlib.h"

static struct bench_hist h;

static int within(uint64_t got, uint64_t want, double rel)
{
	double d = (double)got - (double)want;

	return (d < 0 ? -d : d) <= rel * (double)want;
}

/* h holds unit, 2 * unit, ..., n * unit ns. */
static void fill_linear(uint64_t n, uint64_t unit)
{
	uint64_t v;

	memset(&h, 0, sizeof(h));
	for (v = 1; v <= n; v++)
		bench_hist_add(&h, v * unit);
}

/* The q percentile is want within 3.2%. */
static void check_percentile(double q, uint64_t want)
{
	uint64_t got = bench_hist_percentile(&h, q);

	T_CHECK_MSG(within(got, want, 0.032), "p%g %llu, want %llu", q * 100,
		    (unsigned long long)got, (unsigned long long)want);
}

static void hist_empty_is_zero(void)
{
	memset(&h, 0, sizeof(h));
	T_EQ_INT(bench_hist_percentile(&h, 0.5), 0);
	T_EQ_INT(bench_hist_percentile(&h, 0.99), 0);
}

static void hist_small_values_exact(void)
{
	fill_linear(50, 1);
	T_EQ_INT(h.n, 50);
	T_EQ_INT(h.max_ns, 50);
	T_EQ_INT(h.sum_ns, 50 * 51 / 2);
	T_EQ_INT(bench_hist_percentile(&h, 0.5), 26);
	T_EQ_INT(bench_hist_percentile(&h, 1.0), 50);
}

/* 1..100000 us uniformly: p50, p95, p99 within 3.2%, max exact. */
static void hist_uniform_percentiles(void)
{
	fill_linear(100000, 1000);
	check_percentile(0.50, 50000000);
	check_percentile(0.95, 95000000);
	check_percentile(0.99, 99000000);
	T_EQ_INT(h.max_ns, 100000000);
	T_CHECK(bench_hist_percentile(&h, 1.0) <= h.max_ns);
}

/* A long tail: 99 fast samples and one slow one. */
static void hist_tail(void)
{
	int i;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < 99; i++)
		bench_hist_add(&h, 40000);
	bench_hist_add(&h, 8000000000ULL);
	T_CHECK(within(bench_hist_percentile(&h, 0.5), 40000, 0.032));
	T_CHECK(within(bench_hist_percentile(&h, 0.98), 40000, 0.032));
	T_CHECK(within(bench_hist_percentile(&h, 0.999), 8000000000ULL, 0.032));
	T_EQ_INT(h.max_ns, 8000000000ULL);
}

int main(void)
{
	T_RUN(hist_empty_is_zero);
	T_RUN(hist_small_values_exact);
	T_RUN(hist_uniform_percentiles);
	T_RUN(hist_tail);
	T_EXIT();
}
