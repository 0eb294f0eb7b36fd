// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - blitz-dpdk: options, EAL, mempool, ports, one lcore per queue,
 * clean shutdown. See engine.h for the design and the addressing choice.
 *
 *   blitz-dpdk [EAL args] -- [-p port] [-a addr]... [--body TEXT |
 *              --body-file FILE] [--content-type TYPE] [--tap IFNAME]
 *              [--takeover IFNAME] [--table N] [--learn arp|all]
 *              [--stats SECONDS] [--busy-poll] [-v]
 *
 * Owns: the process: argument parsing (EAL's, then ours after `--`, as in
 * the DPDK examples), setup in order and teardown in reverse, the signal
 * handlers (SIGINT/SIGTERM set force_quit), and the exit report.
 * Must never: run the packet path itself (lcore.c does, on every lcore
 * including the main one).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_version.h>

#include "dpdk_options.h"
#include "dpdk_engine.h"
#include "kernel_drop.h"
#include "veth_mss.h"
#include "log.h"
#include "tcp_core.h"

/* The help text (dpdk_options.c) states the spin before an idle sleep. */
_Static_assert(IDLE_SPIN_US == DPDK_IDLE_SPIN_US, "idle spin and its help");

volatile bool force_quit;
volatile bool stats_now;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		stats_now = true;
	else
		force_quit = true;
}

static int parse_uint(const char *what, const char *arg, unsigned long max,
		      unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *out > max) {
		pr_warn("bad %s '%s': give a number up to %lu\n", what, arg,
			max);
		return -1;
	}
	return 0;
}

