// SPDX-License-Identifier: GPL-2.0
/*
 * test_wire.c - the userspace wire layer (userspace/wire.h): frames written
 * from named fields equal, byte for byte, what scapy builds for the same
 * segment (the golden frames below were printed by scapy 2.5: see each
 * one's comment), the parser reads them back, malformed frames get their
 * verdict, and the option walk follows Linux's rules.
 */
#include "testlib.h"
#include "wire.h"
#include "frame.h"

static const uint8_t cli_mac[6] = {2, 0, 0, 0, 0, 2};
static const uint8_t srv_mac[6] = {2, 0, 0, 0, 0, 1};

/* Ether(dst=srv, src=cli)/IP(src="10.0.0.2", dst="10.0.0.1", id=0x1234,
 * flags="DF", ttl=64)/TCP(sport=40000, dport=8080, seq=0x11223344,
 * flags="S", window=64240, options=[MSS 1460, NOP, NOP, SAckOK, NOP, NOP,
 * Timestamp (1, 0), NOP, WScale 7]) */
static const uint8_t syn4[78] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x40, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06,
	0x14, 0x82, 0x0a, 0x00, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x01, 0x9c, 0x40,
	0x1f, 0x90, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x00, 0xb0, 0x02,
	0xfa, 0xf0, 0x26, 0xcf, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4, 0x01, 0x01,
	0x04, 0x02, 0x01, 0x01, 0x08, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x01, 0x03, 0x03, 0x07};

/* Ether(dst=srv, src=cli)/IPv6(src="fd00::2", dst="fd00::1", hlim=64)/
 * TCP(sport=40000, dport=8080, seq=0x55667788, ack=0x99aabbcc, flags="PA",
 * window=512)/"GET / HTTP/1.1\r\n\r\n" */
static const uint8_t get6[92] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x26, 0x06, 0x40, 0xfd, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x02, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x9c, 0x40, 0x1f, 0x90, 0x55, 0x66,
	0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0x50, 0x18, 0x02, 0x00, 0xf6, 0xde,
	0x00, 0x00, 0x47, 0x45, 0x54, 0x20, 0x2f, 0x20, 0x48, 0x54, 0x54, 0x50,
	0x2f, 0x31, 0x2e, 0x31, 0x0d, 0x0a, 0x0d, 0x0a};

static const char get_req[] = "GET / HTTP/1.1\r\n\r\n";

static uint32_t write_syn4(uint8_t *f)
{
	static const uint8_t s[4] = {10, 0, 0, 2}, d[4] = {10, 0, 0, 1};
	struct wire_seg sg = {
		.src_mac = cli_mac,
		.dst_mac = srv_mac,
		.saddr = s,
		.daddr = d,
		.sport_be = htons(40000),
		.dport_be = htons(8080),
		.seq = 0x11223344,
		.flags = TCPHDR_SYN,
		.win = 64240,
		.ip_id = 0x1234,
	};
	uint8_t *o;
	uint32_t l4, n = 0;

	l4 = wire_write_tcp_hdrs(f, &sg, 24, 0);
	o = f + l4 + WIRE_TCP_HLEN;
	n += wire_opt_mss(o + n, 1460);
	n += wire_opt_sack_perm(o + n);
	n += wire_opt_timestamps(o + n, 1, 0);
	n += wire_opt_wscale(o + n, 7);
	T_EQ_INT(n, 24);
	wire_tcp_csum(f, false, l4, WIRE_TCP_HLEN + n);
	return l4 + WIRE_TCP_HLEN + n;
}

static void wire_write_ipv4_syn_equals_scapy(void)
{
	uint8_t f[128];
	uint32_t len = write_syn4(f);

	T_EQ_INT(len, sizeof(syn4));
	T_CHECK(!memcmp(f, syn4, sizeof(syn4)));
}

