/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_seg.h - the one segment parser of the BPF programs (the XDP engine
 * and the TC hand-off): Ethernet, IPv4 or IPv6, TCP and its options into
 * one struct seg, with the "only what is ours" checks of blitz_addr.h on
 * the way, so both programs draw the same line between the service's
 * segments and everything else.
 *
 * Owns: which frames are service segments, and the counter that says why
 * any other frame is not (BLITZ_CNT_PASS_*, DROP_MARTIAN); the fields of
 * struct seg. The packet is reached through blitz_pkt_*(): the program's
 * context and a kind, BLITZ_PKT_XDP or BLITZ_PKT_SKB, that every caller
 * passes as a constant. The functions are always inlined, so the compiler
 * keeps only the helper and context fields of the caller's hook (a TC
 * program never sees an XDP helper, and the reverse), at no run-time cost.
 * Where the two hooks differ, the kind says so in one place:
 *   - the link layer: XDP compares the destination MAC with ours
 *     (blitz_mac_ours), TC takes the kernel's pkt_type == PACKET_HOST;
 *   - IPv4 options: XDP passes them to the kernel (its replies assume a
 *     20-byte header), TC parses past them (it hands such segments off);
 *   - headers short in the linear part: XDP's are always there (malformed
 *     otherwise), TC gets BLITZ_SEG_NEED_PULL and may pull and parse again;
 *   - martian sources: XDP drops them (DROP_MARTIAN), so TC never sees
 *     one and does not look again;
 *   - only XDP counts BLITZ_CNT_SERVICE_SEGMENTS (one count per frame).
 * Must never: write the packet, keep state, or call anything but the
 * packet-reading helpers and blitz_addr.h's bpf_fib_lookup.
 */
#ifndef BLITZ_SEG_H
#define BLITZ_SEG_H

#include "blitz_maps.h"
#include <bpf/bpf_endian.h>

#include "blitz_addr.h"
#include "blitz_cookie2.h"
#include "blitz_csum.h"
#include "blitz_proto.h"
#include "blitz_tcpopt.h"

#define BLITZ_PKT_XDP 1 /* ctx is a struct xdp_md */
#define BLITZ_PKT_SKB 2 /* ctx is a struct __sk_buff (TC) */

/* TC only: the headers run past the linear part of the skb. */
#define BLITZ_SEG_NEED_PULL (-1)
/* XDP only: an ICMP or ICMPv6 message, for blitz_seg_icmp(). */
#define BLITZ_SEG_ICMP (-2)

/* The quoted reply an ICMP error must carry (blitz_seg_icmp): our TCP
 * header with timestamps, after an IPv4 header without options. */
#define BLITZ_ICMP_QUOTE_TCP (BLITZ_TCP_HLEN + TCPOLEN_TSTAMP_ALIGNED)
#define BLITZ_ICMP_QUOTE_V4 (BLITZ_IP4_HLEN + BLITZ_ICMP_QUOTE_TCP)
/* Where TCP starts without IPv4 options or IPv6 extension headers. */
#define BLITZ_L4_V4 (ETH_HLEN + BLITZ_IP4_HLEN)
#define BLITZ_L4_V6 (ETH_HLEN + BLITZ_IP6_HLEN)

/* A segment's addresses, apart so a global function can take them alone
 * (struct seg holds a pointer that a global's argument would clobber). */
struct seg_addrs {
	__u32 saddr[4]; /* network order; IPv4 uses [0] */
	__u32 daddr[4];
};

/* What the headers of one service segment say. */
struct seg {
	union {
		struct {
			__u32 saddr[4]; /* network order; IPv4 uses [0] */
			__u32 daddr[4];
		};
		struct seg_addrs addrs;
	};
	__u32 seq; /* host order */
	__u32 ack;
	__u32 tsval_be; /* their TSval as on the wire, echoed back */
	__u32 tsecr;	/* host order */
	__u32 seglen;	/* TCP header + payload, from the IP length */
	__u32 thlen;	/* their TCP header length */
	__u32 plen;	/* payload length */
	__u32 l4off;	/* where the TCP header starts in the frame */
	__u16 sport;	/* network order */
	__u16 dport;
	__u16 win;  /* host order, as sent (scaled by the client's shift) */
	__u16 csum; /* the TCP checksum field, as on the wire */
	__u8 flags;
	__u8 v6;
	__u8 has_ts;
	/* What a SYN announces (blitz_tcpopt.h); wscale 0xff: none. */
	__u8 syn_wscale;
	__u8 syn_sack;
	__u16 syn_mss;
	__u8 mac_src[6]; /* the client's (XDP fills them) */
	__u8 mac_dst[6]; /* ours */
	/* This CPU's counters, looked up once by the program (blitz_maps.h). */
	struct blitz_counters *cnt;
};

/* ---- the packet, whichever hook it came through ---- */

static __always_inline void *blitz_pkt_data(void *ctx, const int kind)
{
	if (kind == BLITZ_PKT_XDP)
		return (void *)(long)((struct xdp_md *)ctx)->data;
	return (void *)(long)((struct __sk_buff *)ctx)->data;
}

static __always_inline void *blitz_pkt_end(void *ctx, const int kind)
{
	if (kind == BLITZ_PKT_XDP)
		return (void *)(long)((struct xdp_md *)ctx)->data_end;
	return (void *)(long)((struct __sk_buff *)ctx)->data_end;
}

/* Bytes of the whole frame, fragments and non-linear parts included. */
static __always_inline __u64 blitz_pkt_len(void *ctx, const int kind)
{
	if (kind == BLITZ_PKT_XDP)
		return bpf_xdp_get_buff_len(ctx);
	return ((struct __sk_buff *)ctx)->len;
}

