// SPDX-License-Identifier: GPL-2.0
/*
 * test_tc_handoff.c - BPF_PROG_TEST_RUN tests of the TC hand-off program
 * (bpf/blitz_tc.bpf.c) with crafted frames, in a private network
 * namespace with real listening and established sockets on loopback.
 *
 * Asserts the verdict and the counters for: frames that are not for the
 * service, SYN/RST/no-ACK segments, truncated and fragmented frames, IP
 * options, a segment of a connection the kernel already owns, no listener,
 * bad cookies (IPv4/IPv6, with and without timestamps) and good ones.
 * A good cookie reaches bpf_sk_assign_tcp_reqsk(); the kfunc itself only
 * succeeds at a real TC ingress hook (test runs are not one), so here a
 * good cookie must end in HANDOFF or HANDOFF_FAIL, never DROP_BAD_COOKIE;
 * tests/e2e/test_handoff.sh checks the real hand-off.
 * Must never touch the host's network namespace: everything happens in
 * one made by unshare().
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../bpf/blitz_seq.h"
#include "../bpf/blitz_shared.h"
#include "cookie_ring.h"
#include "blitz_tc.skel.h"
#include "counters_xdp.h"
#include "loader.h"
#include "tc_handoff.h"
#include "testlib.h"
#include "xdp_fixture.h"
#include "frame.h"

#define PORT 8080
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2

#define F_FIN TCPHDR_FIN
#define F_SYN TCPHDR_SYN
#define F_RST TCPHDR_RST
#define F_PSH TCPHDR_PSH
#define F_ACK TCPHDR_ACK

static struct blitz_tc_bpf *skel;
static int n_cpus;
static struct blitz_config cfg;
static const char *setup_skip;

/* NAME_v4 and NAME_v6: fn(false) and fn(true), once the testbed is up. */
#define TESTS_V4_V6(name, fn)                            \
	static void name##_v4(void)                      \
	{                                                \
		if (setup_skip)                          \
			return (void)T_SKIP(setup_skip); \
		fn(false);                               \
	}                                                \
	static void name##_v6(void)                      \
	{                                                \
		if (setup_skip)                          \
			return (void)T_SKIP(setup_skip); \
		fn(true);                                \
	}

/* What a crafted segment carries. */
struct seg_spec {
	bool v6;
	const char *saddr, *daddr;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	bool ts;
	uint32_t tsval, tsecr;
	bool ts_late;	  /* put the TS option after other options */
	int ip_opt_words; /* IPv4 options (NOPs), 32-bit words */
	bool fragment;
	const char *payload;
	uint16_t win;			  /* 0: 64240 */
	const uint8_t *src_mac, *dst_mac; /* 0: 02:00:00:00:00:00, zeros */
};

static const uint8_t local_mac[6] = {0x02}, zero_mac[6];

/* Build Ethernet + IP + TCP (+ options, payload) with tests/frame.h. */
static size_t build(uint8_t *f, const struct seg_spec *s)
{
	uint8_t opts[TCPOLEN_MAX];
	uint32_t optlen = 0;
	struct tf_seg t = {
		.v6 = s->v6,
		.src_mac = s->src_mac ? s->src_mac : local_mac,
		.dst_mac = s->dst_mac ? s->dst_mac : zero_mac,
		.sport = s->sport,
		.dport = s->dport,
		.seq = s->seq,
		.ack = s->ack,
		.flags = s->flags,
		.win = s->win ? s->win : 64240,
		.frag_off = s->fragment ? WIRE_IP_MF : 0,
		.payload = s->payload,
		.plen = s->payload ? (uint32_t)strlen(s->payload) : 0,
		.ihl = s->ip_opt_words ? 5 + s->ip_opt_words : 0,
	};

	if (s->ts_late) {
		/* a 2-byte unknown option, a SACK-permitted, then a TS with
		 * no NOPs before it (EOL-padded by tf_build) */
		opts[optlen++] = 30;
		opts[optlen++] = 2;
		opts[optlen++] = TCPOPT_SACK_PERMITTED;
		opts[optlen++] = TCPOLEN_SACK_PERMITTED;
		if (s->ts) {
			opts[optlen++] = TCPOPT_TIMESTAMP;
			opts[optlen++] = TCPOLEN_TIMESTAMP;
			wire_put32(opts + optlen, s->tsval);
			wire_put32(opts + optlen + 4, s->tsecr);
			optlen += 8;
		}
	} else if (s->ts) {
		optlen = wire_opt_timestamps(opts, s->tsval, s->tsecr);
	}
	t.opts = opts;
	t.optlen = optlen;
	tf_addrs(&t, s->saddr, s->daddr);
	return tf_build(f, &t);
}

static uint64_t counter(int id)
{
	return xdp_fixture_counter(skel->maps.counters, id);
}

static void set_config(const struct blitz_config *c)
{
	uint32_t key = 0;

	T_CHECK(!bpf_map_update_elem(bpf_map__fd(skel->maps.config), &key, c,
				     BPF_ANY));
}

/* Run the program on the frame; returns its verdict (-1 on error). */
static int run_frame(const uint8_t *f, size_t len)
{
	struct bpf_test_run_opts o = {
		.sz = sizeof(o),
		.data_in = f,
		.data_size_in = len,
		.repeat = 1,
	};
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.blitz_handoff),
				     &o);
	if (err) {
		printf("  test run failed: %s\n", strerror(errno));
		return -1;
	}
	return (int)o.retval;
}

static int run_spec(const struct seg_spec *s)
{
	uint8_t f[256];

	return run_frame(f, build(f, s));
}

/* Snapshot of the counters the program may move; bad is every drop of a
 * segment that is not ours (TSecr not our MAC, or without timestamps not
 * the handshake-completing segment). */
struct snap {
	uint64_t handoff, fail, bad;
};

static struct snap snap(void)
{
	struct snap s = {counter(BLITZ_CNT_HANDOFF),
			 counter(BLITZ_CNT_HANDOFF_FAIL),
			 counter(BLITZ_CNT_DROP_BAD_COOKIE) +
				 counter(BLITZ_CNT_DROP_NO_TS)};
	return s;
}

static bool snap_eq(struct snap a, struct snap b)
{
	return a.handoff == b.handoff && a.fail == b.fail && a.bad == b.bad;
}

static struct blitz_ck2_ring tring;

static const struct blitz_ck2_ring *ring_now(void)
{
	return cookie_ring_now(&tring, &cfg);
}

static void tuple_of(const struct seg_spec *s, struct blitz_ck2_tuple *t)
{
	uint32_t sa[4], da[4];

	if (!s->v6) {
		inet_pton(AF_INET, s->saddr, sa);
		inet_pton(AF_INET, s->daddr, da);
		blitz_ck2_tuple_v4(t, sa[0], da[0], htons(s->sport),
				   htons(s->dport));
		return;
	}
	inet_pton(AF_INET6, s->saddr, sa);
	inet_pton(AF_INET6, s->daddr, da);
	blitz_ck2_tuple_v6(t, sa, da, htons(s->sport), htons(s->dport));
}

/* The options of the connections these tests hand over: their SYN said
 * MSS 1460, window scale 7 and SACK-permitted (what Linux sends). */
static uint32_t conn_opts(const struct seg_spec *s)
{
	return blitz_ck2_opts(1460, 7, 1, s->v6);
}

/* Our ISN for a SYN without timestamps of s's 4-tuple with seq peer_isn. */
static uint32_t isn_of(const struct seg_spec *s, uint32_t peer_isn)
{
	struct blitz_ck2_tuple t;

	tuple_of(s, &t);
	return cookie_isn(ring_now(), &t, peer_isn, conn_opts(s));
}

/* The TSecr of a good cookie for s's seq and ack. */
static uint32_t tsecr_of(const struct seg_spec *s)
{
	struct blitz_ck2_tuple t;

	tuple_of(s, &t);
	return cookie_tsecr(ring_now(), &t, conn_opts(s), s->seq, s->ack);
}

/* The ack of the segment that completes our handshake at s->seq. */
static uint32_t handshake_ack(const struct seg_spec *s)
{
	return isn_of(s, s->seq - 1) + 1;
}

/* A data segment from a client to the service, with a wrong cookie: its
 * ack is not the handshake-completing one, its TSecr (when it has one)
 * not the MAC. */
static struct seg_spec data_seg(bool v6)
{
	struct seg_spec s = {
		.v6 = v6,
		.saddr = v6 ? "fd00::1" : "10.0.0.1",
		.daddr = v6 ? "fd00::1" : "10.0.0.1",
		.sport = 40000,
		.dport = PORT,
		.seq = 1000,
		.ack = 0x12345678,
		.flags = F_ACK | F_PSH,
		.payload = "POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx",
	};
	s.ack = handshake_ack(&s) + 0x80000000u;
	s.tsecr = tsecr_of(&s) ^ 1;
	return s;
}

static int listen_on(bool v6, uint16_t port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
				  .sin6_port = htons(port),
				  .sin6_addr = IN6ADDR_ANY_INIT};
	struct sockaddr_in a4 = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = 0};
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	/* the service addresses on lo (setup), not loopback: 127.0.0.1 and
	 * ::1 are never ours on an interface (blitz_addr.h) */
	inet_pton(AF_INET, "10.0.0.1", &a4.sin_addr);
	inet_pton(AF_INET6, "fd00::1", &a6.sin6_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if ((v6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6))
		: bind(fd, (struct sockaddr *)&a4, sizeof(a4))) ||
	    listen(fd, 16)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- tests ---- */

static void t_kfunc_supported(void)
{
	if (!tc_handoff_supported())
		return (void)T_SKIP(
			"kernel has no bpf_sk_assign_tcp_reqsk (Linux >= 6.9)");
	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	/* In the BTF and a working one: it checked the probe's arguments. */
	T_EQ_INT(tc_handoff_kfunc_probe(), -EINVAL);
}

/* Write a sysctl of our private netns. */
/*
 * The load-time prerequisites (tc_handoff_prereqs): the kfunc answers the
 * probe as a working one (-EINVAL: it checked its arguments; a stub says
 * -EOPNOTSUPP); net.ipv4.tcp_syncookies=0 or tcp_timestamps=0 in this
 * namespace make the check fail, and putting them back makes it pass.
 */
static void t_prerequisites(void)
{
	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	T_EQ_INT(tc_handoff_kfunc_probe(), -EINVAL);
	T_EQ_INT(tc_handoff_prereqs(), 0);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_syncookies", "0"));
	T_EQ_INT(tc_handoff_prereqs(), -EOPNOTSUPP);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_syncookies", "1"));
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_timestamps", "0"));
	T_EQ_INT(tc_handoff_prereqs(), -EOPNOTSUPP);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_timestamps", "1"));
	/* SACK and window scaling are no prerequisites: the XDP SYN-ACK
	 * leaves out what the sysctls leave out (config.flags) */
	T_EQ_INT(tc_handoff_kernel_opts(), 0);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_sack", "0"));
	T_EQ_INT(tc_handoff_prereqs(), 0);
	T_EQ_INT(tc_handoff_kernel_opts(), BLITZ_CFG_NO_SACK);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_window_scaling",
				    "0"));
	T_EQ_INT(tc_handoff_prereqs(), 0);
	T_EQ_INT(tc_handoff_kernel_opts(),
		 BLITZ_CFG_NO_SACK | BLITZ_CFG_NO_WSCALE);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_sack", "1"));
	T_EQ_INT(tc_handoff_kernel_opts(), BLITZ_CFG_NO_WSCALE);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_window_scaling",
				    "1"));
	T_EQ_INT(tc_handoff_kernel_opts(), 0);
	T_EQ_INT(tc_handoff_prereqs(), 0);
}

/*
 * What `blitz status` says when the sysctls changed after load
 * (tc_handoff_opts_drift): nothing while they match the config's flags;
 * a line naming the sysctl that went to 0 (hand-offs refused) or came
 * back (not offered), and the reload that follows it.
 */