static void wire_write_ipv6_payload_equals_scapy(void)
{
	uint8_t f[128], s[16] = {0xfd}, d[16] = {0xfd};
	struct wire_seg sg = {
		.src_mac = cli_mac,
		.dst_mac = srv_mac,
		.v6 = true,
		.saddr = s,
		.daddr = d,
		.sport_be = htons(40000),
		.dport_be = htons(8080),
		.seq = 0x55667788,
		.ack = 0x99aabbcc,
		.flags = TCPHDR_PSH | TCPHDR_ACK,
		.win = 512,
	};
	uint32_t l4, plen = sizeof(get_req) - 1;

	s[15] = 2;
	d[15] = 1;
	l4 = wire_write_tcp_hdrs(f, &sg, 0, plen);
	memcpy(f + l4 + WIRE_TCP_HLEN, get_req, plen);
	wire_tcp_csum(f, true, l4, WIRE_TCP_HLEN + plen);
	T_EQ_INT(l4 + WIRE_TCP_HLEN + plen, sizeof(get6));
	T_CHECK(!memcmp(f, get6, sizeof(get6)));
}

static void wire_parse_ipv4_syn_and_options(void)
{
	struct wire_pkt p;
	struct wire_tcp_opts o;

	T_EQ_INT(wire_parse(syn4, sizeof(syn4), &p), WIRE_TCP);
	T_CHECK(p.ip4 && !p.ip6);
	T_EQ_INT(p.l4_off, 34);
	T_EQ_INT(ntohs(p.tcp->source), 40000);
	T_EQ_INT(ntohs(p.tcp->dest), 8080);
	T_EQ_INT(ntohl(p.tcp->seq), 0x11223344);
	T_EQ_INT(wire_tcp_flags(p.tcp), TCPHDR_SYN);
	T_EQ_INT(p.tcp_len, 44);
	T_EQ_INT(p.payload_len, 0);
	T_EQ_INT(wire_tcp_opts_parse(p.tcp, &o), 0);
	T_CHECK(o.has_mss && o.mss == 1460);
	T_CHECK(o.sack_ok);
	T_CHECK(o.has_ts && o.tsval == 1 && o.tsecr == 0);
	T_CHECK(o.has_wscale && o.wscale == 7);
	/* The checksum scapy computed is the one we compute. */
	T_EQ_INT(wire_tcp_csum_of(syn4, false, p.l4_off, p.tcp_len),
		 ntohs(p.tcp->check));
}

static void wire_parse_ipv6_payload(void)
{
	struct wire_pkt p;
	uint8_t f[200];

	T_EQ_INT(wire_parse(get6, sizeof(get6), &p), WIRE_TCP);
	T_CHECK(p.ip6 && !p.ip4);
	T_EQ_INT(p.payload_len, sizeof(get_req) - 1);
	T_CHECK(!memcmp(p.payload, get_req, p.payload_len));
	T_EQ_INT(ntohl(p.tcp->ack_seq), 0x99aabbcc);
	T_EQ_INT(wire_tcp_csum_of(get6, true, p.l4_off, p.tcp_len),
		 ntohs(p.tcp->check));
	/* Ethernet padding after the IP length is not payload. */
	memcpy(f, get6, sizeof(get6));
	memset(f + sizeof(get6), 0xee, 20);
	T_EQ_INT(wire_parse(f, sizeof(get6) + 20, &p), WIRE_TCP);
	T_EQ_INT(p.payload_len, sizeof(get_req) - 1);
}

