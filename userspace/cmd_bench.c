// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_bench.c - `blitz bench <ip:port> [-c conns] [-d seconds] [-P pipeline]
 * [--path PATH] [-n requests] [--ports LO-HI] [--json] [-i ifname] [-q queue]`:
 * the kernel-bypass HTTP load generator (the work is in bench_gen.c).
 *
 * Owns: the command line, finding the client interface, its address and
 * the server's MAC (the kernel's neighbour table, after one datagram makes
 * it resolve), and printing the summary or JSON. Must never aim at an
 * address the user did not give, nor leave the interface without the XDP
 * program it had (bench_run restores it; SIGINT/SIGTERM end the run).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_gen.h"
#include "cli.h"
#include "log.h"

#define DEFAULT_PORT_LO 40000
#define DEFAULT_PORT_HI 59999

static volatile sig_atomic_t bench_stop;

static void on_signal(int sig)
{
	(void)sig;
	bench_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blitz bench <ip:port> [options]\n\n"
		"HTTP/1.1 load generator with its own TCP over AF_XDP on the\n"
		"client interface: GET requests in a closed loop on each\n"
		"connection, every response checked (200, Content-Length).\n\n"
		"  -c, --conns N        connections (default 10, max %u)\n"
		"  -d, --duration S     seconds to run (default 10)\n"
		"  -n, --requests N     stop after N responses (default: no "
		"limit)\n"
		"  -P, --pipeline N     requests per segment (default 1)\n"
		"  -R, --rate N         open loop: N requests/s in all, "
		"latency "
		"from when\n"
		"                       each was due (coordinated omission "
		"corrected)\n"
		"      --close          Connection: close, a new connection "
		"per "
		"request\n"
		"                       (connections per second)\n"
		"      --path PATH      request target (default /)\n"
		"  -i, --interface IF   client interface (default: the route "
		"to ip)\n"
		"  -q, --queue Q        its RX queue (default 0)\n"
		"      --ports LO-HI    source ports (default %u-%u); the "
		"kernel must\n"
		"                       not use them for its own connections "
		"to ip:port\n"
		"      --json           print the result as JSON\n"
		"  -v, --verbose        more messages\n"
		"  -h, --help           this text\n"
		"      --version        print the version\n\n"
		"The interface's XDP program is replaced for the run and put "
		"back after\n(also on SIGINT/SIGTERM). Killed with SIGKILL, "
		"bench's program stays\nattached and passes every frame: the "
		"next run puts it back as found, or\n`ip -force link set dev "
		"IF xdpdrv obj build/xdp_pass.bpf.o sec xdp`.\n",
		BENCH_MAX_CONNS, DEFAULT_PORT_LO, DEFAULT_PORT_HI);
}