static void t_opts_drift(void)
{
	char buf[320];

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	T_EQ_INT(tc_handoff_opts_drift("eth9", 0, false, buf, sizeof(buf)), 0);
	T_CHECK(!buf[0]);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_sack", "0"));
	T_EQ_INT(tc_handoff_opts_drift("eth9", 0, false, buf, sizeof(buf)), 1);
	T_CHECK_MSG(strstr(buf, "net.ipv4.tcp_sack turned off since") &&
			    strstr(buf, "hand-offs leave it out") &&
			    !strstr(buf, "window") &&
			    strstr(buf, "`blitz reload eth9`"),
		    "%s", buf);
	T_EQ_INT(tc_handoff_opts_drift("eth9", BLITZ_CFG_NO_SACK, false, buf,
				       sizeof(buf)),
		 0);
	T_CHECK(!xdp_fixture_sysctl("/proc/sys/net/ipv4/tcp_sack", "1"));
	T_EQ_INT(tc_handoff_opts_drift("eth9", BLITZ_CFG_NO_WSCALE, true, buf,
				       sizeof(buf)),
		 1);
	T_CHECK_MSG(strstr(buf, "tcp_window_scaling turned on since") &&
			    !strstr(buf, "tcp_sack") &&
			    strstr(buf, "restarting the serve"),
		    "%s", buf);
}

static void t_not_for_service(void)
{
	struct seg_spec s = data_seg(false);
	struct blitz_config c = cfg;
	struct snap before;
	uint8_t arp[60] = {0};

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	before = snap();
	((struct ethhdr *)arp)->h_proto = htons(ETH_P_ARP);
	T_EQ_INT(run_frame(arp, sizeof(arp)), TC_ACT_OK);
	s.dport = PORT + 1; /* another port */
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	s = data_seg(true);
	s.dport = 22;
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	/* the service port, but an address the service is not on */
	c.n_addr4 = 1;
	inet_pton(AF_INET, "10.0.0.3", &c.addr4_be[0]);
	set_config(&c);
	s = data_seg(false);
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	s = data_seg(true); /* only IPv4 addresses configured */
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	/* the afxdp engine: its connections are not the kernel's business */
	c = cfg;
	c.mode = BLITZ_MODE_AFXDP;
	set_config(&c);
	s = data_seg(false);
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	set_config(&cfg);
	T_CHECK(snap_eq(before, snap()));
}

static int set_forwarding(int on)
{
	const char *paths[] = {"/proc/sys/net/ipv4/ip_forward",
			       "/proc/sys/net/ipv6/conf/all/forwarding"};
	int i, err = 0;

	for (i = 0; i < 2; i++) {
		FILE *fp = fopen(paths[i], "w");

		if (!fp || fputs(on ? "1" : "0", fp) < 0)
			err = -1;
		if (fp && fclose(fp))
			err = -1;
	}
	return err;
}

/*
 * Forwarded traffic is not ours (blitz_addr.h, the XDP program's rule):
 * with forwarding on, a segment with a bad cookie to an address routed
 * through a veth (10.9.0.5, fd09::5) passes untouched, where one to a
 * local address is dropped; so does a frame for another host's MAC.
 */