/* Do the frame's first n bytes lie in it? Read from the linear part when
 * it holds them (the usual frame: no helper call), else from the whole
 * frame's length (fragments, a non-linear skb). */
static __always_inline int blitz_pkt_has(void *ctx, const int kind, __u64 n)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);

	if (n <= 0xffff + ETH_HLEN + BLITZ_IP6_HLEN && data + n <= end)
		return 1;
	return n <= blitz_pkt_len(ctx, kind);
}

static __always_inline __u32 blitz_pkt_ifindex(void *ctx, const int kind)
{
	if (kind == BLITZ_PKT_XDP)
		return ((struct xdp_md *)ctx)->ingress_ifindex;
	return ((struct __sk_buff *)ctx)->ifindex;
}

static __always_inline long blitz_pkt_load(void *ctx, const int kind, __u32 off,
					   void *to, __u32 len)
{
	if (kind == BLITZ_PKT_XDP)
		return bpf_xdp_load_bytes(ctx, off, to, len);
	return bpf_skb_load_bytes(ctx, off, to, len);
}

/* Is the frame addressed to this host at the link layer? */
static __always_inline int blitz_pkt_link_ours(void *ctx, const int kind,
					       const struct blitz_config *cfg,
					       const __u8 *h_dest)
{
	if (kind == BLITZ_PKT_XDP)
		return blitz_mac_ours(cfg, h_dest);
	return ((struct __sk_buff *)ctx)->pkt_type == BLITZ_PACKET_HOST;
}

/* Headers short in the linear part: see the top of the file. */
static __always_inline int blitz_seg_short(const int kind)
{
	return kind == BLITZ_PKT_XDP ? BLITZ_CNT_PASS_MALFORMED
				     : BLITZ_SEG_NEED_PULL;
}

/* ---- TCP ---- */

/* The option walk's state: the option bytes copied out of the packet. */
struct blitz_seg_optrun {
	__u8 *buf; /* BLITZ_TCPOPT_BUF bytes */
	__u32 off;
	__u32 len;
	struct blitz_tcpopts o;
};

/* One TCP option per call (blitz_tcpopt.h), driven by bpf_loop. */
static long blitz_seg_opt_step(__u64 idx, void *arg)
{
	struct blitz_seg_optrun *r = arg;

	if (!r->buf)
		return 1;
	return blitz_tcpopt_step(r->buf, r->len, &r->off, &r->o);
}

/*
 * The TCP options of s (its header at l4): the timestamps, and what a SYN
 * announces. buf: BLITZ_TCPOPT_BUF bytes of scratch; off0: 0, read from a
 * map by XDP so that the verifier takes it as unknown (from a constant it
 * walks every iteration of the bpf_loop callback). 0 or a counter.
 */
static __always_inline int blitz_seg_opts(void *ctx, const int kind,
					  struct seg *s, __u8 *buf, __u32 off0,
					  __u32 l4)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);
	__u32 optlen = s->thlen - BLITZ_TCP_HLEN, *o;

	s->syn_wscale = BLITZ_CK2_WS_NONE;
	if (!optlen)
		return 0;
	l4 &= 0x7f; /* <= ETH_HLEN + BLITZ_IP4_HLEN_MAX, for the verifier */
	/* What Linux puts on every segment after the handshake. */
	o = data + l4 + BLITZ_TCP_HLEN;
	if (optlen == TCPOLEN_TSTAMP_ALIGNED && (void *)(o + 3) <= end &&
	    o[0] == bpf_htonl(BLITZ_OPTW_NOP_NOP_TS)) {
		s->has_ts = 1;
		s->tsval_be = o[1];
		s->tsecr = bpf_ntohl(o[2]);
		return 0;
	}
	/* Linux's SYN (MSS, SACK-permitted, timestamps, NOP, window scale),
	 * read in place: exactly what the walk below finds in these bytes,
	 * without its copy and its bpf_loop calls (issue 13). */
	if (optlen == BLITZ_OPTLEN_LINUX_SYN && (void *)(o + 5) <= end &&
	    (o[0] & bpf_htonl(BLITZ_OPTW_MSS_MASK)) ==
		    bpf_htonl(BLITZ_OPTW_MSS(0)) &&
	    o[1] == bpf_htonl(BLITZ_OPTW_SACKP_TS) &&
	    (o[4] & bpf_htonl(BLITZ_OPTW_NOP_WS_MASK)) ==
		    bpf_htonl(BLITZ_OPTW_NOP_WS(0))) {
		s->syn_mss = (__u16)bpf_ntohl(o[0]);
		s->syn_sack = 1;
		s->has_ts = 1;
		s->tsval_be = o[2];
		s->tsecr = bpf_ntohl(o[3]);
		s->syn_wscale = (__u8)bpf_ntohl(o[4]);
		return 0;
	}
	if (optlen > TCPOLEN_MAX)
		return BLITZ_CNT_PASS_MALFORMED;
	if (blitz_pkt_load(ctx, kind, l4 + BLITZ_TCP_HLEN, buf, optlen))
		return BLITZ_CNT_PASS_MALFORMED;
	{
		struct blitz_seg_optrun r = {
			.buf = buf, .off = off0, .len = optlen};

		r.o.wscale = BLITZ_CK2_WS_NONE;
		bpf_loop(TCPOLEN_MAX, blitz_seg_opt_step, &r, 0);
		if (r.o.has_ts) {
			s->has_ts = 1;
			s->tsval_be = r.o.tsval_be;
			s->tsecr = bpf_ntohl(r.o.tsecr_be);
		}
		s->syn_mss = r.o.mss;
		s->syn_wscale = r.o.wscale;
		s->syn_sack = r.o.sack_ok;
	}
	return 0;
}

