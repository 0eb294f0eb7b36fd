/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_xdp_reply.h - the XDP program's reply frame: the frame resized to
 * the reply, its Ethernet, IP and TCP headers (options and both checksums)
 * written in place, and the bare replies (SYN-ACK, FIN-ACK, RST, ACK) sent
 * with XDP_TX.
 *
 * Owns: struct reply (what the reply's TCP header says), Linux's option
 * layouts on our replies, the MSS we advertise. Must never decide what to
 * answer: the callers (blitz_xdp_answer.h, blitz_xdp_tcp.h) do.
 */
#ifndef BLITZ_XDP_REPLY_H
#define BLITZ_XDP_REPLY_H

#include "blitz_xdp.h"

/* The checksum field of a sum: ~fold. make cost's ablation build
 * (BLITZ_COST_NO_CSUM) writes 0, and the sums become dead code. */
static __always_inline __u16 csum_field(__u32 sum)
{
#ifdef BLITZ_COST_NO_CSUM
	return 0;
#else
	return (__u16)~blitz_fold(sum);
#endif
}

/* The MSS we advertise; config.mss is the IPv4 one (MTU - 40). */
static __always_inline __u32 our_mss(const struct blitz_config *cfg,
				     const struct seg *s)
{
	__u32 mss = cfg->mss ? cfg->mss : BLITZ_DEFAULT_MSS;

	return s->v6 ? mss - (BLITZ_IP6_HLEN - BLITZ_IP4_HLEN) : mss;
}

/* What the reply's TCP header says. */
struct reply {
	__u32 seq; /* host order */
	__u32 ack;
	__u32 paylen;
	__u32 paysum; /* native ones' complement sum of the payload */
	__u32 tsval;  /* host order */
	__u16 mss;    /* SYN-ACK: the MSS option (always sent) */
	__u16 win;    /* the window field, host order */
	__u8 flags;
	__u8 ts;     /* a timestamp option (TSval, their TSval echoed) */
	__u8 sack;   /* SYN-ACK: SACK-permitted */
	__u8 wscale; /* SYN-ACK: our shift, 0xff: no window scaling */
};

/* Linux's layouts: MSS; SACK-permitted with the timestamps, or NOP NOP
 * before either alone; NOP and window scale. At most 40 bytes. */
static __always_inline __u32 reply_thlen(const struct reply *r)
{
	__u32 w = sizeof(__u32); /* an option word */
	__u32 n = BLITZ_TCP_HLEN +
		  (r->ts || r->sack ? (r->ts ? TCPOLEN_TSTAMP_ALIGNED : w) : 0);

	if (r->mss)
		n += w + (r->wscale != BLITZ_CK2_WS_NONE ? w : 0);
	return n;
}

/*
 * Grow or shrink the frame to newlen bytes (all of it: its fragments too).
 * Every header and payload byte of a reply is written afterwards (from
 * struct seg and the responses), so where the old bytes went does not
 * matter. A reply grows at the head first: bpf_xdp_adjust_head only moves
 * a pointer, where bpf_xdp_adjust_tail also zeroes the bytes it adds (and
 * veth hands XDP frames with almost no tailroom). The head keeps 256
 * bytes minus the kernel's xdp_frame; when that is not enough, the tail,
 * or both ends.
 */
static __always_inline int resize(struct xdp_md *ctx, __u32 newlen)
{
	int delta = (int)newlen - (int)bpf_xdp_get_buff_len(ctx);

	if (!delta)
		return 0;
	if (delta < 0)
		return bpf_xdp_adjust_tail(ctx, delta) ? -1 : 0;
	if (!bpf_xdp_adjust_head(ctx, -delta))
		return 0;
	if (!bpf_xdp_adjust_tail(ctx, delta))
		return 0;
	if (delta > HEAD_GROW && !bpf_xdp_adjust_head(ctx, -HEAD_GROW)) {
		if (!bpf_xdp_adjust_tail(ctx, delta - HEAD_GROW))
			return 0;
		/* undo: the frame goes to the kernel as it came */
		bpf_xdp_adjust_head(ctx, HEAD_GROW);
	}
	return -1;
}

/* The TCP header's 32-bit words by what they hold, as write_headers()
 * builds them: ports; seq; ack; data offset, flags and window; checksum
 * and urgent pointer; then the options. */
#define TCPW_PORTS (BLITZ_OFF(struct tcphdr, source) / 4)
#define TCPW_SEQ (BLITZ_OFF(struct tcphdr, seq) / 4)
#define TCPW_ACK (BLITZ_OFF(struct tcphdr, ack_seq) / 4)
#define TCPW_FLAGS (BLITZ_OFF(struct tcphdr, window) / 4)
#define TCPW_CSUM (BLITZ_OFF(struct tcphdr, check) / 4)
#define TCPW_OPT (BLITZ_TCP_HLEN / 4)
/* The first word of each IP header: the version (and IPv4's IHL, no
 * options) above the rest. */
#define IP4_W0 (4U << 28 | (BLITZ_IP4_HLEN / 4) << 24)
#define IP6_W0 (6U << 28)

/*
 * Turn the (already resized) frame into the reply: swap the Ethernet and
 * IP addresses, write a fresh IP header and the TCP header with its
 * options, and both checksums. The payload, if any, is already in place.
 * Every header word is built whole in a register, stored straight into
 * the frame and summed as a 32-bit word (no copy on the stack first, no
 * byte or half-word pieces); the address sum is shared by the IP header
 * and the TCP pseudo-header.
 */
static __always_inline int
write_headers(struct xdp_md *ctx, const struct seg *s, const struct reply *r)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth;
	__u32 *tcp = data + (s->v6 ? L4_V6 : L4_V4);
	__u32 thlen = reply_thlen(r), i;
	__u64 asum = 0, sum;
	union {
		__u16 w[2];
		__u32 l;
	} ports = {.w = {s->dport, s->sport}}; /* then other word pairs */

	/* The address sum does not care which is which. */
	if (s->v6) {
		for (i = 0; i < 4; i++)
			asum += (__u64)s->saddr[i] + s->daddr[i];
	} else {
		asum = (__u64)s->saddr[0] + s->daddr[0];
	}
	/* Pseudo-header, then each header word as it is stored (checksum
	 * and urgent pointer 0 until the end), the payload's sum. */
	sum = asum + bpf_htons(IPPROTO_TCP) + bpf_htons(thlen + r->paylen) +
	      r->paysum;
#define PUT(i, v)                                  \
	do {                                       \
		__u32 v_ = (v);                    \
		if ((void *)(tcp + (i) + 1) > end) \
			return -1;                 \
		tcp[i] = v_;                       \
		sum += v_;                         \
	} while (0)
	PUT(TCPW_PORTS, ports.l);
	PUT(TCPW_SEQ, bpf_htonl(r->seq));
	PUT(TCPW_ACK, bpf_htonl(r->ack));
	/* the data offset in words in the top 4 bits, flags, window */
	PUT(TCPW_FLAGS,
	    bpf_htonl((thlen / 4) << 28 | (__u32)r->flags << 16 | r->win));
	if (r->mss) { /* SYN-ACK */
		__u32 ws = bpf_htonl(BLITZ_OPTW_NOP_WS(r->wscale));
		int has_ws = r->wscale != BLITZ_CK2_WS_NONE;

		PUT(TCPW_OPT, bpf_htonl(BLITZ_OPTW_MSS(r->mss)));
		if (r->ts) {
			PUT(TCPW_OPT + 1,
			    bpf_htonl(r->sack ? BLITZ_OPTW_SACKP_TS
					      : BLITZ_OPTW_NOP_NOP_TS));
			PUT(TCPW_OPT + 2, bpf_htonl(r->tsval));
			PUT(TCPW_OPT + 3, s->tsval_be);
			if (has_ws)
				PUT(TCPW_OPT + 4, ws);
		} else if (r->sack) {
			PUT(TCPW_OPT + 1, bpf_htonl(BLITZ_OPTW_NOP_NOP_SACKP));
			if (has_ws)
				PUT(TCPW_OPT + 2, ws);
		} else if (has_ws) {
			PUT(TCPW_OPT + 1, ws);
		}
	} else if (r->ts) {
		PUT(TCPW_OPT, bpf_htonl(BLITZ_OPTW_NOP_NOP_TS));
		PUT(TCPW_OPT + 1, bpf_htonl(r->tsval));
		PUT(TCPW_OPT + 2, s->tsval_be);
	}
#undef PUT
	ports.w[0] = csum_field(blitz_fold64(sum));
	ports.w[1] = 0; /* the urgent pointer */
	if ((void *)(tcp + TCPW_CSUM + 1) > end)
		return -1;
	tcp[TCPW_CSUM] = ports.l;

	eth = data;
	if (s->v6) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return -1;
		/* version 6, traffic class and flow label 0 */
		*(__u32 *)ip6 = bpf_htonl(IP6_W0);
		/* payload length, next header TCP, hop limit */
		*(__u32 *)&ip6->payload_len =
			bpf_htonl((thlen + r->paylen) << 16 | IPPROTO_TCP << 8 |
				  BLITZ_IP_TTL);
		for (i = 0; i < 4; i++) {
			ip6->saddr.in6_u.u6_addr32[i] = s->daddr[i];
			ip6->daddr.in6_u.u6_addr32[i] = s->saddr[i];
		}
	} else {
		struct iphdr *ip = (void *)(eth + 1);
		__u32 w0;

		if ((void *)(ip + 1) > end)
			return -1;
		/* version 4, no options, TOS 0, total length; ID 0, DF; TTL,
		 * TCP, then the checksum */
		w0 = bpf_htonl(IP4_W0 | (BLITZ_IP4_HLEN + thlen + r->paylen));
		ports.w[0] = bpf_htons(BLITZ_IP_TTL << 8 | IPPROTO_TCP);
		ports.w[1] = 0;
		sum = asum + w0 + bpf_htonl(BLITZ_IP_DF) + ports.l;
		ports.w[1] = csum_field(blitz_fold64(sum));
		*(__u32 *)ip = w0;
		*(__u32 *)&ip->id = bpf_htonl(BLITZ_IP_DF);
		*(__u32 *)&ip->ttl = ports.l;
		ip->saddr = s->daddr[0];
		ip->daddr = s->saddr[0];
	}
	__builtin_memcpy(eth->h_dest, s->mac_src, ETH_ALEN);
	__builtin_memcpy(eth->h_source, s->mac_dst, ETH_ALEN);
	eth->h_proto = bpf_htons(s->v6 ? ETH_P_IPV6 : ETH_P_IP);
	return 0;
}

/* A reply with no payload (SYN-ACK, FIN-ACK): resize, headers, XDP_TX. */
static __always_inline int send_bare(struct xdp_md *ctx, const struct seg *s,
				     const struct reply *r, __u32 counter)
{
	__u32 len = (s->v6 ? L4_V6 : L4_V4) + reply_thlen(r);

	if (resize(ctx, len))
		return pass(BLITZ_CNT_PASS_NO_ROOM);
	if (write_headers(ctx, s, r))
		return XDP_ABORTED; /* cannot happen: the frame was resized */
	cnt_inc(s->cnt, counter, 1);
	cnt_inc(s->cnt, BLITZ_CNT_TX_BYTES, len);
	return XDP_TX;
}

#endif /* BLITZ_XDP_REPLY_H */
