// SPDX-License-Identifier: GPL-2.0
/*
 * test_testlib.c - the harness's own verdicts (tests/testlib.h): a test
 * that ran no check fails, one that checked and held passes, a skipped
 * one is a SKIP, a failed check fails. The tests under judgement run in
 * a child whose stdout is a pipe, so their FAIL lines are read here, not
 * counted by tests/run.sh.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

static void empty(void)
{
}

static void one_check(void)
{
	T_CHECK(1);
}

static void skipped(void)
{
	T_SKIP("nothing to run on");
}

static void failing(void)
{
	T_EQ_INT(1, 2);
}

static char out[4096];
static int child_status = -1;

/* Run the four in a child; keep what it printed and how it exited. */
static int judge(void)
{
	size_t n = 0;
	ssize_t r;
	pid_t pid;
	int p[2];

	if (pipe(p))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		T_RUN(empty);
		T_RUN(one_check);
		T_RUN(skipped);
		T_RUN(failing);
		fflush(stdout);
		_exit(t_failed_total);
	}
	close(p[1]);
	while (n < sizeof(out) - 1 &&
	       (r = read(p[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(p[0]);
	if (waitpid(pid, &child_status, 0) != pid)
		return -1;
	return 0;
}

static void test_no_check_fails(void)
{
	T_CHECK_MSG(strstr(out, "FAIL empty: ran no check\n") != NULL,
		    "got: %s", out);
	T_CHECK(!strstr(out, "PASS empty"));
}

static void test_check_passes(void)
{
	T_CHECK_MSG(strstr(out, "PASS one_check\n") != NULL, "got: %s", out);
}

static void test_skip_is_skip(void)
{
	T_CHECK_MSG(strstr(out, "SKIP skipped: nothing to run on\n") != NULL,
		    "got: %s", out);
}

static void test_failed_check_fails(void)
{
	T_CHECK_MSG(strstr(out, "FAIL failing\n") != NULL, "got: %s", out);
	T_CHECK(strstr(out, "check failed at") != NULL);
}

/* Two failures (empty, failing): the exit status T_EXIT gives. */
static void test_failures_counted(void)
{
	T_CHECK(WIFEXITED(child_status));
	T_EQ_INT(WEXITSTATUS(child_status), 2);
}

int main(void)
{
	if (judge()) {
		printf("FAIL test_testlib: cannot run the child\n");
		return 1;
	}
	T_RUN(test_no_check_fails);
	T_RUN(test_check_passes);
	T_RUN(test_skip_is_skip);
	T_RUN(test_failed_check_fails);
	T_RUN(test_failures_counted);
	T_EXIT();
}
