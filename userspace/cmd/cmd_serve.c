// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_serve.c - `blitz serve [<ifname>] ...`: the one foreground command.
 * Runs the chosen engine (engine.h: one descriptor each, engine_<name>.c)
 * with the epoll engine listening on the same port as the kernel path,
 * says which tier is active, and on SIGINT/SIGTERM stops and detaches
 * everything it started. auto: xdp native, then xdp skb, then epoll
 * alone. The afxdp engine and blitz-dpdk run in a child process that
 * supervisor.c keeps running.
 *
 *   prepare ─▶ epoll (kernel path) ─▶ XDP attach (if the engine needs it)
 *           ─▶ run (until a signal) ─▶ finish ─▶ XDP detach ─▶ epoll stop
 *
 * Owns: serve's command line, that order, the serve's state file
 * (serve_state.c writes it) and the signal handling of the serving
 * process. Must never leave anything attached when it returns: the XDP
 * program is a bpf_link owned by this process (it goes away even on
 * SIGKILL, and the engine child with it; the pins left then are shown by
 * `blitz status` and removed by `blitz unload`).
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "counters.h"
#include "engine.h"
#include "epoll_engine.h"
#include "http.h"
#include "loader.h"
#include "log.h"
#include "metrics.h"
#include "serve_state.h"

enum { OPT_MAX_CONNS = OPT_CMD_BASE, OPT_IDLE, OPT_HEADER, OPT_METRICS };

static volatile sig_atomic_t serve_stop, serve_usr1;
/* What `blitz status` reads about this serve (serve_state.h): written by
 * the main thread whenever the tier changes, removed at a clean exit. */
static struct serve_state serve_st;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		serve_usr1 = 1;
	else
		serve_stop = 1;
}

/* Not const: the -e option's values come from the engine table (filled
 * in before main, so every text made from this table names them). */
static struct opt_spec serve_opts[] = {
	{'e', "engine", NULL,
	 "the fast path (default: auto with <ifname>: xdp native, then xdp "
	 "skb, then epoll alone)",
	 0, 0},
	{'m', "mode", "native|skb", "XDP mode (default: native, else skb)", 0,
	 0},
	{'t', "threads", "N", "epoll threads (default: one per CPU)", 0, 0},
	{OPT_MAX_CONNS, "max-conns", "N",
	 "open connections at most (default %d, or what the open files limit "
	 "allows)",
	 EPOLL_DEFAULT_MAX_CONNS, 0},
	{OPT_IDLE, "idle-timeout", "SEC",
	 "keep-alive idle timeout (default %d)", EPOLL_DEFAULT_IDLE_MS / 1000,
	 0},
	{OPT_HEADER, "header-timeout", "SEC",
	 "close a connection whose header section is not complete this long "
	 "after its first byte (default %d)",
	 EPOLL_DEFAULT_HEADER_MS / 1000, 0},
	{OPT_METRICS, "metrics", "[ADDR:]PORT",
	 "serve every engine's counters at /metrics (Prometheus text) on "
	 "PORT, bound to 127.0.0.1 unless ADDR says otherwise",
	 0, 0},
	{'q', "queues", "N",
	 "afxdp: RX queues (default: all); dpdk: queues and lcores (default "
	 "1)",
	 0, 0},
	{0},
};

const struct cmd_spec cmd_serve_spec = {
	.name = "serve",
	.prog = "blitz serve",
	.operands = "[<ifname>]",
	.summary = "serve in the foreground with kernel fallback",
	.about =
		"Serve HTTP in the foreground until SIGINT/SIGTERM: the fast "
		"path on <ifname> with the kernel (epoll) listener on the same "
		"port for whatever it does not answer. Without <ifname>: the "
		"epoll engine alone.",
	.groups = {serve_opts, options_service, options_common},
};

static void __attribute__((constructor)) serve_opts_engines(void)
{
	serve_opts[0].arg = engine_tier_names();
}

struct serve_args {
	const struct engine_desc *engine; /* NULL: auto */
	bool engine_given;
	struct epoll_engine_opts eo;
	const char *metrics; /* --metrics */
	struct serve_ctx c;
	struct blitz_service svc;
	/* Built once from svc, handed to every engine. */
	struct http_responses resp;
};

