/* SPDX-License-Identifier: GPL-2.0 */
/*
 * frame.h - the one way the tests build and read a TCP segment: a
 * struct tf_seg of named fields written with userspace/wire.h's writers
 * (and its checksums), plus the knobs that make a frame malformed on
 * purpose; replies are read back with wire_parse() into a struct tf_out.
 * Used by tests/bpf and tests/perf, so a frame a test sends is put
 * together in one place and the programs under test (which have their own
 * BPF parser and checksum code) are checked against the userspace layer.
 *
 * Owns: nothing but code. Must never write past the frame it returns the
 * length of, allocate or make a syscall.
 */
#ifndef BLITZ_TEST_FRAME_H
#define BLITZ_TEST_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include "wire.h"

/*
 * One segment to build. Addresses are in network order (tf_addrs() fills
 * them from text), everything else in host order. A zeroed struct with
 * MACs, addresses and ports set is a well-formed bare segment: no IP ID,
 * no DF, TTL 64, no options, both checksums filled.
 */
struct tf_seg {
	bool v6;
	const uint8_t *src_mac, *dst_mac; /* 6 bytes each */
	uint8_t saddr[16], daddr[16];	  /* 4 bytes used for IPv4 */
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags; /* TCPHDR_* */
	uint16_t win;
	uint16_t ip_id;	     /* IPv4 */
	uint16_t frag_off;   /* IPv4 flags and offset: WIRE_IP_DF, WIRE_IP_MF */
	uint8_t ttl;	     /* hop limit; 0: 64 */
	const uint8_t *opts; /* TCP option bytes, padded with EOL to 4 */
	uint32_t optlen;
	const void *payload;
	uint32_t plen;

	/* Malformed on purpose; 0 leaves the frame well-formed. */
	int ihl;  /* IPv4: 0 is 5; above 5 adds NOP options, below writes
		   * the field over a 20-byte header */
	int doff; /* the TCP data offset field; 0: from the options */
	int ip_len_delta;   /* added to the IP length field */
	bool v6_ext;	    /* IPv6: an 8-byte extension header before TCP */
	uint8_t v6_ext_hdr; /* its kind: IPPROTO_HOPOPTS, IPPROTO_FRAGMENT
			     * (offset 0, M set) */
	uint32_t eth_pad;   /* zero bytes after the IP packet */
	uint16_t ethertype; /* 0: from v6 */
	uint8_t ip_proto;   /* 0: TCP */
	bool no_csum;	    /* leave the TCP checksum 0 */
};

/* Set s's addresses from text (IPv6 when s->v6); -1 if one does not parse. */
static inline int tf_addrs(struct tf_seg *s, const char *src, const char *dst)
{
	int af = s->v6 ? AF_INET6 : AF_INET;

	memset(s->saddr, 0, sizeof(s->saddr));
	memset(s->daddr, 0, sizeof(s->daddr));
	if (inet_pton(af, src, s->saddr) != 1 ||
	    inet_pton(af, dst, s->daddr) != 1)
		return -1;
	return 0;
}

/* The bytes the IP header of s takes (with options or extension). */
static inline uint32_t tf_l3_len(const struct tf_seg *s)
{
	if (s->v6)
		return WIRE_IP6_HLEN + (s->v6_ext ? 8 : 0);
	return WIRE_IP4_HLEN + (s->ihl > 5 ? (uint32_t)(s->ihl - 5) * 4 : 0);
}

/*
 * Write s into buf as an Ethernet frame; returns its length (headers,
 * options, payload and eth_pad). The TCP checksum covers the segment as
 * built, whatever ip_len_delta says.
 */
