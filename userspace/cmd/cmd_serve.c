// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_serve.c - `blitz serve [<ifname>] ...`: the one foreground command.
 * Reads the command line, installs the signal handlers and records the
 * serve's state file, then hands the chosen engine (engine.h, one
 * descriptor each, tier_<name>.c) to the serve runtime (serve_run.c),
 * which runs it with the epoll engine on the same port as the kernel
 * path. auto: xdp native, then xdp skb, then epoll alone.
 *
 * Owns: serve's command line, the serve's state file (serve_state.c
 * writes it) and the signal handling of the serving process. Must never
 * run an engine itself: that order is serve_run.c's.
 */
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "engine.h"
#include "epoll_engine.h"
#include "http.h"
#include "loader.h"
#include "log.h"
#include "metrics.h"
#include "serve_run.h"
#include "serve_state.h"
#include "tcp_core.h"

#define UMEM_FRAMES_MIN 256
#define UMEM_FRAMES_MAX (1 << 20)

enum {
	OPT_MAX_CONNS = OPT_CMD_BASE,
	OPT_IDLE,
	OPT_HEADER,
	OPT_METRICS,
	OPT_UMEM
};

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
	 "allows); afxdp and dpdk: their connection tables, split over the "
	 "queues (default 65536 a queue), at most " TCP_CORE_CONN_BYTES_STR
	 " bytes of memory a connection, allocated at start",
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
	{OPT_UMEM, "umem-frames", "N",
	 "afxdp: UMEM frames a queue, a power of two, 2 KiB each, half for "
	 "RX (default 4096, or 16384 for a queue of more than 65536 "
	 "connections: its RX ring holds the bursts of many)",
	 0, 0},
	{0},
};

const struct cmd_spec cmd_serve_spec = {
	.name = "serve",
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

struct serve_parse {
	struct serve_args *a;
	char **argv; /* for the service options as typed */
};

/* One of serve's options into ctx (struct serve_parse): cli_parse_opts. */
static int serve_opt(int opt, char *arg, void *ctx)
{
	struct serve_parse *sp = ctx;
	struct serve_args *a = sp->a;
	char **argv = sp->argv;
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
		{OPT_UMEM, "--umem-frames", UMEM_FRAMES_MIN, UMEM_FRAMES_MAX, 1,
		 &a->c.umem_frames, NULL},
	};
	int r = cli_num_opt(nums, sizeof(nums) / sizeof(nums[0]), opt, arg);

	if (r)
		return r;
	switch (opt) {
	case 'e':
		a->engine = strcmp(arg, "auto") ? engine_find(arg) : NULL;
		if (!a->engine && strcmp(arg, "auto")) {
			pr_warn("bad engine '%s': use %s\n", arg,
				engine_tier_list());
			return -1;
		}
		a->engine_given = true;
		return 1;
	case OPT_METRICS:
		if (metrics_spec_check(arg))
			return -1;
		a->metrics = arg;
		return 1;
	case 'm':
		if (!strcmp(arg, "native")) {
			a->c.xdp_mode = BLITZ_XDP_NATIVE;
		} else if (!strcmp(arg, "skb")) {
			a->c.xdp_mode = BLITZ_XDP_SKB;
		} else {
			pr_warn("bad mode '%s': use native or skb\n", arg);
			return -1;
		}
		return 1;
	}
	r = options_service_apply(&a->svc, opt, arg);
	if (r <= 0)
		return r; /* 0: -v, -h, --version or a bad option */
	if (a->c.n_fwd + 2 <= SERVE_MAX_FWD) {
		/* The option as it was typed, for dpdk. */
		a->c.fwd[a->c.n_fwd++] =
			argv[optind - 1 - (arg == argv[optind - 1])];
		if (arg == argv[optind - 1])
			a->c.fwd[a->c.n_fwd++] = arg;
	}
	return 1;
}

/* 0: parsed; 1: done (help, version); -1: bad (one line printed). */
static int parse_args(int argc, char **argv, struct serve_args *a)
{
	struct serve_parse sp = {a, argv};
	const char *name;
	int r;

	r = cli_parse(&cmd_serve_spec, argc, argv, serve_opt, &sp, 0, 1);
	if (r != CLI_CONTINUE)
		return r ? -1 : 1;
	a->c.max_conns = a->eo.max_conns;
	a->c.idle_ms = a->eo.idle_timeout_ms;
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
	if (a->c.umem_frames && a->engine != &engine_afxdp) {
		pr_warn("--umem-frames is for the afxdp engine's sockets: add "
			"--engine afxdp, or leave it out\n");
		return -1;
	}
	if (a->c.umem_frames & (a->c.umem_frames - 1)) {
		pr_warn("bad --umem-frames '%d': use a power of two from %d to "
			"%d\n",
			a->c.umem_frames, UMEM_FRAMES_MIN, UMEM_FRAMES_MAX);
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
	ret = serve_run(&a.c, &(struct serve_run_opts){.eo = &a.eo,
						       .metrics = a.metrics,
						       .auto_tier = !a.engine});
	serve_state_remove(&serve_st);
	service_free(&a.svc);
	return ret;
}
