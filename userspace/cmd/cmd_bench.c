// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_bench.c - `blitz bench <ip:port> [-c conns] [-d seconds] [-P pipeline]
 * [--path PATH] [-n requests] [--ports LO-HI] [--src-addrs N] [--json]
 * [-i ifname] [-q queue]`:
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
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench_gen.h"
#include "cli.h"
#include "log.h"
#include "nic_info.h"

#define DEFAULT_PORT_LO 40000
#define DEFAULT_PORT_HI 59999

static volatile sig_atomic_t bench_stop;

static void on_signal(int sig)
{
	(void)sig;
	bench_stop = 1;
}

enum {
	OPT_PATH = OPT_CMD_BASE,
	OPT_JSON,
	OPT_PORTS,
	OPT_CLOSE,
	OPT_SRC,
	OPT_WINDOW,
	OPT_RAMP
};

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct opt_spec bench_opts[] = {
	{'c', "conns", "N", "connections (default 10, max %d)", BENCH_MAX_CONNS,
	 0},
	{'d', "duration", "S", "seconds to run (default 10)", 0, 0},
	{'n', "requests", "N", "stop after N responses (default: no limit)", 0,
	 0},
	{'P', "pipeline", "N", "requests per segment (default 1)", 0, 0},
	{'R', "rate", "N",
	 "open loop: N requests/s in all, latency from when each was due "
	 "(coordinated omission corrected)",
	 0, 0},
	{OPT_CLOSE, "close", NULL,
	 "Connection: close, a new connection per request (connections per "
	 "second)",
	 0, 0},
	{OPT_PATH, "path", "PATH", "request target (default /)", 0, 0},
	{'i', "interface", "IF", "client interface (default: the route to ip)",
	 0, 0},
	{'q', "queue", "Q", "its (first) RX queue (default 0)", 0, 0},
	{'t', "threads", "N",
	 "threads, one AF_XDP socket each on queues Q..Q+N-1 (default 1)", 0,
	 0},
	{OPT_PORTS, "ports", "LO-HI",
	 "source ports (default " STR(DEFAULT_PORT_LO) "-" STR(
		 DEFAULT_PORT_HI) "); the kernel must not use them for its own "
				  "connections to ip:port",
	 0, 0},
	{OPT_SRC, "src-addrs", "N",
	 "source addresses: the route's and the next N-1 after it (each must "
	 "be on the interface), for more connections than one address's "
	 "ports allow (default 1, max %d)",
	 BENCH_MAX_SRC, 0},
	{OPT_WINDOW, "window", "N",
	 "requests (and, while opening, handshakes beyond 32) outstanding at "
	 "once (default 192: what veth's 256-frame ring holds while a NAPI "
	 "thread waits for its CPU; more open and answer many connections "
	 "sooner)",
	 0, 0},
	{OPT_RAMP, "ramp", "S",
	 "seconds at most to open the connections before the run's clock "
	 "starts (default 10, or 100 us a connection when longer)",
	 0, 0},
	{OPT_JSON, "json", NULL, "print the result as JSON", 0, 0},
	{0},
};

const struct cmd_spec cmd_bench_spec = {
	.name = "bench",
	.operands = "<ip:port>",
	.summary = "kernel-bypass HTTP load generator",
	.about = "HTTP/1.1 load generator with its own TCP over AF_XDP on the "
		 "client interface: GET requests in a closed loop on each "
		 "connection, every response checked (200, Content-Length).",
	.notes = "The interface's XDP program is replaced for the run and put "
		 "back after (also on SIGINT/SIGTERM). Killed with SIGKILL, "
		 "bench's program stays attached and passes every frame: the "
		 "next run puts it back as found, or `ip -force link set dev "
		 "IF xdpdrv obj build/xdp_pass.bpf.o sec xdp`.",
	.groups = {bench_opts, options_common},
};

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