/* The fixed TCP header (s->seglen already set): 0 or a counter. */
static __always_inline int blitz_seg_tcp(struct seg *s, const struct tcphdr *th)
{
	__u32 doff = (__u32)th->doff * 4;

	if (doff < BLITZ_TCP_HLEN || doff > s->seglen)
		return BLITZ_CNT_PASS_MALFORMED;
	s->thlen = doff;
	s->plen = s->seglen - doff;
	s->sport = th->source;
	s->dport = th->dest;
	s->seq = bpf_ntohl(th->seq);
	s->ack = bpf_ntohl(th->ack_seq);
	s->win = bpf_ntohs(th->window);
	s->csum = th->check;
	s->flags = ((const __u8 *)th)[BLITZ_TCP_FLAGS_OFF];
	return 0;
}

/* ---- IP ---- */

/* What both families do once the TCP header is in reach: 0 or a counter.
 * optbuf NULL: the options are left for a later blitz_seg_opts(). */
static __always_inline int blitz_seg_l4(void *ctx, const int kind,
					const struct blitz_config *cfg,
					struct seg *s, const struct tcphdr *th,
					const __u8 *h_dest, __u8 *optbuf,
					__u32 off0, __u32 l4)
{
	int why;

	/* Only what is ours (blitz_addr.h): the cheap checks first. */
	if (!blitz_pkt_link_ours(ctx, kind, cfg, h_dest))
		return BLITZ_CNT_PASS_OTHER_MAC;
	if (s->v6 ? !blitz_dst6_ours(ctx, cfg, blitz_pkt_ifindex(ctx, kind),
				     s->saddr, s->daddr, th->source, th->dest)
		  : !blitz_dst4_ours(ctx, cfg, blitz_pkt_ifindex(ctx, kind),
				     s->saddr[0], s->daddr[0], th->source,
				     th->dest))
		return cfg->n_addr4 || cfg->n_addr6 ? BLITZ_CNT_PASS_HOST
						    : BLITZ_CNT_PASS_NOT_LOCAL;
	/* Martian sources: XDP drops them, so TC never sees one. */
	if (kind == BLITZ_PKT_XDP &&
	    (s->v6 ? blitz_src6_martian(s->saddr, s->daddr)
		   : blitz_src4_martian(s->saddr[0], s->daddr[0])))
		return BLITZ_CNT_DROP_MARTIAN;
	if (kind == BLITZ_PKT_XDP)
		cnt_inc(s->cnt, BLITZ_CNT_SERVICE_SEGMENTS, 1);
	s->l4off = l4;
	why = blitz_seg_tcp(s, th);
	if (why || !optbuf)
		return why;
	return blitz_seg_opts(ctx, kind, s, optbuf, off0, l4);
}

/* The ones' complement sum of len bytes at off plus seed, folded (the
 * checksums below). */
__noinline __u32 blitz_csum_span_skb(struct __sk_buff *ctx, __u32 off,
				     __u32 len, __u64 seed);

/* An IPv4 header of 20 bytes (no options) whose checksum does not
 * verify. Every stack fills it in full (no offload leaves it partial,
 * unlike the TCP checksum of a veth frame), and ip_rcv() drops a frame
 * whose does not verify: neither the XDP program nor the TC one (its
 * bursts) may answer what the kernel drops. The caller has checked that
 * the 20 bytes are in the packet. */
static __always_inline int blitz_ip4_csum_bad(const struct iphdr *iph)
{
	/* Five 32-bit words, not ten 16-bit ones: the same folded sum. */
	const __u32 *w = (const __u32 *)iph;
	__u64 sum = 0;
	int i;

	for (i = 0; i < BLITZ_IP4_HLEN / 4; i++)
		sum += w[i];
	return blitz_fold64(sum) != 0xffff;
}

static __always_inline int blitz_seg_v4(void *ctx, const int kind,
					const struct blitz_config *cfg,
					struct seg *s, __u8 *optbuf, __u32 off0)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);
	struct iphdr *iph = data + ETH_HLEN;
	struct tcphdr *th;
	__u32 ihl, tot, l4;

	if ((void *)(iph + 1) > end)
		return blitz_seg_short(kind);
	ihl = (__u32)iph->ihl * 4;
	if (iph->version != 4 || ihl < BLITZ_IP4_HLEN)
		return BLITZ_CNT_PASS_MALFORMED;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < ihl || !blitz_pkt_has(ctx, kind, (__u64)ETH_HLEN + tot))
		return BLITZ_CNT_PASS_MALFORMED;
	if (iph->protocol != IPPROTO_TCP) {
		if (kind == BLITZ_PKT_XDP && iph->protocol == IPPROTO_ICMP &&
		    ihl == BLITZ_IP4_HLEN &&
		    !(iph->frag_off & bpf_htons(BLITZ_IP_MF | BLITZ_IP_OFFSET)))
			return BLITZ_SEG_ICMP;
		return BLITZ_CNT_PASS_HOST;
	}
	/* Fragments: the kernel reassembles them (after TC, too). */
	if (iph->frag_off & bpf_htons(BLITZ_IP_MF | BLITZ_IP_OFFSET))
		return BLITZ_CNT_PASS_FRAGMENT;
	if (kind == BLITZ_PKT_XDP && ihl != BLITZ_IP4_HLEN)
		return BLITZ_CNT_PASS_IP_OPTIONS;
	l4 = kind == BLITZ_PKT_XDP ? BLITZ_L4_V4 : ETH_HLEN + ihl;
	th = data + l4;
	if ((void *)(th + 1) > end)
		return blitz_seg_short(kind);
	if (tot < ihl + BLITZ_TCP_HLEN)
		return BLITZ_CNT_PASS_MALFORMED;
	if (th->dest != cfg->port_be)
		return BLITZ_CNT_PASS_HOST;
	if (ihl == BLITZ_IP4_HLEN && blitz_ip4_csum_bad(iph))
		return BLITZ_CNT_PASS_MALFORMED;
	/* With options (TC only: XDP passed them): summed like a segment. */
	if (kind == BLITZ_PKT_SKB && ihl > BLITZ_IP4_HLEN &&
	    blitz_csum_span_skb(ctx, ETH_HLEN, ihl, 0) != 0xffff)
		return BLITZ_CNT_PASS_MALFORMED;
	s->saddr[0] = iph->saddr;
	s->daddr[0] = iph->daddr;
	s->seglen = tot - ihl;
	return blitz_seg_l4(ctx, kind, cfg, s, th,
			    ((struct ethhdr *)data)->h_dest, optbuf, off0, l4);
}