static void t_forwarded_passed(void)
{
	struct seg_spec s;
	struct snap before;
	uint8_t f[256];
	size_t n;

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	T_CHECK(!set_forwarding(1));
	before = snap();
	s = data_seg(false);
	s.daddr = "10.9.0.5";
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	s = data_seg(true);
	s.daddr = "fd09::5";
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	s = data_seg(false);
	n = build(f, &s);
	f[0] = 0x02; /* to 02:00:00:00:00:99, not lo's address */
	f[5] = 0x99;
	T_EQ_INT(run_frame(f, n), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
	/* the same bad segment to the local address is dropped */
	s = data_seg(false);
	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	s = data_seg(true);
	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	T_EQ_INT(snap().bad, before.bad + 2);
	T_CHECK(!set_forwarding(0));
}

static void t_syn_rst_noack_passed(void)
{
	struct seg_spec s = data_seg(false);
	struct snap before;

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	before = snap();
	s.flags = F_SYN;
	s.payload = NULL;
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	s.flags = F_RST | F_ACK;
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	s.flags = F_PSH;
	s.payload = "GET / HTTP/1.1\r\n\r\n";
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	s = data_seg(true);
	s.flags = F_SYN;
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
}

static void t_truncated_passed(void)
{
	struct seg_spec s = data_seg(false);
	struct snap before;
	uint8_t f[256];

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	/* (Frames shorter than their IP header are refused by the test run
	 * itself, so truncation starts at the TCP header.) */
	before = snap();
	build(f, &s);
	T_EQ_INT(run_frame(f, 14 + 20 + 19), TC_ACT_OK);
	s = data_seg(true);
	build(f, &s);
	T_EQ_INT(run_frame(f, 14 + 40 + 10), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
	/* A TCP header longer (doff) than the IP packet: malformed, the
	 * kernel drops it. */
	s = data_seg(false);
	s.payload = "GET";
	build(f, &s);
	((struct tcphdr *)(f + ETH_HLEN + WIRE_IP4_HLEN))->doff = 15;
	T_EQ_INT(run_frame(f, 14 + 20 + 20 + 3), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
	/* Options (doff = 15) the IP length covers but the frame does not
	 * hold: a frame shorter than its IP length is malformed for the
	 * parser XDP and TC share (blitz_seg.h); the kernel drops it. */
	s = data_seg(false);
	s.payload =
		"GET /a/target/long/enough/to/cover/forty/bytes HTTP/1.1\r\n";
	build(f, &s);
	((struct tcphdr *)(f + ETH_HLEN + WIRE_IP4_HLEN))->doff = 15;
	T_EQ_INT(run_frame(f, 14 + 20 + 24), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
	/* The same header in a frame that holds it: no timestamp can be
	 * read from the options (all zero: EOL), so the ack decides, and
	 * this one is not ours. */
	build(f, &s);
	((struct tcphdr *)(f + ETH_HLEN + WIRE_IP4_HLEN))->doff = 15;
	memset(f + 14 + 20 + 20, 0, 40);
	T_CHECK(tf_tcp_csum_again(f, 14 + 20 + 20 + 40 + 17)); /* as sent */
	T_EQ_INT(run_frame(f, 14 + 20 + 20 + 40 + 17), TC_ACT_SHOT);
	T_EQ_INT(snap().bad, before.bad + 1);
	T_EQ_INT(counter(BLITZ_CNT_HANDOFF), before.handoff);
}

/* A VLAN-tagged segment (the tag in the frame: QinQ's inner tag, as TC
 * sees it after the stack took the outer one out) is the VLAN device's:
 * left alone, neither dropped nor handed off (blitz_seg.h). The same
 * segment untagged, a bad cookie, is dropped: the control. A tag the
 * stack moved out of the frame (skb->vlan_present) cannot be set through
 * BPF_PROG_TEST_RUN; the program checks it first. */
static void t_vlan_tagged_left_alone(void)
{
	struct seg_spec s = data_seg(false);
	struct snap before;
	uint8_t f[300], t[300];
	size_t n;

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	s.ts = true;
	s.tsval = 777;
	s.tsecr = 1;
	n = build(f, &s);
	before = snap();
	T_EQ_INT(run_frame(f, n), TC_ACT_SHOT);
	T_EQ_INT(snap().bad, before.bad + 1);
	memcpy(t, f, 12);
	t[12] = 0x81;
	t[13] = 0x00;
	t[14] = 0x00;
	t[15] = 100;
	memcpy(t + 16, f + 12, n - 12);
	before = snap();
	T_EQ_INT(run_frame(t, n + 4), TC_ACT_OK);
	t[12] = 0x88;
	t[13] = 0xa8;
	T_EQ_INT(run_frame(t, n + 4), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
}

static void t_fragment_passed(void)
{
	struct seg_spec s = data_seg(false);
	struct snap before;

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	before = snap();
	s.fragment = true;
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
}

/* Serve a port nobody listens on: a segment whose cookie verifies goes
 * to the kernel (which resets it, as for any closed port); any other is
 * dropped and counted: a RST to it would make blitz a reflector. */
static void t_no_listener_passed(void)
{
	struct blitz_config c = cfg;
	struct seg_spec s = data_seg(false);
	struct snap before;
	int v6;

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	c.port_be = htons(PORT + 7);
	set_config(&c);
	for (v6 = 0; v6 < 2; v6++) {
		s = data_seg(v6);
		s.dport = PORT + 7;
		before = snap();
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		T_EQ_INT(snap().bad, before.bad + 1);
		s.ack = handshake_ack(&s);
		before = snap();
		T_EQ_INT(run_spec(&s), TC_ACT_OK);
		T_CHECK(snap_eq(before, snap()));
		s.ts = true;
		s.tsval = 99;
		s.ack = 4242;
		s.tsecr = tsecr_of(&s);
		T_EQ_INT(run_spec(&s), TC_ACT_OK);
		T_CHECK(snap_eq(before, snap()));
		s.tsecr ^= 1 << 10;
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		T_EQ_INT(snap().bad, before.bad + 1);
	}
	set_config(&cfg);
}

static void bad_cookie_case(bool v6, bool ts, bool ts_late, int ip_opts)
{
	struct seg_spec s = data_seg(v6);
	struct snap before = snap();

	s.ts = ts;
	s.ts_late = ts_late;
	s.tsval = 777;
	s.ip_opt_words = ip_opts;
	if (ts) /* a good ack does not help when the TSecr is wrong */
		s.ack = handshake_ack(&s);
	/* without timestamps it is not the handshake-completing segment */
	int why = ts ? BLITZ_CNT_DROP_BAD_COOKIE : BLITZ_CNT_DROP_NO_TS;
	uint64_t want = counter(why) + 1;

	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	T_EQ_INT(counter(why), want);
	T_EQ_INT(snap().bad, before.bad + 1);
	T_EQ_INT(counter(BLITZ_CNT_HANDOFF), before.handoff);
	T_EQ_INT(counter(BLITZ_CNT_HANDOFF_FAIL), before.fail);
}

static void t_bad_cookie_dropped_v4(void)
{
	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	bad_cookie_case(false, false, false, 0);
	bad_cookie_case(false, true, false, 0);
	bad_cookie_case(false, true, true, 0);
	/* IP options: the TCP header is found after them */
	bad_cookie_case(false, false, false, 2);
}

static void t_bad_cookie_dropped_v6(void)
{
	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	bad_cookie_case(true, false, false, 0);
	bad_cookie_case(true, true, false, 0);
}

/* A segment of a connection the kernel accepted passes, whatever its
 * numbers: the kernel owns that 4-tuple. */
static void established_case(bool v6)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct seg_spec s = data_seg(v6);
	struct snap before;
	int lfd, cfd, afd;

	lfd = listen_on(v6, PORT + 1);
	T_CHECK(lfd >= 0);
	if (lfd < 0)
		return;
	cfd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	getsockname(lfd, (struct sockaddr *)&ss, &sl);
	T_CHECK(!connect(cfd, (struct sockaddr *)&ss, sl));
	afd = accept(lfd, NULL, NULL);
	T_CHECK(afd >= 0);
	sl = sizeof(ss);
	getsockname(cfd, (struct sockaddr *)&ss, &sl);

	struct blitz_config c = cfg;

	c.port_be = htons(PORT + 1);
	set_config(&c);
	before = snap();
	s.dport = PORT + 1;
	s.sport = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
			   : ((struct sockaddr_in *)&ss)->sin_port);
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
	/* and another source port of the same peer is not that connection */
	s.sport++;
	s.ack = handshake_ack(&s) + 0x80000000u;
	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	set_config(&cfg);
	close(afd);
	close(cfd);
	close(lfd);
}

static void t_kernel_owned_passed(void)
{
	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	established_case(false);
	established_case(true);
}

/*
 * A segment with a good cookie reaches the kfunc: HANDOFF and TC_ACT_OK
 * when the kernel made the request sock, HANDOFF_FAIL and TC_ACT_SHOT when
 * it refused (a test run is not a TC ingress hook, which the kfunc
 * demands); never DROP_BAD_COOKIE.
 */
static int n_assigned, n_refused;

static void good_cookie_case(struct seg_spec *s)
{
	struct snap before = snap(), after;
	int v = run_spec(s);

	after = snap();
	if (v == TC_ACT_OK)
		n_assigned++;
	else
		n_refused++;
	T_EQ_INT(after.bad, before.bad);
	if (v == TC_ACT_OK) {
		T_EQ_INT(after.handoff, before.handoff + 1);
		T_EQ_INT(after.fail, before.fail);
	} else {
		T_EQ_INT(v, TC_ACT_SHOT);
		T_EQ_INT(after.fail, before.fail + 1);
		T_EQ_INT(after.handoff, before.handoff);
	}
}

static void good_cookies(bool v6)
{
	struct seg_spec s = data_seg(v6);

	/* no timestamps: only the segment completing the handshake */
	s.ack = handshake_ack(&s);
	good_cookie_case(&s);
	/* timestamps: TSecr is the cookie of this seq and ack */
	s.ts = true;
	s.tsval = 12345;
	s.ack = 42;
	s.tsecr = tsecr_of(&s);
	good_cookie_case(&s);
	s.ts_late = true;
	good_cookie_case(&s);
}

TESTS_V4_V6(t_good_cookie_handed_off, good_cookies)

/* Without timestamps there is no ack window: one off in ack or seq, or
 * an ack after bytes XDP could have sent, is not ours. */
static void t_no_ts_only_handshake(void)
{
	struct seg_spec s = data_seg(false);
	struct snap before;
	uint32_t ack = handshake_ack(&s);

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	before = snap();
	s.ack = ack - 1;
	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	s.ack = ack + 1;
	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	s.ack = ack + 500; /* "XDP already sent 500 bytes" */
	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	s.ack = ack;
	s.seq++;
	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	T_EQ_INT(snap().bad, before.bad + 4);
	T_EQ_INT(counter(BLITZ_CNT_HANDOFF) + counter(BLITZ_CNT_HANDOFF_FAIL),
		 before.handoff + before.fail);
	s.seq--;
	good_cookie_case(&s);
}

/*
 * Issue 10 part 2: without timestamps, a later segment is the kernel's to
 * take only at the frontier of the flow entry the XDP program made for
 * its connection (bpf/blitz_flow.h's blitz_flow_frontier: seq == rcv_nxt,
 * ack == snd_nxt, our FIN not sent, the entry alive under an accepting
 * key). The entry is written here as the XDP program would have left it
 * (the programs share the map in service).
 */
struct flow_set {
	struct blitz_flow w[4];
	uint32_t tick, pad;
};

/* Put entry f of s's 4-tuple (tagged with its flow hash, last used age
 * epochs ago) on every CPU; 0 on success. */
static int put_flow(const struct seg_spec *s, struct blitz_flow *f, int age)
{
	const struct blitz_ck2_ring *r = ring_now();
	size_t vs = bpf_map__value_size(skel->maps.flows);
	struct blitz_ck2_tuple t;
	uint8_t *vals;
	uint32_t idx;
	int i, err;

	if (vs != sizeof(struct flow_set))
		return -1;
	tuple_of(s, &t);
	f->h.flow0 = f->h.flow = blitz_ck2_flow(&r->slot[0], &t);
	f->h.epoch = r->e_now;
	f->h.opts = conn_opts(s);
	if (!f->key) /* the current key unless the test set another */
		f->key = r->slot[0].off.k0;
	f->epoch = (uint32_t)r->e_now - (uint32_t)age;
	idx = (uint32_t)(f->h.flow0 >> 32) & 4095;
	vals = calloc((size_t)n_cpus, vs);
	if (!vals)
		return -1;
	for (i = 0; i < n_cpus; i++)
		memcpy(&((struct flow_set *)(vals + (size_t)i * vs))->w[1], f,
		       sizeof(*f));
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.flows), &idx, vals,
				  BPF_ANY);
	free(vals);
	return err;
}

static void t_no_ts_flow_frontier(void)
{
	struct seg_spec s;
	struct blitz_flow f;
	struct snap before;
	uint64_t from_flow;
	int v6;

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	T_EQ_INT(bpf_map__value_size(skel->maps.flows),
		 sizeof(struct flow_set));
	for (v6 = 0; v6 < 2; v6++) {
		s = data_seg(v6);
		s.sport = 45000;
		/* the handshake was at seq - 100; 300 bytes of ours since */
		memset(&f, 0, sizeof(f));
		f.rcv_nxt = s.seq;
		f.snd_nxt = handshake_ack(&s) + 300;
		f.pt_rcv[0] = s.seq - 60;
		f.pt_snd[0] = f.snd_nxt - 150;
		T_CHECK(!put_flow(&s, &f, 0));
		/* at the frontier: to the kfunc (refused in a test run) */
		s.ack = f.snd_nxt;
		from_flow = counter(BLITZ_CNT_HANDOFF_FROM_FLOW);
		before = snap();
		good_cookie_case(&s);
		T_EQ_INT(counter(BLITZ_CNT_HANDOFF_FROM_FLOW) - from_flow,
			 counter(BLITZ_CNT_HANDOFF) - before.handoff);
		/* off by one either way, an earlier point, another port */
		before = snap();
		s.ack = f.snd_nxt + 1;
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		s.ack = f.snd_nxt - 1;
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		s.ack = f.snd_nxt;
		s.seq++;
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		s.seq = f.pt_rcv[0];
		s.ack = f.pt_snd[0];
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		s.seq = f.rcv_nxt;
		s.ack = f.snd_nxt;
		s.sport++;
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		s.sport--;
		/* with timestamps the TSecr decides, not the entry */
		s.ts = true;
		s.tsval = 5;
		s.tsecr = 0x1234;
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		s.ts = false;
		/* our FIN sent; an entry two epochs old; another key */
		f.flags = BLITZ_FLOW_CLOSED;
		T_CHECK(!put_flow(&s, &f, 0));
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		f.flags = 0;
		T_CHECK(!put_flow(&s, &f, 2));
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		f.key ^= 1;
		T_CHECK(!put_flow(&s, &f, 0));
		f.key ^= 1;
		T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
		T_EQ_INT(snap().bad, before.bad + 9);
		T_EQ_INT(counter(BLITZ_CNT_HANDOFF) +
				 counter(BLITZ_CNT_HANDOFF_FAIL),
			 before.handoff + before.fail);
		/* nobody listens: a frontier segment goes to the kernel (its
		 * RST), anything else is dropped */
		{
			struct blitz_config c = cfg;
			struct seg_spec o = s;

			c.port_be = htons(PORT + 7);
			set_config(&c);
			o.dport = PORT + 7;
			T_CHECK(!put_flow(&o, &f, 0));
			before = snap();
			T_EQ_INT(run_spec(&o), TC_ACT_OK);
			T_CHECK(snap_eq(before, snap()));
			o.ack++;
			T_EQ_INT(run_spec(&o), TC_ACT_SHOT);
			T_EQ_INT(snap().bad, before.bad + 1);
			set_config(&cfg);
		}
	}
}

/* xorshift: the spoofer's numbers, reproducible. */
static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* A client port for a forged segment: 1024-65535 outside the kernel's
 * ephemeral range of this netns (xdp_fixture_ephemeral()). */
static uint16_t rnd_sport(void)
{
	uint16_t p = (uint16_t)(rnd() | 1024);

	return p >= XDP_FIXTURE_EPHEMERAL_LO && p <= XDP_FIXTURE_EPHEMERAL_HI
		       ? (uint16_t)(p + 10000)
		       : p;
}

/*
 * Issue 9: thousands of blind spoofs with non-trivial payloads (a POST
 * with a body, half a request, a pipelined pair), from random ports of a
 * peer that never connected: no timestamps and a random ack; a random
 * TSecr; the TSecr of another 4-tuple replayed; without timestamps the
 * handshake ack of another seq. None may reach the kfunc.
 */
static void t_spoofs_never_handed_off(void)
{
	static const char *const payloads[] = {
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
		"GET /big HTTP/1.1\r\nHost: a\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n"
		"Host: a\r\n\r\n",
		"x",
	};
	struct snap before;
	int kind, i, n = 2048, shot;

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	for (kind = 0; kind < 4; kind++) {
		before = snap();
		shot = 0;
		for (i = 0; i < n; i++) {
			struct seg_spec s = data_seg(i & 1);

			s.payload = payloads[i % 4];
			s.sport = rnd_sport();
			s.seq = rnd();
			s.ack = rnd();
			if (kind == 0 && s.ack == handshake_ack(&s))
				s.ack++; /* a 2^-32 lucky guess, not a spoof */
			if (kind == 1) {
				s.ts = true;
				s.tsval = rnd();
				s.tsecr = rnd();
				if (s.tsecr == tsecr_of(&s))
					s.tsecr++;
			}
			if (kind == 2) {
				struct seg_spec o = s;

				o.sport ^= 1;
				s.ts = true;
				s.tsval = rnd();
				s.tsecr = tsecr_of(&o);
			}
			if (kind == 3)
				s.ack = isn_of(&s, s.seq - 2 - rnd() % 4096) +
					1;
			shot += run_spec(&s) == TC_ACT_SHOT;
		}
		T_CHECK_MSG(shot == n, "kind %d: %d of %d dropped", kind, shot,
			    n);
		T_EQ_INT(snap().bad, before.bad + (uint64_t)n);
		T_EQ_INT(counter(BLITZ_CNT_HANDOFF), before.handoff);
		T_EQ_INT(counter(BLITZ_CNT_HANDOFF_FAIL), before.fail);
	}
}

/*
 * The segment right after one just handed over (same batch, the
 * connection not made yet) passes untouched: TCP will find the connection
 * the first one makes. Only with the expected seq, only shortly after,
 * and never without a good cookie.
 */
static void t_follow_up_segment_passed(void)
{
	struct seg_spec s = data_seg(false);
	struct {
		uint32_t saddr[4], daddr[4];
		uint16_t sport, dport;
	} k = {0};
	struct {
		uint64_t at_ns;
		uint32_t next_seq, pad;
	} v = {0};
	struct timespec now;
	struct snap before;
	int fd;

	if (setup_skip)
		return (void)T_SKIP(setup_skip);
	fd = bpf_map__fd(skel->maps.recent);
	inet_pton(AF_INET, s.saddr, k.saddr);
	inet_pton(AF_INET, s.daddr, k.daddr);
	k.sport = htons(s.sport);
	k.dport = htons(s.dport);
	clock_gettime(CLOCK_MONOTONIC, &now); /* bpf_ktime_get_ns() */
	v.at_ns = now.tv_sec * 1000000000ULL + now.tv_nsec;
	v.next_seq = s.seq;
	T_CHECK(!bpf_map_update_elem(fd, &k, &v, BPF_ANY));

	before = snap();
	/* a wrong cookie is dropped even so */
	T_EQ_INT(run_spec(&s), TC_ACT_SHOT);
	T_EQ_INT(snap().bad, before.bad + 1);
	/* the expected segment passes without a request sock of its own */
	s.ack = handshake_ack(&s);
	before = snap();
	T_EQ_INT(run_spec(&s), TC_ACT_OK);
	T_CHECK(snap_eq(before, snap()));
	/* and the next expected seq moved past its payload */
	T_CHECK(!bpf_map_lookup_elem(fd, &k, &v));
	T_EQ_INT(v.next_seq, s.seq + strlen(s.payload));
	/* the same segment again (a retransmission): a hand-off of its own */
	good_cookie_case(&s);
	/* the expected seq, but long after: a hand-off of its own */
	v.next_seq = s.seq;
	v.at_ns -= 5000000000ULL;
	T_CHECK(!bpf_map_update_elem(fd, &k, &v, BPF_ANY));
	good_cookie_case(&s);
	T_CHECK(!bpf_map_delete_elem(fd, &k));
}

/* ---- multi-segment replies to pipelined batches (blitz_pipe.h) ---- */

#define PIPE_RESP_LEN 300 /* 16 of them need 4 segments of 1448 bytes */
#define PIPE_DATE_OFF 23

static uint8_t pipe_tmpl[BLITZ_RESP_KINDS][PIPE_RESP_LEN];

/* Templates of PIPE_RESP_LEN bytes per kind (the kind in the status
 * line), the Date at PIPE_DATE_OFF, as the loader would fill them. */
static int pipe_fill_responses(void)
{
	struct blitz_resp r;
	uint32_t k;

	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		char *t = (char *)pipe_tmpl[k];

		memset(t, 'x', PIPE_RESP_LEN);
		memcpy(t, "HTTP/1.1 200 OK\r\nDate: ", PIPE_DATE_OFF);
		memset(t + PIPE_DATE_OFF, 0, BLITZ_DATE_LEN);
		t[PIPE_RESP_LEN - 5] = (char)('0' + k);
		memcpy(t + PIPE_RESP_LEN - 4, "\r\n\r\n", 4);
		memset(&r, 0, sizeof(r));
		memcpy(r.bytes, t, PIPE_RESP_LEN);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.responses), &k,
					&r, BPF_ANY))
			return -1;
		cfg.resp[k].len = PIPE_RESP_LEN;
		cfg.resp[k].date_off = PIPE_DATE_OFF;
	}
	set_config(&cfg);
	return 0;
}