/* The target: IPV4:PORT or [IPV6]:PORT. */
static int parse_target(const char *arg, struct bench_params *p, char *host,
			size_t hlen)
{
	char buf[80], *colon, *addr = buf;
	uint64_t port;

	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	colon = strrchr(buf, ':');
	if (!colon)
		goto bad;
	*colon = 0;
	if (buf[0] == '[' && colon > buf + 1 && colon[-1] == ']') {
		colon[-1] = 0;
		addr = buf + 1;
		if (inet_pton(AF_INET6, addr, p->dst_addr) != 1)
			goto bad;
		p->v6 = 1;
	} else if (inet_pton(AF_INET, buf, p->dst_addr) != 1) {
		goto bad;
	}
	if (parse_u64("port", colon + 1, 1, 65535, &port))
		return -1;
	p->dst_port = (uint16_t)port;
	snprintf(host, hlen, p->v6 ? "[%s]:%u" : "%s:%u", addr, p->dst_port);
	p->host = host;
	return 0;
bad:
	pr_warn("bad target '%s': use IPV4:PORT or [IPV6]:PORT, e.g. "
		"10.0.0.1:80 or [fd00::1]:80\n",
		arg);
	return -1;
}

static int family(const struct bench_params *p)
{
	return p->v6 ? AF_INET6 : AF_INET;
}

static size_t addr_len(const struct bench_params *p)
{
	return p->v6 ? 16 : 4;
}

/* The source address the kernel picks for the target (through -i when
 * given): a connected UDP socket's name. */