/* Our options, after EAL's. 0: go on; 1: exit 0 (help); -1: exit 1. */
static int parse_args(struct engine *eng, int argc, char **argv)
{
	struct option longopts[OPTS_MAX + 1];
	char shortopts[2 * OPTS_MAX + 2];
	unsigned long v;
	int opt, r;

	eng->learn_from_ip = true;
	if (options_getopt(&dpdk_cmd_spec, longopts, OPTS_MAX + 1, shortopts,
			   sizeof(shortopts)))
		return -1;
	optind = 1; /* EAL used getopt before us */
	opterr = 0; /* one line of ours instead */
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	       -1) {
		r = options_service_apply(&eng->svc, opt, optarg);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (opt) {
		case DPDK_OPT_TAP:
			eng->tap_ifname = optarg;
			break;
		case DPDK_OPT_TABLE:
			if (parse_uint("--table", optarg, 1u << 24, &v))
				return -1;
			eng->table_size = (uint32_t)v;
			break;
		case DPDK_OPT_IDLE:
			if (parse_uint("--idle-timeout", optarg, 86400, &v))
				return -1;
			if (!v) {
				pr_warn("bad --idle-timeout '0': give 1 to "
					"86400 seconds\n");
				return -1;
			}
			eng->idle_ms = (uint32_t)v * 1000;
			break;
		case DPDK_OPT_STATS:
			if (parse_uint("--stats", optarg, 3600, &v))
				return -1;
			eng->stats_interval = (unsigned int)v;
			break;
		case DPDK_OPT_TAKEOVER:
			eng->takeover_if = optarg;
			break;
		case DPDK_OPT_BUSY_POLL:
			eng->busy_poll = true;
			break;
		case DPDK_OPT_LEARN:
			if (strcmp(optarg, "arp") && strcmp(optarg, "all")) {
				pr_warn("bad --learn '%s': use arp or all\n",
					optarg);
				return -1;
			}
			eng->learn_from_ip = !strcmp(optarg, "all");
			break;
		case 'v':
			blitz_log_level++;
			break;
		case 'h':
			options_usage(&dpdk_cmd_spec, stdout);
			return 1;
		case OPT_VERSION:
			printf("blitz-dpdk %s (DPDK %s)\n", BLITZ_VERSION,
			       rte_version());
			return 1;
		case ':':
			pr_warn("option '%s' needs a value: see `%s -- "
				"--help`\n",
				argv[optind - 1], argv[0]);
			return -1;
		default:
			pr_warn("unknown option '%s': see `%s -- --help`\n",
				argv[optind - 1], argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		pr_warn("unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (service_finish(&eng->svc))
		return -1;
	if (eng->takeover_if && !eng->tap_ifname) {
		pr_warn("--takeover needs --tap IFNAME: the interface's "
			"addresses move to that TAP\n");
		return -1;
	}
	/* The interface's own addresses are the service's unless -a. */
	if (eng->takeover_if && takeover_prepare(eng->takeover_if, &eng->svc))
		return -1;
	if (!eng->svc.n_addr4 && !eng->svc.n_addr6) {
		pr_warn("give the service address with -a ADDR (or "
			"--takeover IFNAME): DPDK owns the port, so it has no "
			"kernel address to serve\n");
		return -1;
	}
	eng->n_addr4 = eng->svc.n_addr4;
	for (int i = 0; i < eng->n_addr4; i++)
		eng->addr4_be[i] = eng->svc.addr4[i].s_addr;
	eng->n_addr6 = eng->svc.n_addr6;
	for (int i = 0; i < eng->n_addr6; i++)
		memcpy(eng->addr6[i], &eng->svc.addr6[i], 16);
	eng->port_be = rte_cpu_to_be_16(eng->svc.port);
	return 0;
}

void engine_print_stats(const struct engine *eng, bool final)
{
	struct tcp_core_counters core = {0};
	struct dpdk_stats sum = {0};
	uint16_t q;

	for (q = 0; q < eng->nb_queues; q++) {
		struct worker *w = &eng->workers[q];
		const struct tcp_core_counters *c;

#define DPDK_CNT_ADD(id, help) sum.id += w->st.id;
		DPDK_COUNTERS(DPDK_CNT_ADD)
#undef DPDK_CNT_ADD
		if (!w->tcp)
			continue;
		c = tcp_glue_counters(w);
#define CORE_CNT_ADD(id, help) core.id += c->id;
		TCP_CORE_COUNTERS(CORE_CNT_ADD)
#undef CORE_CNT_ADD
	}
	printf("%s:", final ? "totals" : "stats");
#define DPDK_CNT_PRINT(id, help) \
	if (sum.id)              \
		printf(" %s=%" PRIu64, #id, sum.id);
	DPDK_COUNTERS(DPDK_CNT_PRINT)
#undef DPDK_CNT_PRINT
#define CORE_CNT_PRINT(id, help) \
	if (core.id)             \
		printf(" tcp.%s=%" PRIu64, #id, core.id);
	TCP_CORE_COUNTERS(CORE_CNT_PRINT)
#undef CORE_CNT_PRINT
	if (final) {
		struct rte_eth_stats ps;

		/* Frames the port's RX ring had no room for (af_packet: the
		 * kernel's tp_drops), never seen by any counter above. */
		if (!rte_eth_stats_get(eng->port_id, &ps) &&
		    (ps.imissed || ps.ierrors))
			printf(" port.imissed=%" PRIu64
			       " port.ierrors=%" PRIu64,
			       ps.imissed, ps.ierrors);
	}
	printf("\n");
	for (q = 0; final && eng->nb_queues > 1 && q < eng->nb_queues; q++) {
		const struct worker *w = &eng->workers[q];

		printf("queue %u: lcore=%u rx=%" PRIu64 " tx=%" PRIu64
		       " requests=%" PRIu64 "\n",
		       q, w->lcore, w->st.rx_frames, w->st.tx_frames,
		       w->tcp ? tcp_core_counters(w->tcp)->requests : 0);
	}
	if (final) {
		double busy_ns =
			(double)sum.busy_cycles * 1e9 / (double)eng->tsc_hz;
		double eng_ns =
			(double)sum.engine_cycles * 1e9 / (double)eng->tsc_hz;
		double rq = core.requests ? (double)core.requests : 1.0;

		/* busy: whole polls that did work, PMD included (af_packet:
		 * its syscalls, and the veth peer's stack run inside them);
		 * engine: blitz's classification and TCP core alone. */
		printf("requests=%" PRIu64 " busy_ns=%.0f ns_per_request=%.0f "
		       "engine_ns_per_request=%.0f\n",
		       core.requests, busy_ns, busy_ns / rq, eng_ns / rq);
	}
	fflush(stdout);
}

/* After the ports started (their sockets exist) and before the lcores
 * run: find what wakes an idle lcore, and say what the lcores will do. */
static void idle_report(struct engine *eng)
{
	char ifname[IF_NAMESIZE];
	bool xdp = false;
	int n = 0;

	if (port_kernel_ifname(eng->port_id, ifname, sizeof(ifname), &xdp))
		n = idle_setup(eng, ifname, xdp);
	if (eng->busy_poll)
		printf("blitz-dpdk: the lcores busy-poll (--busy-poll)\n");
	else if (n)
		printf("blitz-dpdk: an lcore sleeps in poll() after %d us "
		       "without work (%d kernel descriptor(s) wake it)\n",
		       IDLE_SPIN_US, n);
	else
		printf("blitz-dpdk: the lcores busy-poll (the port has no "
		       "kernel socket to wake them)\n");
}

static struct rte_mempool *make_pool(uint16_t nb_queues, bool tap)
{
	/* Descriptors of every RX/TX ring (the TAP's too), the staging
	 * arrays and the TCP core's TX batches, per queue, with slack. */
	unsigned int per_q = (RX_DESC + TX_DESC) * (tap ? 2 : 1) + 2 * TXBUF +
			     2 * TCP_CORE_TX_BATCH + 2 * BURST;
	unsigned int n = 2 * per_q * nb_queues;

	return rte_pktmbuf_pool_create("blitz_mbufs", n, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
}

/*
 * One queue per lcore, as many as the port has: extra lcores stay idle
 * (with a note) rather than failing, so plain EAL defaults (every core)
 * work on a one-queue port. 0 on error.
 */
static uint16_t queues_for_lcores(uint16_t port, const char *name)
{
	unsigned int lcores = rte_lcore_count(), nq = lcores;
	struct rte_eth_dev_info info;
	int ret;

	ret = rte_eth_dev_info_get(port, &info);
	if (ret) {
		pr_warn("rte_eth_dev_info_get(%s): %s\n", name, strerror(-ret));
		return 0;
	}
	if (nq > info.max_rx_queues)
		nq = info.max_rx_queues;
	if (nq > info.max_tx_queues)
		nq = info.max_tx_queues;
	if (nq > MAX_QUEUES)
		nq = MAX_QUEUES;
	if (nq < lcores)
		pr_info("%s has %u queue(s): %u of the %u lcores serve "
			"(af_packet: qpairs=N in its --vdev for more)\n",
			name, nq, nq, lcores);
	return (uint16_t)nq;
}

static int first_port(uint16_t *port)
{
	uint16_t p;

	RTE_ETH_FOREACH_DEV(p)
	{
		*port = p;
		return 0;
	}
	return -ENODEV;
}

/* The mbuf pool, the neighbour table and the workers' array; what was
 * made before a failure is freed by main's cleanup. */
static int tables_init(struct engine *eng)
{
	eng->pool = make_pool(eng->nb_queues, eng->tap_ifname != NULL);
	if (!eng->pool) {
		pr_warn("rte_pktmbuf_pool_create: %s (more memory: -m, or "
			"hugepages: scripts/hugepages.sh)\n",
			rte_strerror(rte_errno));
		return -1;
	}
	eng->neigh = neigh_create();
	eng->workers = rte_zmalloc("blitz_workers",
				   sizeof(struct worker) * eng->nb_queues,
				   RTE_CACHE_LINE_SIZE);
	if (!eng->neigh || !eng->workers) {
		pr_warn("out of DPDK memory for the tables\n");
		return -1;
	}
	return 0;
}

/* One worker and its TCP core per queue, queue i on the i-th lcore. */
static int cores_init(struct engine *eng)
{
	unsigned int lcore;
	uint16_t q = 0;

	RTE_LCORE_FOREACH(lcore)
	{
		struct worker *w = &eng->workers[q];

		if (q == eng->nb_queues)
			break;
		w->eng = eng;
		w->queue = q++;
		w->lcore = lcore;
		if (tcp_glue_init(w)) {
			pr_warn("TCP core for queue %u: %s\n", w->queue,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The start line that scripts and tests wait for: the fast path is up. */
static void print_serving(const struct engine *eng, const char *name)
{
	char abuf[INET6_ADDRSTRLEN];

	if (eng->n_addr4)
		inet_ntop(AF_INET, &eng->addr4_be[0], abuf, sizeof(abuf));
	else
		inet_ntop(AF_INET6, eng->addr6[0], abuf, sizeof(abuf));
	printf("blitz-dpdk: serving %s port %u on %s (" RTE_ETHER_ADDR_PRT_FMT
	       "), %u queue(s), exception path: %s\n",
	       abuf, eng->svc.port, name, RTE_ETHER_ADDR_BYTES(&eng->mac),
	       eng->nb_queues, eng->have_tap ? eng->tap_ifname : "none");
	fflush(stdout);
}

/* Runs every queue until a signal stops them, then prints the totals. */
static void queues_run(struct engine *eng)
{
	unsigned int lcore;
	uint16_t q = 1;

	registry_open(eng);
	/* Queue 0 runs on the main lcore, queue i on the i-th worker. */
	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		if (q == eng->nb_queues)
			break;
		rte_eal_remote_launch(worker_main, &eng->workers[q++], lcore);
	}
	worker_main(&eng->workers[0]);
	rte_eal_mp_wait_lcore();
	engine_print_stats(eng, true);
	registry_close();
}

int main(int argc, char **argv)
{
	static struct engine eng;
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	uint16_t q;
	int ret, status = 1;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		pr_warn("rte_eal_init failed (%s): check the EAL arguments "
			"before '--' (testbed: --no-huge -m 512 --no-pci "
			"--no-shconf --vdev=net_af_packet0,iface=VETH)\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_signal);

	service_init(&eng.svc);
	ret = parse_args(&eng, argc, argv);
	if (ret) {
		status = ret > 0 ? 0 : 1;
		goto out_eal;
	}
	/* The responses, built once here; every queue's core copies them. */
	eng.resp = calloc(1, sizeof(*eng.resp));
	if (!eng.resp) {
		pr_warn("out of memory\n");
		goto out_opts;
	}
	if (service_responses(&eng.svc, eng.resp))
		goto out_opts;
	if (first_port(&eng.port_id)) {
		pr_warn("no DPDK port: bind a NIC to a DPDK driver, or give "
			"--vdev=net_af_packet0,iface=IFNAME\n");
		goto out_opts;
	}
	rte_eth_dev_get_name_by_port(eng.port_id, name);
	eng.nb_queues = queues_for_lcores(eng.port_id, name);
	if (!eng.nb_queues)
		goto out_opts;
	eng.tsc_hz = rte_get_tsc_hz();
	if (tables_init(&eng))
		goto out_mem;
	ret = rte_eth_macaddr_get(eng.port_id, &eng.mac);
	if (ret) {
		pr_warn("rte_eth_macaddr_get(%s): %s\n", name, strerror(-ret));
		goto out_mem;
	}
	eng.csum_partial_ok = port_csum_partial(eng.port_id);
	if (port_init(&eng, eng.port_id, eng.nb_queues, true))
		goto out_mem;
	/* af_packet on a veth: its peer must not send TSO super-frames. */
	if (eng.takeover_if && !strncmp(name, "net_af_packet", 13))
		veth_mss_attach(eng.takeover_if);
	if (eng.tap_ifname && tap_create(&eng, eng.tap_ifname, eng.nb_queues))
		goto out_ports;
	if (eng.takeover_if && takeover_apply(eng.tap_ifname))
		goto out_ports;
	/* Taken over: the kernel's stack gets nothing on the interface. */
	if (eng.takeover_if)
		kernel_drop_attach(eng.takeover_if);
	idle_report(&eng);

	if (cores_init(&eng))
		goto out_cores;
	print_serving(&eng, name);
	queues_run(&eng);
	status = 0;

out_cores:
	for (q = 0; q < eng.nb_queues; q++)
		if (eng.workers[q].tcp)
			tcp_glue_fini(&eng.workers[q]);
out_ports:
	kernel_drop_detach(); /* before the interface is given back */
	veth_mss_detach();
	ports_stop(&eng);
	takeover_restore(); /* after the TAP, and its addresses, are gone */
out_mem:
	rte_free(eng.workers);
	rte_free(eng.neigh);
	rte_mempool_free(eng.pool);
out_opts:
	free(eng.resp);
	service_free(&eng.svc);
out_eal:
	rte_eal_cleanup();
	return status;
}
