// SPDX-License-Identifier: GPL-2.0
/*
 * bench_gen.bpf.c - the XDP program of `blitz bench`, the load generator:
 * on the client's interface it steals the server's replies to the
 * generator's source ports and hands them to its AF_XDP socket.
 *
 * Owns: the choice "this frame belongs to the generator". A frame is the
 * generator's when it is TCP over IPv4 (or IPv6, target_v6) from
 * target_ip:target_port to a port in [port_lo, port_hi]. Those go to XSKMAP[rx
 * queue] (XDP_PASS when no socket is bound there); every other frame, ARP
 * included, passes untouched. Must never modify or drop a frame.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "blitz_proto.h"
#include "blitz_xsks.h"

/* Set by userspace before load (skeleton rodata). */
const volatile __u32 target_ip_be;
const volatile __u32 target_ip6[4]; /* network order */
const volatile __u8 target_v6;
const volatile __u16 target_port_be;
const volatile __u16 port_lo; /* host order */
const volatile __u16 port_hi; /* host order, inclusive */

/* The generator's when tcp is from the target's port to ours. */
static __always_inline int ours(const struct tcphdr *tcp)
{
	__u16 dport = bpf_ntohs(tcp->dest);

	return tcp->source == target_port_be && dport >= port_lo &&
	       dport <= port_hi;
}

SEC("xdp")
int bench_gen_rx(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct tcphdr *tcp;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (!target_v6 && eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_TCP ||
		    ip->saddr != target_ip_be || ip->ihl < 5)
			return XDP_PASS;
		/* Fragments never carry the generator's traffic (DF is
		 * set). */
		if (ip->frag_off & bpf_htons(BLITZ_IP_MF | BLITZ_IP_OFFSET))
			return XDP_PASS;
		tcp = (void *)ip + ip->ihl * 4;
	} else if (target_v6 && eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		/* No extension headers: the server sends none. */
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_TCP ||
		    ip6->saddr.in6_u.u6_addr32[0] != target_ip6[0] ||
		    ip6->saddr.in6_u.u6_addr32[1] != target_ip6[1] ||
		    ip6->saddr.in6_u.u6_addr32[2] != target_ip6[2] ||
		    ip6->saddr.in6_u.u6_addr32[3] != target_ip6[3])
			return XDP_PASS;
		tcp = (void *)(ip6 + 1);
	} else {
		return XDP_PASS;
	}
	if ((void *)(tcp + 1) > end || !ours(tcp))
		return XDP_PASS;
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "GPL";