static int find_source(struct bench_params *p)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (void *)&ss;
	struct sockaddr_in6 *s6 = (void *)&ss;
	socklen_t sl = sizeof(ss);
	char txt[INET6_ADDRSTRLEN];
	int fd;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family(p);
	if (p->v6) {
		memcpy(&s6->sin6_addr, p->dst_addr, 16);
		s6->sin6_port = htons(p->dst_port);
	} else {
		memcpy(&s4->sin_addr, p->dst_addr, 4);
		s4->sin_port = htons(p->dst_port);
	}
	fd = socket(family(p), SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_warn("socket: %s\n", strerror(errno));
		return -1;
	}
	if (p->ifname && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, p->ifname,
				    (socklen_t)strlen(p->ifname))) {
		pr_warn("no interface '%s' here (%s)\n", p->ifname,
			strerror(errno));
		close(fd);
		return -1;
	}
	if (connect(fd, (void *)&ss, p->v6 ? sizeof(*s6) : sizeof(*s4)) ||
	    getsockname(fd, (void *)&ss, &sl)) {
		inet_ntop(family(p), p->dst_addr, txt, sizeof(txt));
		pr_warn("no route to %s%s%s here: %s\n", txt,
			p->ifname ? " through " : "",
			p->ifname ? p->ifname : "", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	memcpy(p->src_addr,
	       p->v6 ? (void *)&s6->sin6_addr : (void *)&s4->sin_addr,
	       addr_len(p));
	return 0;
}

/* Source address k of --src-addrs: src_addr + k (IPv6: in its last 32
 * bits), as bench_gen.c counts them. */
static void src_nth(const struct bench_params *p, uint32_t k, uint8_t a[16])
{
	uint32_t v;

	memcpy(a, p->src_addr, 16);
	memcpy(&v, p->v6 ? a + 12 : a, 4);
	v = htonl(ntohl(v) + k);
	memcpy(p->v6 ? a + 12 : a, &v, 4);
}

/* Whether a is an address of interface ifname in ifa. */
static int if_has_addr(const struct bench_params *p, struct ifaddrs *ifa,
		       const uint8_t *a)
{
	const void *ia;

	for (; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family(p) ||
		    strcmp(ifa->ifa_name, p->ifname))
			continue;
		if (p->v6)
			ia = &((struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;
		else
			ia = &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
		if (!memcmp(ia, a, addr_len(p)))
			return 1;
	}
	return 0;
}

/* With --src-addrs N: every one of src_addr + 0..N-1 must be an address
 * of the interface, or the server's replies to it would find no one (a
 * kernel server resolves it with ARP / neighbour discovery first). */
static int check_sources(const struct bench_params *p)
{
	char first[INET6_ADDRSTRLEN], last[INET6_ADDRSTRLEN],
		miss[INET6_ADDRSTRLEN];
	struct ifaddrs *ifa;
	uint8_t a[16];
	uint32_t k;

	if (p->n_src <= 1)
		return 0;
	if (getifaddrs(&ifa)) {
		pr_warn("getifaddrs: %s\n", strerror(errno));
		return -1;
	}
	for (k = 0; k < p->n_src; k++) {
		src_nth(p, k, a);
		if (if_has_addr(p, ifa, a))
			continue;
		inet_ntop(family(p), a, miss, sizeof(miss));
		inet_ntop(family(p), p->src_addr, first, sizeof(first));
		src_nth(p, p->n_src - 1, a);
		inet_ntop(family(p), a, last, sizeof(last));
		freeifaddrs(ifa);
		pr_warn("--src-addrs %u needs %s to %s on %s, and %s is not "
			"there: add it (ip addr add %s/%u dev %s) or lower "
			"--src-addrs\n",
			p->n_src, first, last, p->ifname, miss, miss,
			p->v6 ? 128 : 32, p->ifname);
		return -1;
	}
	freeifaddrs(ifa);
	return 0;
}

/* ---- rtnetlink: the route's next hop and its neighbour entry ---- */

struct nl_req {
	struct nlmsghdr nh;
	union {
		struct rtmsg rt;
		struct ndmsg nd;
	};
	char attrs[64];
};

static void nl_attr(struct nl_req *r, unsigned short type, const void *d,
		    size_t len)
{
	struct rtattr *a =
		(struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), d, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Send r and read the answers into buf; the bytes read, or -1. */
static int nl_talk(struct nl_req *r, char *buf, size_t len)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct timeval tv = {.tv_sec = 1};
	ssize_t n, got = 0;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, r, r->nh.nlmsg_len, 0) < 0) {
		close(fd);
		return -1;
	}
	/* A dump may take several reads; stop at DONE, an error or an
	 * answer that is not a dump. */
	while ((size_t)got < len) {
		struct nlmsghdr *h;
		int more = 0, rem;

		n = recv(fd, buf + got, len - (size_t)got, 0);
		if (n <= 0)
			break;
		rem = (int)n;
		for (h = (void *)(buf + got); NLMSG_OK(h, rem);
		     h = NLMSG_NEXT(h, rem))
			more = (h->nlmsg_flags & NLM_F_MULTI) &&
			       h->nlmsg_type != NLMSG_DONE;
		got += n;
		if (!more)
			break;
	}
	close(fd);
	return (int)got;
}

/* The output interface and next hop (the gateway, or the target itself
 * when it is on the link) of the route to the target. */
static int route_next_hop(const struct bench_params *p, int *oif,
			  uint8_t hop[16])
{
	struct nl_req r;
	char buf[8192];
	struct nlmsghdr *h;
	int n, have_gw = 0;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	r.nh.nlmsg_type = RTM_GETROUTE;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.rt.rtm_family = (unsigned char)family(p);
	r.rt.rtm_dst_len = p->v6 ? 128 : 32;
	nl_attr(&r, RTA_DST, p->dst_addr, addr_len(p));
	if (*oif)
		nl_attr(&r, RTA_OIF, oif, sizeof(*oif));
	n = nl_talk(&r, buf, sizeof(buf));
	memcpy(hop, p->dst_addr, addr_len(p));
	for (h = (void *)buf; n > 0 && NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
		struct rtmsg *rt = NLMSG_DATA(h);
		struct rtattr *a;
		int al;

		if (h->nlmsg_type != RTM_NEWROUTE)
			continue;
		al = (int)RTM_PAYLOAD(h);
		for (a = RTM_RTA(rt); RTA_OK(a, al); a = RTA_NEXT(a, al)) {
			if (a->rta_type == RTA_OIF)
				memcpy(oif, RTA_DATA(a), sizeof(*oif));
			else if (a->rta_type == RTA_GATEWAY &&
				 RTA_PAYLOAD(a) == addr_len(p)) {
				memcpy(hop, RTA_DATA(a), addr_len(p));
				have_gw = 1;
			}
		}
		return have_gw;
	}
	return -1;
}