static __always_inline int blitz_ipv6_ext_hdr(__u8 nh)
{
	return nh == BLITZ_NEXTHDR_HOP || nh == BLITZ_NEXTHDR_ROUTING ||
	       nh == BLITZ_NEXTHDR_FRAGMENT || nh == BLITZ_NEXTHDR_AUTH ||
	       nh == BLITZ_NEXTHDR_DEST || nh == BLITZ_NEXTHDR_MOBILITY ||
	       nh == BLITZ_NEXTHDR_HIP || nh == BLITZ_NEXTHDR_SHIM6 ||
	       nh == BLITZ_NEXTHDR_EXP1 || nh == BLITZ_NEXTHDR_EXP2;
}

static __always_inline int blitz_seg_v6(void *ctx, const int kind,
					const struct blitz_config *cfg,
					struct seg *s, __u8 *optbuf, __u32 off0)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);
	struct ipv6hdr *ip6 = data + ETH_HLEN;
	struct tcphdr *th;
	__u32 plen, i;

	if ((void *)(ip6 + 1) > end)
		return blitz_seg_short(kind);
	if (ip6->version != 6)
		return BLITZ_CNT_PASS_MALFORMED;
	plen = bpf_ntohs(ip6->payload_len);
	if (!blitz_pkt_has(ctx, kind, (__u64)ETH_HLEN + BLITZ_IP6_HLEN + plen))
		return BLITZ_CNT_PASS_MALFORMED;
	/* Extension headers (a fragment's among them) are the kernel's. */
	if (ip6->nexthdr == BLITZ_NEXTHDR_FRAGMENT)
		return BLITZ_CNT_PASS_FRAGMENT;
	if (blitz_ipv6_ext_hdr(ip6->nexthdr))
		return BLITZ_CNT_PASS_IP_OPTIONS;
	if (ip6->nexthdr != IPPROTO_TCP) {
		if (kind == BLITZ_PKT_XDP &&
		    ip6->nexthdr == BLITZ_IPPROTO_ICMPV6)
			return BLITZ_SEG_ICMP;
		return BLITZ_CNT_PASS_HOST;
	}
	th = (void *)(ip6 + 1);
	if ((void *)(th + 1) > end)
		return blitz_seg_short(kind);
	if (plen < BLITZ_TCP_HLEN)
		return BLITZ_CNT_PASS_MALFORMED;
	if (th->dest != cfg->port_be)
		return BLITZ_CNT_PASS_HOST;
	for (i = 0; i < 4; i++) {
		s->daddr[i] = ip6->daddr.in6_u.u6_addr32[i];
		s->saddr[i] = ip6->saddr.in6_u.u6_addr32[i];
	}
	s->v6 = 1;
	s->seglen = plen;
	return blitz_seg_l4(ctx, kind, cfg, s, th,
			    ((struct ethhdr *)data)->h_dest, optbuf, off0,
			    BLITZ_L4_V6);
}

/*
 * 802.1Q (0x8100) and 802.1ad (0x88a8, the outer tag of QinQ): the frame
 * belongs to a VLAN device on top of this one, and is passed untouched,
 * never answered. Answering it would take the same tag(s) on the reply
 * (an in-place rewrite keeps them) and, before that, knowing which VLANs
 * this host has: the address check asks the FIB about the interface the
 * program runs on, and a trunk may carry VLANs of other hosts with the
 * same addresses (the kernel drops a tag it has no device for, and takes
 * VID 0, a priority tag, as untagged). To serve a VLAN, load blitz on its
 * device (eth0.100): there frames arrive untagged and replies leave
 * through the VLAN device, which tags them. docs/tcp-security.md, "VLANs".
 */
static __always_inline int blitz_seg_vlan(__u16 h_proto)
{
	return h_proto == bpf_htons(ETH_P_8021Q) ||
	       h_proto == bpf_htons(ETH_P_8021AD);
}

/*
 * Parse the frame at ctx. 0: a segment for the service, s filled (its
 * options too, unless optbuf is NULL); otherwise the counter that says
 * why not (DROP_MARTIAN: drop it; the others: leave it to the kernel), or
 * BLITZ_SEG_NEED_PULL (TC only). s must be zeroed by the caller.
 */
static __always_inline int blitz_seg_parse(void *ctx, const int kind,
					   const struct blitz_config *cfg,
					   struct seg *s, __u8 *optbuf,
					   __u32 off0)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return blitz_seg_short(kind);
	/* A tag the kernel took out of the frame (a NIC's VLAN offload, or
	 * the stack's own untagging before TC): the frame is the VLAN
	 * device's, see blitz_seg_vlan(). */
	if (kind == BLITZ_PKT_SKB && ((struct __sk_buff *)ctx)->vlan_present)
		return BLITZ_CNT_PASS_VLAN;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return blitz_seg_v4(ctx, kind, cfg, s, optbuf, off0);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return blitz_seg_v6(ctx, kind, cfg, s, optbuf, off0);
	if (blitz_seg_vlan(eth->h_proto))
		return BLITZ_CNT_PASS_VLAN;
	return BLITZ_CNT_PASS_HOST;
}

