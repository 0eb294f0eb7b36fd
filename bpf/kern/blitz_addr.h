/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_addr.h - "only what is ours" (docs/architecture.md): which destination
 * addresses the xdp engine serves, which source addresses it never
 * answers, and which destination MACs are this host's. Shared by the XDP
 * program and the TC hand-off so both draw the same line.
 *
 * Owns: the address rule. A destination is ours when `-a` names it, or,
 * with no `-a`, when the kernel's FIB says it is local to this host
 * (bpf_fib_lookup: a local route, which an address on lo or a dummy
 * device also has, and which follows DHCP/SLAAC changes with no reload).
 * Forwarded traffic is never ours. Martian sources (unspecified,
 * loopback, multicast, broadcast/reserved, v4-mapped, our own destination
 * address) are never answered.
 * Must never: touch the packet, keep state, or call anything but
 * bpf_fib_lookup (one call per segment for the service port only).
 *
 * What bpf_fib_lookup can tell (net/core/filter.c, checked on this
 * kernel with BPF_PROG_TEST_RUN): it is a forwarding helper. When the
 * ingress device forwards (net.ipv4.ip_forward / ipv6 forwarding on), a
 * local destination is BPF_FIB_LKUP_RET_NOT_FWDED (its route is not
 * RTN_UNICAST), a forwarded one SUCCESS/NO_NEIGH/FRAG_NEEDED, a
 * blackhole/unreachable/prohibit route its own code. NOT_FWDED also
 * covers broadcast and multicast destinations (excluded here before the
 * lookup) and a destination with no route at all (the kernel would drop
 * it; see docs/tcp-security.md). When the device does not forward, the
 * helper returns FWD_DISABLED before looking anything up: the kernel then
 * delivers local destinations and forwards nothing, so nobody else's
 * traffic can pass through this host, and a unicast destination in a
 * frame to our MAC is taken as ours (`-a` makes it exact).
 */
#ifndef BLITZ_ADDR_H
#define BLITZ_ADDR_H

#include "blitz_maps.h"
#include <bpf/bpf_endian.h>

#include "blitz_proto.h"

#define BLITZ_AF_INET 2
#define BLITZ_AF_INET6 10

/* 0.0.0.0/8, 127/8, 224/4 multicast, 240/4 reserved and broadcast. */
static __always_inline int blitz_v4_martian(__u32 a_be)
{
	__u32 a = bpf_ntohl(a_be), top = a >> 24;

	return top == 0 || top == 127 || top >= 224;
}

/* ::, ::1, ff00::/8 multicast, ::ffff:0:0/96 (v4-mapped). */
static __always_inline int blitz_v6_martian(const __u32 *a_be)
{
	if ((bpf_ntohl(a_be[0]) >> 24) == 0xff)
		return 1;
	if (a_be[0] || a_be[1])
		return 0;
	if (a_be[2] == bpf_htonl(0xffff))
		return 1;
	return !a_be[2] && (!a_be[3] || a_be[3] == bpf_htonl(1));
}

/* The FIB's answer: 1 local (or not knowable: forwarding off), 0 not. */
static __always_inline int blitz_fib_local(void *ctx, struct bpf_fib_lookup *p)
{
	long rc = bpf_fib_lookup(ctx, p, sizeof(*p), BPF_FIB_LOOKUP_SKIP_NEIGH);

	return rc == BPF_FIB_LKUP_RET_NOT_FWDED ||
	       rc == BPF_FIB_LKUP_RET_FWD_DISABLED;
}

/*
 * Is daddr (network order) ours for a TCP segment from saddr:sport to
 * daddr:dport that came in on ifindex? 1 or 0.
 */
static __always_inline int
blitz_dst4_ours(void *ctx, const struct blitz_config *cfg, __u32 ifindex,
		__u32 saddr, __u32 daddr, __u16 sport, __u16 dport)
{
	struct bpf_fib_lookup p = {};
	__u32 i, n = cfg->n_addr4;

	if (n || cfg->n_addr6) {
		for (i = 0; i < BLITZ_MAX_ADDRS; i++) {
			if (i >= n)
				break;
			if (cfg->addr4_be[i] == daddr)
				return 1;
		}
		return 0;
	}
	if (blitz_v4_martian(daddr))
		return 0;
	p.family = BLITZ_AF_INET;
	p.l4_protocol = IPPROTO_TCP;
	p.sport = sport;
	p.dport = dport;
	p.tot_len = BLITZ_IP4_HLEN + BLITZ_TCP_HLEN;
	p.ifindex = ifindex;
	p.ipv4_src = saddr;
	p.ipv4_dst = daddr;
	return blitz_fib_local(ctx, &p);
}

static __always_inline int blitz_dst6_ours(void *ctx,
					   const struct blitz_config *cfg,
					   __u32 ifindex, const __u32 *saddr,
					   const __u32 *daddr, __u16 sport,
					   __u16 dport)
{
	struct bpf_fib_lookup p = {};
	__u32 i, n = cfg->n_addr6;

	if (n || cfg->n_addr4) {
		for (i = 0; i < BLITZ_MAX_ADDRS; i++) {
			if (i >= n)
				break;
			if (cfg->addr6_be[i][0] == daddr[0] &&
			    cfg->addr6_be[i][1] == daddr[1] &&
			    cfg->addr6_be[i][2] == daddr[2] &&
			    cfg->addr6_be[i][3] == daddr[3])
				return 1;
		}
		return 0;
	}
	if (blitz_v6_martian(daddr))
		return 0;
	p.family = BLITZ_AF_INET6;
	p.l4_protocol = IPPROTO_TCP;
	p.sport = sport;
	p.dport = dport;
	p.tot_len = BLITZ_IP6_HLEN + BLITZ_TCP_HLEN;
	p.ifindex = ifindex;
	__builtin_memcpy(p.ipv6_src, saddr, 16);
	__builtin_memcpy(p.ipv6_dst, daddr, 16);
	return blitz_fib_local(ctx, &p);
}

/* A source we never answer: martian, or our own (destination) address. */
static __always_inline int blitz_src4_martian(__u32 saddr, __u32 daddr)
{
	return blitz_v4_martian(saddr) || saddr == daddr;
}

static __always_inline int blitz_src6_martian(const __u32 *saddr,
					      const __u32 *daddr)
{
	return blitz_v6_martian(saddr) ||
	       (saddr[0] == daddr[0] && saddr[1] == daddr[1] &&
		saddr[2] == daddr[2] && saddr[3] == daddr[3]);
}

/* Is the frame's destination MAC this host's (the interface's, or one
 * configured with --mac)? Group addresses never are. No MAC configured
 * (a config made without the loader): any unicast MAC. */
static __always_inline int blitz_mac_ours(const struct blitz_config *cfg,
					  const __u8 *dst)
{
	__u64 m = blitz_mac_u64(dst);
	__u32 i;

	if (dst[0] & 1)
		return 0;
	if (!cfg->n_macs)
		return 1;
	for (i = 0; i < BLITZ_MAX_MACS; i++) {
		if (i >= cfg->n_macs)
			break;
		if (cfg->macs[i] == m)
			return 1;
	}
	return 0;
}

#endif /* BLITZ_ADDR_H */
