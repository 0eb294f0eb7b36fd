// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_serve.c - `blitz serve [<ifname>] ...`: the one foreground command.
 * Attaches the chosen fast path (auto: xdp native, then xdp skb, then
 * none) with the epoll engine listening on the same port as the fallback,
 * says which tier is active, and on SIGINT/SIGTERM detaches everything it
 * attached. The afxdp engine and blitz-dpdk run in a child process that
 * serve supervises: a dead engine leaves the kernel path answering (for
 * dpdk, serve first gives the interface back what the engine's takeover
 * took from it), and is restarted.
 *
 *   blitz serve (epoll listener, XDP bpf_link, supervisor)
 *     `- blitz-afxdp child (AF_XDP sockets, poll threads), --engine afxdp
 *     `- blitz-dpdk child (fork + exec, takes the interface), --engine dpdk
 *
 * Owns: serve's command line, the order of attach/start/stop/detach, the
 * engine children's processes, when the interface a dpdk child may take
 * over is recorded and restored (netif_state.c does it), the serve's
 * state file (serve_state.c writes it) and the signal handling of the
 * serving process.
 * Must never leave anything attached when it returns: the XDP program is a
 * bpf_link owned by this process (it goes away even on SIGKILL, and the
 * engine child with it; the pins left then are shown by `blitz status` and
 * removed by `blitz unload`); the interface a dpdk child took over gets
 * its state back after the child, whatever ended it (a SIGKILLed serve
 * leaves that to blitz-dpdk, which PR_SET_PDEATHSIG stops with SIGTERM).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afxdp_engine.h"
#include "cli.h"
#include "epoll_engine.h"
#include "http.h"
#include "loader.h"
#include "log.h"
#include "netif_state.h"
#include "serve_state.h"
#include "tc_handoff.h"

#define DPDK_BIN "blitz-dpdk"
#define MAX_FWD 64 /* service options forwarded to blitz-dpdk */

enum serve_engine {
	ENG_AUTO,
	ENG_XDP,
	ENG_AFXDP,
	ENG_DPDK,
	ENG_EPOLL,
};

static const char *const engine_names[] = {
	[ENG_AUTO] = "auto", [ENG_XDP] = "xdp",	    [ENG_AFXDP] = "afxdp",
	[ENG_DPDK] = "dpdk", [ENG_EPOLL] = "epoll",
};

enum { OPT_MAX_CONNS = OPT_CMD_BASE, OPT_IDLE, OPT_HEADER };

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

