/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wire.h - the frames blitz reads and writes in userspace: Ethernet, IPv4,
 * IPv6 and TCP with its options, parsed into the kernel's own header
 * structs (struct ethhdr, iphdr, ipv6hdr, tcphdr of the linux/ uapi
 * headers) and written from named fields. Used by the TCP core, the
 * bench generator and the tests, so a frame is taken apart and put
 * together in one place.
 *
 * Owns: header layout, the parse verdicts, the option walk, the IPv4 and
 * TCP checksums of frames we build. Must never allocate, make syscalls or
 * keep state: pointers and lengths in, pointers and lengths out. It does
 * not verify incoming checksums (veth hands locally made frames over with
 * partial ones) and never reads outside [frame, frame + len).
 *
 * Alignment: a frame starts at any 2-byte boundary; the IP header then
 * sits at offset 14 and 32-bit fields may be unaligned. x86 and arm64 read
 * those fine; addresses are copied with memcpy.
 *
 * Include this instead of <netinet/tcp.h>: both define struct tcphdr.
 */
#ifndef BLITZ_WIRE_H
#define BLITZ_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>

#include "csum.h"

/* TCP flags (TCPHDR_*), option kinds and lengths (TCPOPT_*, TCPOLEN_*):
 * the same numbers as the BPF programs. */
#include "blitz_proto.h"

#define WIRE_IP4_HLEN ((uint32_t)sizeof(struct iphdr))
#define WIRE_IP6_HLEN ((uint32_t)sizeof(struct ipv6hdr))
#define WIRE_TCP_HLEN ((uint32_t)sizeof(struct tcphdr))
#define WIRE_IP_DF 0x4000
#define WIRE_IP_MF 0x2000
#define WIRE_IP_OFFMASK 0x1fff

/* ---- parse ---- */

enum wire_verdict {
	WIRE_TCP = 0,	     /* a TCP segment whose lengths add up */
	WIRE_NOT_TCP,	     /* not IPv4/IPv6 TCP, or too short to tell */
	WIRE_FRAGMENT,	     /* IPv4 fragment: no TCP header to trust */
	WIRE_BAD_IP_LENGTH,  /* IP length beyond the frame or below TCP's */
	WIRE_BAD_DATA_OFFSET /* TCP data offset < 5 or beyond the segment */
};

/*
 * One frame taken apart. Set for every verdict but WIRE_NOT_TCP: eth, one
 * of ip4/ip6 and tcp (its fixed 20 bytes lie inside the frame, so the
 * ports and flags can be read to decide whose segment it is). For WIRE_TCP
 * only: tcp_len (header + payload, from the IP length), payload and
 * payload_len. Bytes past the IP length (Ethernet padding) are not part of
 * the payload.
 */
struct wire_pkt {
	const struct ethhdr *eth;
	const struct iphdr *ip4;
	const struct ipv6hdr *ip6;
	const struct tcphdr *tcp;
	uint32_t l3_off, l4_off; /* from the frame's start */
	uint32_t tcp_len;
	const uint8_t *payload;
	uint32_t payload_len;
};

/* Parse an Ethernet frame of len bytes. IPv4 options are skipped (see
 * ip4->ihl); an IPv6 extension header makes the frame WIRE_NOT_TCP. */
enum wire_verdict wire_parse(const void *frame, uint32_t len,
			     struct wire_pkt *p);

static inline uint8_t wire_tcp_flags(const struct tcphdr *th)
{
	return ((const uint8_t *)th)[13];
}

static inline void wire_tcp_set_flags(struct tcphdr *th, uint8_t flags)
{
	((uint8_t *)th)[13] = flags;
}

/* TCP header length in bytes, from the data offset. */
static inline uint32_t wire_tcp_hlen(const struct tcphdr *th)
{
	return (uint32_t)th->doff * 4;
}

/* The options of a TCP header; has_* say which were present. */
struct wire_tcp_opts {
	uint16_t mss;
	uint8_t wscale; /* as sent, capped at TCP_MAX_WSCALE */
	bool has_mss, has_wscale, sack_ok, has_ts;
	bool has_other; /* another kind, or a known one of the wrong length */
	uint32_t tsval, tsecr; /* host order */
};

/*
 * Walk the options of th (whose wire_tcp_hlen() bytes must be readable).
 * Options of the wrong length are ignored, as Linux does; the walk stops
 * at EOL or at an option that runs past the header. Returns 0, or -1 when
 * it stopped at a malformed option (what came before is kept).
 */
int wire_tcp_opts_parse(const struct tcphdr *th, struct wire_tcp_opts *o);

/*
 * The SACK blocks (RFC 2018 3) in the options of th, whose doff header
 * bytes must be readable: up to max of them, from every SACK option of a
 * whole number of blocks, into blk (start, end; host order); *n gets how
 * many. Other options are skipped; the walk stops at EOL or at a
 * malformed option (what came before counts, as Linux). Returns 0, or -1
 * when it stopped at a malformed option.
 */
