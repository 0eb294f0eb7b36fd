// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_stats.c - `blitz stats <ifname> [-i seconds] [-c count] [--json]`:
 * the xdp engine's per-CPU counters summed over CPUs, as totals, and with
 * -i as per-second rates every interval until SIGINT (or -c intervals).
 *
 * The map's table is titled with whose counters they are (counters_xdp.h):
 * the xdp engine's, or in afxdp mode its XDP program's, the answers being
 * in the afxdp engine's own table; --json and -i give the interface's
 * totals (in afxdp mode the map plus what the engine's TCP cores counted).
 *
 * Owns: reading the pinned "counters" map (BLITZ_PIN_COUNTERS) and printing it.
 * Read-only: must never write a counter or touch the attachment.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "counters.h"
#include "counters_xdp.h"
#include "loader.h"
#include "log.h"
#include "prometheus.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

enum { OPT_JSON = OPT_CMD_BASE, OPT_PROMETHEUS };

static const struct opt_spec stats_opts[] = {
	{'i', "interval", "SEC",
	 "print per-second rates every SEC seconds until Ctrl-C", 0, 0},
	{'c', "count", "N", "stop after N intervals", 0, 0},
	{OPT_PROMETHEUS, "prometheus", NULL,
	 "every engine's counters (without <ifname>: every interface's and "
	 "every serve's) in the Prometheus text format",
	 0, 0},
	{OPT_JSON, "json", NULL, "one JSON object (one per interval with -i)",
	 0, 0},
	{0},
};

const struct cmd_spec cmd_stats_spec = {
	.name = "stats",
	.operands = "[<ifname>]",
	.summary = "show every engine's counters and rates",
	.about =
		"Show every engine's counters on <ifname>: its XDP program's "
		"(the xdp engine, or afxdp's redirect), summed over CPUs, then "
		"those of every userspace engine a serve runs on it (epoll, "
		"afxdp, dpdk: the counter registry under /run/blitz). Without "
		"<ifname>: every engine of every interface. With -v, -i also "
		"prints the counters that are zero. An event has one name in "
		"every engine (requests, http_errors, connections_opened, "
		"rx_frames, ...); --prometheus names it blitz_<name>_total "
		"with labels interface and engine, pass_X and drop_X as "
		"blitz_passed_total and blitz_dropped_total with reason X. "
		"Before 1.0 names may still change.",
	.groups = {stats_opts, options_common},
};

/* Sum every counter over the possible CPUs. */
static int read_totals(int fd, const char *ifname, uint64_t tot[BLITZ_CNT_MAX])
{
	int err = counters_xdp_read(fd, tot);

	if (err)
		pr_warn("cannot read the counters of %s: %s\n", ifname,
			counters_xdp_strerror(err));
	return err;
}

/* The interface's totals in the map's vocabulary (--json, -i): in afxdp
 * mode, with what the engine's TCP cores answered (counters_xdp.h). */
static int read_interface(int fd, const char *ifname, bool afxdp,
			  uint64_t tot[BLITZ_CNT_MAX])
{
	int err = read_totals(fd, ifname, tot);

	if (!err && afxdp)
		counters_xdp_add_afxdp(ifname, tot);
	return err;
}

/* Pins are global, interfaces are per network namespace: say whose
 * counters these are when they are not this namespace's. */
static void warn_other_owner(const char *ifname)
{
	struct blitz_attached a = {0};
	__u32 user = 0;
	int ifindex = 0;

	if (strlen(ifname) < IF_NAMESIZE)
		ifindex = (int)if_nametoindex(ifname);
	if (ifindex > 0 && blitz_find_attached(ifindex, &a))
		memset(&a, 0, sizeof(a));
	switch (blitz_pins_owner(ifname, a.prog_id, &user)) {
	case BLITZ_PINS_OTHER_NETNS:
		pr_warn("note: these are the counters of %s in another "
			"network namespace (prog id %u)\n",
			ifname, user);
		break;
	case BLITZ_PINS_STALE:
		pr_warn("note: nothing is attached to %s any more; these are "
			"its last counters (`blitz unload %s` removes them)\n",
			ifname, ifname);
		break;
	default:
		break;
	}
}

static void print_json(const char *ifname, const uint64_t *tot,
		       const double *rate, double secs)
{
	int k;

	printf("{\"interface\":\"%s\",", ifname);
	if (rate)
		printf("\"interval_s\":%.3f,", secs);
	printf("\"counters\":{");
	for (k = 0; k < BLITZ_CNT_MAX; k++)
		printf("%s\"%s\":%llu", k ? "," : "", counters_xdp_name(k),
		       (unsigned long long)tot[k]);
	printf("}");
	if (rate) {
		printf(",\"rates\":{");
		for (k = 0; k < BLITZ_CNT_MAX; k++)
			printf("%s\"%s\":%.1f", k ? "," : "",
			       counters_xdp_name(k), rate[k]);
		printf("}");
	}
	printf("}\n");
	fflush(stdout);
}

/*
 * The map's table, titled with whose counters they are. In afxdp mode the
 * program answers nothing: its rows are what it saw, redirected, passed
 * and dropped; the answers are in the afxdp engine's own table (the rows
 * the program leaves to it are left out here, not shown as zeros).
 */
static void print_totals(const char *ifname, const uint64_t *tot, bool afxdp)
{
	unsigned int k;

	if (afxdp)
		printf("afxdp on %s: its XDP program (the answers are in the "
		       "engine's table)\n",
		       ifname);
	else
		printf("xdp on %s\n", ifname);
	printf("%-18s %20s  %s\n", "COUNTER", "TOTAL", ifname);
	for (k = 0; k < BLITZ_CNT_MAX; k++)
		if (!afxdp || !counters_xdp_afxdp_key(k))
			printf("%-18s %20llu  %s\n", counters_xdp_name(k),
			       (unsigned long long)tot[k],
			       counters_xdp_help(k));
}

static void print_rates(const uint64_t *tot, const double *rate, bool all)
{
	char when[16];
	time_t now = time(NULL);
	struct tm tm;
	int k;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("%s  %-18s %20s %14s\n", when, "COUNTER", "TOTAL", "PER SEC");
	for (k = 0; k < BLITZ_CNT_MAX; k++)
		if (all || tot[k])
			printf("%8s  %-18s %20llu %14.1f\n", "",
			       counters_xdp_name(k), (unsigned long long)tot[k],
			       rate[k]);
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The userspace engines' counters (counters.h) on ifname (NULL: every
 * one), one table each, under the serve that runs them. */
static int print_area(const struct counters_area *a, void *ctx)
{
	const char *ifname = ctx;
	unsigned int k;

	if (ifname && strcmp(a->hdr->ifname, ifname))
		return 0;
	printf("\nserve pid %lld on %s: engine %s\n", (long long)a->hdr->pid,
	       a->hdr->ifname[0] ? a->hdr->ifname : "every interface",
	       a->hdr->engine);
	printf("%-18s %20s  %s\n", "COUNTER", "TOTAL", a->hdr->engine);
	for (k = 0; k < a->hdr->n_counters; k++)
		printf("%-18s %20llu  %s\n", a->defs[k].name,
		       (unsigned long long)counters_sum(a, k), a->defs[k].help);
	return 0;
}

struct count_ctx {
	const char *ifname;
	int n;
};

static int count_area(const struct counters_area *a, void *ctx)
{
	struct count_ctx *c = ctx;

	if (!c->ifname || !strcmp(a->hdr->ifname, c->ifname))
		c->n++;
	return 0;
}

/* How many tables were printed. */
static int print_areas(const char *ifname)
{
	struct count_ctx c = {ifname, 0};

	counters_each(count_area, &c);
	if (c.n)
		counters_each(print_area, (void *)ifname);
	return c.n;
}

/* `blitz stats` alone: under load (and serve's xdp), every pinned
 * interface's XDP counters; under serve, every userspace engine's. */
static int print_everything(void)
{
	uint64_t tot[BLITZ_CNT_MAX];
	struct dirent *de;
	int fd, shown = 0;
	DIR *d;

	if (blitz_check_privileges() || blitz_check_bpffs())
		return -1;
	d = opendir(BLITZ_PIN_ROOT);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = counters_xdp_open(de->d_name);
		if (fd == -EPROTO)
			pr_warn("cannot read the counters of %s: %s\n",
				de->d_name, counters_xdp_strerror(fd));
		if (fd < 0)
			continue;
		if (!read_totals(fd, de->d_name, tot)) {
			if (shown++)
				printf("\n");
			print_totals(de->d_name, tot,
				     counters_xdp_is_afxdp(de->d_name));
		}
		close(fd);
	}
	if (d)
		closedir(d);
	shown += print_areas(NULL);
	if (!shown)
		printf("no engine is running: see `blitz status`\n");
	return 0;
}

