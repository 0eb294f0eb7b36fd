// SPDX-License-Identifier: GPL-2.0
/*
 * supervisor.c - an engine in a supervised child process (supervisor.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "log.h"
#include "supervisor.h"

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_int(const void *x, const void *y)
{
	return *(const int *)x - *(const int *)y;
}

void supervisor_close_fds_except(int *keep, int n)
{
	unsigned int from = 3;
	int i;

	if (n > 0)
		qsort(keep, (size_t)n, sizeof(*keep), cmp_int);
	for (i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if (keep[i] > (int)from)
			close_range(from, (unsigned int)keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

pid_t supervisor_fork(const char *what, int death_sig, int *keep, int n)
{
	pid_t parent = getpid(), pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		pr_warn("fork (%s): %s\n", what, strerror(errno));
		return -1;
	}
	if (pid)
		return pid;
	/* The getppid() check closes the race with a parent that died
	 * before the death signal was set. */
	if (prctl(PR_SET_PDEATHSIG, death_sig) || getppid() != parent)
		_exit(1);
	supervisor_close_fds_except(keep, n);
	return 0;
}

static void describe_exit(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status %d", WEXITSTATUS(status));
}

/* SIGTERM, a bounded wait, then SIGKILL. Returns the exit status. */
static int stop_child(const struct supervised *s, pid_t pid)
{
	struct timespec nap = {.tv_nsec = 20 * 1000 * 1000};
	int status = 0, i;

	kill(pid, SIGTERM);
	for (i = 0; i < s->stop_ms / 20; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		nanosleep(&nap, NULL);
	}
	pr_warn("%s engine pid %d did not stop in %d ms: killing it\n", s->name,
		(int)pid, s->stop_ms);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static bool kernel_failed(const struct serve_ctx *c)
{
	return c->kernel && epoll_engine_failed(c->kernel);
}

int supervise(struct serve_ctx *c, const struct supervised *s)
{
	struct timespec nap = {.tv_nsec = 100 * 1000 * 1000};
	double restarts[SUPERVISOR_RESTARTS_PER_MIN] = {0}, restart_at = 0, now;
	int n_restarts = 0, recent, status, i, ret = 0;
	char why[32], tier[sizeof(c->state->tier)], running[64];
	bool gave_up = false;
	const char *done;
	pid_t pid;

	snprintf(running, sizeof(running), "%s+epoll", s->name);
	pid = s->spawn(c);
	if (pid < 0) {
		s->cleanup(c);
		return 1;
	}
	serve_set_tier(c, running, pid);
	while (!*c->stop && !kernel_failed(c)) {
		nanosleep(&nap, NULL); /* a signal cuts it short */
		if (*c->stop)
			break;
		now = mono_s();
		if (*c->usr1) {
			/* "print your counters": the engine's business */
			*c->usr1 = 0;
			if (pid > 0)
				kill(pid, SIGUSR1);
		}
		if (pid > 0) {
			if (waitpid(pid, &status, WNOHANG) != pid)
				continue;
			pid = 0;
			describe_exit(status, why, sizeof(why));
			done = s->cleanup(c);
			if (!n_restarts && s->nostart(status)) {
				pr_warn("%s engine could not start (%s)\n",
					s->name, why);
				return 1;
			}
			for (i = 0, recent = 0;
			     i < n_restarts && i < SUPERVISOR_RESTARTS_PER_MIN;
			     i++)
				recent += now - restarts[i] < 60.0;
			if (recent >= SUPERVISOR_RESTARTS_PER_MIN) {
				printf("blitz: %s engine exited (%s): "
				       "%sserving "
				       "from the kernel path; %d restarts in "
				       "the last minute: staying on the kernel "
				       "path\n",
				       s->name, why, done, recent);
				gave_up = true;
				snprintf(tier, sizeof(tier),
					 "epoll (%s gave up)", s->name);
			} else {
				double wait = SUPERVISOR_BACKOFF_MS / 1000.0 *
					      (double)(1 << recent);

				printf("blitz: %s engine exited (%s): "
				       "%sserving "
				       "from the kernel path; restarting it in "
				       "%.0f s\n",
				       s->name, why, done, wait);
				restart_at = now + wait;
				snprintf(tier, sizeof(tier),
					 "epoll (%s restarting)", s->name);
			}
			fflush(stdout);
			serve_set_tier(c, tier, 0);
			continue;
		}
		if (gave_up || now < restart_at)
			continue;
		restarts[n_restarts++ % SUPERVISOR_RESTARTS_PER_MIN] = now;
		pid = s->spawn(c);
		/* A failed fork leaves the kernel path serving. */
		if (pid < 0) {
			s->cleanup(c);
			gave_up = true;
			snprintf(tier, sizeof(tier), "epoll (%s failed)",
				 s->name);
			serve_set_tier(c, tier, 0);
		} else {
			serve_set_tier(c, running, pid);
		}
	}
	if (pid > 0) {
		status = stop_child(s, pid);
		/* Ended by our SIGTERM itself (blitz-dpdk before its
		 * handlers are in place): stopped, as asked. */
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
			status = 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			describe_exit(status, why, sizeof(why));
			pr_warn("%s engine pid %d exited (%s)\n", s->name,
				(int)pid, why);
			ret = 1;
		}
	}
	/* A clean stop undid what the engine changed; check it anyway. */
	s->cleanup(c);
	return ret;
}
