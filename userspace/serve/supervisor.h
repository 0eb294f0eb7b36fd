/* SPDX-License-Identifier: GPL-2.0 */
/*
 * supervisor.h - run an engine in a child process and keep it running.
 *
 * The afxdp engine and blitz-dpdk run in a child of serve so that their
 * death (a crash, a SIGKILL) cannot take the kernel path with it: serve's
 * epoll listener keeps answering whatever reaches the kernel, and the
 * supervisor restarts the engine after a back-off (SUPERVISOR_BACKOFF_MS,
 * doubled for every restart in the last minute), at most
 * SUPERVISOR_RESTARTS_PER_MIN times a minute; then the kernel path serves
 * alone until serve stops. A first child that cannot start fails serve.
 *
 *   blitz serve (epoll listener, XDP bpf_link, supervisor)
 *     `- engine child (fork, or fork + exec), restarted when it dies
 *
 * Owns: the child's pid, its restarts, the stop (SIGTERM, a bounded wait,
 * SIGKILL) and the lines saying what happened. Must never leave a child
 * running when it returns, nor skip the engine's cleanup after a child.
 */
#ifndef BLITZ_SUPERVISOR_H
#define BLITZ_SUPERVISOR_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#define SUPERVISOR_RESTARTS_PER_MIN 5
#define SUPERVISOR_BACKOFF_MS 1000

struct serve_ctx;

struct supervised {
	const char *name; /* "afxdp", "dpdk": for the messages and tiers */
	int stop_ms;	  /* SIGTERM, then SIGKILL after this */
	/* Fork the engine; -1 when it could not (said why). */
	pid_t (*spawn)(struct serve_ctx *c);
	/* The exit status says the engine never started. */
	bool (*nostart)(int status);
	/* After the child is gone (reaped): undo what it left; returns the
	 * words for the exit line ("interface restored, ") or "". */
	const char *(*cleanup)(struct serve_ctx *c);
};

/*
 * Run s's child until *c->stop (or the kernel path failed): restarts as
 * above, the tier "<name>+epoll" while it runs and "epoll (<name>
 * restarting|gave up|failed)" while it does not, SIGUSR1 passed on. 0, or
 * 1 when the first child could not start or the last one exited badly.
 */
int supervise(struct serve_ctx *c, const struct supervised *s);

/*
 * Fork an engine's child the one way both engines do: stdio flushed first
 * (or the child prints the parent's buffer again); in the child, death_sig
 * when the parent dies (PR_SET_PDEATHSIG; a parent already gone is caught
 * by getppid(): the child then _exits 1) and every descriptor from 3 up
 * closed but keep[0..n) (supervisor_close_fds_except). Returns 0 in the
 * child, its pid in the parent, -1 when fork failed (said why, for what).
 */
pid_t supervisor_fork(const char *what, int death_sig, int *keep, int n);

/* In a forked child: close every descriptor from 3 up but keep[0..n),
 * so the child holds none of the parent's listeners, connections (a close
 * by the parent would send no FIN while the child holds a copy) or its
 * bpf_link. keep is sorted in place. */
void supervisor_close_fds_except(int *keep, int n);

#endif /* BLITZ_SUPERVISOR_H */