int wire_tcp_sack_blocks(const struct tcphdr *th, uint32_t doff,
			 uint32_t (*blk)[2], uint32_t max, uint32_t *n);

/* ---- write ---- */

/* What a TCP segment carries in its headers, network order for addresses
 * and ports (as they sit in the headers), host order for the rest. */
struct wire_seg {
	const uint8_t *src_mac, *dst_mac; /* 6 bytes each */
	bool v6;
	const void *saddr, *daddr; /* 4 bytes (IPv4) or 16 (IPv6) */
	uint16_t sport_be, dport_be;
	uint32_t seq, ack;
	uint8_t flags; /* TCPHDR_* */
	uint16_t win;
	uint16_t ip_id; /* IPv4 only */
	uint8_t ttl;	/* hop limit; 0: 64 */
};

/*
 * The writers are inline: the TCP core writes every segment with them, and
 * inlined (the struct wire_seg a caller fills dissolves into registers)
 * they cost what hand-written offsets cost (docs/tcp-core.md, Cost).
 */

/* Host-order loads and stores of a header field that may be unaligned. */
static inline uint16_t wire_get16(const void *field)
{
	uint16_t v;

	memcpy(&v, field, 2);
	return ntohs(v);
}

static inline uint32_t wire_get32(const void *field)
{
	uint32_t v;

	memcpy(&v, field, 4);
	return ntohl(v);
}

static inline void wire_put16(void *field, uint16_t v)
{
	v = htons(v);
	memcpy(field, &v, 2);
}

static inline void wire_put32(void *field, uint32_t v)
{
	v = htonl(v);
	memcpy(field, &v, 4);
}

/* An IPv4 header without options, DF set, its checksum filled. */
static inline void wire_put_ip4(struct iphdr *ip, const void *saddr,
				const void *daddr, uint32_t l4_len, uint16_t id,
				uint8_t ttl)
{
	memset(ip, 0, WIRE_IP4_HLEN);
	ip->version = 4;
	ip->ihl = 5;
	wire_put16(&ip->tot_len, (uint16_t)(WIRE_IP4_HLEN + l4_len));
	wire_put16(&ip->id, id);
	wire_put16(&ip->frag_off, WIRE_IP_DF);
	ip->ttl = ttl;
	ip->protocol = IPPROTO_TCP;
	memcpy(&ip->saddr, saddr, 4);
	memcpy(&ip->daddr, daddr, 4);
	wire_put16(&ip->check, csum_finish(csum_add(0, ip, WIRE_IP4_HLEN)));
}

/* An IPv6 header (class 0, flow 0) followed by TCP. */
static inline void wire_put_ip6(struct ipv6hdr *ip, const void *saddr,
				const void *daddr, uint32_t l4_len,
				uint8_t hop_limit)
{
	wire_put32(ip, 0x60000000); /* version 6, class 0, flow 0 */
	wire_put16(&ip->payload_len, (uint16_t)l4_len);
	ip->nexthdr = IPPROTO_TCP;
	ip->hop_limit = hop_limit;
	memcpy(&ip->saddr, saddr, 16);
	memcpy(&ip->daddr, daddr, 16);
}

/* The fixed TCP header, checksum and urgent pointer 0, the data offset
 * counting optlen option bytes. */
static inline void wire_put_tcp(struct tcphdr *th, const struct wire_seg *s,
				uint32_t optlen)
{
	memset(th, 0, WIRE_TCP_HLEN);
	memcpy(&th->source, &s->sport_be, 2);
	memcpy(&th->dest, &s->dport_be, 2);
	wire_put32(&th->seq, s->seq);
	wire_put32(&th->ack_seq, s->ack);
	th->doff = (uint16_t)((WIRE_TCP_HLEN + optlen) / 4);
	wire_tcp_set_flags(th, s->flags);
	wire_put16(&th->window, s->win);
}

/*
 * Write Ethernet, IP (DF set on IPv4, header checksum filled) and the
 * fixed TCP header (checksum 0, urgent 0, data offset for optlen option
 * bytes) of a segment with paylen payload bytes. The caller then writes
 * optlen option bytes and the payload at the returned offset + 20 and
 * calls wire_tcp_csum(). Returns the TCP header's offset; the frame is
 * that + 20 + optlen + paylen bytes long. optlen must be a multiple of 4.
 */