/* A raw socket on bzt1, where what the program sends out of bzt0 lands. */
static int pipe_sniffer(void)
{
	struct sockaddr_ll a = {.sll_family = AF_PACKET,
				.sll_protocol = htons(ETH_P_ALL)};
	struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	a.sll_ifindex = if_nametoindex("bzt1");
	if (fd < 0 || !a.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* What one segment of the burst said. */
struct pipe_seg {
	uint32_t seq, ack, tsval, tsecr, len;
	uint8_t flags;
	bool csum_ok, mac_ok;
	uint8_t payload[4096];
};

/* The next TCP segment from port PORT on the sniffer, or -1. */
static int pipe_recv(int fd, bool v6, const uint8_t *client_mac,
		     struct pipe_seg *o)
{
	uint8_t f[9216];
	ssize_t n;

	while ((n = recv(fd, f, sizeof(f), 0)) > 0) {
		struct tf_out t;
		bool ok = tf_parse(f, (uint32_t)n, &t);

		if (!t.p.tcp || !t.p.ip6 != !v6 ||
		    ntohs(t.p.tcp->source) != PORT)
			continue;
		if (!ok)
			return -1;
		o->len = t.p.payload_len;
		o->seq = t.seq;
		o->ack = t.ack;
		o->flags = t.flags;
		o->tsval = o->tsecr = 0;
		/* NOP, NOP, timestamps and nothing else */
		if (t.thlen == WIRE_TCP_HLEN + 12 && t.o.has_ts) {
			o->tsval = t.o.tsval;
			o->tsecr = t.o.tsecr;
		}
		o->csum_ok = t.tcp_csum_ok && t.ip_csum_ok;
		o->mac_ok = !memcmp(f, client_mac, 6);
		memcpy(o->payload, t.p.payload,
		       o->len < sizeof(o->payload) ? o->len : 0);
		return 0;
	}
	return -1;
}

static int bzt0_mac(uint8_t *mac)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "bzt0");
	err = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (err)
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

/* Run frame f on bzt0's ingress (a test run with its ifindex: the clones
 * leave by bzt0 and arrive on bzt1). */
static int run_frame_on(const uint8_t *f, size_t len, int ifindex,
			uint32_t gso_segs)
{
	struct __sk_buff ctx = {.ifindex = (uint32_t)ifindex,
				.gso_segs = gso_segs,
				.gso_size = gso_segs > 1 ? 1448 : 0};
	struct bpf_test_run_opts o = {
		.sz = sizeof(o),
		.data_in = f,
		.data_size_in = len,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = 1,
	};

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.blitz_handoff),
				   &o)) {
		printf("  test run failed: %s\n", strerror(errno));
		return -1;
	}
	return (int)o.retval;
}

/* A pipelining client's segment to the service on bzt0 (10.9.0.2 or
 * fd09::2 to .1, ACK|PSH with timestamps): from sport, at seq and ack. */
static struct seg_spec pipe_client(bool v6, uint16_t sport, uint32_t seq,
				   uint32_t ack, uint32_t tsval,
				   const char *payload)
{
	struct seg_spec s = {
		.v6 = v6,
		.saddr = v6 ? "fd09::2" : "10.9.0.2",
		.daddr = v6 ? "fd09::1" : "10.9.0.1",
		.sport = sport,
		.dport = PORT,
		.seq = seq,
		.ack = ack,
		.flags = F_ACK | F_PSH,
		.ts = true,
		.tsval = tsval,
		.payload = payload,
	};

	return s;
}

/* A burst test's batch: nreq copies of req in payload (s's), s sent from
 * client_mac to bzt0's mymac with the TSecr of its point; *held (when
 * asked) the start of its last request. Returns the sniffer on the peer
 * veth, < 0 (checked) when none. */
static int pipe_batch(struct seg_spec *s, char *payload, const char *req,
		      int nreq, uint8_t *mymac, uint8_t *client_mac,
		      uint32_t *held)
{
	int fd, i;

	payload[0] = 0;
	for (i = 0; i < nreq; i++)
		strcat(payload, req);
	T_CHECK(!bzt0_mac(mymac));
	s->dst_mac = mymac;
	s->src_mac = client_mac;
	s->tsecr = tsecr_of(s);
	if (held)
		*held = s->seq + (nreq - 1) * strlen(req);
	fd = pipe_sniffer();
	T_CHECK(fd >= 0);
	return fd;
}

/*
 * One batch of nreq GETs from the client (no kernel listener on the
 * address), window win (its shift is 7): the program's burst must be
 * n_answer responses in ceil(bytes / MSS) segments of at most MSS
 * (1448 with timestamps), in sequence from the client's ack, each acking
 * the requests answered (all, or only those of a partial answer), with
 * good checksums, PSH (and nothing else) on the last, and every TSval the
 * burst-end cookie a later segment of the client verifies with.
 */
static void pipe_case(bool v6, int nreq, uint16_t win, int n_answer,
		      uint32_t gso_segs)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	char payload[2048] = "";
	uint8_t f[4096], mymac[6], client_mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	struct seg_spec s =
		pipe_client(v6, 40100, 777000, 5550000, 31337, payload);
	static struct pipe_seg seg;
	struct blitz_ck2_tuple t;
	struct blitz_ck2_hit h;
	uint64_t req0 = counter(BLITZ_CNT_TC_REQUESTS),
		 all0 = counter(BLITZ_CNT_REQUESTS),
		 seg0 = counter(BLITZ_CNT_TC_SEGMENTS),
		 part0 = counter(BLITZ_CNT_TC_PARTIAL),
		 gso0 = counter(BLITZ_CNT_TC_GSO);
	uint32_t mss = v6 ? 1440 - 12 : 1460 - 12, want_bytes, got = 0,
		 nseg = 0, want_ack, want_end;
	size_t len;
	int fd, v, i;

	fd = pipe_batch(&s, payload, req, nreq, mymac, client_mac, NULL);
	if (fd < 0)
		return;
	s.win = win;
	len = build(f, &s);
	v = run_frame_on(f, len, if_nametoindex("bzt0"), gso_segs);
	T_EQ_INT(v, TC_ACT_SHOT);
	want_bytes = (uint32_t)n_answer * PIPE_RESP_LEN;
	want_end = s.seq + (uint32_t)n_answer * (sizeof(req) - 1);
	want_ack = want_end;
	/* every request answered in several segments: the last one's ack
	 * is held back until the client has the whole burst */
	if (n_answer == nreq && want_bytes > mss)
		want_ack -= sizeof(req) - 1;
	tuple_of(&s, &t);
	while (got < want_bytes && pipe_recv(fd, v6, client_mac, &seg) == 0) {
		bool last;

		T_EQ_INT(seg.seq, s.ack + got);
		T_EQ_INT(seg.ack, want_ack);
		T_CHECK_MSG(seg.len <= mss && seg.len > 0, "len %u", seg.len);
		T_CHECK(seg.csum_ok);
		T_CHECK(seg.mac_ok);
		T_EQ_INT(seg.tsecr, s.tsval);
		/* the client's next segment (seq = the end of the requests
		 * answered, ack = the burst's end, echoing this TSval)
		 * verifies */
		T_EQ_INT(blitz_ck2_check_ts(ring_now(), &t, want_end,
					    s.ack + want_bytes, seg.tsval, &h),
			 BLITZ_CK2_OK);
		/* the bytes: the templates in order (Date aside) */
		for (i = 0; i < (int)seg.len; i++) {
			uint32_t at = got + (uint32_t)i,
				 off = at % PIPE_RESP_LEN;

			if (off >= PIPE_DATE_OFF &&
			    off < PIPE_DATE_OFF + BLITZ_DATE_LEN)
				continue;
			if (seg.payload[i] !=
			    pipe_tmpl[BLITZ_RESP_GET_KA][off]) {
				T_CHECK_MSG(0, "byte %u differs", at);
				break;
			}
		}
		got += seg.len;
		nseg++;
		last = got >= want_bytes;
		T_EQ_INT(seg.flags, F_ACK | (last ? F_PSH : 0));
	}
	if (getenv("PIPE_DEBUG"))
		printf("  fail %llu nowin %llu len %u payload %.40s\n",
		       (unsigned long long)counter(BLITZ_CNT_TC_FAIL),
		       (unsigned long long)counter(BLITZ_CNT_TC_NO_WINDOW),
		       seg.len, seg.payload);
	T_EQ_INT(got, want_bytes);
	T_EQ_INT(nseg, (want_bytes + mss - 1) / mss);
	/* and nothing more */
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) < 0);
	close(fd);
	T_EQ_INT(counter(BLITZ_CNT_TC_REQUESTS), req0 + (uint64_t)n_answer);
	/* One event, one name: TC's answers are requests too. */
	T_EQ_INT(counter(BLITZ_CNT_REQUESTS), all0 + (uint64_t)n_answer);
	T_EQ_INT(counter(BLITZ_CNT_TC_SEGMENTS), seg0 + nseg);
	T_EQ_INT(counter(BLITZ_CNT_TC_PARTIAL),
		 part0 + (n_answer < nreq ? 1 : 0));
	T_EQ_INT(counter(BLITZ_CNT_TC_GSO), gso0 + (gso_segs > 1 ? 1 : 0));
}

static int pipe_ready(void)
{
	if (setup_skip)
		return (void)T_SKIP(setup_skip), 0;
	if (pipe_fill_responses())
		return (void)T_SKIP("cannot fill the responses map"), 0;
	return 1;
}

/* A test of its own for one pipelined case: call, once the responses
 * are in place. */
#define PIPE_TEST(name, call)     \
	static void name(void)    \
	{                         \
		if (pipe_ready()) \
			call;     \
	}

/* 16 pipelined GETs: 16 responses of 300 bytes in 4 segments. */
PIPE_TEST(t_pipeline_16_v4, pipe_case(false, 16, 64240, 16, 0))

PIPE_TEST(t_pipeline_16_v6, pipe_case(true, 16, 64240, 16, 0))