static int parse_u64(const char *what, const char *arg, uint64_t lo,
		     uint64_t hi, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || v < lo || v > hi) {
		pr_warn("bad %s '%s': use a number from %llu to %llu\n", what,
			arg, (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_target(const char *arg, struct bench_params *p)
{
	char buf[64], *colon;
	uint64_t port;

	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	colon = strrchr(buf, ':');
	if (!colon)
		goto bad;
	*colon = 0;
	if (inet_pton(AF_INET, buf, &p->dst_ip) != 1)
		goto bad;
	if (parse_u64("port", colon + 1, 1, 65535, &port))
		return -1;
	p->dst_port = (uint16_t)port;
	return 0;
bad:
	pr_warn("bad target '%s': use IPV4:PORT, e.g. 10.0.0.1:80 (IPv6 is "
		"not supported by bench)\n",
		arg);
	return -1;
}

/* The interface and source address the kernel would use for dst, or the
 * IPv4 address of the given interface. */
static int find_source(struct bench_params *p, char *ifname_buf, size_t len)
{
	struct ifaddrs *ifa, *i;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);
	int fd, found = 0;

	if (getifaddrs(&ifa)) {
		pr_warn("getifaddrs: %s\n", strerror(errno));
		return -1;
	}
	if (!p->ifname) {
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		sin.sin_addr = p->dst_ip;
		sin.sin_port = htons(p->dst_port);
		if (fd < 0 || connect(fd, (void *)&sin, sizeof(sin)) ||
		    getsockname(fd, (void *)&sin, &sl)) {
			pr_warn("no route to %s here: %s\n",
				inet_ntoa(p->dst_ip), strerror(errno));
			if (fd >= 0)
				close(fd);
			freeifaddrs(ifa);
			return -1;
		}
		close(fd);
		p->src_ip = sin.sin_addr;
	}
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in *a = (const void *)i->ifa_addr;

		if (!a || a->sin_family != AF_INET)
			continue;
		if (p->ifname ? !strcmp(i->ifa_name, p->ifname)
			      : a->sin_addr.s_addr == p->src_ip.s_addr) {
			snprintf(ifname_buf, len, "%s", i->ifa_name);
			p->src_ip = a->sin_addr;
			found = 1;
			break;
		}
	}
	freeifaddrs(ifa);
	if (!found) {
		if (p->ifname)
			pr_warn("interface '%s' has no IPv4 address here\n",
				p->ifname);
		else
			pr_warn("no local interface holds %s\n",
				inet_ntoa(p->src_ip));
		return -1;
	}
	p->ifname = ifname_buf;
	return 0;
}

/* Our MAC from the interface, the server's from the neighbour table: one
 * empty datagram to it makes the kernel resolve it (ARP), then SIOCGARP
 * reads the entry. Only servers on the same link can be reached. */
static int find_macs(struct bench_params *p)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_addr = p->dst_ip,
				  .sin_port = htons(p->dst_port)};
	struct arpreq ar;
	struct ifreq ifr;
	int fd, i;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		pr_warn("socket: %s\n", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) ||
	    ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		pr_warn("%s is not an Ethernet interface\n", p->ifname);
		close(fd);
		return -1;
	}
	memcpy(p->src_mac, ifr.ifr_hwaddr.sa_data, 6);
	for (i = 0; i < 200; i++) { /* 2 s */
		memset(&ar, 0, sizeof(ar));
		memcpy(&ar.arp_pa, &sin, sizeof(sin));
		((struct sockaddr_in *)&ar.arp_pa)->sin_port = 0;
		snprintf(ar.arp_dev, sizeof(ar.arp_dev), "%s", p->ifname);
		if (!ioctl(fd, SIOCGARP, &ar) && (ar.arp_flags & ATF_COM)) {
			memcpy(p->dst_mac, ar.arp_ha.sa_data, 6);
			close(fd);
			return 0;
		}
		if (i % 50 == 0)
			sendto(fd, "", 0, MSG_DONTWAIT, (void *)&sin,
			       sizeof(sin));
		usleep(10000);
	}
	close(fd);
	pr_warn("cannot resolve the MAC address of %s on %s: bench only "
		"reaches servers on the same link\n",
		inet_ntoa(p->dst_ip), p->ifname);
	return -1;
}

static double busy_pct(const struct bench_result *r)
{
	return r->elapsed_s > 0 ? (double)r->busy_ns / 1e7 / r->elapsed_s : 0;
}

#define LIMIT_BUSY_PCT 90.0

/* Why the generator itself may have been the limit, or NULL. */
static const char *self_limit(const struct bench_params *p,
			      const struct bench_result *r, char *buf,
			      size_t len)
{
	double rps = r->elapsed_s > 0 ? (double)r->responses / r->elapsed_s : 0;

	if (busy_pct(r) >= LIMIT_BUSY_PCT)
		snprintf(buf, len,
			 "the generator was busy %.0f%% of the run: it was "
			 "the limit, not the server (use -P, or more CPUs with "
			 "-t)",
			 busy_pct(r));
	else if (r->tx_no_frame * 100 > r->responses + 1)
		snprintf(buf, len,
			 "%llu sends found no free AF_XDP TX frame: the "
			 "generator's ring was the limit",
			 (unsigned long long)r->tx_no_frame);
	else if (p->rate && rps < 0.95 * (double)p->rate &&
		 r->late_max_ns > 100000000ULL)
		snprintf(buf, len,
			 "open loop fell behind (%.0f of %llu req/s, batches "
			 "up to %.0f ms late): the server or -c connections "
			 "could not keep up",
			 rps, (unsigned long long)p->rate,
			 (double)r->late_max_ns / 1e6);
	else
		return NULL;
	return buf;
}