static void wire_parse_malformed_verdicts(void)
{
	struct wire_pkt p;
	uint8_t f[128];
	uint32_t i;

	/* Every truncation of a good frame: never WIRE_TCP with lengths
	 * past the cut, never a read past it (ASan in the fuzz build). */
	for (i = 0; i < sizeof(syn4); i++) {
		enum wire_verdict v = wire_parse(syn4, i, &p);

		T_CHECK(v != WIRE_TCP);
	}
	memcpy(f, syn4, sizeof(syn4));
	f[12] = 0x08, f[13] = 0x06; /* ARP */
	T_EQ_INT(wire_parse(f, sizeof(syn4), &p), WIRE_NOT_TCP);
	memcpy(f, syn4, sizeof(syn4));
	f[14 + 9] = 17; /* UDP */
	T_EQ_INT(wire_parse(f, sizeof(syn4), &p), WIRE_NOT_TCP);
	memcpy(f, syn4, sizeof(syn4));
	f[14 + 6] = 0x20; /* MF */
	T_EQ_INT(wire_parse(f, sizeof(syn4), &p), WIRE_FRAGMENT);
	T_CHECK(p.tcp != NULL);
	memcpy(f, syn4, sizeof(syn4));
	f[14 + 3] = 0xff; /* total length past the frame */
	T_EQ_INT(wire_parse(f, sizeof(syn4), &p), WIRE_BAD_IP_LENGTH);
	memcpy(f, syn4, sizeof(syn4));
	f[34 + 12] = 0x40; /* data offset 4 */
	T_EQ_INT(wire_parse(f, sizeof(syn4), &p), WIRE_BAD_DATA_OFFSET);
	f[34 + 12] = 0xf0; /* data offset 15: past the segment */
	T_EQ_INT(wire_parse(f, sizeof(syn4), &p), WIRE_BAD_DATA_OFFSET);
	memcpy(f, get6, sizeof(get6));
	f[14 + 6] = 0; /* hop-by-hop extension header */
	T_EQ_INT(wire_parse(f, sizeof(get6), &p), WIRE_NOT_TCP);
}

static void wire_ipv4_options_skipped(void)
{
	uint8_t f[128];
	struct wire_pkt p;

	/* The same SYN with 4 bytes of IP options (NOPs) before TCP. */
	memcpy(f, syn4, 34);
	memset(f + 34, 1, 4);
	memcpy(f + 38, syn4 + 34, sizeof(syn4) - 34);
	f[14] = 0x46;
	f[17] += 4;
	T_EQ_INT(wire_parse(f, sizeof(syn4) + 4, &p), WIRE_TCP);
	T_EQ_INT(p.l4_off, 38);
	T_EQ_INT(p.tcp_len, 44);
	T_EQ_INT(ntohs(p.tcp->dest), 8080);
}

static void wire_options_walk_rules(void)
{
	uint8_t f[128];
	struct wire_pkt p;
	struct wire_tcp_opts o;
	uint8_t *op = f + 34 + 20;

	/* Window scale above 14 is taken as 14 (RFC 7323 2.3). */
	memcpy(f, syn4, sizeof(syn4));
	op[23] = 15;
	T_EQ_INT(wire_parse(f, sizeof(syn4), &p), WIRE_TCP);
	T_EQ_INT(wire_tcp_opts_parse(p.tcp, &o), 0);
	T_EQ_INT(o.wscale, 14);
	T_CHECK(!o.has_other);
	/* A wrong-length MSS is ignored, the rest still read. */
	memcpy(f, syn4, sizeof(syn4));
	op[0] = TCPOPT_MAXSEG, op[1] = 2, op[2] = 1, op[3] = 1;
	T_EQ_INT(wire_tcp_opts_parse(p.tcp, &o), 0);
	T_CHECK(!o.has_mss && o.has_ts && o.has_wscale && o.has_other);
	/* An unknown kind is skipped by its length, and said. */
	memcpy(f, syn4, sizeof(syn4));
	op[0] = 30, op[1] = 4;
	T_EQ_INT(wire_tcp_opts_parse(p.tcp, &o), 0);
	T_CHECK(!o.has_mss && o.sack_ok && o.has_ts && o.has_other);
	/* An option running past the header stops the walk: -1. */
	memcpy(f, syn4, sizeof(syn4));
	op[20] = TCPOPT_WINDOW, op[21] = 9;
	T_EQ_INT(wire_tcp_opts_parse(p.tcp, &o), -1);
	T_CHECK(o.has_mss && o.has_ts && !o.has_wscale);
	/* EOL ends the options. */
	memcpy(f, syn4, sizeof(syn4));
	op[4] = TCPOPT_EOL;
	T_EQ_INT(wire_tcp_opts_parse(p.tcp, &o), 0);
	T_CHECK(o.has_mss && !o.sack_ok && !o.has_ts && !o.has_wscale);
}