/* ---- ICMP "fragmentation needed" and ICMPv6 "packet too big" ---- */

/*
 * An ICMP error about a reply we sent (the parser returned BLITZ_SEG_ICMP):
 * IPv4 type 3 code 4 or ICMPv6 type 2, to our MAC and an address of ours,
 * quoting an IP header from that address and a TCP header from the
 * service port with our reply layout (ACK, NOP NOP TS, nothing else):
 * s becomes the segment the client would send to that reply (its address
 * and port as the source; seq = the reply's ack; ack = where the reply
 * ended: seq + payload + FIN; TSecr = the reply's TSval), so the cookie
 * check of an ordinary segment says whether the reply was ours; *mtu gets
 * the MTU the message reports. 0 then; PASS_HOST for any other ICMP;
 * ICMP_PMTU_BAD for a frag-needed/too-big that quotes no reply we can
 * check (too short a quote, another address or port, no timestamps, an
 * MTU the quoted packet would have fitted).
 */
static __always_inline int blitz_seg_icmp(void *ctx, const int kind,
					  const struct blitz_config *cfg,
					  struct seg *s, __u32 *mtu)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);
	struct ethhdr *eth = data;
	const struct tcphdr *th;
	const __u32 *o;
	__u32 qlen, i;
	__u8 fl;

	if ((void *)(eth + 1) > end)
		return BLITZ_CNT_PASS_MALFORMED;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		const struct icmphdr *ic = (void *)(ip + 1);
		const struct iphdr *q = (const void *)(ic + 1);

		if ((void *)(ic + 1) > end || ic->type != ICMP_DEST_UNREACH ||
		    ic->code != ICMP_FRAG_NEEDED)
			return BLITZ_CNT_PASS_HOST;
		*mtu = bpf_ntohs(ic->un.frag.mtu);
		th = (const void *)(q + 1);
		o = (const void *)(th + 1);
		if ((void *)(o + 3) > end)
			return BLITZ_CNT_ICMP_PMTU_BAD;
		if (q->version != 4 || q->ihl != BLITZ_IP4_HLEN / 4 ||
		    q->protocol != IPPROTO_TCP || q->saddr != ip->daddr)
			return BLITZ_CNT_ICMP_PMTU_BAD;
		qlen = bpf_ntohs(q->tot_len);
		if (qlen < BLITZ_ICMP_QUOTE_V4 || *mtu >= qlen)
			return BLITZ_CNT_ICMP_PMTU_BAD;
		qlen -= BLITZ_ICMP_QUOTE_V4;
		s->saddr[0] = q->daddr;
		s->daddr[0] = q->saddr;
		/* The message, for blitz_seg_icmp_csum() (the parser checked
		 * tot_len: at least the header, within the frame). */
		s->l4off = BLITZ_L4_V4;
		s->seglen = bpf_ntohs(ip->tot_len) - BLITZ_IP4_HLEN;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		const struct icmp6hdr *ic = (void *)(ip6 + 1);
		const struct ipv6hdr *q = (const void *)(ic + 1);

		if ((void *)(ic + 1) > end ||
		    ic->icmp6_type != ICMPV6_PKT_TOOBIG || ic->icmp6_code != 0)
			return BLITZ_CNT_PASS_HOST;
		*mtu = bpf_ntohl(ic->icmp6_dataun.un_data32[0]);
		th = (const void *)(q + 1);
		o = (const void *)(th + 1);
		if ((void *)(o + 3) > end)
			return BLITZ_CNT_ICMP_PMTU_BAD;
		if (q->version != 6 || q->nexthdr != IPPROTO_TCP)
			return BLITZ_CNT_ICMP_PMTU_BAD;
		for (i = 0; i < 4; i++) {
			s->saddr[i] = q->daddr.in6_u.u6_addr32[i];
			s->daddr[i] = q->saddr.in6_u.u6_addr32[i];
			if (s->daddr[i] != ip6->daddr.in6_u.u6_addr32[i])
				return BLITZ_CNT_ICMP_PMTU_BAD;
		}
		qlen = bpf_ntohs(q->payload_len);
		if (qlen < BLITZ_ICMP_QUOTE_TCP ||
		    *mtu >= qlen + BLITZ_IP6_HLEN)
			return BLITZ_CNT_ICMP_PMTU_BAD;
		qlen -= BLITZ_ICMP_QUOTE_TCP;
		s->v6 = 1;
		s->l4off = BLITZ_L4_V6;
		s->seglen = bpf_ntohs(ip6->payload_len);
	} else {
		return BLITZ_CNT_PASS_HOST;
	}
	/* Our reply's layout: ACK (no SYN, RST), NOP NOP TS, nothing else. */
	fl = ((const __u8 *)th)[BLITZ_TCP_FLAGS_OFF];
	if (th->source != cfg->port_be ||
	    th->doff * 4 != BLITZ_ICMP_QUOTE_TCP ||
	    o[0] != bpf_htonl(BLITZ_OPTW_NOP_NOP_TS) || !(fl & TCPHDR_ACK) ||
	    (fl & (TCPHDR_SYN | TCPHDR_RST)))
		return BLITZ_CNT_ICMP_PMTU_BAD;
	/* Only what is ours (blitz_addr.h), as for the client's segment. */
	if (!blitz_pkt_link_ours(ctx, kind, cfg, eth->h_dest))
		return BLITZ_CNT_ICMP_PMTU_BAD;
	if (s->v6 ? !blitz_dst6_ours(ctx, cfg, blitz_pkt_ifindex(ctx, kind),
				     s->saddr, s->daddr, th->dest,
				     th->source) ||
			    blitz_src6_martian(s->saddr, s->daddr)
		  : !blitz_dst4_ours(ctx, cfg, blitz_pkt_ifindex(ctx, kind),
				     s->saddr[0], s->daddr[0], th->dest,
				     th->source) ||
			    blitz_src4_martian(s->saddr[0], s->daddr[0]))
		return BLITZ_CNT_ICMP_PMTU_BAD;
	s->sport = th->dest;
	s->dport = th->source;
	s->seq = bpf_ntohl(th->ack_seq);
	s->ack = bpf_ntohl(th->seq) + qlen + (fl & TCPHDR_FIN);
	s->has_ts = 1;
	s->tsecr = bpf_ntohl(o[1]);
	return 0;
}