struct stats_args {
	long interval, count;
	bool json, verbose, prometheus;
};

/* One of stats' options into ctx (struct stats_args): cli_parse_opts. */
static int stats_opt(int opt, char *arg, void *ctx)
{
	struct stats_args *a = ctx;
	char *end;
	int k;

	switch (opt) {
	case 'i':
	case 'c':
		errno = 0;
		k = (int)strtol(arg, &end, 10);
		if (errno || *end || end == arg || k < 1 || k > 86400) {
			pr_warn("bad %s '%s': a whole number from 1 to 86400\n",
				opt == 'i' ? "interval" : "count", arg);
			return -1;
		}
		if (opt == 'i')
			a->interval = k;
		else
			a->count = k;
		return 1;
	case OPT_JSON:
		a->json = true;
		return 1;
	case OPT_PROMETHEUS:
		a->prometheus = true;
		return 1;
	case 'v': /* also print the zero counters with -i; and -v itself */
		a->verbose = true;
		return 0;
	default:
		return 0;
	}
}

/* The options into a; CLI_CONTINUE, or the verb's exit status. */
static int parse_args(int argc, char **argv, struct stats_args *a)
{
	return cli_parse(&cmd_stats_spec, argc, argv, stats_opt, a, 0, 1);
}

/* --prometheus: every engine's counters, or only's. */
static int print_prometheus(const char *only)
{
	blitz_log_quiet_libs();
	/* Nothing at all is a scrape of no engine; nothing for a named
	 * interface is a mistake (it printed nothing, rc 0). */
	if (!prometheus_write(stdout, only, 1, 0) && only) {
		pr_warn("no engine runs on %s: see `blitz status`\n", only);
		return 1;
	}
	return 0;
}