static inline size_t tf_build(uint8_t *buf, const struct tf_seg *s)
{
	uint32_t optlen = (s->optlen + 3) & ~3u, l3len = tf_l3_len(s);
	uint32_t l4 = ETH_HLEN + l3len;
	uint32_t tcp_len = WIRE_TCP_HLEN + optlen + s->plen;
	uint32_t ip_payload = l3len - (s->v6 ? WIRE_IP6_HLEN : WIRE_IP4_HLEN) +
			      tcp_len + (uint32_t)s->ip_len_delta;
	uint8_t proto = s->ip_proto ? s->ip_proto : IPPROTO_TCP;
	uint8_t ttl = s->ttl ? s->ttl : 64, *l3 = buf + ETH_HLEN;
	struct ethhdr *eth = (void *)buf;
	struct tcphdr *th = (void *)(buf + l4);
	struct wire_seg w = {
		.sport_be = htons(s->sport),
		.dport_be = htons(s->dport),
		.seq = s->seq,
		.ack = s->ack,
		.flags = s->flags,
		.win = s->win,
	};

	memset(buf, 0, l4 + tcp_len + s->eth_pad);
	memcpy(eth->h_dest, s->dst_mac, ETH_ALEN);
	memcpy(eth->h_source, s->src_mac, ETH_ALEN);
	eth->h_proto = htons(s->ethertype ? s->ethertype
			     : s->v6	  ? ETH_P_IPV6
					  : ETH_P_IP);
	if (s->v6) {
		struct ipv6hdr *ip = (void *)l3;

		wire_put_ip6(ip, s->saddr, s->daddr, ip_payload, ttl);
		ip->nexthdr = s->v6_ext ? s->v6_ext_hdr : proto;
		if (s->v6_ext) {
			l3[WIRE_IP6_HLEN] = IPPROTO_TCP; /* its next header */
			if (s->v6_ext_hdr == IPPROTO_FRAGMENT)
				l3[WIRE_IP6_HLEN + 3] = 1; /* M */
		}
	} else {
		struct iphdr *ip = (void *)l3;

		wire_put_ip4(ip, s->saddr, s->daddr, ip_payload, s->ip_id, ttl);
		ip->ihl = (uint8_t)(s->ihl ? s->ihl : 5);
		wire_put16(&ip->frag_off, s->frag_off);
		ip->protocol = proto;
		memset(ip + 1, 1, l3len - WIRE_IP4_HLEN); /* IPOPT_NOOP */
		ip->check = 0;
		wire_put16(&ip->check, csum_finish(csum_add(0, ip, l3len)));
	}
	wire_put_tcp(th, &w, optlen);
	if (s->doff)
		th->doff = (uint16_t)s->doff;
	if (s->optlen)
		memcpy(th + 1, s->opts, s->optlen);
	if (s->plen)
		memcpy((uint8_t *)(th + 1) + optlen, s->payload, s->plen);
	if (!s->no_csum)
		wire_tcp_csum(buf, s->v6, l4, tcp_len);
	return l4 + tcp_len + s->eth_pad;
}

/* A TCP frame read back: the headers, the options and the checksums. */
struct tf_out {
	struct wire_pkt p;
	struct wire_tcp_opts o;
	bool opts_ok;	  /* the option walk met no malformed option */
	bool ip_csum_ok;  /* the IPv4 header's checksum (IPv6: true) */
	bool tcp_csum_ok; /* the TCP checksum, pseudo-header included */
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint32_t thlen; /* TCP header bytes */
};

/* Parse a frame of n bytes; false unless wire_parse() says WIRE_TCP. */
static inline bool tf_parse(const uint8_t *f, uint32_t n, struct tf_out *t)
{
	const struct tcphdr *th;

	memset(t, 0, sizeof(*t));
	if (wire_parse(f, n, &t->p) != WIRE_TCP)
		return false;
	th = t->p.tcp;
	t->opts_ok = !wire_tcp_opts_parse(th, &t->o);
	t->tcp_csum_ok =
		wire_tcp_csum_of(f, t->p.ip6, t->p.l4_off, t->p.tcp_len) ==
		wire_get16(&th->check);
	t->ip_csum_ok = !t->p.ip4 ||
			!csum_finish(csum_add(0, t->p.ip4, t->p.ip4->ihl * 4u));
	t->sport = ntohs(th->source);
	t->dport = ntohs(th->dest);
	t->seq = ntohl(th->seq);
	t->ack = ntohl(th->ack_seq);
	t->flags = wire_tcp_flags(th);
	t->win = ntohs(th->window);
	t->thlen = wire_tcp_hlen(th);
	return true;
}

/* Fill the TCP checksum of an n-byte frame again after its bytes were
 * changed in place; false unless it is a TCP frame. */
static inline bool tf_tcp_csum_again(uint8_t *f, uint32_t n)
{
	struct wire_pkt p;

	if (wire_parse(f, n, &p) != WIRE_TCP)
		return false;
	wire_put16(f + p.l4_off + 16, 0); /* tcphdr.check */
	wire_tcp_csum(f, p.ip6, p.l4_off, p.tcp_len);
	return true;
}

#endif /* BLITZ_TEST_FRAME_H */
