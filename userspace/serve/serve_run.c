// SPDX-License-Identifier: GPL-2.0
/*
 * serve_run.c - the serve runtime (serve_run.h): one engine of the table
 * run the way engine.h describes, the kernel path beside it, the epoll
 * engine's counters published, /metrics served.
 *
 * Owns: the order prepare, kernel path, XDP attach, run, finish, detach,
 * stop, and the helpers engines call (serve_wait, serve_set_tier,
 * serve_where). Must never parse a command line or handle signals (the
 * CLI's, cmd_serve.c): it reads *c->stop.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "engine.h"
#include "epoll_engine.h"
#include "http.h"
#include "loader.h"
#include "log.h"
#include "metrics.h"
#include "serve_run.h"
#include "serve_state.h"

void serve_wait(struct serve_ctx *c)
{
	struct timespec nap = {.tv_nsec = 200 * 1000 * 1000};

	while (!*c->stop && !epoll_engine_failed(c->kernel))
		nanosleep(&nap, NULL); /* a signal cuts it short */
}

void serve_set_tier(struct serve_ctx *c, const char *tier, pid_t child)
{
	serve_state_set(c->state, tier, child);
}

const char *serve_where(const struct serve_ctx *c)
{
	return c->ifname ? c->ifname : "all interfaces";
}

static void say_epoll_limits(const struct epoll_engine *e)
{
	struct rlimit rl = {0};

	getrlimit(RLIMIT_NOFILE, &rl);
	pr_info("epoll: %d threads, at most %ld open connections (open files "
		"limit %llu)\n",
		epoll_engine_threads(e), epoll_engine_max_conns(e),
		(unsigned long long)rl.rlim_cur);
}

/* Stop and join; the summary only when it served (not after a failed
 * start of the fast path, where the one error line is the output). */
static int stop_epoll(struct epoll_engine *e, bool summary)
{
	struct epoll_engine_stats st;
	int ret;

	if (!e)
		return 0;
	epoll_engine_request_stop(e);
	ret = epoll_engine_join(e, &st);
	if (summary)
		epoll_engine_stats_print(stdout, &st);
	return ret;
}

/*
 * The epoll engine's counters in the registry (counters.h), published by
 * a small thread every 100 ms from the engine's own totals (atomic loads
 * and stores: the workers make no extra call for it). One row per
 * counter: its name, its help and its value in st, read together.
 */
#define EPOLL_PUBLISHED(X)                                                    \
	X(connections_opened, "connections accepted", st->accepted)           \
	X(connections_closed, "connections closed (any reason)", st->closed)  \
	X(requests, "HTTP requests answered (any status)", st->requests)      \
	X(http_errors, "requests answered 400/405/431/505",                   \
	  st->resp[BLITZ_RESP_400] + st->resp[BLITZ_RESP_405] +               \
		  st->resp[BLITZ_RESP_431] + st->resp[BLITZ_RESP_505])        \
	X(tx_bytes, "response bytes handed to the kernel", st->tx_bytes)      \
	X(idle_timeouts, "keep-alive connections timed out",                  \
	  st->idle_timeouts)                                                  \
	X(header_timeouts, "slow header senders closed", st->header_timeouts) \
	X(cap_pauses, "times a thread stopped accepting (connection cap)",    \
	  st->cap_pauses)                                                     \
	X(accept_errors, "accept() failures other than EAGAIN",               \
	  st->accept_errors)                                                  \
	X(connection_errors, "connections closed on a socket error",          \
	  st->conn_errors)

#define EPOLL_NAME_ROW(name, help, value) {#name, help},
static const struct counter_name epoll_names[] = {
	EPOLL_PUBLISHED(EPOLL_NAME_ROW)};
#define N_EPOLL_NAMES (sizeof(epoll_names) / sizeof(epoll_names[0]))

struct epoll_publisher {
	struct counters_area area;
	struct epoll_engine *e;
	atomic_int stop;
	pthread_t th;
	bool started;
};

static void epoll_publish(struct epoll_publisher *p)
{
	struct epoll_engine_stats stats, *st = &stats;
	uint64_t *slot = counters_slot(&p->area, 0);
	unsigned int k = 0;

	epoll_engine_stats(p->e, st);
#define EPOLL_STORE_ROW(name, help, value) counters_store(slot, k++, value);
	EPOLL_PUBLISHED(EPOLL_STORE_ROW)
#undef EPOLL_STORE_ROW
}

