// SPDX-License-Identifier: GPL-2.0
/*
 * engine_afxdp.c - the afxdp engine as serve runs it: the XDP program
 * redirects service traffic to AF_XDP sockets, which afxdp_engine.c
 * serves in a supervised child process (supervisor.h).
 *
 * The child's AF_XDP sockets close when it dies, their xsks entries go,
 * the XDP program passes service traffic to the kernel (pass_no_xsk) and
 * serve's epoll listener answers it. The parent owns the XDP attachment
 * (a bpf_link of serve), so a SIGKILL of the parent detaches it; the
 * child then dies too (PR_SET_PDEATHSIG), never lingering on sockets
 * nothing redirects to.
 *
 *   blitz serve (epoll listener, XDP bpf_link, supervisor)
 *     `- blitz-afxdp child (AF_XDP sockets, poll threads)
 *
 * Owns: the child's life. Must never attach anything itself.
 */
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "afxdp_engine.h"
#include "engine.h"
#include "log.h"
#include "serve_state.h"
#include "supervisor.h"

#define AFXDP_STOP_MS 3000
/* The child's exit status when the engine did not start. */
#define AFXDP_EXIT_NOSTART 2

/* The child's whole life: serve until SIGINT/SIGTERM, never return. */
static void __attribute__((noreturn)) afxdp_child(struct serve_ctx *c)
{
	struct afxdp_engine_opts xo = {
		.ifname = c->ifname,
		.queues = c->queues,
		.xsks_fd = blitz_loaded_xsks_fd(c->xdp),
		.svc = c->svc,
		.resp = c->resp,
		.cpu_first = -1,
		.max_conns = c->max_conns > 0 ? (uint32_t)c->max_conns : 0,
		.idle_ms = c->idle_ms > 0 ? (uint32_t)c->idle_ms : 0,
		.umem_frames =
			c->umem_frames > 0 ? (uint32_t)c->umem_frames : 0,
		.counters_fd = blitz_loaded_counters_fd(c->xdp),
		.registry = true,
	};
	char report[192];

	/* Each socket's mode and why, for `blitz status` (serve_state.h). */
	serve_state_xsk_path(getpid(), report, sizeof(report));
	xo.mode_report = report;

	prctl(PR_SET_NAME, "blitz-afxdp"); /* what ps and top show */
	/* Only this thread survived fork(); the handlers are the parent's,
	 * the flag is this process's own copy. It is not reset here: it is
	 * set only when serve is stopping, and serve's SIGTERM may come
	 * before this line (a stop asked for while the child started was
	 * lost, and serve killed it after 3 s). */
	/* The exit status says whether the engine started: it returns an
	 * error only when it could not (see afxdp_engine_run). */
	if (afxdp_engine_run(&xo, c->stop)) {
		fflush(stdout);
		_exit(AFXDP_EXIT_NOSTART);
	}
	fflush(stdout);
	fflush(stderr);
	_exit(0); /* not exit(): the parent's atexit handlers are not ours */
}

static pid_t afxdp_spawn(struct serve_ctx *c)
{
	int keep[2] = {blitz_loaded_xsks_fd(c->xdp),
		       blitz_loaded_counters_fd(c->xdp)};
	/* A SIGKILLed parent took the XDP program with it: go too. */
	pid_t pid = supervisor_fork("afxdp engine", SIGKILL, keep, 2);

	if (pid < 0)
		return -1;
	if (!pid)
		afxdp_child(c);
	if (c->queues)
		printf("blitz: afxdp engine pid %d on %s queues 0-%d\n",
		       (int)pid, c->ifname, c->queues - 1);
	else
		printf("blitz: afxdp engine pid %d on %s (every RX queue)\n",
		       (int)pid, c->ifname);
	fflush(stdout);
	return pid;
}

static bool afxdp_nostart(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == AFXDP_EXIT_NOSTART;
}

/* The kernel closed the dead child's sockets; only a killed child's
 * report of their modes is left. */
static const char *afxdp_cleanup(struct serve_ctx *c)
{
	(void)c;
	serve_state_xsk_reap();
	return "";
}

static int afxdp_run(struct serve_ctx *c)
{
	static const struct supervised s = {
		.name = "afxdp",
		.stop_ms = AFXDP_STOP_MS,
		.spawn = afxdp_spawn,
		.nostart = afxdp_nostart,
		.cleanup = afxdp_cleanup,
	};

	printf("blitz: serving on %s port %u: tier afxdp (%s) + epoll "
	       "fallback\n",
	       c->ifname, c->svc->port, blitz_loaded_mode(c->xdp));
	fflush(stdout);
	return supervise(c, &s);
}

const struct engine_desc engine_afxdp = {
	.name = "afxdp",
	.about = "userspace TCP on AF_XDP sockets, one per RX queue, in a "
		 "supervised child",
	.xdp = ENGINE_XDP_REDIRECT,
	.needs_ifname = true,
	.run = afxdp_run,
};