static void print_series_json(const struct bench_result *r)
{
	uint32_t i;

	printf(",\"series\":[");
	for (i = 0; i < r->n_series; i++) {
		const struct bench_sample *s = &r->series[i];

		printf("%s{\"t\":%u,\"responses\":%llu,\"errors\":%llu,"
		       "\"retransmits\":%llu,\"connects\":%llu,"
		       "\"lat_mean_us\":%.1f,\"lat_max_us\":%.1f}",
		       i ? "," : "", i + 1, (unsigned long long)s->responses,
		       (unsigned long long)s->errors,
		       (unsigned long long)s->retransmits,
		       (unsigned long long)s->connects,
		       s->lat_n ? (double)s->lat_sum_ns / (double)s->lat_n / 1e3
				: 0.0,
		       (double)s->lat_max_ns / 1e3);
	}
	printf("]");
}

static void print_summary(const struct bench_params *p,
			  const struct bench_result *r)
{
	const struct bench_hist *h = &r->hist;
	double rps = r->elapsed_s > 0 ? (double)r->responses / r->elapsed_s : 0;
	char why[200];

	printf("\n%s:%u  %u connections, pipeline %u, %.2f s, AF_XDP %s mode "
	       "on %s (XDP %s)\n",
	       inet_ntoa(p->dst_ip), p->dst_port, p->conns, p->pipeline,
	       r->elapsed_s, r->xsk_mode, p->ifname, r->xdp_mode);
	printf("  requests   %llu (%llu ok)   %.0f req/s   %.2f MB/s "
	       "received\n",
	       (unsigned long long)r->responses, (unsigned long long)r->ok, rps,
	       r->elapsed_s > 0 ? (double)r->bytes_rx / r->elapsed_s / 1e6
				: 0.0);
	printf("  latency    mean %.1f us  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 "
	       "%.1f  p99.99 %.1f  max %.1f us%s\n",
	       h->n ? (double)h->sum_ns / (double)h->n / 1e3 : 0.0,
	       (double)bench_hist_percentile(h, 0.50) / 1e3,
	       (double)bench_hist_percentile(h, 0.90) / 1e3,
	       (double)bench_hist_percentile(h, 0.99) / 1e3,
	       (double)bench_hist_percentile(h, 0.999) / 1e3,
	       (double)bench_hist_percentile(h, 0.9999) / 1e3,
	       (double)h->max_ns / 1e3, p->rate ? " (from when due)" : "");
	printf("  errors     %llu (status %llu, parse %llu, reset %llu, "
	       "closed %llu, timeout %llu, connect %llu)\n",
	       (unsigned long long)bench_errors(r),
	       (unsigned long long)r->err_status,
	       (unsigned long long)r->err_parse,
	       (unsigned long long)r->err_reset,
	       (unsigned long long)r->err_closed,
	       (unsigned long long)r->err_timeout,
	       (unsigned long long)r->err_connect);
	printf("  tcp        %llu handshakes (%.0f/s), retransmits %llu (SYN "
	       "%llu, data %llu), resets received %llu, sent %llu, "
	       "timeouts %llu\n",
	       (unsigned long long)r->connects,
	       r->elapsed_s > 0 ? (double)r->connects / r->elapsed_s : 0.0,
	       (unsigned long long)r->retransmits,
	       (unsigned long long)r->syn_retransmits,
	       (unsigned long long)r->data_retransmits,
	       (unsigned long long)r->rst_rx, (unsigned long long)r->rst_tx,
	       (unsigned long long)r->timeouts);
	printf("  client     busy %.0f%% of the run (near 100%%: the generator "
	       "is the limit)\n",
	       busy_pct(r));
	if (self_limit(p, r, why, sizeof(why)))
		printf("  WARNING    %s\n", why);
}

