/* SPDX-License-Identifier: GPL-2.0 */
/*
 * testlib.h - the smallest test harness that speaks tests/run.sh's protocol:
 * every test prints one line "PASS name", "FAIL name: why" or
 * "SKIP name: why"; the runner counts them. A failed check prints where it
 * failed and marks the current test failed; the test goes on. A test
 * that ran no check and did not skip fails: it could not have failed.
 */
#ifndef BLITZ_TESTLIB_H
#define BLITZ_TESTLIB_H

#include <stdio.h>
#include <string.h>

static int t_failed_now;
static int t_checks_now; /* checks evaluated by the current test */
static int t_failed_total;
static const char *t_skip_why;

#define T_CHECK(cond)                                                     \
	do {                                                              \
		t_checks_now++;                                           \
		if (!(cond)) {                                            \
			printf("  check failed at %s:%d: %s\n", __FILE__, \
			       __LINE__, #cond);                          \
			t_failed_now = 1;                                 \
		}                                                         \
	} while (0)

#define T_CHECK_MSG(cond, ...)                                            \
	do {                                                              \
		t_checks_now++;                                           \
		if (!(cond)) {                                            \
			printf("  check failed at %s:%d: %s: ", __FILE__, \
			       __LINE__, #cond);                          \
			printf(__VA_ARGS__);                              \
			printf("\n");                                     \
			t_failed_now = 1;                                 \
		}                                                         \
	} while (0)

#define T_EQ_INT(a, b)                                                \
	T_CHECK_MSG((long long)(a) == (long long)(b), "%lld != %lld", \
		    (long long)(a), (long long)(b))

/* Call from inside a test to mark it skipped (the test should return). */
#define T_SKIP(why) (t_skip_why = (why))

/* The verdict of the test that just ran, name its name. */
static inline void t_verdict(const char *name)
{
	if (t_failed_now) {
		printf("FAIL %s\n", name);
		t_failed_total++;
	} else if (t_skip_why) {
		printf("SKIP %s: %s\n", name, t_skip_why);
	} else if (!t_checks_now) {
		printf("FAIL %s: ran no check\n", name);
		t_failed_total++;
	} else {
		printf("PASS %s\n", name);
	}
	fflush(stdout);
}

/* Start a test by hand (a test whose body is not one function). */
static inline void t_begin(void)
{
	t_failed_now = 0;
	t_checks_now = 0;
	t_skip_why = NULL;
}

#define T_RUN(fn)               \
	do {                    \
		t_begin();      \
		fn();           \
		t_verdict(#fn); \
	} while (0)

#define T_EXIT() return t_failed_total ? 1 : 0

#endif /* BLITZ_TESTLIB_H */