/* A GRO-merged skb (gso_segs 2) is answered the same way, and counted. */
PIPE_TEST(t_pipeline_gso, pipe_case(false, 16, 64240, 16, 2))

/* A window of 8 << 7 = 1024 bytes holds 3 responses: only those are sent
 * and only their requests acked; the client sends the rest again. */
PIPE_TEST(t_pipeline_window_partial, pipe_case(false, 16, 8, 3, 0))

/* IW10: 60 GETs need 18 000 bytes; a burst of 10 segments of 1448
 * (14 480 bytes) holds 48 responses of 300: those are sent and acked. */
PIPE_TEST(t_pipeline_burst_bound, pipe_case(false, 60, 64240, 48, 0))

/* bpf_ktime_get_ns()'s clock, as the test sees it */
static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/*
 * A burst under loss (blitz_pipe_burst_on): 16 GETs answered in 4
 * segments that ack all but the last request. The client lost segments
 * 1 and 2: a repeated ACK below the burst's end brings back the segment
 * at that ack, byte for byte the one sent first (its Date too), the same
 * ack and TSval; a third at once does not (suppressed); the client's
 * retransmission of the request left unacked brings back segment 1 (its
 * TSecr the one before the burst). With every byte, its ACK of the burst
 * (proved by the cookie) and that request again each get an ACK of the
 * last request. Spoofs (TSecr or seq off) get nothing.
 */
static void pipe_loss_case(bool v6)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	static struct pipe_seg orig[4], seg;
	char payload[1024] = "";
	uint8_t f[4096], mymac[6], client_mac[6] = {0x02, 0, 0, 0, 0, 0x43};
	struct seg_spec s =
		pipe_client(v6, 40200, 123000, 9990000, 4000, payload);
	struct seg_spec c;
	uint32_t rl = sizeof(req) - 1, end_req, held, end, got = 0;
	uint64_t t0;
	bool again;
	uint64_t resent0 = counter(BLITZ_CNT_RETRANSMITS),
		 acked0 = counter(BLITZ_CNT_TC_WITHHELD_ACK),
		 bad0 = counter(BLITZ_CNT_DROP_BAD_COOKIE);
	int fd, n = 0, ifx = if_nametoindex("bzt0");

	fd = pipe_batch(&s, payload, req, 16, mymac, client_mac, &held);
	if (fd < 0)
		return;
	end_req = held + rl;
	T_EQ_INT(run_frame_on(f, build(f, &s), ifx, 0), TC_ACT_SHOT);
	while (n < 4 && pipe_recv(fd, v6, client_mac, &orig[n]) == 0) {
		T_EQ_INT(orig[n].seq, s.ack + got);
		T_EQ_INT(orig[n].ack, held);
		got += orig[n].len;
		n++;
	}
	T_EQ_INT(n, 4);
	T_EQ_INT(got, 16 * PIPE_RESP_LEN);
	end = s.ack + got;

	/* segment 2 lost: the ACK at its start, twice */
	c = s;
	c.payload = "";
	c.flags = F_ACK;
	c.seq = end_req;
	c.ack = s.ack + orig[0].len;
	c.tsval = s.tsval + 1;
	c.tsecr = orig[0].tsval;
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) < 0);
	t0 = mono_ns();
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) == 0);
	T_EQ_INT(seg.seq, orig[1].seq);
	T_EQ_INT(seg.ack, held);
	T_EQ_INT(seg.len, orig[1].len);
	T_EQ_INT(seg.tsval, orig[1].tsval);
	T_EQ_INT(seg.tsecr, c.tsval);
	T_EQ_INT(seg.flags, F_ACK);
	T_CHECK(seg.csum_ok && seg.mac_ok);
	T_CHECK(!memcmp(seg.payload, orig[1].payload, orig[1].len));
	/* the same again at once (within the program's 1 ms): not sent
	 * twice. A loaded machine may let more than 1 ms pass between the
	 * two runs; then a second copy is the design, and is counted. */
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	again = pipe_recv(fd, v6, client_mac, &seg) == 0;
	if (mono_ns() - t0 < 1000000)
		T_CHECK(!again);
	else if (again)
		T_EQ_INT(seg.seq, orig[1].seq);
	T_EQ_INT(counter(BLITZ_CNT_RETRANSMITS), resent0 + 1 + again);
	resent0 += again;

	/* spoofs: TSecr off by one, seq far off: nothing */
	c.tsecr ^= 1;
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	c.tsecr ^= 1;
	c.seq += 100000;
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	c.seq -= 100000;
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) < 0);
	T_EQ_INT(counter(BLITZ_CNT_DROP_BAD_COOKIE), bad0 + 2);

	/* segment 1 lost too: the client's retransmission timer sends the
	 * request left unacked, echoing the TSval from before the burst */
	c.seq = held;
	c.payload = req;
	c.flags = F_ACK | F_PSH;
	c.ack = s.ack;
	c.tsval++;
	c.tsecr = s.tsecr;
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) == 0);
	T_EQ_INT(seg.seq, orig[0].seq);
	T_EQ_INT(seg.len, orig[0].len);
	T_EQ_INT(seg.ack, held);
	T_CHECK(!memcmp(seg.payload, orig[0].payload, orig[0].len));
	T_EQ_INT(counter(BLITZ_CNT_RETRANSMITS), resent0 + 2);

	/* every byte: its ACK of the burst (the cookie proves it) and the
	 * held-back request again each get the ACK of that request */
	c.seq = end_req;
	c.payload = "";
	c.flags = F_ACK;
	c.ack = end;
	c.tsval++;
	c.tsecr = orig[0].tsval;
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) == 0);
	T_EQ_INT(seg.seq, end);
	T_EQ_INT(seg.ack, end_req);
	T_EQ_INT(seg.len, 0);
	T_EQ_INT(seg.flags, F_ACK);
	T_EQ_INT(seg.tsval, orig[0].tsval);
	T_CHECK(seg.csum_ok);
	c.seq = held;
	c.payload = req;
	c.flags = F_ACK | F_PSH;
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) == 0);
	T_EQ_INT(seg.seq, end);
	T_EQ_INT(seg.ack, end_req);
	T_EQ_INT(seg.len, 0);
	T_EQ_INT(counter(BLITZ_CNT_TC_WITHHELD_ACK), acked0 + 2);
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) < 0);
	close(fd);
}

PIPE_TEST(t_pipeline_loss_resent_v4, pipe_loss_case(false))

PIPE_TEST(t_pipeline_loss_resent_v6, pipe_loss_case(true))

/* The client's retransmission c (its TSval one newer) must bring back
 * want, the first segment of the burst: the same seq, ack, length, TSval
 * and bytes, with good checksums and a TSval that verifies. */
static void pipe_chain_resent(uint8_t *f, struct seg_spec *c, int ifx, int fd,
			      bool v6, const uint8_t *client_mac,
			      const struct pipe_seg *want)
{
	static struct pipe_seg seg;

	c->tsval++;
	T_EQ_INT(run_frame_on(f, build(f, c), ifx, 0), TC_ACT_SHOT);
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) == 0);
	T_EQ_INT(seg.seq, want->seq);
	T_EQ_INT(seg.ack, want->ack);
	T_EQ_INT(seg.len, want->len);
	T_EQ_INT(seg.tsval, want->tsval);
	T_CHECK(seg.csum_ok && seg.mac_ok);
	T_CHECK(!memcmp(seg.payload, want->payload, want->len));
}

/*
 * Two bursts in a row on one connection, where the ACK of the first
 * burst's held-back request and every segment of the second are lost:
 * the client (Linux) then has that request and the whole second batch
 * unacked, and its retransmission timer sends them from the held-back
 * request's start (one segment: Linux collapses them; or the request
 * alone), its ack the second burst's start and its TSecr the first
 * burst's TSval. That must bring back the second burst's first segment,
 * byte for byte, acking what the second burst acked; a segment far
 * before it gets nothing. (Before: dropped as a bad cookie, every time
 * the client's timer fired, and the connection stalled.)
 */
static void pipe_chain_case(bool v6)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	static struct pipe_seg orig[4], orig2[4], seg;
	static char payload[1024], both[1024];
	uint8_t f[4096], mymac[6], client_mac[6] = {0x02, 0, 0, 0, 0, 0x45};
	struct seg_spec s =
		pipe_client(v6, 40300, 223000, 7770000, 5000, payload);
	struct seg_spec c;
	uint32_t rl = sizeof(req) - 1, end_req, held, end, held2, got;
	uint64_t resent0 = counter(BLITZ_CNT_RETRANSMITS),
		 bad0 = counter(BLITZ_CNT_DROP_BAD_COOKIE);
	int fd, n, ifx = if_nametoindex("bzt0");

	fd = pipe_batch(&s, payload, req, 16, mymac, client_mac, &held);
	if (fd < 0)
		return;
	end_req = held + rl;
	/* the first burst, every segment delivered */
	T_EQ_INT(run_frame_on(f, build(f, &s), ifx, 0), TC_ACT_SHOT);
	for (n = 0, got = 0;
	     n < 4 && pipe_recv(fd, v6, client_mac, &orig[n]) == 0; n++)
		got += orig[n].len;
	T_EQ_INT(n, 4);
	end = s.ack + got;
	/* the second batch, at the first burst's end (our ACK of the held
	 * request lost: the client's tail-loss probe sends new data) */
	c = s;
	c.seq = end_req;
	c.ack = end;
	c.tsval = s.tsval + 1;
	c.tsecr = orig[0].tsval;
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	for (n = 0, got = 0;
	     n < 4 && pipe_recv(fd, v6, client_mac, &orig2[n]) == 0; n++)
		got += orig2[n].len;
	T_EQ_INT(n, 4);
	held2 = end_req + 15 * rl;
	T_EQ_INT(orig2[0].seq, end);
	T_EQ_INT(orig2[0].ack, held2);
	/* every segment of it lost: the timer, one collapsed segment */
	strcpy(both, req);
	strcat(both, payload);
	c.seq = held;
	c.payload = both;
	pipe_chain_resent(f, &c, ifx, fd, v6, client_mac, &orig2[0]);
	/* lost again: the timer, the held-back request alone this time */
	usleep(1100);
	c.payload = req;
	pipe_chain_resent(f, &c, ifx, fd, v6, client_mac, &orig2[0]);
	T_EQ_INT(counter(BLITZ_CNT_RETRANSMITS), resent0 + 2);
	/* far before what any burst of the flow held back: nothing */
	usleep(1100);
	c.seq = held - 40000;
	c.tsval++;
	T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0), TC_ACT_SHOT);
	T_CHECK(pipe_recv(fd, v6, client_mac, &seg) < 0);
	T_EQ_INT(counter(BLITZ_CNT_DROP_BAD_COOKIE), bad0 + 1);
	close(fd);
}

PIPE_TEST(t_pipeline_loss_chained_v4, pipe_chain_case(false))

PIPE_TEST(t_pipeline_loss_chained_v6, pipe_chain_case(true))

/* The sniffer's next segment within ms milliseconds, or -1. */
static int pipe_recv_ms(int fd, bool v6, const uint8_t *mac, struct pipe_seg *o,
			int ms)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = ms * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return pipe_recv(fd, v6, mac, o);
}

/* A randomized burst test's start: the seed (SEQ_SEED overrides it)
 * given to srandom() and left in *seed, bzt0's MAC, and the sniffer on the peer
 * veth; < 0 when the testbed is not there (SKIP) or the sniffer failed (FAIL).
 */
static int pipe_random_start(uint8_t *mymac, uint32_t *seed)
{
	int fd;

	if (!pipe_ready())
		return -1;
	if (getenv("SEQ_SEED"))
		*seed = (uint32_t)strtoul(getenv("SEQ_SEED"), NULL, 0);
	srandom(*seed);
	T_CHECK(!bzt0_mac(mymac));
	fd = pipe_sniffer();
	T_CHECK(fd >= 0);
	return fd;
}

