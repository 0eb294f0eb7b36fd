// SPDX-License-Identifier: GPL-2.0
/*
 * wire.c - parse and write Ethernet/IPv4/IPv6/TCP frames (see wire.h).
 *
 * Owns: nothing but code. Must never read outside the frame it is given,
 * allocate, or make a syscall.
 */
#include "wire.h"

enum wire_verdict wire_parse(const void *frame, uint32_t len,
			     struct wire_pkt *p)
{
	const uint8_t *f = frame;
	uint32_t l3 = ETH_HLEN, l4, ip_len;

	memset(p, 0, sizeof(*p));
	if (len < ETH_HLEN)
		return WIRE_NOT_TCP;
	p->eth = frame;
	p->l3_off = l3;
	if (p->eth->h_proto == htons(ETH_P_IP)) {
		const struct iphdr *ip = (const void *)(f + l3);

		if (len < l3 + WIRE_IP4_HLEN || ip->version != 4 ||
		    ip->protocol != IPPROTO_TCP || ip->ihl < 5)
			return WIRE_NOT_TCP;
		l4 = l3 + ip->ihl * 4u;
		if (len < l4 + WIRE_TCP_HLEN)
			return WIRE_NOT_TCP;
		p->ip4 = ip;
		p->l4_off = l4;
		p->tcp = (const void *)(f + l4);
		if (wire_get16(&ip->frag_off) & (WIRE_IP_MF | WIRE_IP_OFFMASK))
			return WIRE_FRAGMENT;
		ip_len = wire_get16(&ip->tot_len);
		if (ip_len < l4 - l3 + WIRE_TCP_HLEN || ip_len > len - l3)
			return WIRE_BAD_IP_LENGTH;
		p->tcp_len = ip_len - (l4 - l3);
	} else if (p->eth->h_proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip = (const void *)(f + l3);

		l4 = l3 + WIRE_IP6_HLEN;
		if (len < l4 + WIRE_TCP_HLEN || ip->version != 6 ||
		    ip->nexthdr != IPPROTO_TCP)
			return WIRE_NOT_TCP;
		p->ip6 = ip;
		p->l4_off = l4;
		p->tcp = (const void *)(f + l4);
		ip_len = wire_get16(&ip->payload_len);
		if (ip_len < WIRE_TCP_HLEN || ip_len > len - l4)
			return WIRE_BAD_IP_LENGTH;
		p->tcp_len = ip_len;
	} else {
		return WIRE_NOT_TCP;
	}
	if (wire_tcp_hlen(p->tcp) < WIRE_TCP_HLEN ||
	    wire_tcp_hlen(p->tcp) > p->tcp_len) {
		p->tcp_len = 0;
		return WIRE_BAD_DATA_OFFSET;
	}
	p->payload = (const uint8_t *)p->tcp + wire_tcp_hlen(p->tcp);
	p->payload_len = p->tcp_len - wire_tcp_hlen(p->tcp);
	return WIRE_TCP;
}

/* One step of a walk of TCP options at *pp (before end): 1 with *opt at a
 * whole option of kind opt[0] and length opt[1] (NOPs skipped) and *pp
 * past it; 0 at EOL or the end; -1 at an option that runs past the header
 * or is shorter than its own kind and length bytes. */
static int opt_next(const uint8_t **pp, const uint8_t *end, const uint8_t **opt)
{
	const uint8_t *op = *pp;

	while (op < end && *op == TCPOPT_NOP)
		op++;
	if (op >= end || *op == TCPOPT_EOL)
		return 0;
	if (op + 2 > end || op[1] < 2 || op + op[1] > end)
		return -1;
	*opt = op;
	*pp = op + op[1];
	return 1;
}