static const struct opt_spec serve_opts[] = {
	{'e', "engine", "auto|xdp|afxdp|dpdk|epoll",
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

struct serve_args {
	enum serve_engine engine;
	bool engine_given;
	enum blitz_xdp_mode_req xdp_mode;
	const char *ifname;
	struct epoll_engine_opts eo;
	int queues;
	struct blitz_service svc;
	/* Built once from svc, handed to every engine. */
	struct http_responses resp;
	/* The service options as typed, for blitz-dpdk's command line. */
	char *fwd[MAX_FWD];
	int n_fwd;
};

/* 0: parsed; 1: done (help, version); -1: bad (one line printed). */
static int parse_args(int argc, char **argv, struct serve_args *a)
{
	struct cli_parser p;
	/* The numeric options: name in the error line, range, unit. */
	const struct cli_num_opt nums[] = {
		{'t', "thread count", 1, 1024, 1, &a->eo.threads, NULL},
		{'q', "queue count", 1, 64, 1, &a->queues, NULL},
		{OPT_MAX_CONNS, "--max-conns", 1, 10000000, 1, &a->eo.max_conns,
		 NULL},
		{OPT_IDLE, "--idle-timeout", 1, 86400, 1000,
		 &a->eo.idle_timeout_ms, NULL},
		{OPT_HEADER, "--header-timeout", 1, 3600, 1000,
		 &a->eo.header_timeout_ms, NULL},
	};
	int opt, i, r;

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
			for (i = 0; i <= ENG_EPOLL; i++)
				if (!strcmp(optarg, engine_names[i]))
					break;
			if (i > ENG_EPOLL) {
				pr_warn("bad engine '%s': use auto, xdp, "
					"afxdp, "
					"dpdk or epoll\n",
					optarg);
				return -1;
			}
			a->engine = (enum serve_engine)i;
			a->engine_given = true;
			break;
		case 'm':
			if (!strcmp(optarg, "native")) {
				a->xdp_mode = BLITZ_XDP_NATIVE;
			} else if (!strcmp(optarg, "skb")) {
				a->xdp_mode = BLITZ_XDP_SKB;
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
			if (a->n_fwd + 2 <= MAX_FWD) {
				/* The option as it was typed, for dpdk. */
				a->fwd[a->n_fwd++] =
					argv[optind - 1 -
					     (optarg == argv[optind - 1])];
				if (optarg == argv[optind - 1])
					a->fwd[a->n_fwd++] = optarg;
			}
			break;
		}
	}
	if (cli_operands("serve", argc, argv, 0, 1, "<ifname>"))
		return -1;
	if (optind < argc)
		a->ifname = argv[optind];
	if (!a->engine_given)
		a->engine = a->ifname ? ENG_AUTO : ENG_EPOLL;
	if (!a->ifname && a->engine != ENG_EPOLL) {
		pr_warn("--engine %s needs an interface: blitz serve <ifname> "
			"--engine %s\n",
			engine_names[a->engine], engine_names[a->engine]);
		return -1;
	}
	if (a->ifname && !if_nametoindex(a->ifname)) {
		pr_warn("unknown interface '%s' (see `ip link`)\n", a->ifname);
		return -1;
	}
	if (service_finish(&a->svc) || service_responses(&a->svc, &a->resp))
		return -1;
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: cut sleeps short */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void install_usr1(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

/* Sum one per-CPU counter of the XDP program (0 when unreadable). */
static unsigned long long xdp_counter(int fd, __u32 key)
{
	unsigned long long sum = 0, *vals;
	int ncpu = libbpf_num_possible_cpus(), i;

	if (fd < 0 || ncpu <= 0)
		return 0;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(fd, &key, vals))
		for (i = 0; i < ncpu; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

static void wait_for_stop(const struct epoll_engine *e)
{
	struct timespec nap = {.tv_nsec = 200 * 1000 * 1000};

	while (!serve_stop && !epoll_engine_failed(e))
		nanosleep(&nap, NULL); /* a signal cuts it short */
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

static const char *where(const struct serve_args *a)
{
	return a->ifname ? a->ifname : "all interfaces";
}

static int serve_epoll_alone(struct serve_args *a, const char *why)
{
	struct epoll_engine *e;

	if (epoll_engine_start(&a->eo, &e))
		return 1;
	say_epoll_limits(e);
	printf("blitz: serving on %s port %u: tier epoll (%d threads)%s\n",
	       where(a), epoll_engine_port(e), epoll_engine_threads(e), why);
	fflush(stdout);
	serve_state_set(&serve_st, "epoll", 0);
	wait_for_stop(e);
	return stop_epoll(e, true) ? 1 : 0;
}

/* The TC hand-off, when the kernel has what it needs; a line otherwise. */
static struct tc_handoff *attach_handoff(struct serve_args *a,
					 struct blitz_loaded *l)
{
	struct tc_handoff *h = NULL;

	if (!tc_handoff_supported()) {
		pr_info("blitz: no TC hand-off on this kernel (needs "
			"bpf_sk_assign_tcp_reqsk, Linux >= 6.9): segments the "
			"XDP program does not answer reach the kernel without "
			"a connection\n");
		return NULL;
	}
	if (tc_handoff_attach(a->ifname, blitz_ifindex(a->ifname),
			      blitz_loaded_config_fd(l),
			      blitz_loaded_counters_fd(l), false, &h)) {
		pr_warn("serving without the TC hand-off: segments the XDP "
			"program does not answer reach the kernel without a "
			"connection\n");
		return NULL;
	}
	return h;
}

/*
 * Engines in a child process. The afxdp engine and blitz-dpdk run in a
 * child of serve so that their death (a crash, a SIGKILL) cannot take the
 * kernel path with it: serve's epoll listener keeps answering whatever
 * reaches the kernel, and serve restarts the engine after a back-off, a
 * bounded number of times. A first child that cannot start fails serve.
 */
#define CHILD_RESTARTS_PER_MIN 5
#define CHILD_BACKOFF_MS 1000 /* doubled for each restart in the minute */

struct engine_child {
	const char *name; /* "afxdp", "dpdk": for the messages */
	const char *tier; /* the state file's tier while it runs */
	int stop_ms;	  /* SIGTERM, then SIGKILL after this */
	/* Fork the engine; -1 when it could not (said why). */
	pid_t (*spawn)(struct serve_args *a, void *ctx);
	/* The exit status says the engine never started. */
	bool (*nostart)(int status);
	/* After the child is gone (reaped): undo what it left; returns the
	 * words for the exit line ("interface restored, ") or "". */
	const char *(*cleanup)(struct serve_args *a, void *ctx);
	void *ctx;
};

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

/* Close every descriptor from 3 up but the ones in keep[]: the child must
 * not hold the parent's listeners, connections (a close by the parent
 * would send no FIN while the child holds a copy) or its bpf_link. */
static void close_fds_except(int *keep, int n)
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

static void describe_exit(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status %d", WEXITSTATUS(status));
}

/* SIGTERM, a bounded wait, then SIGKILL. Returns the exit status. */
static int stop_child(const struct engine_child *c, pid_t pid)
{
	struct timespec nap = {.tv_nsec = 20 * 1000 * 1000};
	int status = 0, i;

	kill(pid, SIGTERM);
	for (i = 0; i < c->stop_ms / 20; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		nanosleep(&nap, NULL);
	}
	pr_warn("%s engine pid %d did not stop in %d ms: killing it\n", c->name,
		(int)pid, c->stop_ms);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/*
 * Run the engine in a child and keep it running until SIGINT/SIGTERM: a
 * child that dies is cleaned up after and restarted after
 * CHILD_BACKOFF_MS, doubled for every restart in the last minute; after
 * CHILD_RESTARTS_PER_MIN of them the kernel path serves alone until serve
 * stops. A first child that cannot start fails serve.
 */
static int supervise_child(struct serve_args *a, const struct engine_child *c,
			   const struct epoll_engine *e)
{
	struct timespec nap = {.tv_nsec = 100 * 1000 * 1000};
	double restarts[CHILD_RESTARTS_PER_MIN] = {0}, restart_at = 0, now;
	int n_restarts = 0, recent, status, i, ret = 0;
	bool gave_up = false;
	const char *done;
	char why[32], tier[sizeof(serve_st.tier)];
	pid_t pid;

	pid = c->spawn(a, c->ctx);
	if (pid < 0) {
		c->cleanup(a, c->ctx);
		return 1;
	}
	serve_state_set(&serve_st, c->tier, pid);
	while (!serve_stop && !epoll_engine_failed(e)) {
		nanosleep(&nap, NULL); /* a signal cuts it short */
		if (serve_stop)
			break;
		now = mono_s();
		if (serve_usr1) {
			/* "print your counters": the engine's business */
			serve_usr1 = 0;
			if (pid > 0)
				kill(pid, SIGUSR1);
		}
		if (pid > 0) {
			if (waitpid(pid, &status, WNOHANG) != pid)
				continue;
			pid = 0;
			describe_exit(status, why, sizeof(why));
			done = c->cleanup(a, c->ctx);
			if (!n_restarts && c->nostart(status)) {
				pr_warn("%s engine could not start (%s)\n",
					c->name, why);
				return 1;
			}
			for (i = 0, recent = 0;
			     i < n_restarts && i < CHILD_RESTARTS_PER_MIN; i++)
				recent += now - restarts[i] < 60.0;
			if (recent >= CHILD_RESTARTS_PER_MIN) {
				printf("blitz: %s engine exited (%s): "
				       "%sserving "
				       "from the kernel path; %d restarts in "
				       "the last minute: staying on the kernel "
				       "path\n",
				       c->name, why, done, recent);
				gave_up = true;
				snprintf(tier, sizeof(tier),
					 "epoll (%s gave up)", c->name);
			} else {
				double wait = CHILD_BACKOFF_MS / 1000.0 *
					      (double)(1 << recent);

				printf("blitz: %s engine exited (%s): "
				       "%sserving "
				       "from the kernel path; restarting it in "
				       "%.0f s\n",
				       c->name, why, done, wait);
				restart_at = now + wait;
				snprintf(tier, sizeof(tier),
					 "epoll (%s restarting)", c->name);
			}
			fflush(stdout);
			serve_state_set(&serve_st, tier, 0);
			continue;
		}
		if (gave_up || now < restart_at)
			continue;
		restarts[n_restarts++ % CHILD_RESTARTS_PER_MIN] = now;
		pid = c->spawn(a, c->ctx);
		/* A failed fork leaves the kernel path serving. */
		if (pid < 0) {
			c->cleanup(a, c->ctx);
			gave_up = true;
			snprintf(tier, sizeof(tier), "epoll (%s failed)",
				 c->name);
			serve_state_set(&serve_st, tier, 0);
		} else {
			serve_state_set(&serve_st, c->tier, pid);
		}
	}
	if (pid > 0) {
		status = stop_child(c, pid);
		/* Ended by our SIGTERM itself (blitz-dpdk before its
		 * handlers are in place): stopped, as asked. */
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
			status = 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			describe_exit(status, why, sizeof(why));
			pr_warn("%s engine pid %d exited (%s)\n", c->name,
				(int)pid, why);
			ret = 1;
		}
	}
	/* A clean stop undid what the engine changed; check it anyway. */
	c->cleanup(a, c->ctx);
	return ret;
}

/*
 * The afxdp child: its AF_XDP sockets close when it dies, their xsks
 * entries go, the XDP program passes service traffic to the kernel
 * (pass_no_xsk) and serve's epoll listener answers it. The parent owns the
 * XDP attachment (a bpf_link of this process), so a SIGKILL of the parent
 * detaches it; the child then dies too (PR_SET_PDEATHSIG), never
 * lingering on sockets nothing redirects to.
 */
#define AFXDP_STOP_MS 3000
/* The child's exit status when the engine did not start. */
#define AFXDP_EXIT_NOSTART 2

/* The child's whole life: serve until SIGINT/SIGTERM, never return. */
static void __attribute__((noreturn))
afxdp_child(struct serve_args *a, struct blitz_loaded *l, pid_t parent)
{
	struct afxdp_engine_opts xo = {
		.ifname = a->ifname,
		.queues = a->queues,
		.xsks_fd = blitz_loaded_xsks_fd(l),
		.svc = &a->svc,
		.resp = &a->resp,
		.cpu_first = -1,
		.counters_fd = blitz_loaded_counters_fd(l),
	};
	int keep[2] = {xo.xsks_fd, xo.counters_fd};

	/* A SIGKILLed parent took the XDP program with it: go too. The
	 * getppid() check closes the race with a parent dying before. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	close_fds_except(keep, 2);
	prctl(PR_SET_NAME, "blitz-afxdp"); /* what ps and top show */
	/* Only this thread survived fork(); the handlers are the parent's
	 * (on_signal), the flag is this process's own copy. */
	serve_stop = 0;
	/* The exit status says whether the engine started: it returns an
	 * error only when it could not (see afxdp_engine_run). */
	if (afxdp_engine_run(&xo, &serve_stop)) {
		fflush(stdout);
		_exit(AFXDP_EXIT_NOSTART);
	}
	fflush(stdout);
	fflush(stderr);
	_exit(0); /* not exit(): the parent's atexit handlers are not ours */
}

static pid_t afxdp_spawn(struct serve_args *a, void *ctx)
{
	pid_t parent = getpid(), pid;

	fflush(stdout); /* or the child prints the parent's buffer again */
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		pr_warn("fork (afxdp engine): %s\n", strerror(errno));
		return -1;
	}
	if (!pid)
		afxdp_child(a, ctx, parent);
	if (a->queues)
		printf("blitz: afxdp engine pid %d on %s queues 0-%d\n",
		       (int)pid, a->ifname, a->queues - 1);
	else
		printf("blitz: afxdp engine pid %d on %s (every RX queue)\n",
		       (int)pid, a->ifname);
	fflush(stdout);
	return pid;
}

static bool afxdp_nostart(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == AFXDP_EXIT_NOSTART;
}

/* Nothing to undo: the kernel closed the dead child's sockets. */
static const char *afxdp_cleanup(struct serve_args *a, void *ctx)
{
	(void)a;
	(void)ctx;
	return "";
}

/*
 * The dpdk engine: blitz-dpdk, forked and exec'd by serve. On a kernel
 * interface (the af_packet PMD) it takes the interface over: its
 * addresses and routes move to a TAP and it gets disable_ipv6=1,
 * rp_filter=1, arp_ignore=8, accept_ra=0 (dpdk/takeover.c); blitz-dpdk
 * gives them back only on a clean exit. So serve records the interface as
 * it was before the first child and puts it back after every child,
 * whatever killed it: the kernel then owns the NIC again and serve's epoll
 * listener (bound before the takeover, on the wildcard unless -a) answers
 * on it until the engine is restarted.
 *
 *   blitz serve (epoll listener, interface record, supervisor)
 *     `- blitz-dpdk child (EAL, af_packet port, TAP), --engine dpdk
 */
#define DPDK_STOP_MS 8000 /* EAL teardown and the restore take a while */

struct dpdk_child {
	char *args[MAX_FWD + 32];
	char bin[PATH_MAX + 16], vdev[IF_NAMESIZE + 96], port[16],
		prefix[IF_NAMESIZE + 16], tap[IF_NAMESIZE], lcores[256];
	struct netif_state st;
};

/* "-l" for EAL: the first n CPUs this process may run on, one lcore per
 * queue (so `taskset` still decides where the engine runs). */
static void dpdk_lcores(int n, char *buf, size_t len)
{
	cpu_set_t set;
	size_t off = 0;
	int cpu, k = 0;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set))
		CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE && k < n && off + 8 < len; cpu++)
		if (CPU_ISSET(cpu, &set))
			off += (size_t)snprintf(buf + off, len - off, "%s%d",
						k++ ? "," : "", cpu);
	if (!k)
		snprintf(buf, len, "0");
}

/*
 * blitz-dpdk lives next to the blitz binary. With an interface name the
 * port is that kernel interface through the af_packet PMD, so blitz-dpdk
 * takes it over (--takeover: its addresses move to a TAP, the exception
 * path; see dpdk/engine.h). EAL runs without hugepages (--no-huge is
 * refused together with --in-memory, hence --no-shconf and a file prefix
 * per interface).
 */
static int dpdk_args(struct serve_args *a, struct dpdk_child *d)
{
	char self[PATH_MAX], *slash;
	int i, k = 0, nq = a->queues > 0 ? a->queues : 1;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		pr_warn("cannot find the blitz binary: %s\n", strerror(errno));
		return -1;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		slash[1] = '\0';
	snprintf(d->bin, sizeof(d->bin), "%s%s", slash ? self : "./", DPDK_BIN);
	if (access(d->bin, X_OK)) {
		pr_warn("dpdk engine not available: %s not found (build it "
			"with `make`; needs libdpdk-dev)\n",
			d->bin);
		return -1;
	}
	snprintf(d->vdev, sizeof(d->vdev),
		 "--vdev=net_af_packet0,iface=%s,qpairs=%d,qdisc_bypass=1",
		 a->ifname, nq);
	snprintf(d->prefix, sizeof(d->prefix), "blitz-%s", a->ifname);
	snprintf(d->tap, sizeof(d->tap), "bz%.*s", IF_NAMESIZE - 3, a->ifname);
	snprintf(d->port, sizeof(d->port), "%u", a->svc.port);
	dpdk_lcores(nq, d->lcores, sizeof(d->lcores));
	d->args[k++] = d->bin;
	d->args[k++] = "--no-huge";
	d->args[k++] = "-m";
	d->args[k++] = "512";
	d->args[k++] = "--no-pci";
	d->args[k++] = "--no-shconf";
	d->args[k++] = "--no-telemetry";
	d->args[k++] = "--file-prefix";
	d->args[k++] = d->prefix;
	d->args[k++] = "-l";
	d->args[k++] = d->lcores;
	d->args[k++] = d->vdev;
	d->args[k++] = "--";
	d->args[k++] = "-p";
	d->args[k++] = d->port;
	d->args[k++] = "--takeover";
	d->args[k++] = (char *)a->ifname;
	d->args[k++] = "--tap";
	d->args[k++] = d->tap;
	if (blitz_log_level >= LOG_DEBUG)
		d->args[k++] = "-v";
	for (i = 0; i < a->n_fwd; i++) {
		/* -p is given above from the parsed value; drop duplicates. */
		if (!strcmp(a->fwd[i], "-p") || !strcmp(a->fwd[i], "--port")) {
			i++;
			continue;
		}
		if (!strncmp(a->fwd[i], "-p", 2) ||
		    !strncmp(a->fwd[i], "--port=", 7))
			continue;
		d->args[k++] = a->fwd[i];
	}
	d->args[k] = NULL;
	return 0;
}

static pid_t dpdk_spawn(struct serve_args *a, void *ctx)
{
	struct dpdk_child *d = ctx;
	pid_t parent = getpid(), pid;
	int i;

	printf("blitz: dpdk engine: exec");
	for (i = 0; d->args[i]; i++)
		printf(" %s", d->args[i]);
	printf("\n");
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		pr_warn("fork (dpdk engine): %s\n", strerror(errno));
		return -1;
	}
	if (!pid) {
		/* A dead serve cannot restore the interface: blitz-dpdk
		 * must then stop and restore it itself (SIGTERM). The
		 * death signal survives execv. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
			_exit(1);
		close_fds_except(NULL, 0);
		signal(SIGPIPE, SIG_DFL);
		execv(d->bin, d->args);
		fprintf(stderr, "blitz: cannot run %s: %s\n", d->bin,
			strerror(errno));
		_exit(127);
	}
	printf("blitz: dpdk engine pid %d on %s\n", (int)pid, a->ifname);
	fflush(stdout);
	return pid;
}

/* blitz-dpdk exits non-zero only when its setup failed; at run time it
 * stops on a signal (0 after SIGINT/SIGTERM, a crash by the signal). */
static bool dpdk_nostart(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status);
}

/* The TAP goes with the process that opened it; a leftover one (net_tap
 * not done closing, or persistent) would make the next start refuse. */
static void dpdk_drop_tap(const struct dpdk_child *d)
{
	const char *const del[] = {"link", "del", "dev", d->tap, NULL};
	struct timespec nap = {.tv_nsec = 50 * 1000 * 1000};
	int i;

	for (i = 0; i < 20 && if_nametoindex(d->tap); i++)
		nanosleep(&nap, NULL);
	if (if_nametoindex(d->tap) && netif_run_ip(del, NULL, NULL, 0))
		pr_warn("dpdk engine left its TAP %s: `ip link del %s`\n",
			d->tap, d->tap);
}

static const char *dpdk_cleanup(struct serve_args *a, void *ctx)
{
	struct dpdk_child *d = ctx;

	dpdk_drop_tap(d);
	if (netif_restore(&d->st)) {
		pr_warn("%s: could not restore all of its addresses, routes "
			"and settings (see `ip addr show %s`)\n",
			a->ifname, a->ifname);
		return "interface restored in part, ";
	}
	return "interface restored, ";
}

static int serve_dpdk(struct serve_args *a)
{
	struct engine_child c = {
		.name = "dpdk",
		.tier = "dpdk+epoll",
		.stop_ms = DPDK_STOP_MS,
		.spawn = dpdk_spawn,
		.nostart = dpdk_nostart,
		.cleanup = dpdk_cleanup,
	};
	struct epoll_engine *e;
	struct dpdk_child *d;
	int ret;

	d = calloc(1, sizeof(*d));
	if (!d) {
		pr_warn("out of memory\n");
		return 1;
	}
	c.ctx = d;
	if (dpdk_args(a, d)) {
		free(d);
		return 1;
	}
	/* Another engine on this interface: its TAP is there and the
	 * interface is not in the state to record (nor is that TAP ours to
	 * remove after a child of ours). */
	if (if_nametoindex(d->tap)) {
		pr_warn("interface %s already exists: another `blitz serve %s "
			"--engine dpdk` (or blitz-dpdk) running?\n",
			d->tap, a->ifname);
		free(d);
		return 1;
	}
	if (netif_record(&d->st, a->ifname)) {
		free(d);
		return 1;
	}
	/* Bound before the takeover: the listeners stay when the addresses
	 * move, and answer on the interface once they are back. */
	if (epoll_engine_start(&a->eo, &e)) {
		free(d);
		return 1;
	}
	say_epoll_limits(e);
	/* blitz-dpdk prints its counters on SIGUSR1; serve passes it on. */
	install_usr1();
	printf("blitz: serving on %s port %u: tier dpdk + epoll fallback\n",
	       a->ifname, a->svc.port);
	fflush(stdout);
	ret = supervise_child(a, &c, e);
	if (stop_epoll(e, true))
		ret = 1;
	free(d);
	return ret;
}

/*
 * xdp (or afxdp) on the interface, epoll listening behind it. The epoll
 * listeners come first: the fast path hands connections to them.
 */
static int serve_fast(struct serve_args *a)
{
	struct blitz_loader_opts lo = {
		.ifname = a->ifname,
		.xdp_mode = a->xdp_mode,
		.engine = a->engine == ENG_AFXDP ? BLITZ_MODE_AFXDP
						 : BLITZ_MODE_XDP,
		.persist = false,
		.svc = &a->svc,
		.resp = a->engine == ENG_AFXDP ? NULL : &a->resp,
	};
	struct tc_handoff *h = NULL;
	struct blitz_loaded *l = NULL;
	struct epoll_engine *e;
	int ret = 0, fd;

	if (epoll_engine_start(&a->eo, &e))
		return 1;
	say_epoll_limits(e);
	blitz_log_quiet_libs();
	ret = blitz_loader_attach(&lo, &l);
	if (ret) {
		if (a->engine != ENG_AUTO) {
			stop_epoll(e, false);
			return 1;
		}
		/* -EEXIST: a `blitz load` program is there and passes what it
		 * does not answer to us; otherwise the kernel path alone. */
		printf("blitz: serving on %s port %u: tier epoll (%d threads)%s"
		       "\n",
		       a->ifname, epoll_engine_port(e), epoll_engine_threads(e),
		       ret == -EEXIST ? " behind the XDP program `blitz load` "
					"left there"
				      : ": no XDP");
		fflush(stdout);
		serve_state_set(&serve_st,
				ret == -EEXIST ? "epoll (behind blitz load)"
					       : "epoll",
				0);
		wait_for_stop(e);
		return stop_epoll(e, true) ? 1 : 0;
	}

	if (a->engine == ENG_AFXDP) {
		struct engine_child c = {
			.name = "afxdp",
			.tier = "afxdp+epoll",
			.stop_ms = AFXDP_STOP_MS,
			.spawn = afxdp_spawn,
			.nostart = afxdp_nostart,
			.cleanup = afxdp_cleanup,
			.ctx = l,
		};

		printf("blitz: serving on %s port %u: tier afxdp (%s) + epoll "
		       "fallback\n",
		       a->ifname, a->svc.port, blitz_loaded_mode(l));
		fflush(stdout);
		ret = supervise_child(a, &c, e);
	} else {
		char tier[sizeof(serve_st.tier)];

		h = attach_handoff(a, l);
		printf("blitz: serving on %s port %u: tier xdp (%s) + epoll "
		       "fallback\n",
		       a->ifname, a->svc.port, blitz_loaded_mode(l));
		fflush(stdout);
		snprintf(tier, sizeof(tier), "xdp-%s+epoll",
			 blitz_loaded_mode(l));
		serve_state_set(&serve_st, tier, 0);
		wait_for_stop(e);
	}

	/* New connections then reach the kernel listener until it stops. */
	fd = blitz_loaded_counters_fd(l);
	if (a->engine != ENG_AFXDP)
		printf("xdp: %llu requests answered in the driver, %llu "
		       "segments handed to the kernel\n",
		       xdp_counter(fd, BLITZ_CNT_REQUESTS),
		       xdp_counter(fd, BLITZ_CNT_HANDOFF));
	if (h && tc_handoff_detach(h))
		ret = 1;
	if (blitz_loader_detach(l))
		ret = 1;
	if (stop_epoll(e, true))
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
	install_signals();
	serve_state_init(&serve_st, a.ifname, &a.svc);
	switch (a.engine) {
	case ENG_DPDK:
		ret = serve_dpdk(&a);
		break;
	case ENG_EPOLL:
		ret = serve_epoll_alone(&a, "");
		break;
	default:
		ret = serve_fast(&a);
		break;
	}
	serve_state_remove(&serve_st);
	service_free(&a.svc);
	return ret;
}