/*
 * Bursts under random loss and duplication, with a client that follows
 * Linux: it keeps the first copy of every byte, stores ts_recent only
 * from a segment at or before rcv_wup, sends a duplicate ACK for every
 * segment that leaves a hole, and when nothing comes its retransmission
 * timer sends the request the burst left unacked. Every burst must end
 * with every byte (the templates, each Date byte the same in every copy)
 * and the ACK of the held-back request, within a bounded number of
 * exchanges; nothing may ever ack past the client's requests.
 */
#define RL_BURSTS 40
#define RL_STREAM 16384

static uint8_t rl_have[RL_STREAM], rl_buf[RL_STREAM];

static void t_pipeline_loss_random(void)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	static char payload[64 * sizeof(req)];
	static struct pipe_seg seg;
	uint8_t f[4096], mymac[6], client_mac[6] = {0x02, 0, 0, 0, 0, 0x44};
	uint32_t rl = sizeof(req) - 1, seed = (uint32_t)time(NULL);
	int fd, b, ifx = if_nametoindex("bzt0"), done = 0, dropped = 0,
		   duped = 0;
	uint64_t resent0 = counter(BLITZ_CNT_RETRANSMITS);

	fd = pipe_random_start(mymac, &seed);
	if (fd < 0)
		return;
	for (b = 0; b < RL_BURSTS; b++) {
		int nreq = 6 + (int)(random() % 40), i, round, hole_acks = 0;
		uint32_t total = (uint32_t)nreq * PIPE_RESP_LEN, rcv_nxt = 0,
			 rcv_wup = 0, ts_recent, end_req, held, isn,
			 last_ack = 0;
		bool got_final = false, ooo = false;
		struct seg_spec s = {
			.saddr = "10.9.0.2",
			.daddr = "10.9.0.1",
			.sport = (uint16_t)(41000 + b),
			.dport = PORT,
			.seq = (uint32_t)random(),
			.ack = (uint32_t)random(),
			.flags = F_ACK | F_PSH,
			.ts = true,
			.tsval = 1000,
			.payload = payload,
			.win = 64240,
			.dst_mac = mymac,
			.src_mac = client_mac,
		};
		struct seg_spec c;

		payload[0] = 0;
		for (i = 0; i < nreq; i++)
			strcat(payload, req);
		s.tsecr = tsecr_of(&s);
		ts_recent = s.tsecr;
		isn = s.ack;
		end_req = s.seq + (uint32_t)nreq * rl;
		held = end_req - rl;
		memset(rl_have, 0, total);
		T_EQ_INT(run_frame_on(f, build(f, &s), ifx, 0), TC_ACT_SHOT);
		c = s;
		for (round = 0; round < 60 && !got_final; round++) {
			bool sent = false;

			/* what arrives, each segment lost or doubled at random
			 */
			while (pipe_recv_ms(fd, false, client_mac, &seg, 5) ==
			       0) {
				uint32_t off = seg.seq - isn, k;
				int copies = 1;

				if (random() % 100 < 20) {
					dropped++;
					continue;
				}
				if (random() % 100 < 10) {
					duped++;
					copies = 2;
				}
				T_CHECK_MSG(seg.ack == held ||
						    seg.ack == end_req,
					    "ack %u beyond the requests",
					    seg.ack - s.seq);
				if (!seg.len) { /* the held-back request's ACK
						 */
					T_EQ_INT(seg.ack, end_req);
					T_EQ_INT(off, total);
					got_final = true;
					continue;
				}
				T_CHECK(off + seg.len <= total);
				if (off + seg.len > total)
					break;
				while (copies--) {
					for (k = 0; k < seg.len; k++) {
						uint32_t o = off + k;

						if (rl_have[o]) {
							T_CHECK_MSG(
								rl_buf[o] ==
									seg.payload
										[k],
								"byte %u "
								"differs",
								o);
							continue;
						}
						rl_have[o] = 1;
						rl_buf[o] = seg.payload[k];
					}
				}
				if (!(seg.seq - isn > rcv_wup))
					ts_recent = seg.tsval;
				while (rcv_nxt < total && rl_have[rcv_nxt])
					rcv_nxt++;
				if (off > rcv_nxt)
					ooo = true;
			}
			if (got_final)
				break;
			/* the client's answer */
			c.tsval++;
			c.tsecr = ts_recent;
			c.ack = isn + rcv_nxt;
			if (rcv_nxt == total || ooo) {
				/* an ACK: of everything, or a duplicate */
				c.seq = end_req;
				c.payload = "";
				c.flags = F_ACK;
				ooo = false;
				hole_acks += rcv_nxt < total;
				sent = true;
			} else {
				/* nothing came: the retransmission timer */
				usleep(1100);
				c.seq = held;
				c.payload = req;
				c.flags = F_ACK | F_PSH;
				sent = true;
			}
			rcv_wup = rcv_nxt;
			last_ack = c.ack;
			/* the client's segment may be lost too */
			if (sent && random() % 100 >= 10)
				T_EQ_INT(run_frame_on(f, build(f, &c), ifx, 0),
					 TC_ACT_SHOT);
		}
		(void)last_ack;
		(void)hole_acks;
		T_CHECK_MSG(rcv_nxt == total && got_final,
			    "seed %u burst %d: %u of %u bytes, final ACK %d",
			    seed, b, rcv_nxt, total, got_final);
		for (i = 0; i < (int)rcv_nxt; i++) {
			uint32_t off = (uint32_t)i % PIPE_RESP_LEN;

			if (off >= PIPE_DATE_OFF &&
			    off < PIPE_DATE_OFF + BLITZ_DATE_LEN)
				continue;
			if (rl_buf[i] != pipe_tmpl[BLITZ_RESP_GET_KA][off]) {
				T_CHECK_MSG(0, "seed %u burst %d byte %d", seed,
					    b, i);
				break;
			}
		}
		done += rcv_nxt == total && got_final;
	}
	close(fd);
	printf("  seed %u: %d of %d bursts complete; %d segments lost, %d "
	       "doubled, %llu re-sent\n",
	       seed, done, RL_BURSTS, dropped, duped,
	       (unsigned long long)(counter(BLITZ_CNT_RETRANSMITS) - resent0));
	T_CHECK(dropped > 0);
}

/* The chained test's client sends c with a fresh TSval, its window's
 * edge (RCV.WUP) moved to RCV.NXT by the ACK it carries; 10% of what it
 * sends is lost on the way (counted in *clost). */
static void rc_send(uint8_t *f, struct seg_spec *c, int ifx, uint32_t *tsval,
		    uint32_t *rcv_wup, uint32_t rcv_nxt, int *clost)
{
	c->tsval = ++*tsval;
	*rcv_wup = rcv_nxt;
	if (random() % 100 >= 10)
		run_frame_on(f, build(f, c), ifx, 0);
	else
		(*clost)++;
}

/*
 * Batch after batch on one connection under random loss (in runs, as on
 * a real link) and duplication in both directions, against a client that
 * follows Linux: it keeps ts_recent as Linux does and drops a segment that
 * fails PAWS; with every response of a batch in, it writes the next batch at
 * once (TCP_NODELAY) or holds it while anything is unacked (Nagle), and then
 * sends a pure ACK; a hole gets a duplicate ACK; when nothing comes, its timer
 * sends the held batch (a tail-loss probe sends new data) or re-sends from its
 * oldest unacked byte, as much as one MSS holds (Linux collapses
 * segments). Every response must arrive with its bytes the same in every
 * copy, nothing may ack beyond what the client sent, and the stream must
 * end with every request acked, within a bounded number of exchanges.
 */
#define RC_BATCHES 30
#define RC_RING 65536

static uint8_t rc_buf[RC_RING];
static uint16_t rc_gen[RC_RING];

static void t_pipeline_loss_chained_random(void)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	static char payload[2048];
	static struct pipe_seg seg;
	uint8_t f[4096], mymac[6], client_mac[6] = {0x02, 0, 0, 0, 0, 0x46};
	uint32_t rl = sizeof(req) - 1, seed = (uint32_t)time(NULL) ^ 0x5a5a;
	uint32_t cs0, isn, snd_una = 0, snd_nxt = 0, wrote = 0, rcv_nxt = 0,
			   rcv_wup = 0, ts_recent, tsval = 2000, want = 0,
			   batch0 = 0;
	int fd, round, batches = 0, ifx = if_nametoindex("bzt0"), lost = 0,
		       doubled = 0, paws = 0, clost = 0, timers = 0, early = 0;
	uint64_t resent0 = counter(BLITZ_CNT_RETRANSMITS);
	bool nagle = false, outage;

	fd = pipe_random_start(mymac, &seed);
	if (fd < 0)
		return;
	memset(rc_gen, 0, sizeof(rc_gen));
	struct seg_spec c = pipe_client(
		false, (uint16_t)(42000 + random() % 1000), (uint32_t)random(),
		(uint32_t)random(), tsval, payload);
	c.dst_mac = mymac;
	c.src_mac = client_mac;
	cs0 = c.seq;
	isn = c.ack;
	ts_recent = tsecr_of(&c);

	for (round = 0; round < 3000; round++) {
		bool sent_data = false, arrived = false, ooo = false;
		uint32_t from = 0, to = 0;

		/* the application: the next batch once every response is in */
		if (rcv_nxt == want && wrote == snd_nxt &&
		    batches < RC_BATCHES) {
			int nreq = 6 + (int)(random() % 35);

			batch0 = wrote;
			wrote += (uint32_t)nreq * rl;
			want += (uint32_t)nreq * PIPE_RESP_LEN;
			batches++;
			nagle = random() % 2;
		}
		/* what the client sends now: new data when nothing is
		 * unacked or it does not wait for that (Nagle) */
		if (wrote != snd_nxt && (!nagle || snd_una == snd_nxt)) {
			from = snd_nxt;
			to = wrote - from > 1448 ? from + 1448 : wrote;
		}
		if (from != to) {
			uint32_t k;

			for (k = from; k < to; k++)
				payload[k - from] = req[k % rl];
			payload[to - from] = 0;
			c.seq = cs0 + from;
			c.ack = isn + rcv_nxt;
			c.flags = F_ACK | F_PSH;
			c.tsval = ++tsval;
			c.tsecr = ts_recent;
			rcv_wup = rcv_nxt;
			if (to > snd_nxt)
				snd_nxt = to;
			sent_data = true;
			if (random() % 100 >= 10)
				run_frame_on(f, build(f, &c), ifx, 0);
			else
				clost++;
		}
		/* what arrives, each segment lost or doubled at random; and
		 * losses come in runs on a real link: now and then all that
		 * comes in one exchange (a whole burst, a re-send) is lost */
		outage = random() % 100 < 10;
		while (pipe_recv_ms(fd, false, client_mac, &seg, 5) == 0) {
			uint32_t off = seg.seq - isn, a = seg.ack - cs0, k;
			int copies = 1;

			if (outage || random() % 100 < 10) {
				lost++;
				continue;
			}
			if (random() % 100 < 10) {
				doubled++;
				copies = 2;
			}
			T_CHECK_MSG(a <= snd_nxt,
				    "seed %u: ack %u beyond what was sent (%u)",
				    seed, a, snd_nxt);
			if ((int32_t)(seg.tsval - ts_recent) < 0) {
				paws++; /* Linux drops it, sends a dup ACK */
				ooo = true;
				continue;
			}
			arrived = true;
			if (a > snd_una && a <= snd_nxt)
				snd_una = a;
			T_CHECK(off + seg.len <= want);
			if (off + seg.len > want)
				break;
			while (copies--) {
				for (k = 0; k < seg.len; k++) {
					uint32_t o = off + k, i = o % RC_RING,
						 r = o % PIPE_RESP_LEN;
					uint16_t g =
						(uint16_t)(o / RC_RING + 1);
					uint8_t b = seg.payload[k];

					if (rc_gen[i] == g) {
						T_CHECK_MSG(rc_buf[i] == b,
							    "seed %u: byte %u "
							    "differs",
							    seed, o);
						continue;
					}
					if (r < PIPE_DATE_OFF ||
					    r >= PIPE_DATE_OFF + BLITZ_DATE_LEN)
						T_CHECK_MSG(
							b == pipe_tmpl[BLITZ_RESP_GET_KA]
								      [r],
							"seed %u: byte %u",
							seed, o);
					rc_gen[i] = g;
					rc_buf[i] = b;
				}
			}
			if (!(off > rcv_wup))
				ts_recent = seg.tsval;
			while (rcv_nxt < want &&
			       rc_gen[rcv_nxt % RC_RING] ==
				       (uint16_t)(rcv_nxt / RC_RING + 1))
				rcv_nxt++;
			if (off > rcv_nxt)
				ooo = true;
		}
		if (batches == RC_BATCHES && rcv_nxt == want &&
		    snd_una == snd_nxt && wrote == snd_nxt)
			break;
		c.tsecr = ts_recent;
		c.ack = isn + rcv_nxt;
		if (arrived || ooo) {
			/* an ACK of what came (a duplicate one for a hole),
			 * unless new data is about to carry it */
			if (!sent_data || ooo) {
				c.seq = cs0 + snd_nxt;
				c.payload = "";
				c.flags = F_ACK;
				rc_send(f, &c, ifx, &tsval, &rcv_wup, rcv_nxt,
					&clost);
				c.payload = payload;
			}
			continue;
		}
		if (sent_data)
			continue;
		/* nothing came: the timer. A tail-loss probe sends the data
		 * Nagle held; else re-send from the oldest unacked byte. */
		usleep(1100);
		timers++;
		if (wrote != snd_nxt) {
			nagle = false;
			continue;
		}
		if (snd_una == snd_nxt)
			continue; /* nothing to send: only ours can be missing
				   */
		from = snd_una;
		to = snd_nxt - from > 1448 ? from + 1448 : snd_nxt;
		early += from < batch0; /* from a batch before the last */
		for (uint32_t k = from; k < to; k++)
			payload[k - from] = req[k % rl];
		payload[to - from] = 0;
		c.seq = cs0 + from;
		c.flags = F_ACK | F_PSH;
		rc_send(f, &c, ifx, &tsval, &rcv_wup, rcv_nxt, &clost);
	}
	close(fd);
	printf("  seed %u: %d of %d batches, %u of %u response bytes, %u of %u "
	       "request bytes acked in %d rounds; %d segments lost, %d "
	       "doubled, %d of the client's lost, %d PAWS drops, %d timers "
	       "(%d from a batch before the last), %llu re-sent\n",
	       seed, batches, RC_BATCHES, rcv_nxt, want, snd_una, snd_nxt,
	       round, lost, doubled, clost, paws, timers, early,
	       (unsigned long long)(counter(BLITZ_CNT_RETRANSMITS) - resent0));
	T_CHECK_MSG(batches == RC_BATCHES && rcv_nxt == want &&
			    snd_una == snd_nxt,
		    "seed %u: the stream stalled", seed);
	T_CHECK(paws == 0);
	T_CHECK(lost > 0 && clost > 0);
}