/* -i: the rates every interval until SIGINT or count intervals; tot holds
 * the totals read last. 0, or -1 when a read failed. */
static int watch_rates(int fd, const char *ifname, bool afxdp,
		       const struct stats_args *a, uint64_t tot[BLITZ_CNT_MAX])
{
	uint64_t prev[BLITZ_CNT_MAX];
	double rate[BLITZ_CNT_MAX], t0, t1, secs;
	long done = 0, k;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = now_s();
	while (!stop && (!a->count || done < a->count)) {
		memcpy(prev, tot, sizeof(prev));
		/* Sleep in small steps so Ctrl-C ends at once. */
		for (k = 0; k < a->interval * 10 && !stop; k++)
			usleep(100000);
		if (stop)
			break;
		if (read_interface(fd, ifname, afxdp, tot))
			return -1;
		t1 = now_s();
		secs = t1 - t0;
		t0 = t1;
		for (k = 0; k < BLITZ_CNT_MAX; k++)
			rate[k] = secs > 0 ? (double)(tot[k] - prev[k]) / secs
					   : 0;
		if (a->json)
			print_json(ifname, tot, rate, secs);
		else
			print_rates(tot, rate, a->verbose);
		done++;
	}
	return 0;
}

/* The counters of the map pinned for ifname (fd): the table, the JSON
 * object or the rates. 0, or -1 with a line said. */
static int print_interface(int fd, const char *ifname,
			   const struct stats_args *a)
{
	uint64_t tot[BLITZ_CNT_MAX];
	int err = -1;
	bool afxdp;

	afxdp = counters_xdp_is_afxdp(ifname);
	if (!a->interval && !a->json) {
		err = read_totals(fd, ifname, tot);
		if (!err) {
			print_totals(ifname, tot, afxdp);
			print_areas(ifname);
		}
	} else if (!read_interface(fd, ifname, afxdp, tot)) {
		err = 0;
		if (!a->interval)
			print_json(ifname, tot, NULL, 0);
		else
			err = watch_rates(fd, ifname, afxdp, a, tot);
	}
	return err ? -1 : 0;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_args a = {0};
	char path[PATH_MAX];
	const char *ifname;
	int fd, ret;

	ret = parse_args(argc, argv, &a);
	if (ret != CLI_CONTINUE)
		return ret;
	if (a.prometheus)
		return print_prometheus(optind < argc ? argv[optind] : NULL);
	if (optind == argc) {
		if (a.interval || a.json) {
			pr_warn("-i and --json need <ifname>: blitz stats "
				"<ifname> -i 1\n");
			return 1;
		}
		return print_everything() ? 1 : 0;
	}
	if (a.count && !a.interval) {
		pr_warn("-c counts intervals: give -i too\n");
		return 1;
	}
	ifname = argv[optind];
	blitz_log_quiet_libs();
	if (blitz_check_privileges() || blitz_check_bpffs())
		return 1;
	fd = counters_xdp_open(ifname);
	if (fd == -EINVAL) {
		pr_warn("no interface '%s': see `ip link`\n", ifname);
		return 1;
	}
	if (fd == -EPROTO) {
		warn_other_owner(ifname);
		pr_warn("cannot read the counters of %s: %s\n", ifname,
			counters_xdp_strerror(fd));
		return 1;
	}
	if (fd < 0 && !a.interval && !a.json && print_areas(ifname))
		return 0; /* a serve with no XDP program (dpdk, epoll) */
	if (fd < 0) {
		blitz_pin_path(path, sizeof(path), ifname, BLITZ_PIN_COUNTERS);
		pr_warn("not loaded on %s (no %s): see `blitz "
			"status`\n",
			ifname, path);
		return 1;
	}
	warn_other_owner(ifname);
	ret = print_interface(fd, ifname, &a) ? 1 : 0;
	close(fd);
	return ret;
}