/* The link-layer address of hop on ifindex from the neighbour table, when
 * the entry is usable. 0 when found. */
static int neigh_lookup(const struct bench_params *p, int ifindex,
			const uint8_t hop[16], uint8_t mac[6])
{
	struct nl_req r;
	static char buf[1 << 16];
	struct nlmsghdr *h;
	int n;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	r.nh.nlmsg_type = RTM_GETNEIGH;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	r.nd.ndm_family = (unsigned char)family(p);
	r.nd.ndm_ifindex = ifindex;
	n = nl_talk(&r, buf, sizeof(buf));
	for (h = (void *)buf; n > 0 && NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
		struct ndmsg *nd = NLMSG_DATA(h);
		const uint8_t *dst = NULL, *ll = NULL;
		struct rtattr *a;
		int al;

		if (h->nlmsg_type != RTM_NEWNEIGH || nd->ndm_ifindex != ifindex)
			continue;
		if (!(nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY |
				       NUD_PROBE | NUD_PERMANENT)))
			continue;
		al = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
		for (a = (struct rtattr *)((char *)nd +
					   NLMSG_ALIGN(sizeof(*nd)));
		     RTA_OK(a, al); a = RTA_NEXT(a, al)) {
			if (a->rta_type == NDA_DST &&
			    RTA_PAYLOAD(a) == addr_len(p))
				dst = RTA_DATA(a);
			else if (a->rta_type == NDA_LLADDR &&
				 RTA_PAYLOAD(a) == 6)
				ll = RTA_DATA(a);
		}
		if (dst && ll && !memcmp(dst, hop, addr_len(p))) {
			memcpy(mac, ll, 6);
			return 0;
		}
	}
	return -1;
}

/*
 * Our MAC from the interface; the next hop's (the target on the link, or
 * the route's gateway) from the kernel's neighbour table. When the entry is
 * missing, one empty datagram to the target makes the kernel resolve it
 * (ARP or neighbour discovery), then the table is read again for 2 s.
 */
static int find_macs(struct bench_params *p, char *ifname_buf, size_t len)
{
	uint8_t hop[16];
	char txt[INET6_ADDRSTRLEN], htxt[INET6_ADDRSTRLEN];
	struct sockaddr_storage ss;
	int oif = p->ifname ? (int)if_nametoindex(p->ifname) : 0, gw, fd, i;

	if (p->ifname && !oif) {
		pr_warn("no interface '%s' here\n", p->ifname);
		return -1;
	}
	gw = route_next_hop(p, &oif, hop);
	inet_ntop(family(p), p->dst_addr, txt, sizeof(txt));
	if (gw < 0 || !oif || !if_indextoname((unsigned int)oif, ifname_buf)) {
		pr_warn("no route to %s here\n", txt);
		return -1;
	}
	(void)len;
	p->ifname = ifname_buf;
	inet_ntop(family(p), hop, htxt, sizeof(htxt));
	fd = socket(family(p), SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_warn("socket: %s\n", strerror(errno));
		return -1;
	}
	if (nic_mac(p->ifname, p->src_mac)) {
		pr_warn("%s is not an Ethernet interface\n", p->ifname);
		close(fd);
		return -1;
	}
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family(p);
	if (p->v6) {
		memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, p->dst_addr,
		       16);
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(p->dst_port);
	} else {
		memcpy(&((struct sockaddr_in *)&ss)->sin_addr, p->dst_addr, 4);
		((struct sockaddr_in *)&ss)->sin_port = htons(p->dst_port);
	}
	setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, p->ifname,
		   (socklen_t)strlen(p->ifname));
	for (i = 0; i < 200; i++) { /* 2 s */
		if (!neigh_lookup(p, oif, hop, p->dst_mac)) {
			close(fd);
			pr_debug("next hop %s%s on %s\n", htxt,
				 gw ? " (gateway)" : "", p->ifname);
			return 0;
		}
		if (i % 50 == 0)
			sendto(fd, "", 0, MSG_DONTWAIT, (void *)&ss,
			       p->v6 ? sizeof(struct sockaddr_in6)
				     : sizeof(struct sockaddr_in));
		usleep(10000);
	}
	close(fd);
	pr_warn("cannot resolve the MAC address of %s%s%s on %s (the "
		"neighbour table has no usable entry after 2 s)\n",
		htxt, gw ? ", the gateway to " : "", gw ? txt : "", p->ifname);
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
	else if (r->misrouted * 100 > r->responses + 1)
		snprintf(buf, len,
			 "%llu replies landed on another thread's RX queue "
			 "and were dropped: steer the server's replies (on "
			 "veth, pin its NAPI of queue i to a CPU = i mod -t) "
			 "or use -t 1",
			 (unsigned long long)r->misrouted);
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