/* The tests' frame builder (tests/frame.h) writes the same golden frames
 * from its own spec, and reads them back. */
static void test_frame_builder_equals_scapy(void)
{
	uint8_t f[128], opts[24];
	uint32_t n = 0;
	struct tf_seg s = {
		.src_mac = cli_mac,
		.dst_mac = srv_mac,
		.sport = 40000,
		.dport = 8080,
		.seq = 0x11223344,
		.flags = TCPHDR_SYN,
		.win = 64240,
		.ip_id = 0x1234,
		.frag_off = WIRE_IP_DF,
	};
	struct tf_out t;

	n += wire_opt_mss(opts + n, 1460);
	n += wire_opt_sack_perm(opts + n);
	n += wire_opt_timestamps(opts + n, 1, 0);
	n += wire_opt_wscale(opts + n, 7);
	s.opts = opts;
	s.optlen = n;
	T_EQ_INT(tf_addrs(&s, "10.0.0.2", "10.0.0.1"), 0);
	T_EQ_INT(tf_build(f, &s), sizeof(syn4));
	T_CHECK(!memcmp(f, syn4, sizeof(syn4)));
	T_CHECK(tf_parse(f, sizeof(syn4), &t));
	T_CHECK(t.ip_csum_ok && t.tcp_csum_ok && t.opts_ok && !t.o.has_other);
	T_CHECK(t.o.has_mss && t.o.mss == 1460 && t.o.sack_ok);
	T_CHECK(t.o.has_ts && t.o.tsval == 1 && t.o.wscale == 7);
	T_CHECK(t.sport == 40000 && t.dport == 8080 && t.seq == 0x11223344);
	f[sizeof(syn4) - 1] ^= 1; /* a flipped byte: the checksum says so */
	T_CHECK(tf_parse(f, sizeof(syn4), &t) && !t.tcp_csum_ok);

	s = (struct tf_seg){
		.v6 = true,
		.src_mac = cli_mac,
		.dst_mac = srv_mac,
		.sport = 40000,
		.dport = 8080,
		.seq = 0x55667788,
		.ack = 0x99aabbcc,
		.flags = TCPHDR_PSH | TCPHDR_ACK,
		.win = 512,
		.payload = get_req,
		.plen = sizeof(get_req) - 1,
	};
	T_EQ_INT(tf_addrs(&s, "fd00::2", "fd00::1"), 0);
	T_EQ_INT(tf_build(f, &s), sizeof(get6));
	T_CHECK(!memcmp(f, get6, sizeof(get6)));
	T_CHECK(tf_parse(f, sizeof(get6), &t) && t.tcp_csum_ok);
	T_CHECK(t.p.payload_len == sizeof(get_req) - 1 && t.ack == 0x99aabbcc);
}

/* SACK-permitted and timestamps as Linux puts them on a SYN (its
 * tcp_options_write(): SACKP and TS in one 12-byte block, no NOPs). */
static void wire_write_sack_perm_ts_as_linux(void)
{
	static const uint8_t want[12] = {4,    2,    8, 10, 0xde, 0xad,
					 0xbe, 0xef, 0, 0,  0,	  7};
	uint8_t o[12];

	T_EQ_INT(wire_opt_sack_perm_ts(o, 0xdeadbeef, 7), 12);
	T_CHECK(!memcmp(o, want, sizeof(want)));
}

int main(void)
{
	T_RUN(wire_write_ipv4_syn_equals_scapy);
	T_RUN(wire_write_ipv6_payload_equals_scapy);
	T_RUN(wire_parse_ipv4_syn_and_options);
	T_RUN(wire_parse_ipv6_payload);
	T_RUN(wire_parse_malformed_verdicts);
	T_RUN(wire_ipv4_options_skipped);
	T_RUN(wire_options_walk_rules);
	T_RUN(wire_write_sack_perm_ts_as_linux);
	T_RUN(test_frame_builder_equals_scapy);
	T_EXIT();
}