static void print_json(const struct bench_params *p,
		       const struct bench_result *r)
{
	const struct bench_hist *h = &r->hist;
	double rps = r->elapsed_s > 0 ? (double)r->responses / r->elapsed_s : 0;
	char why[200];
	const char *lim = self_limit(p, r, why, sizeof(why));

	printf("{\"target\":\"%s:%u\",\"interface\":\"%s\",\"conns\":%u,"
	       "\"pipeline\":%u,\"duration_s\":%.3f,\"xsk_mode\":\"%s\","
	       "\"xdp_mode\":\"%s\",\"requests\":%llu,\"ok\":%llu,"
	       "\"rps\":%.1f,\"bytes\":%llu,\"errors\":%llu,"
	       "\"err_status\":%llu,\"err_parse\":%llu,\"err_reset\":%llu,"
	       "\"err_closed\":%llu,\"err_timeout\":%llu,"
	       "\"err_connect\":%llu,\"connects\":%llu,\"retransmits\":%llu,"
	       "\"lat_mean_us\":%.1f,\"lat_p50_us\":%.1f,\"lat_p95_us\":%.1f,"
	       "\"lat_p99_us\":%.1f,\"lat_max_us\":%.1f,"
	       "\"client_busy_pct\":%.1f",
	       inet_ntoa(p->dst_ip), p->dst_port, p->ifname, p->conns,
	       p->pipeline, r->elapsed_s, r->xsk_mode, r->xdp_mode,
	       (unsigned long long)r->responses, (unsigned long long)r->ok, rps,
	       (unsigned long long)r->bytes_rx,
	       (unsigned long long)bench_errors(r),
	       (unsigned long long)r->err_status,
	       (unsigned long long)r->err_parse,
	       (unsigned long long)r->err_reset,
	       (unsigned long long)r->err_closed,
	       (unsigned long long)r->err_timeout,
	       (unsigned long long)r->err_connect,
	       (unsigned long long)r->connects,
	       (unsigned long long)r->retransmits,
	       h->n ? (double)h->sum_ns / (double)h->n / 1e3 : 0.0,
	       (double)bench_hist_percentile(h, 0.50) / 1e3,
	       (double)bench_hist_percentile(h, 0.95) / 1e3,
	       (double)bench_hist_percentile(h, 0.99) / 1e3,
	       (double)h->max_ns / 1e3, busy_pct(r));
	printf(",\"mode\":\"%s\",\"rate\":%llu,\"cps\":%.1f,"
	       "\"lat_p90_us\":%.1f,\"lat_p999_us\":%.1f,"
	       "\"lat_p9999_us\":%.1f,\"syn_retransmits\":%llu,"
	       "\"data_retransmits\":%llu,\"rst_rx\":%llu,\"rst_tx\":%llu,"
	       "\"timeouts\":%llu,\"tx_no_frame\":%llu,\"late_max_us\":%.1f,"
	       "\"client_limited\":%s,\"client_limit_why\":\"%s\"",
	       p->close_each ? "close"
	       : p->rate     ? "open"
			     : "closed",
	       (unsigned long long)p->rate,
	       r->elapsed_s > 0 ? (double)r->connects / r->elapsed_s : 0.0,
	       (double)bench_hist_percentile(h, 0.90) / 1e3,
	       (double)bench_hist_percentile(h, 0.999) / 1e3,
	       (double)bench_hist_percentile(h, 0.9999) / 1e3,
	       (unsigned long long)r->syn_retransmits,
	       (unsigned long long)r->data_retransmits,
	       (unsigned long long)r->rst_rx, (unsigned long long)r->rst_tx,
	       (unsigned long long)r->timeouts,
	       (unsigned long long)r->tx_no_frame, (double)r->late_max_ns / 1e3,
	       lim ? "true" : "false", lim ? lim : "");
	print_series_json(r);
	printf("}\n");
}

enum { OPT_PATH = 0x200, OPT_JSON, OPT_PORTS, OPT_CLOSE };