/* Without timestamps a TC burst leaves no flow entry, so nothing would
 * prove the connection's later segments: with a listener the batch (in
 * the handshake-completing segment) goes to the kfunc instead; with none
 * it is answered as a burst, as before. */
static void t_pipeline_no_ts(void)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	uint8_t f[4096], mymac[6], client_mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	struct seg_spec s = data_seg(false);
	char payload[256] = "";
	uint64_t seg0;
	int fd;

	if (!pipe_ready())
		return;
	strcat(payload, req);
	strcat(payload, req);
	s.payload = payload;
	s.win = 64240;
	s.ack = handshake_ack(&s);
	seg0 = counter(BLITZ_CNT_TC_SEGMENTS);
	good_cookie_case(&s); /* 10.0.0.1 has a listener */
	T_EQ_INT(counter(BLITZ_CNT_TC_SEGMENTS), seg0);
	/* no listener on 10.9.0.1 (bzt0): the burst */
	s.saddr = "10.9.0.2";
	s.daddr = "10.9.0.1";
	s.ack = handshake_ack(&s);
	T_CHECK(!bzt0_mac(mymac));
	s.dst_mac = mymac;
	s.src_mac = client_mac;
	fd = pipe_sniffer();
	T_EQ_INT(run_frame_on(f, build(f, &s), if_nametoindex("bzt0"), 0),
		 TC_ACT_SHOT);
	T_EQ_INT(counter(BLITZ_CNT_TC_SEGMENTS), seg0 + 1);
	if (fd >= 0)
		close(fd);
}

/* A bad cookie on a pipelined batch: nothing sent, dropped only when a
 * listener would have got it; with no listener the kernel resets it. */