/* ---- the TCP and ICMP checksums ---- */

/*
 * Linux drops a TCP segment whose checksum does not verify (tcp_v4_rcv(),
 * tcp_v6_rcv()), and an ICMP message likewise (icmp_rcv(), icmpv6_rcv());
 * so must every segment blitz answers, hands off or lets change anything,
 * and every ICMP message it believes (docs/tcp-security.md, "Checksums").
 * The sum is taken only there, once per frame: host traffic never pays.
 *
 * The bytes are copied in chunks into a per-CPU buffer and summed there
 * by bpf_csum_diff(): the copy reads fragments (xdp.frags) and non-linear
 * skbs alike, and a copy of a fixed buffer has the constant bounds the
 * verifier wants, where the packet's own bytes would need one bounds check
 * per fixed-size piece. 128 chunks of 512 bytes cover the longest segment
 * an IP length can say.
 */
#define BLITZ_CSUM_CHUNK 512 /* bpf_csum_diff()'s most */
#define BLITZ_CSUM_CHUNKS 128
#define BLITZ_CSUM_NONE 0x10000 /* the bytes could not be read */

struct blitz_csum_buf {
	__u8 b[BLITZ_CSUM_CHUNK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_csum_buf);
} csum_buf SEC(".maps");

static __always_inline __u32 blitz_csum_fold64(__u64 s)
{
	return blitz_fold64(s); /* the one fold, blitz_csum.h */
}

/* The ones' complement sum of len bytes at off and seed, folded to 16
 * bits in memory order, or BLITZ_CSUM_NONE. */
static __always_inline __u32 blitz_csum_span(void *ctx, const int kind,
					     __u32 off, __u32 len, __u64 seed)
{
	/* 64-bit lengths: the registers the verifier bounds are the ones
	 * passed to the helpers (a 32-bit copy would be checked instead). */
	__u64 sum = seed, n, full = len / BLITZ_CSUM_CHUNK;
	struct blitz_csum_buf *buf;
	__u32 key = 0, i, t = 0;

	buf = bpf_map_lookup_elem(&csum_buf, &key);
	if (!buf || full > BLITZ_CSUM_CHUNKS)
		return BLITZ_CSUM_NONE;
	/* Whole chunks first: each starts at an even offset of the span,
	 * as the sum wants, and the verifier walks one path per count. */
	for (i = 0; i < BLITZ_CSUM_CHUNKS; i++) {
		if (i >= full)
			break;
		if (blitz_pkt_load(ctx, kind, off, buf->b, BLITZ_CSUM_CHUNK))
			return BLITZ_CSUM_NONE;
		sum += (__u32)bpf_csum_diff(NULL, 0, (__be32 *)buf->b,
					    BLITZ_CSUM_CHUNK, 0);
		off += BLITZ_CSUM_CHUNK;
	}
	/* Then the whole 32-bit words left (bpf_csum_diff's unit)... */
	n = len & (BLITZ_CSUM_CHUNK - 4);
	barrier_var(n);
	if (n) {
		if (n > BLITZ_CSUM_CHUNK ||
		    blitz_pkt_load(ctx, kind, off, buf->b, n))
			return BLITZ_CSUM_NONE;
		sum += (__u32)bpf_csum_diff(NULL, 0, (__be32 *)buf->b, n, 0);
		off += n;
	}
	/* ...and the last 1-3 bytes, padded with zeros to a word. */
	n = len & 3;
	barrier_var(n);
	if (n) {
		if (n > 3 || blitz_pkt_load(ctx, kind, off, &t, n))
			return BLITZ_CSUM_NONE;
		sum += t;
	}
	return blitz_csum_fold64(sum);
}

/*
 * The sum in place: the bytes of the linear part (data..data_end: an XDP
 * frame's first buffer, an skb's head) summed where they lie, without the
 * copy's map lookup and helper calls; the copy only for what lies past it
 * (fragments, a non-linear skb). Packet pointers need a constant bound per
 * access, so the span goes in 512-byte blocks, then one block per bit of
 * the rest (256 and 128 by bpf_csum_diff(), 64 down to 4 by loads, whose
 * helper call would cost more), then the last 1-3 bytes: a GET of 71
 * bytes is 17 loads and one for the tail. Each block's offset is masked to
 * BLITZ_CSUM_LIN_SPAN (a no-op: the span was checked to end below it) and
 * moves by bits of a copy of the length that no branch tests, so every
 * path reaches the next block in the same state and the verifier prunes
 * (it would walk 2^7 paths per caller otherwise).
 */
#define BLITZ_CSUM_LIN_SPAN 0x1fff  /* offset + length, at most */
#define BLITZ_CSUM_LIN_LOADS 128    /* smaller blocks: loads, no helper */
#define BLITZ_CSUM_LIN_NONE (~0ULL) /* not all in the linear part */

/* The sum of the k bytes at o (k a constant), into *sum: 0, or -1 when
 * they pass data_end. */
static __always_inline int blitz_csum_lin_block(void *data, void *end, __u32 o,
						const __u32 k, __u64 *sum)
{
	const __u32 *w;
	__u32 i;

	barrier_var(o);
	w = data + (o & BLITZ_CSUM_LIN_SPAN);
	if ((void *)w + k > end)
		return -1;
	if (k >= BLITZ_CSUM_LIN_LOADS) {
		*sum += (__u32)bpf_csum_diff(NULL, 0, (__be32 *)w, k, 0);
		return 0;
	}
#pragma unroll
	for (i = 0; i < k / 4; i++)
		*sum += w[i];
	return 0;
}