/* 0: parsed; 1: done (help, version); -1: bad (one line printed). */
static int parse_args(int argc, char **argv, struct serve_args *a)
{
	struct cli_parser p;
	/* The numeric options: name in the error line, range, unit. */
	const struct cli_num_opt nums[] = {
		{'t', "thread count", 1, 1024, 1, &a->eo.threads, NULL},
		{'q', "queue count", 1, 64, 1, &a->c.queues, NULL},
		{OPT_MAX_CONNS, "--max-conns", 1, 10000000, 1, &a->eo.max_conns,
		 NULL},
		{OPT_IDLE, "--idle-timeout", 1, 86400, 1000,
		 &a->eo.idle_timeout_ms, NULL},
		{OPT_HEADER, "--header-timeout", 1, 3600, 1000,
		 &a->eo.header_timeout_ms, NULL},
	};
	const char *name;
	int opt, r;

	if (cli_parse_begin(&p, &cmd_serve_spec))
		return -1;
	while ((opt = getopt_long(argc, argv, p.shortopts, p.longopts, NULL)) !=
	       -1) {
		r = cli_num_opt(nums, sizeof(nums) / sizeof(nums[0]), opt,
				optarg);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (opt) {
		case 'e':
			a->engine = strcmp(optarg, "auto") ? engine_find(optarg)
							   : NULL;
			if (!a->engine && strcmp(optarg, "auto")) {
				pr_warn("bad engine '%s': use %s\n", optarg,
					engine_tier_list());
				return -1;
			}
			a->engine_given = true;
			break;
		case OPT_METRICS:
			a->metrics = optarg;
			break;
		case 'm':
			if (!strcmp(optarg, "native")) {
				a->c.xdp_mode = BLITZ_XDP_NATIVE;
			} else if (!strcmp(optarg, "skb")) {
				a->c.xdp_mode = BLITZ_XDP_SKB;
			} else {
				pr_warn("bad mode '%s': use native or skb\n",
					optarg);
				return -1;
			}
			break;
		default:
			r = options_service_apply(&a->svc, opt, optarg);
			if (r < 0)
				return -1;
			if (!r) {
				/* -v, -h, --version or a bad option. */
				r = cli_common_opt(&cmd_serve_spec, opt, argv);
				if (r == CLI_CONTINUE)
					break;
				return r ? -1 : 1;
			}
			if (a->c.n_fwd + 2 <= SERVE_MAX_FWD) {
				/* The option as it was typed, for dpdk. */
				a->c.fwd[a->c.n_fwd++] =
					argv[optind - 1 -
					     (optarg == argv[optind - 1])];
				if (optarg == argv[optind - 1])
					a->c.fwd[a->c.n_fwd++] = optarg;
			}
			break;
		}
	}
	if (cli_operands("serve", argc, argv, 0, 1, "<ifname>"))
		return -1;
	if (optind < argc)
		a->c.ifname = argv[optind];
	if (!a->engine_given && !a->c.ifname)
		a->engine = &engine_epoll;
	name = a->engine ? a->engine->name : "auto";
	if (!a->c.ifname && (!a->engine || a->engine->needs_ifname)) {
		pr_warn("--engine %s needs an interface: blitz serve <ifname> "
			"--engine %s\n",
			name, name);
		return -1;
	}
	if (a->c.ifname && !if_nametoindex(a->c.ifname)) {
		pr_warn("unknown interface '%s' (see `ip link`)\n",
			a->c.ifname);
		return -1;
	}
	if (service_finish(&a->svc) || service_responses(&a->svc, &a->resp))
		return -1;
	return 0;
}

static void install_signals(bool usr1)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: cut sleeps short */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* The engine prints its counters on SIGUSR1; serve passes it on. */
	if (usr1)
		sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

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
 * and stores: the workers make no extra call for it).
 */