int cmd_bench(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"conns", required_argument, NULL, 'c'},
		{"duration", required_argument, NULL, 'd'},
		{"requests", required_argument, NULL, 'n'},
		{"pipeline", required_argument, NULL, 'P'},
		{"path", required_argument, NULL, OPT_PATH},
		{"interface", required_argument, NULL, 'i'},
		{"queue", required_argument, NULL, 'q'},
		{"ports", required_argument, NULL, OPT_PORTS},
		{"json", no_argument, NULL, OPT_JSON},
		{"rate", required_argument, NULL, 'R'},
		{"close", no_argument, NULL, OPT_CLOSE},
		BLITZ_COMMON_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	struct bench_params p = {
		.conns = 10,
		.duration_s = 10,
		.pipeline = 1,
		.path = "/",
		.port_lo = DEFAULT_PORT_LO,
		.port_hi = DEFAULT_PORT_HI,
		.stop = &bench_stop,
	};
	char ifname_buf[IF_NAMESIZE];
	struct bench_result *r;
	struct sigaction sa;
	int opt, json = 0, err, st;
	uint64_t v, v2;
	char *dash;
	const struct cli_num_opt nums[] = {
		{'c', "connection count", 1, BENCH_MAX_CONNS, 1, NULL,
		 &p.conns},
		{'d', "duration", 1, 86400, 1, NULL, &p.duration_s},
		{'P', "pipeline depth", 1, 64, 1, NULL, &p.pipeline},
		{'q', "queue", 0, 63, 1, NULL, &p.queue},
	};

	cli_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":c:d:n:P:R:i:q:vh", longopts,
				  NULL)) != -1) {
		st = cli_num_opt(nums, sizeof(nums) / sizeof(nums[0]), opt,
				 optarg);
		if (st < 0)
			return 1;
		if (st > 0)
			continue;
		switch (opt) {
		case 'n':
			if (parse_u64("request count", optarg, 1,
				      UINT64_MAX / 2, &v))
				return 1;
			p.max_requests = v;
			break;
		case OPT_PATH:
			if (optarg[0] != '/' || strpbrk(optarg, " \r\n")) {
				pr_warn("bad path '%s': it starts with / and "
					"has "
					"no spaces\n",
					optarg);
				return 1;
			}
			p.path = optarg;
			break;
		case 'i':
			p.ifname = optarg;
			break;
		case OPT_PORTS:
			dash = strchr(optarg, '-');
			if (!dash) {
				pr_warn("bad --ports '%s': use LO-HI, e.g. "
					"40000-59999\n",
					optarg);
				return 1;
			}
			*dash = 0;
			if (parse_u64("port", optarg, 1, 65535, &v) ||
			    parse_u64("port", dash + 1, v, 65535, &v2))
				return 1;
			p.port_lo = (uint16_t)v;
			p.port_hi = (uint16_t)v2;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case 'R':
			if (parse_u64("rate", optarg, 1, 1000000000, &v))
				return 1;
			p.rate = v;
			break;
		case OPT_CLOSE:
			p.close_each = 1;
			break;
		default:
			st = cli_common_opt("bench", opt, argv, usage);
			if (st != CLI_CONTINUE)
				return st;
		}
	}
	if (cli_operands("bench", argc, argv, 1, 1, "<ip:port>"))
		return 1;
	if (parse_target(argv[optind], &p))
		return 1;
	if (p.close_each && p.pipeline != 1) {
		pr_warn("--close sends one request per connection: drop -P\n");
		return 1;
	}
	if ((uint32_t)(p.port_hi - p.port_lo + 1) < 2 * p.conns) {
		pr_warn("%u connections need at least %u source ports: widen "
			"--ports\n",
			p.conns, 2 * p.conns);
		return 1;
	}
	if (geteuid()) {
		pr_warn("bench needs root (XDP and AF_XDP): run it with "
			"sudo\n");
		return 1;
	}
	blitz_log_quiet_libs();
	if (find_source(&p, ifname_buf, sizeof(ifname_buf)) || find_macs(&p))
		return 1;
	p.progress = json ? stderr : stdout;
	if (!json) {
		char dst[INET_ADDRSTRLEN], src[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &p.dst_ip, dst, sizeof(dst));
		inet_ntop(AF_INET, &p.src_ip, src, sizeof(src));
		printf("blitz bench %s:%u from %s (%s), %u connections, %u s\n",
		       dst, p.dst_port, p.ifname, src, p.conns, p.duration_s);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	r = calloc(1, sizeof(*r));
	if (!r)
		return 1;
	err = bench_run(&p, r);
	if (!err) {
		if (json)
			print_json(&p, r);
		else
			print_summary(&p, r);
	}
	free(r);
	return err ? 1 : 0;
}