/* The last t (1-3) bytes of a span that ends at e (e >= 4), into *sum: the
 * word that ends the span, its bytes already summed shifted out, zeros in
 * their place. 0, or -1 when that word passes end; nothing when t is 0. */
static __always_inline int blitz_csum_lin_tail(void *data, void *end, __u64 e,
					       __u32 t, __u64 *sum)
{
	const __u32 *w;
	__u32 v;

	if (!t)
		return 0;
	w = data + ((e - 4) & BLITZ_CSUM_LIN_SPAN);
	if ((void *)(w + 1) > end)
		return -1;
	v = *w;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	*sum += v >> (8 * (4 - t));
#else
	*sum += v << (8 * (4 - t));
#endif
	return 0;
}

/* The ones' complement sum of len bytes at off, unfolded, read in place;
 * BLITZ_CSUM_LIN_NONE when they do not all lie in the linear part. */
static __always_inline __u64 blitz_csum_lin(void *ctx, const int kind,
					    __u32 off, __u32 len)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);
	__u32 rest = len & (BLITZ_CSUM_CHUNK - 1), i, e, m;
	__u64 sum = 0;

	if ((__u64)off + len > BLITZ_CSUM_LIN_SPAN || len < 4)
		return BLITZ_CSUM_LIN_NONE;
	/* The usual way out for fragments and non-linear skbs: at once. */
	e = off + len;
	barrier_var(e);
	if (data + (e & BLITZ_CSUM_LIN_SPAN) > end)
		return BLITZ_CSUM_LIN_NONE;
	for (i = 0; i < BLITZ_CSUM_LIN_SPAN / BLITZ_CSUM_CHUNK; i++) {
		if (len - rest <= i * BLITZ_CSUM_CHUNK)
			break;
		if (blitz_csum_lin_block(data, end, off + i * BLITZ_CSUM_CHUNK,
					 BLITZ_CSUM_CHUNK, &sum))
			return BLITZ_CSUM_LIN_NONE;
	}
	m = len;
	barrier_var(m);
	off += m & ~(BLITZ_CSUM_CHUNK - 1);
#define BLITZ_CSUM_LIN_BIT(k)                                        \
	do {                                                         \
		if ((rest & (k)) &&                                  \
		    blitz_csum_lin_block(data, end, off, (k), &sum)) \
			return BLITZ_CSUM_LIN_NONE;                  \
		off += m & (k);                                      \
	} while (0)
	BLITZ_CSUM_LIN_BIT(256);
	BLITZ_CSUM_LIN_BIT(128);
	BLITZ_CSUM_LIN_BIT(64);
	BLITZ_CSUM_LIN_BIT(32);
	BLITZ_CSUM_LIN_BIT(16);
	BLITZ_CSUM_LIN_BIT(8);
	BLITZ_CSUM_LIN_BIT(4);
#undef BLITZ_CSUM_LIN_BIT
	if (blitz_csum_lin_tail(data, end, e, rest & 3, &sum))
		return BLITZ_CSUM_LIN_NONE;
	return sum;
}

/*
 * Spans under BLITZ_CSUM_SMALL bytes (a usual request, every bare segment):
 * the same sum by loads alone, in a function without a helper call. A
 * helper call clobbers r1-r5, so the general sum above keeps data, end and
 * the sum on the stack and reloads them around every block; here they stay
 * in registers. The blocks walk one packet pointer forward by bits of a
 * copy of the length that no branch tests, as above, so the verifier
 * prunes at each block.
 */
#define BLITZ_CSUM_SMALL 128

/* The sum of the k bytes at p (k a constant) into *sum: 0, or -1 when
 * they pass end. */
static __always_inline int blitz_csum_small_block(const void *p, void *end,
						  const __u32 k, __u64 *sum)
{
	const __u32 *w = p;
	__u32 i;

	if (p + k > end)
		return -1;
#pragma unroll
	for (i = 0; i < k / 4; i++)
		*sum += w[i];
	return 0;
}

static __always_inline __u64 blitz_csum_lin_small(void *ctx, const int kind,
						  __u64 off, __u64 len)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);
	__u64 m = len, e = off + len, sum = 0;
	__u32 k;
	void *p;

	if (len < 4 || len >= BLITZ_CSUM_SMALL || e > BLITZ_CSUM_LIN_SPAN)
		return BLITZ_CSUM_LIN_NONE;
	barrier_var(m);
	p = data + (off & BLITZ_CSUM_LIN_SPAN);
	/* 64, 32, 16, 8 and 4 bytes, unrolled: each block's k a constant */
#pragma unroll
	for (k = 64; k >= 4; k /= 2) {
		if ((len & k) && blitz_csum_small_block(p, end, k, &sum))
			return BLITZ_CSUM_LIN_NONE;
		p += m & k;
	}
	if (blitz_csum_lin_tail(data, end, e, len & 3, &sum))
		return BLITZ_CSUM_LIN_NONE;
	return sum;
}

/* The small span's sum plus seed, folded; BLITZ_CSUM_NONE when the span
 * is not small or not all in the linear part (the general sum decides). */
__noinline __u32 blitz_csum_small_xdp(struct xdp_md *ctx, __u64 off, __u64 len,
				      __u64 seed)
{
	__u64 sum = blitz_csum_lin_small(ctx, BLITZ_PKT_XDP, off, len);

	if (sum == BLITZ_CSUM_LIN_NONE)
		return BLITZ_CSUM_NONE;
	return blitz_csum_fold64(sum + seed);
}