/* The kinds of error, in the order both outputs list them. */
static const struct {
	const char *name;
	size_t off; /* of its uint64_t count in struct bench_result */
} err_kinds[] = {
	{"status", offsetof(struct bench_result, err_status)},
	{"parse", offsetof(struct bench_result, err_parse)},
	{"reset", offsetof(struct bench_result, err_reset)},
	{"closed", offsetof(struct bench_result, err_closed)},
	{"timeout", offsetof(struct bench_result, err_timeout)},
	{"connect", offsetof(struct bench_result, err_connect)},
};
#define N_ERR_KINDS (sizeof(err_kinds) / sizeof(err_kinds[0]))

static unsigned long long err_count(const struct bench_result *r, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)r + err_kinds[i].off, sizeof(v));
	return (unsigned long long)v;
}

static void print_summary(const struct bench_params *p,
			  const struct bench_result *r)
{
	const struct bench_hist *h = &r->hist;
	double rps = r->elapsed_s > 0 ? (double)r->responses / r->elapsed_s : 0;
	char why[200];
	size_t i;

	printf("\n%s  %u connections, pipeline %u, %.2f s, AF_XDP %s mode "
	       "on %s (XDP %s)\n",
	       p->host, p->conns, p->pipeline, r->elapsed_s, r->xsk_mode,
	       p->ifname, r->xdp_mode);
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
	printf("  errors     %llu (", (unsigned long long)bench_errors(r));
	for (i = 0; i < N_ERR_KINDS; i++)
		printf("%s%s %llu", i ? ", " : "", err_kinds[i].name,
		       err_count(r, i));
	printf(")\n");
	if (r->ramp_s > 0)
		printf("  connect    %.2f s to open the connections before the "
		       "run (its clock starts when all are established)\n",
		       r->ramp_s);
	printf("  tcp        %llu handshakes (%.0f/s, at most %llu at once), "
	       "retransmits %llu (SYN "
	       "%llu, data %llu), resets received %llu, sent %llu, "
	       "timeouts %llu\n",
	       (unsigned long long)r->connects,
	       r->elapsed_s > 0
		       ? (double)r->connects / (r->elapsed_s + r->ramp_s)
		       : 0.0,
	       (unsigned long long)r->peak_established,
	       (unsigned long long)r->retransmits,
	       (unsigned long long)r->syn_retransmits,
	       (unsigned long long)r->data_retransmits,
	       (unsigned long long)r->rst_rx, (unsigned long long)r->rst_tx,
	       (unsigned long long)r->timeouts);
	printf("  answered   %llu of the connections got a 200\n",
	       (unsigned long long)r->conns_answered);
	printf("  client     %u thread%s, busy %.0f%% of the run%s (near "
	       "100%%: the generator is the limit)\n",
	       r->threads, r->threads > 1 ? "s" : "", busy_pct(r),
	       r->threads > 1 ? " each on average" : "");
	if (r->misrouted)
		printf("             %llu replies landed on another thread's "
		       "queue (dropped)\n",
		       (unsigned long long)r->misrouted);
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
	size_t i;

	printf("{\"target\":\"%s\",\"interface\":\"%s\",\"conns\":%u,"
	       "\"pipeline\":%u,\"duration_s\":%.3f,\"xsk_mode\":\"%s\","
	       "\"xdp_mode\":\"%s\",\"requests\":%llu,\"ok\":%llu,"
	       "\"rps\":%.1f,\"bytes\":%llu,\"errors\":%llu",
	       p->host, p->ifname, p->conns, p->pipeline, r->elapsed_s,
	       r->xsk_mode, r->xdp_mode, (unsigned long long)r->responses,
	       (unsigned long long)r->ok, rps, (unsigned long long)r->bytes_rx,
	       (unsigned long long)bench_errors(r));
	for (i = 0; i < N_ERR_KINDS; i++)
		printf(",\"err_%s\":%llu", err_kinds[i].name, err_count(r, i));
	printf(",\"connects\":%llu,\"retransmits\":%llu,"
	       "\"lat_mean_us\":%.1f,\"lat_p50_us\":%.1f,\"lat_p95_us\":%.1f,"
	       "\"lat_p99_us\":%.1f,\"lat_max_us\":%.1f,"
	       "\"client_busy_pct\":%.1f",
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
	       "\"client_limited\":%s,\"client_limit_why\":\"%s\","
	       "\"threads\":%u,\"misrouted\":%llu,\"src_addrs\":%u,"
	       "\"peak_established\":%llu,\"hdr_pool_empty\":%llu,"
	       "\"hdr_cache_hits\":%llu,\"ramp_s\":%.3f,"
	       "\"conns_answered\":%llu",
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
	       lim ? "true" : "false", lim ? lim : "", r->threads,
	       (unsigned long long)r->misrouted, p->n_src,
	       (unsigned long long)r->peak_established,
	       (unsigned long long)r->hdr_pool_empty,
	       (unsigned long long)r->hdr_cache_hits, r->ramp_s,
	       (unsigned long long)r->conns_answered);
	print_series_json(r);
	printf("}\n");
}