static void *epoll_publisher_main(void *arg)
{
	struct epoll_publisher *p = arg;
	struct timespec nap = {.tv_nsec = 100 * 1000 * 1000};

	while (!atomic_load(&p->stop)) {
		epoll_publish(p);
		nanosleep(&nap, NULL);
	}
	epoll_publish(p);
	return NULL;
}

static void epoll_publisher_start(struct epoll_publisher *p,
				  struct serve_ctx *c)
{
	sigset_t block, old;

	p->e = c->kernel;
	if (counters_create(&p->area, "epoll", c->ifname, c->svc->port,
			    epoll_names, N_EPOLL_NAMES, 1))
		return;
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	p->started = !pthread_create(&p->th, NULL, epoll_publisher_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void epoll_publisher_stop(struct epoll_publisher *p)
{
	if (p->started) {
		atomic_store(&p->stop, 1);
		pthread_join(p->th, NULL);
	}
	counters_close(&p->area, true);
}

/*
 * The XDP program the engine needs, as a bpf_link of this process. auto
 * (o->auto_tier) falls back to the epoll engine alone when it cannot
 * attach: behind the program a `blitz load` left there (-EEXIST, it
 * passes what it does not answer to us), or with no XDP at all. 0, or -1
 * when serve must stop (said why).
 */
static int attach_xdp(struct serve_ctx *c, const struct serve_run_opts *o)
{
	struct blitz_attached there = {0};
	struct blitz_loader_opts lo = {
		.ifname = c->ifname,
		.xdp_mode = c->xdp_mode,
		.engine = c->engine->xdp == ENGINE_XDP_REDIRECT
				  ? BLITZ_MODE_AFXDP
				  : BLITZ_MODE_XDP,
		.persist = false,
		.svc = c->svc,
		.resp = c->engine->xdp == ENGINE_XDP_REDIRECT ? NULL : c->resp,
		/* the engine's run arms it once its TC hand-off is there */
		.hold = c->engine->xdp == ENGINE_XDP_ANSWER,
		.fallback = o->auto_tier ? &there : NULL,
	};
	int ret;

	blitz_log_quiet_libs();
	ret = blitz_loader_attach(&lo, &c->xdp);
	if (!ret)
		return 0;
	c->xdp = NULL;
	if (!o->auto_tier)
		return -1;
	c->engine = &engine_epoll;
	c->fallback_why = ": no XDP";
	c->fallback_tier = "epoll";
	if (ret == -EEXIST) {
		/* A bpf_link is a running serve's program, not a load's. */
		if (there.link) {
			c->fallback_why = " behind the XDP program of another "
					  "`blitz serve`";
			c->fallback_tier = "epoll (behind another serve)";
		} else {
			c->fallback_why = " behind the XDP program `blitz "
					  "load` left there";
			c->fallback_tier = "epoll (behind blitz load)";
		}
	}
	return 0;
}

int serve_run(struct serve_ctx *c, const struct serve_run_opts *o)
{
	static struct epoll_publisher pub;
	struct metrics_server *metrics = NULL;
	int ret;

	counters_sweep(); /* areas of serves that were killed */
	if (c->engine->prepare && c->engine->prepare(c)) {
		ret = 1;
		goto out;
	}
	/* The kernel path first: the fast path hands connections to it, and
	 * (dpdk) its listeners stay bound when the addresses move. */
	if (epoll_engine_start(o->eo, &c->kernel)) {
		ret = 1;
		goto out;
	}
	say_epoll_limits(c->kernel);
	if (c->engine->xdp != ENGINE_XDP_NONE && attach_xdp(c, o)) {
		stop_epoll(c->kernel, false);
		c->kernel = NULL;
		ret = 1;
		goto out;
	}
	if (o->metrics && metrics_start(o->metrics, c->xdp ? c->ifname : NULL,
					getpid(), &metrics)) {
		ret = 1;
		goto out;
	}
	epoll_publisher_start(&pub, c);
	ret = c->engine->run(c);
	epoll_publisher_stop(&pub);
	metrics_stop(metrics);
out:
	if (c->engine->finish && c->engine->finish(c))
		ret = 1;
	if (c->xdp && blitz_loader_detach(c->xdp))
		ret = 1;
	if (c->kernel && stop_epoll(c->kernel, true))
		ret = 1;
	return ret;
}