/* One copy of the sum per program, verified once (global functions):
 * every caller of it shares the verifier's work. The span's sum plus seed
 * (a pseudo-header's, below 2^35: no overflow), folded once to 16 bits. */
__noinline __u32 blitz_csum_span_xdp(struct xdp_md *ctx, __u32 off, __u32 len,
				     __u64 seed)
{
	__u64 sum = blitz_csum_lin(ctx, BLITZ_PKT_XDP, off, len);

	if (sum != BLITZ_CSUM_LIN_NONE)
		return blitz_csum_fold64(sum + seed);
	return blitz_csum_span(ctx, BLITZ_PKT_XDP, off, len, seed);
}

__noinline __u32 blitz_csum_span_skb(struct __sk_buff *ctx, __u32 off,
				     __u32 len, __u64 seed)
{
	__u64 sum = blitz_csum_lin(ctx, BLITZ_PKT_SKB, off, len);

	if (sum != BLITZ_CSUM_LIN_NONE)
		return blitz_csum_fold64(sum + seed);
	return blitz_csum_span(ctx, BLITZ_PKT_SKB, off, len, seed);
}

/* The pseudo-header's sum (RFC 9293 3.1, RFC 8200 8.1), memory order. */
static __always_inline __u64 blitz_csum_pseudo(const __u32 *saddr,
					       const __u32 *daddr, int v6,
					       __u32 proto, __u32 len)
{
	__u64 sum;
	int i;

	if (!v6)
		return (__u64)saddr[0] + daddr[0] + bpf_htons((__u16)proto) +
		       bpf_htons((__u16)len);
	sum = (__u64)bpf_htonl(proto) + bpf_htonl(len);
	for (i = 0; i < 4; i++)
		sum += (__u64)saddr[i] + daddr[i];
	return sum;
}

static __always_inline __u32 blitz_csum_span_of(void *ctx, const int kind,
						__u32 off, __u32 len,
						__u64 seed)
{
	if (kind == BLITZ_PKT_XDP)
		return blitz_csum_span_xdp(ctx, off, len, seed);
	return blitz_csum_span_skb(ctx, off, len, seed);
}

/*
 * Does the TCP checksum of s verify? 0: yes; BLITZ_CNT_BAD_CSUM: no (the
 * frame must not be acted on; Linux drops it); BLITZ_CNT_PASS_MALFORMED:
 * its bytes could not be read (leave it to the kernel, never act on it).
 * Accepted besides a full sum that verifies:
 *   - the partial form, a field holding only the pseudo-header's sum (a
 *     local stack's CHECKSUM_PARTIAL, offload left to the device): where
 *     the driver can deliver it (BLITZ_CFG_CSUM_PARTIAL: veth and its
 *     kin); in TC also for a GRO-merged skb, whose field GRO rewrites to
 *     that form after verifying every segment it merged;
 *   - TC only: an skb the driver marked CHECKSUM_UNNECESSARY (the NIC
 *     verified it), which Linux takes without summing again.
 */
static __always_inline int blitz_seg_csum(void *ctx, const int kind,
					  const struct blitz_config *cfg,
					  const struct seg *s)
{
	__u64 ph = blitz_csum_pseudo(s->saddr, s->daddr, s->v6, IPPROTO_TCP,
				     s->seglen);
	__u32 sum;

	if (kind == BLITZ_PKT_SKB &&
	    bpf_csum_level(ctx, BPF_CSUM_LEVEL_QUERY) >= 0)
		return 0;
	if ((cfg->flags & BLITZ_CFG_CSUM_PARTIAL ||
	     (kind == BLITZ_PKT_SKB &&
	      ((struct __sk_buff *)ctx)->gso_segs > 1)) &&
	    s->csum == blitz_csum_fold64(ph))
		return 0;
	sum = BLITZ_CSUM_NONE;
	if (kind == BLITZ_PKT_XDP && s->seglen < BLITZ_CSUM_SMALL)
		sum = blitz_csum_small_xdp(ctx, s->l4off, s->seglen, ph);
	if (sum == BLITZ_CSUM_NONE)
		sum = blitz_csum_span_of(ctx, kind, s->l4off, s->seglen, ph);
	if (sum == BLITZ_CSUM_NONE)
		return BLITZ_CNT_PASS_MALFORMED;
	return sum == 0xffff ? 0 : BLITZ_CNT_BAD_CSUM;
}

/*
 * Does the checksum of an ICMP or ICMPv6 message that blitz_seg_icmp()
 * took verify? Only the full form: a stack fills ICMP sums itself. The
 * ICMPv6 pseudo-header has the outer addresses (s holds the quoted
 * segment's). 0, BLITZ_CNT_BAD_CSUM or BLITZ_CNT_PASS_MALFORMED.
 */
static __always_inline int blitz_seg_icmp_csum(void *ctx, const int kind,
					       const struct seg *s)
{
	void *data = blitz_pkt_data(ctx, kind);
	void *end = blitz_pkt_end(ctx, kind);
	struct ipv6hdr *ip6 = data + ETH_HLEN;
	__u64 ph = 0;
	__u32 sum;

	if (s->v6) {
		if ((void *)(ip6 + 1) > end)
			return BLITZ_CNT_PASS_MALFORMED;
		ph = blitz_csum_pseudo(ip6->saddr.in6_u.u6_addr32,
				       ip6->daddr.in6_u.u6_addr32, 1,
				       BLITZ_IPPROTO_ICMPV6, s->seglen);
	}
	sum = blitz_csum_span_of(ctx, kind, s->l4off, s->seglen, ph);
	if (sum == BLITZ_CSUM_NONE)
		return BLITZ_CNT_PASS_MALFORMED;
	return sum == 0xffff ? 0 : BLITZ_CNT_BAD_CSUM;
}

#endif /* BLITZ_SEG_H */