struct bench_args {
	struct bench_params *p;
	int json;
};

/* One of bench's options into ctx (struct bench_args): cli_parse_opts. */
static int bench_opt(int opt, char *arg, void *ctx)
{
	struct bench_args *a = ctx;
	struct bench_params *p = a->p;
	const struct cli_num_opt nums[] = {
		{'c', "connection count", 1, BENCH_MAX_CONNS, 1, NULL,
		 &p->conns},
		{'d', "duration", 1, 86400, 1, NULL, &p->duration_s},
		{'P', "pipeline depth", 1, 64, 1, NULL, &p->pipeline},
		{'q', "queue", 0, 63, 1, NULL, &p->queue},
		{'t', "thread count", 1, BENCH_MAX_THREADS, 1, NULL,
		 &p->threads},
		{OPT_SRC, "source address count", 1, BENCH_MAX_SRC, 1, NULL,
		 &p->n_src},
		{OPT_WINDOW, "window", 1, 4096, 1, NULL, &p->window},
		{OPT_RAMP, "ramp duration", 1, 3600, 1, NULL, &p->ramp_max_s},
	};
	uint64_t v, v2;
	char *dash;
	int st;

	st = cli_num_opt(nums, sizeof(nums) / sizeof(nums[0]), opt, arg);
	if (st)
		return st;
	switch (opt) {
	case 'n':
		if (parse_u64("request count", arg, 1, UINT64_MAX / 2, &v))
			return -1;
		p->max_requests = v;
		return 1;
	case OPT_PATH:
		if (arg[0] != '/' || strpbrk(arg, " \r\n")) {
			pr_warn("bad path '%s': it starts with / and has no "
				"spaces\n",
				arg);
			return -1;
		}
		p->path = arg;
		return 1;
	case 'i':
		p->ifname = arg;
		return 1;
	case OPT_PORTS:
		dash = strchr(arg, '-');
		if (!dash) {
			pr_warn("bad --ports '%s': use LO-HI, e.g. "
				"40000-59999\n",
				arg);
			return -1;
		}
		*dash = 0;
		if (parse_u64("port", arg, 1, 65535, &v) ||
		    parse_u64("port", dash + 1, v, 65535, &v2))
			return -1;
		p->port_lo = (uint16_t)v;
		p->port_hi = (uint16_t)v2;
		return 1;
	case OPT_JSON:
		a->json = 1;
		return 1;
	case 'R':
		if (parse_u64("rate", arg, 1, 1000000000, &v))
			return -1;
		p->rate = v;
		return 1;
	case OPT_CLOSE:
		p->close_each = 1;
		return 1;
	default:
		return 0;
	}
}