static void t_pipeline_bad_cookie_silent(void)
{
	uint8_t f[4096];
	struct seg_spec s = data_seg(false);
	char payload[1024] = "";
	uint64_t seg0;
	int fd, i;
	static struct pipe_seg seg;

	if (!pipe_ready())
		return;
	for (i = 0; i < 16; i++)
		strcat(payload, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
	s.saddr = "10.9.0.2";
	s.daddr = "10.9.0.1";
	s.payload = payload;
	s.ts = true;
	s.tsval = 1;
	s.tsecr = tsecr_of(&s) ^ 0x40;
	seg0 = counter(BLITZ_CNT_TC_SEGMENTS);
	fd = pipe_sniffer();
	T_CHECK(fd >= 0);
	T_EQ_INT(run_frame_on(f, build(f, &s), if_nametoindex("bzt0"), 0),
		 TC_ACT_OK);
	T_EQ_INT(counter(BLITZ_CNT_TC_SEGMENTS), seg0);
	if (fd >= 0) {
		T_CHECK(pipe_recv(fd, false, f + 6, &seg) < 0);
		close(fd);
	}
}

/* ---- checksums (blitz_seg.h) ---- */

/* The frame of s with one bit of byte `at` flipped after its checksums
 * were filled: dropped and counted in bad_csum, never handed off, no
 * cookie looked at. The unchanged frame is the control: not bad_csum. */
static void tc_csum_case(const char *what, const struct seg_spec *s, size_t at)
{
	uint64_t c0 = counter(BLITZ_CNT_BAD_CSUM);
	struct snap before;
	uint8_t f[512];
	size_t n = build(f, s);

	T_CHECK_MSG(at < n, "%s: byte %zu past the frame", what, at);
	if (at >= n)
		return;
	run_frame(f, n);
	T_CHECK_MSG(counter(BLITZ_CNT_BAD_CSUM) == c0, "%s: control", what);
	f[at] ^= 0x08;
	before = snap();
	T_CHECK_MSG(run_frame(f, n) == TC_ACT_SHOT, "%s: not dropped", what);
	T_CHECK_MSG(counter(BLITZ_CNT_BAD_CSUM) == c0 + 1, "%s: not counted",
		    what);
	T_CHECK_MSG(snap_eq(before, snap()), "%s: handed off or judged", what);
}

/* A segment TC would hand off (a good cookie, a request with a body),
 * with a corrupted byte in the TCP header, an option, the payload, or
 * (IPv6) an address of the pseudo-header. */
static void tc_csum_family(bool v6)
{
	size_t l4 = ETH_HLEN + (v6 ? 40 : 20);
	struct seg_spec s = data_seg(v6);

	s.ts = true;
	s.tsval = 12345;
	s.ack = 42;
	s.tsecr = tsecr_of(&s);
	tc_csum_case("tcp hdr", &s, l4 + 14);
	tc_csum_case("option", &s, l4 + 20 + 6);
	tc_csum_case("payload", &s, l4 + 32 + strlen(s.payload) - 1);
	if (v6)
		tc_csum_case("v6 daddr", &s, ETH_HLEN + 24 + 15);
	/* without timestamps: the handshake-completing segment */
	s = data_seg(v6);
	s.ack = handshake_ack(&s);
	tc_csum_case("no ts, payload", &s, l4 + 20 + 3);
	if (!v6) {
		/* IPv4 options (which XDP passes): their header's sum is
		 * checked here; a changed option byte leaves the segment to
		 * the kernel (which drops it), never handed off. The same
		 * segment unchanged reaches the hand-off (the control). */
		struct snap before;
		uint8_t f[512];
		size_t n;

		s.ip_opt_words = 2;
		n = build(f, &s);
		before = snap();
		run_frame(f, n);
		T_EQ_INT(snap().handoff + snap().fail,
			 before.handoff + before.fail + 1);
		f[ETH_HLEN + 20 + 1] ^= 0x02;
		before = snap();
		T_EQ_INT(run_frame(f, n), TC_ACT_OK);
		T_CHECK(snap_eq(before, snap()));
	}
}

TESTS_V4_V6(t_csum_handoff, tc_csum_family)

/* 16 pipelined GETs with a good cookie, as pipe_case sends them. */
static size_t csum_pipe_frame(uint8_t *f, char *payload, bool v6)
{
	uint8_t client_mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	static uint8_t mymac[6];
	struct seg_spec s =
		pipe_client(v6, 40101, 778000, 5560000, 31338, payload);
	int i;

	payload[0] = 0;
	for (i = 0; i < 16; i++)
		strcat(payload, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
	s.src_mac = client_mac;
	s.dst_mac = mymac;
	s.tsecr = tsecr_of(&s);
	T_CHECK(!bzt0_mac(mymac));
	return build(f, &s);
}

/* Run a pipelined batch on bzt0: did TC answer it (its burst sent)? */
static int csum_pipe_run(const uint8_t *f, size_t n, uint32_t gso,
			 uint64_t *bad)
{
	uint64_t seg0 = counter(BLITZ_CNT_TC_SEGMENTS),
		 c0 = counter(BLITZ_CNT_BAD_CSUM);
	int v = run_frame_on(f, n, (int)if_nametoindex("bzt0"), gso);

	*bad = counter(BLITZ_CNT_BAD_CSUM) - c0;
	T_EQ_INT(v, TC_ACT_SHOT);
	return counter(BLITZ_CNT_TC_SEGMENTS) > seg0;
}

/*
 * The TC burst: a corrupted payload byte, no burst and bad_csum +1 (the
 * unchanged batch is answered: the control). The partial form (the field
 * holds the folded pseudo-header sum): answered with BLITZ_CFG_CSUM_PARTIAL
 * or for a GRO-merged skb (gso_segs > 1: GRO verified what it merged and
 * left that form); dropped and counted otherwise.
 */
static void t_csum_pipeline(void)
{
	struct blitz_config k = cfg;
	char payload[1024];
	uint8_t f[4096], g[4096];
	uint64_t bad;
	size_t n, l4;
	uint64_t ph;
	int v6;

	if (!pipe_ready())
		return;
	for (v6 = 0; v6 <= 1; v6++) {
		l4 = ETH_HLEN + (v6 ? 40 : 20);
		n = csum_pipe_frame(f, payload, v6);
		T_CHECK(csum_pipe_run(f, n, 0, &bad));
		T_EQ_INT(bad, 0);
		memcpy(g, f, n);
		g[n - 7] ^= 0x20;
		T_CHECK(!csum_pipe_run(g, n, 0, &bad));
		T_EQ_INT(bad, 1);
		T_CHECK(!csum_pipe_run(g, n, 2, &bad)); /* GRO: still full */
		T_EQ_INT(bad, 1);
		/* the partial form */
		memcpy(g, f, n);
		ph = v6 ? csum_add(0, g + ETH_HLEN + 8, 32)
			: csum_add(0, g + ETH_HLEN + 12, 8);
		ph += IPPROTO_TCP + (n - l4);
		wire_put16(g + l4 + 16, csum_fold(ph));
		T_CHECK(!csum_pipe_run(g, n, 0, &bad));
		T_EQ_INT(bad, 1);
		T_CHECK(csum_pipe_run(g, n, 2, &bad));
		T_EQ_INT(bad, 0);
		k.flags = cfg.flags | BLITZ_CFG_CSUM_PARTIAL;
		set_config(&k);
		T_CHECK(csum_pipe_run(g, n, 0, &bad));
		T_EQ_INT(bad, 0);
		set_config(&cfg);
	}
}

/* ---- setup ---- */

/* lo up and the kernel's ephemeral ports away from the forged ones
 * (xdp_fixture_ephemeral(), rnd_sport()): right after unshare(). */
static int lo_up(void)
{
	struct ifreq ifr = {0};
	int fd, err;

	if (xdp_fixture_ephemeral())
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -errno;
	strcpy(ifr.ifr_name, "lo");
	err = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (!err) {
		ifr.ifr_flags |= IFF_UP;
		err = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return err ? -errno : 0;
}

static int l4 = -1, l6 = -1;

static void setup(void)
{
	if (geteuid()) {
		setup_skip = "needs root (BPF, network namespace)";
		return;
	}
	if (unshare(CLONE_NEWNET) || lo_up() ||
	    system("ip addr add 10.0.0.1/32 dev lo && "
		   "ip addr add fd00::1/128 dev lo nodad && "
		   "ip link add bzt0 type veth peer name bzt1 && "
		   "ip addr add 10.9.0.1/24 dev bzt0 && "
		   "ip addr add fd09::1/64 dev bzt0 nodad && "
		   "ip link set bzt0 up && ip link set bzt1 up")) {
		setup_skip = "cannot make a private network namespace with "
			     "the test addresses";
		return;
	}
	if (!tc_handoff_supported()) {
		setup_skip = "kernel has no bpf_sk_assign_tcp_reqsk (Linux >= "
			     "6.9)";
		return;
	}
	n_cpus = libbpf_num_possible_cpus();
	skel = blitz_tc_bpf__open_and_load();
	if (!skel) {
		setup_skip = "the TC program does not load here";
		return;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.port_be = htons(PORT);
	cfg.mss = 1460;
	cfg.secret[0] = 0x0123456789abcdefULL;
	cfg.secret[1] = 0xfedcba9876543210ULL;
	cfg.cookie_clock_adj_ns = cookie_clock_mid_epoch(&cfg);
	set_config(&cfg);
	l4 = listen_on(false, PORT);
	l6 = listen_on(true, PORT);
	if (l4 < 0 || l6 < 0)
		setup_skip = "cannot listen on loopback in the namespace";
}

/*
 * Helper mode for tests/e2e/test_handoff.sh (not run by the runner):
 *   attach IFNAME    attach the hand-off (pinned) with the maps pinned
 *                    under BLITZ_PIN_ROOT/IFNAME (`blitz load`'s, or
 *                    those `maps` made)
 *   remove IFNAME    take it off; present IFNAME: exit 0 when attached
 *   maps IFNAME PORT K0 K1   make and pin a config map (PORT, secret K0 K1,
 *                    every address) and a counters map, for testing the
 *                    hand-off without the XDP program
 *   counters IFNAME  print "handoff handoff_fail drops" (drops: bad
 *                    cookie plus no-timestamp, every segment not ours)
 *   cookie K0 K1 SADDR DADDR SPORT DPORT [PEER_ISN]  print "isn tsecr" of
 *                    a 4-tuple (cookie v2, MSS 1460, no wscale/SACK): our
 *                    ISN for a SYN without timestamps with seq PEER_ISN
 *                    (default 0), and the TSecr of a segment with seq
 *                    PEER_ISN + 1 and ack isn + 101
 *   supported -      exit 0 when the kernel has the hand-off kfunc
 */
static int pinned_fd(const char *ifname, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s/%s", BLITZ_PIN_ROOT, ifname, name);
	return bpf_obj_get(path);
}

static int tool_maps(const char *ifname, int argc, char **argv)
{
	struct blitz_config c = {0};
	char path[256];
	uint32_t key = 0;
	int cfd, kfd;

	if (argc != 6)
		return 2;
	c.port_be = htons(atoi(argv[3]));
	c.mss = 1460;
	c.secret[0] = strtoull(argv[4], NULL, 0);
	c.secret[1] = strtoull(argv[5], NULL, 0);
	cfd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "config", 4, sizeof(c), 1,
			     NULL);
	kfd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "counters", 4,
			     sizeof(struct blitz_counters), 1, NULL);
	if (cfd < 0 || kfd < 0 || bpf_map_update_elem(cfd, &key, &c, 0))
		return 1;
	mkdir(BLITZ_PIN_ROOT, 0700);
	snprintf(path, sizeof(path), "%s/%s", BLITZ_PIN_ROOT, ifname);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%s/config", BLITZ_PIN_ROOT, ifname);
	if (bpf_obj_pin(cfd, path))
		return 1;
	snprintf(path, sizeof(path), "%s/%s/%s", BLITZ_PIN_ROOT, ifname,
		 BLITZ_PIN_COUNTERS);
	return bpf_obj_pin(kfd, path) ? 1 : 0;
}

static int tool_cookie(int argc, char **argv)
{
	struct blitz_config c = {0};
	struct blitz_ck2_tuple t;
	struct timespec now;
	uint32_t sa[4], da[4], peer, isn = 0, tsval = 0, opts;
	uint16_t sp, dp;
	int v6;

	if (argc != 8 && argc != 9)
		return 2;
	c.secret[0] = strtoull(argv[2], NULL, 0);
	c.secret[1] = strtoull(argv[3], NULL, 0);
	sp = htons(atoi(argv[6]));
	dp = htons(atoi(argv[7]));
	if (inet_pton(AF_INET, argv[4], sa) == 1 &&
	    inet_pton(AF_INET, argv[5], da) == 1)
		v6 = 0;
	else if (inet_pton(AF_INET6, argv[4], sa) == 1 &&
		 inet_pton(AF_INET6, argv[5], da) == 1)
		v6 = 1;
	else
		return 2;
	if (v6)
		blitz_ck2_tuple_v6(&t, sa, da, sp, dp);
	else
		blitz_ck2_tuple_v4(&t, sa[0], da[0], sp, dp);
	/* The realtime clock: its epoch is one both a TAI-clocked config
	 * (`maps`, offset 0) and `blitz load`'s accept. */
	clock_gettime(CLOCK_REALTIME, &now);
	cookie_ring_at(&tring, &c,
		       (uint64_t)now.tv_sec * 1000000000ULL +
			       (uint64_t)now.tv_nsec);
	opts = blitz_ck2_opts(1460, BLITZ_CK2_WS_NONE, 0, v6);
	/* the ISN answers a SYN without timestamps whose seq was PEER_ISN
	 * (default 0); the TSecr is that of a segment at seq PEER_ISN + 1
	 * that acks 100 bytes after our SYN (ack = isn + 101) */
	peer = argc == 9 ? (uint32_t)strtoul(argv[8], NULL, 0) : 0;
	blitz_ck2_synack(&tring, &t, peer, opts, 0, &isn, &tsval);
	printf("%u %u\n", isn,
	       cookie_tsecr(&tring, &t, opts, peer + 1, isn + 101));
	return 0;
}

static int tool(int argc, char **argv)
{
	const char *verb = argv[1], *ifname = argv[2];
	struct tc_handoff *h;
	int ifindex, cfd, kfd, err;

	if (!strcmp(verb, "cookie"))
		return tool_cookie(argc, argv);
	if (!strcmp(verb, "supported")) /* "supported -" */
		return tc_handoff_supported() ? 0 : 1;
	if (!strcmp(verb, "maps"))
		return tool_maps(ifname, argc, argv);
	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		fprintf(stderr, "no interface %s\n", ifname);
		return 2;
	}
	if (!strcmp(verb, "present"))
		return tc_handoff_present(ifindex) ? 0 : 1;
	if (!strcmp(verb, "remove"))
		return tc_handoff_remove(ifindex) ? 1 : 0;
	if (!strcmp(verb, "counters")) {
		skel = NULL;
		kfd = pinned_fd(ifname, BLITZ_PIN_COUNTERS);
		if (kfd < 0)
			return 1;
		/* the last column: every drop of a segment not ours */
		int ids[] = {BLITZ_CNT_HANDOFF, BLITZ_CNT_HANDOFF_FAIL,
			     BLITZ_CNT_DROP_BAD_COOKIE, BLITZ_CNT_DROP_NO_TS};
		uint64_t sums[4] = {0}, tot[BLITZ_CNT_MAX];

		if (counters_xdp_read(kfd, tot))
			return 1;
		for (int i = 0; i < 4; i++)
			sums[i] = tot[ids[i]];
		printf("%llu %llu %llu", (unsigned long long)sums[0],
		       (unsigned long long)sums[1],
		       (unsigned long long)(sums[2] + sums[3]));
		printf("\n");
		return 0;
	}
	if (strcmp(verb, "attach"))
		return 2;
	cfd = pinned_fd(ifname, "config");
	kfd = pinned_fd(ifname, BLITZ_PIN_COUNTERS);
	if (cfd < 0 || kfd < 0) {
		fprintf(stderr, "no pinned maps for %s: `blitz load` first\n",
			ifname);
		return 1;
	}
	err = tc_handoff_attach(ifname, ifindex, cfd, kfd,
				pinned_fd(ifname, "responses"), -1, true, &h);
	if (err)
		return 1;
	tc_handoff_release(h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3)
		return tool(argc, argv);
	setvbuf(stdout, NULL, _IONBF, 0);
	setup();
	T_RUN(t_kfunc_supported);
	T_RUN(t_prerequisites);
	T_RUN(t_opts_drift);
	T_RUN(t_not_for_service);
	T_RUN(t_forwarded_passed);
	T_RUN(t_syn_rst_noack_passed);
	T_RUN(t_truncated_passed);
	T_RUN(t_vlan_tagged_left_alone);
	T_RUN(t_fragment_passed);
	T_RUN(t_no_listener_passed);
	T_RUN(t_bad_cookie_dropped_v4);
	T_RUN(t_bad_cookie_dropped_v6);
	T_RUN(t_kernel_owned_passed);
	T_RUN(t_good_cookie_handed_off_v4);
	T_RUN(t_good_cookie_handed_off_v6);
	T_RUN(t_no_ts_only_handshake);
	T_RUN(t_no_ts_flow_frontier);
	T_RUN(t_spoofs_never_handed_off);
	T_RUN(t_follow_up_segment_passed);
	T_RUN(t_pipeline_16_v4);
	T_RUN(t_pipeline_16_v6);
	T_RUN(t_pipeline_gso);
	T_RUN(t_pipeline_window_partial);
	T_RUN(t_pipeline_burst_bound);
	T_RUN(t_pipeline_bad_cookie_silent);
	T_RUN(t_pipeline_no_ts);
	T_RUN(t_pipeline_loss_resent_v4);
	T_RUN(t_pipeline_loss_resent_v6);
	T_RUN(t_pipeline_loss_chained_v4);
	T_RUN(t_pipeline_loss_chained_v6);
	T_RUN(t_pipeline_loss_random);
	T_RUN(t_pipeline_loss_chained_random);
	T_RUN(t_csum_handoff_v4);
	T_RUN(t_csum_handoff_v6);
	T_RUN(t_csum_pipeline);
	printf("  good cookies: %d request socks made, %d refused by the "
	       "kfunc (not a real ingress hook)\n",
	       n_assigned, n_refused);
	if (skel)
		blitz_tc_bpf__destroy(skel);
	T_EXIT();
}