static inline uint32_t wire_write_tcp_hdrs(void *frame,
					   const struct wire_seg *s,
					   uint32_t optlen, uint32_t paylen)
{
	struct ethhdr *eth = frame;
	uint32_t tcp_len = WIRE_TCP_HLEN + optlen + paylen, l4;
	uint8_t ttl = s->ttl ? s->ttl : 64;
	void *l3 = (uint8_t *)frame + ETH_HLEN;

	memcpy(eth->h_dest, s->dst_mac, ETH_ALEN);
	memcpy(eth->h_source, s->src_mac, ETH_ALEN);
	if (!s->v6) {
		eth->h_proto = htons(ETH_P_IP);
		wire_put_ip4(l3, s->saddr, s->daddr, tcp_len, s->ip_id, ttl);
		l4 = ETH_HLEN + WIRE_IP4_HLEN;
	} else {
		eth->h_proto = htons(ETH_P_IPV6);
		wire_put_ip6(l3, s->saddr, s->daddr, tcp_len, ttl);
		l4 = ETH_HLEN + WIRE_IP6_HLEN;
	}
	wire_put_tcp((void *)((uint8_t *)frame + l4), s, optlen);
	return l4;
}

/* The TCP pseudo-header's sum for a frame written by wire_write_tcp_hdrs():
 * both addresses (read from the IP header), the protocol and tcp_len. */
static inline uint64_t wire_tcp_ph_sum(const void *frame, bool v6,
				       uint32_t tcp_len)
{
	const uint8_t *ip = (const uint8_t *)frame + ETH_HLEN;
	uint64_t sum;

	if (!v6)
		sum = csum_add(0, ip + offsetof(struct iphdr, saddr), 8);
	else
		sum = csum_add(0, ip + offsetof(struct ipv6hdr, saddr), 32);
	return sum + IPPROTO_TCP + tcp_len;
}

/* The TCP checksum a segment should carry (host order), over the
 * pseudo-header and tcp_len bytes of header, options and payload; the
 * checksum field itself counts as zero. For checks of frames. */
uint16_t wire_tcp_csum_of(const void *frame, bool v6, uint32_t l4_off,
			  uint32_t tcp_len);

/* Fill the TCP checksum of a frame written by wire_write_tcp_hdrs() (its
 * checksum field still 0): one pass over the segment, inline, as the TCP
 * core calls it for every segment it sends. */
static inline void wire_tcp_csum(void *frame, bool v6, uint32_t l4_off,
				 uint32_t tcp_len)
{
	struct tcphdr *th = (void *)((uint8_t *)frame + l4_off);
	uint64_t sum = wire_tcp_ph_sum(frame, v6, tcp_len);

	sum = csum_add(sum, th, tcp_len);
	wire_put16(&th->check, csum_finish(sum));
}

/* Whether an IPv4 header of ihl words verifies (RFC 791: its sum, the
 * checksum field included, is all ones). */
static inline bool wire_ip4_csum_ok(const struct iphdr *ip)
{
	return csum_ne_fold(csum_ne_add(0, ip, ip->ihl * 4u)) == 0xffff;
}

/*
 * Whether a received TCP segment's checksum verifies. ph: the
 * pseudo-header's addresses summed by csum_ne_add() (wire_ph_ip4/6); the
 * protocol and tcp_len are added here; the tcp_len bytes at th must sum
 * with it to all ones. partial_ok: a frame a local stack sent over veth
 * (CHECKSUM_PARTIAL) carries only the pseudo-header's folded sum; accept
 * that form too (only from such devices: on a wire it would let
 * corrupted payload through).
 */
static inline bool wire_tcp_csum_ok(uint64_t ph, const struct tcphdr *th,
				    uint32_t tcp_len, bool partial_ok)
{
	uint16_t check;

	ph = csum_ne_add32(ph, IPPROTO_TCP + tcp_len);
	if (csum_ne_fold(csum_ne_add(ph, th, tcp_len)) == 0xffff)
		return true;
	memcpy(&check, &th->check, 2);
	return partial_ok && check == csum_ne_fold(ph);
}

/* The pseudo-header's addresses, for wire_tcp_csum_ok(). */
static inline uint64_t wire_ph_ip4(const struct iphdr *ip)
{
	return csum_ne_add(0, &ip->saddr, 8);
}

static inline uint64_t wire_ph_ip6(const struct ipv6hdr *ip)
{
	return csum_ne_add(0, &ip->saddr, 32);
}

/*
 * Option writers: each writes at o and returns the bytes written, padded
 * with NOPs to keep the next option aligned as Linux sends them (MSS 4,
 * NOP + window scale 4, NOP NOP + SACK-permitted 4, NOP NOP + timestamps
 * 12), so any sum of them is a multiple of 4.
 */
uint32_t wire_opt_mss(uint8_t *o, uint16_t mss);
uint32_t wire_opt_wscale(uint8_t *o, uint8_t shift);
uint32_t wire_opt_sack_perm(uint8_t *o);
uint32_t wire_opt_timestamps(uint8_t *o, uint32_t tsval, uint32_t tsecr);
/* SACK-permitted then timestamps in 12 bytes, as Linux writes them on a
 * SYN that carries both. */
uint32_t wire_opt_sack_perm_ts(uint8_t *o, uint32_t tsval, uint32_t tsecr);

#endif /* BLITZ_WIRE_H */