/* The options and the target into p (host holds the target's text) and
 * *json; CLI_CONTINUE, or the verb's exit status. */
static int parse_args(int argc, char **argv, struct bench_params *p, int *json,
		      char *host, size_t host_len)
{
	struct bench_args a = {p, 0};
	int r = cli_parse(&cmd_bench_spec, argc, argv, bench_opt, &a, 1, 1);

	if (r != CLI_CONTINUE)
		return r;
	*json = a.json;
	if (parse_target(argv[optind], p, host, host_len))
		return 1;
	return CLI_CONTINUE;
}

/* What the options ask of each other and of this process; 0, or -1 with
 * a line said. */
static int check_params(struct bench_params *p)
{
	if (p->close_each && p->pipeline != 1) {
		pr_warn("--close sends one request per connection: drop -P\n");
		return -1;
	}
	if (!p->n_src)
		p->n_src = 1;
	if ((uint64_t)(p->port_hi - p->port_lo + 1) * p->n_src <
	    2ULL * p->conns) {
		pr_warn("%u connections need at least %u source ports over "
			"%u address%s (each port of each address is one "
			"slot, twice the connections): widen --ports or add "
			"--src-addrs %u\n",
			p->conns, 2 * p->conns, p->n_src,
			p->n_src > 1 ? "es" : "",
			(2 * p->conns + (uint32_t)(p->port_hi - p->port_lo)) /
				(uint32_t)(p->port_hi - p->port_lo + 1));
		return -1;
	}
	if (geteuid()) {
		pr_warn("bench needs root (XDP and AF_XDP): run it with "
			"sudo\n");
		return -1;
	}
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_params p = {
		.conns = 10,
		.duration_s = 10,
		.pipeline = 1,
		.path = "/",
		.port_lo = DEFAULT_PORT_LO,
		.port_hi = DEFAULT_PORT_HI,
		.stop = &bench_stop,
	};
	char ifname_buf[IF_NAMESIZE], host[80];
	struct bench_result *r;
	struct sigaction sa;
	int json = 0, err;

	err = parse_args(argc, argv, &p, &json, host, sizeof(host));
	if (err != CLI_CONTINUE)
		return err;
	if (check_params(&p))
		return 1;
	blitz_log_quiet_libs();
	if (find_macs(&p, ifname_buf, sizeof(ifname_buf)) || find_source(&p) ||
	    check_sources(&p))
		return 1;
	p.progress = json ? stderr : stdout;
	if (!json) {
		char src[INET6_ADDRSTRLEN];

		inet_ntop(p.v6 ? AF_INET6 : AF_INET, p.src_addr, src,
			  sizeof(src));
		printf("blitz bench %s from %s (%s%s), %u connections, %u s\n",
		       p.host, p.ifname, src,
		       p.n_src > 1 ? " and the addresses after it" : "",
		       p.conns, p.duration_s);
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
	/* A run with not one connection measured nothing: a script must
	 * not take its zeros for a result. */
	if (!err && !r->connects && !r->responses) {
		pr_warn("no connection to %s was established (%llu refused or "
			"timed out): is a server listening there?\n",
			p.host, (unsigned long long)r->err_connect);
		err = 1;
	}
	free(r);
	return err ? 1 : 0;
}