int wire_tcp_opts_parse(const struct tcphdr *th, struct wire_tcp_opts *o)
{
	const uint8_t *op = (const uint8_t *)th + WIRE_TCP_HLEN;
	const uint8_t *end = (const uint8_t *)th + wire_tcp_hlen(th);
	const uint8_t *p;
	int r;

	memset(o, 0, sizeof(*o));
	while ((r = opt_next(&op, end, &p)) > 0) {
		uint8_t kind = p[0], olen = p[1];

		if (kind == TCPOPT_MAXSEG && olen == TCPOLEN_MAXSEG) {
			o->mss = wire_get16(p + 2);
			o->has_mss = true;
		} else if (kind == TCPOPT_WINDOW && olen == TCPOLEN_WINDOW) {
			o->wscale =
				p[2] > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : p[2];
			o->has_wscale = true;
		} else if (kind == TCPOPT_SACK_PERMITTED &&
			   olen == TCPOLEN_SACK_PERMITTED) {
			o->sack_ok = true;
		} else if (kind == TCPOPT_TIMESTAMP &&
			   olen == TCPOLEN_TIMESTAMP) {
			o->tsval = wire_get32(p + 2);
			o->tsecr = wire_get32(p + 6);
			o->has_ts = true;
		} else {
			o->has_other = true;
		}
	}
	return r;
}

int wire_tcp_sack_blocks(const struct tcphdr *th, uint32_t doff,
			 uint32_t (*blk)[2], uint32_t max, uint32_t *n)
{
	const uint8_t *op = (const uint8_t *)th + WIRE_TCP_HLEN;
	const uint8_t *end = (const uint8_t *)th + doff;
	const uint8_t *p;
	uint32_t i;
	int r;

	*n = 0;
	while ((r = opt_next(&op, end, &p)) > 0) {
		if (p[0] != TCPOPT_SACK || p[1] < 10 || (p[1] - 2) % 8)
			continue;
		for (i = 0; i < (p[1] - 2u) / 8 && *n < max; i++) {
			blk[*n][0] = wire_get32(p + 2 + 8 * i);
			blk[*n][1] = wire_get32(p + 6 + 8 * i);
			(*n)++;
		}
	}
	return r;
}

uint16_t wire_tcp_csum_of(const void *frame, bool v6, uint32_t l4_off,
			  uint32_t tcp_len)
{
	const uint8_t *f = frame;
	uint64_t sum = wire_tcp_ph_sum(frame, v6, tcp_len);

	/* The checksum field itself counts as zero. */
	sum = csum_add(sum, f + l4_off, 16);
	sum = csum_add(sum, f + l4_off + 18, tcp_len - 18);
	return csum_finish(sum);
}

uint32_t wire_opt_mss(uint8_t *o, uint16_t mss)
{
	o[0] = TCPOPT_MAXSEG;
	o[1] = TCPOLEN_MAXSEG;
	wire_put16(o + 2, mss);
	return 4;
}

uint32_t wire_opt_wscale(uint8_t *o, uint8_t shift)
{
	o[0] = TCPOPT_NOP;
	o[1] = TCPOPT_WINDOW;
	o[2] = TCPOLEN_WINDOW;
	o[3] = shift;
	return 4;
}

uint32_t wire_opt_sack_perm(uint8_t *o)
{
	o[0] = TCPOPT_NOP;
	o[1] = TCPOPT_NOP;
	o[2] = TCPOPT_SACK_PERMITTED;
	o[3] = TCPOLEN_SACK_PERMITTED;
	return 4;
}

/* The timestamps option's 10 bytes, after the two a caller chose. */
static uint32_t opt_ts_tail(uint8_t *o, uint32_t tsval, uint32_t tsecr)
{
	o[0] = TCPOPT_TIMESTAMP;
	o[1] = TCPOLEN_TIMESTAMP;
	wire_put32(o + 2, tsval);
	wire_put32(o + 6, tsecr);
	return TCPOLEN_TIMESTAMP;
}

uint32_t wire_opt_timestamps(uint8_t *o, uint32_t tsval, uint32_t tsecr)
{
	o[0] = TCPOPT_NOP;
	o[1] = TCPOPT_NOP;
	return 2 + opt_ts_tail(o + 2, tsval, tsecr);
}

uint32_t wire_opt_sack_perm_ts(uint8_t *o, uint32_t tsval, uint32_t tsecr)
{
	o[0] = TCPOPT_SACK_PERMITTED;
	o[1] = TCPOLEN_SACK_PERMITTED;
	return TCPOLEN_SACK_PERMITTED + opt_ts_tail(o + 2, tsval, tsecr);
}