static const struct counter_name epoll_names[] = {
	{"connections_opened", "connections accepted"},
	{"connections_closed", "connections closed (any reason)"},
	{"requests", "HTTP requests answered (any status)"},
	{"http_errors", "requests answered 400/405/431/505"},
	{"tx_bytes", "response bytes handed to the kernel"},
	{"idle_timeouts", "keep-alive connections timed out"},
	{"header_timeouts", "slow header senders closed"},
	{"cap_pauses", "times a thread stopped accepting (connection cap)"},
	{"accept_errors", "accept() failures other than EAGAIN"},
	{"connection_errors", "connections closed on a socket error"},
};
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
	struct epoll_engine_stats st;
	uint64_t *slot = counters_slot(&p->area, 0);
	unsigned int k;

	epoll_engine_stats(p->e, &st);
	/* In the order of epoll_names. */
	const uint64_t v[N_EPOLL_NAMES] = {
		st.accepted,
		st.closed,
		st.requests,
		st.resp[BLITZ_RESP_400] + st.resp[BLITZ_RESP_405] +
			st.resp[BLITZ_RESP_431] + st.resp[BLITZ_RESP_505],
		st.tx_bytes,
		st.idle_timeouts,
		st.header_timeouts,
		st.cap_pauses,
		st.accept_errors,
		st.conn_errors,
	};

	for (k = 0; k < N_EPOLL_NAMES; k++)
		counters_store(slot, k, v[k]);
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
 * (a->engine NULL) falls back to the epoll engine alone when it cannot
 * attach: behind the program a `blitz load` left there (-EEXIST, it
 * passes what it does not answer to us), or with no XDP at all. 0, or -1
 * when serve must stop (said why).
 */
static int attach_xdp(struct serve_args *a)
{
	struct serve_ctx *c = &a->c;
	struct blitz_loader_opts lo = {
		.ifname = c->ifname,
		.xdp_mode = c->xdp_mode,
		.engine = c->engine->xdp == ENGINE_XDP_REDIRECT
				  ? BLITZ_MODE_AFXDP
				  : BLITZ_MODE_XDP,
		.persist = false,
		.svc = c->svc,
		.resp = c->engine->xdp == ENGINE_XDP_REDIRECT ? NULL : c->resp,
	};
	int ret;

	blitz_log_quiet_libs();
	ret = blitz_loader_attach(&lo, &c->xdp);
	if (!ret)
		return 0;
	c->xdp = NULL;
	if (a->engine)
		return -1;
	c->engine = &engine_epoll;
	c->fallback_why = ret == -EEXIST ? " behind the XDP program `blitz "
					   "load` left there"
					 : ": no XDP";
	c->fallback_tier =
		ret == -EEXIST ? "epoll (behind blitz load)" : "epoll";
	return 0;
}

static int serve(struct serve_args *a)
{
	static struct epoll_publisher pub;
	struct metrics_server *metrics = NULL;
	struct serve_ctx *c = &a->c;
	int ret;

	counters_sweep(); /* areas of serves that were killed */
	if (c->engine->prepare && c->engine->prepare(c)) {
		ret = 1;
		goto out;
	}
	/* The kernel path first: the fast path hands connections to it, and
	 * (dpdk) its listeners stay bound when the addresses move. */
	if (epoll_engine_start(&a->eo, &c->kernel)) {
		ret = 1;
		goto out;
	}
	say_epoll_limits(c->kernel);
	if (c->engine->xdp != ENGINE_XDP_NONE && attach_xdp(a)) {
		stop_epoll(c->kernel, false);
		c->kernel = NULL;
		ret = 1;
		goto out;
	}
	if (a->metrics && metrics_start(a->metrics, c->xdp ? c->ifname : NULL,
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

int cmd_serve(int argc, char **argv)
{
	static struct serve_args a;
	int r, ret;

	memset(&a, 0, sizeof(a));
	service_init(&a.svc);
	a.eo.svc = &a.svc;
	a.eo.resp = &a.resp;
	/* Lines must reach a log file as they happen. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	r = parse_args(argc, argv, &a);
	if (r) {
		service_free(&a.svc);
		return r > 0 ? 0 : 1;
	}
	a.c.engine = a.engine ? a.engine : &engine_xdp; /* auto: xdp first */
	a.c.svc = &a.svc;
	a.c.resp = &a.resp;
	a.c.state = &serve_st;
	a.c.stop = &serve_stop;
	a.c.usr1 = &serve_usr1;
	install_signals(a.c.engine->usr1);
	serve_state_init(&serve_st, a.c.ifname, &a.svc);
	ret = serve(&a);
	serve_state_remove(&serve_st);
	service_free(&a.svc);
	return ret;
}
