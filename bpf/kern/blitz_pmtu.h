/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_pmtu.h - the xdp engine's path-MTU cache: what ICMP "fragmentation
 * needed" and ICMPv6 "packet too big" said about the path to a client,
 * keyed by the client's address as the kernel's per-destination PMTU
 * cache is, read by answer() as one more bound on a reply's size
 * (docs/tcp-security.md, "Path MTU").
 *
 * Owns: the pmtu and pmtu_any maps (XDP only). An entry is made only for
 * an ICMP that quotes a reply whose cookie verifies (blitz_seg_icmp() and
 * the TSval check), clamped as Linux clamps: IPv4 below 552
 * (ip_rt_min_pmtu) sends that client's replies to the kernel (the flow is
 * passed: the kernel's socket gets the next ICMP itself and sends without
 * DF), IPv6 below 1280 counts as 1280 (RFC 8200). An entry only lowers the
 * bound, and expires after 10 minutes (ip_rt_mtu_expires).
 * Must never: be written from a message that did not verify, raise a
 * bound before it expires, or cost a hash lookup while it is empty.
 */
#ifndef BLITZ_PMTU_H
#define BLITZ_PMTU_H

#include "blitz_seg.h"

#define BLITZ_PMTU_ENTRIES 4096
#define BLITZ_PMTU_EXPIRES_NS (600ULL * 1000000000ULL)
#define BLITZ_PMTU_MIN4 552  /* Linux's ip_rt_min_pmtu */
#define BLITZ_PMTU_MIN6 1280 /* IPv6's minimum link MTU */

struct blitz_pmtu_key {
	__u32 addr[4]; /* the client's, network order; IPv4 in [0] */
	__u32 v6;
};

struct blitz_pmtu_val {
	__u64 expires_ns;
	__u32 mss; /* TCP payload bytes per segment, options included; 0:
		    * none of this client's replies is XDP's */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BLITZ_PMTU_ENTRIES);
	__type(key, struct blitz_pmtu_key);
	__type(value, struct blitz_pmtu_val);
} pmtu SEC(".maps");

/* 1 once any entry was made: until then answer() looks nothing up. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pmtu_any SEC(".maps");

static __always_inline void blitz_pmtu_key_of(const struct seg *s,
					      struct blitz_pmtu_key *k)
{
	__builtin_memcpy(k->addr, s->saddr, sizeof(k->addr));
	if (!s->v6)
		k->addr[1] = k->addr[2] = k->addr[3] = 0;
	k->v6 = s->v6;
}

/* A verified message said the path to s's client carries mtu bytes. */
static __always_inline void blitz_pmtu_note(const struct seg *s, __u32 mtu)
{
	struct blitz_pmtu_key k = {};
	struct blitz_pmtu_val v = {}, *old;
	__u32 zero = 0, *any;
	__u64 now = bpf_ktime_get_ns();

	if (s->v6)
		v.mss = (mtu < BLITZ_PMTU_MIN6 ? BLITZ_PMTU_MIN6 : mtu) -
			(BLITZ_IP6_HLEN + BLITZ_TCP_HLEN);
	else
		v.mss = mtu < BLITZ_PMTU_MIN4
				? 0
				: mtu - (BLITZ_IP4_HLEN + BLITZ_TCP_HLEN);
	v.expires_ns = now + BLITZ_PMTU_EXPIRES_NS;
	blitz_pmtu_key_of(s, &k);
	old = bpf_map_lookup_elem(&pmtu, &k);
	if (old && old->expires_ns > now && old->mss <= v.mss)
		return;
	bpf_map_update_elem(&pmtu, &k, &v, BPF_ANY);
	any = bpf_map_lookup_elem(&pmtu_any, &zero);
	if (any && !*any)
		*any = 1;
}

/* limit (payload bytes of a reply to s, its options already taken off)
 * lowered to what the path to the client carries: 0 sends it to the
 * kernel. */
static __always_inline __u32 blitz_pmtu_limit(const struct seg *s, __u32 limit)
{
	struct blitz_pmtu_key k = {};
	struct blitz_pmtu_val *v;
	__u32 zero = 0, *any, m, opt = s->has_ts ? 12 : 0;

	any = bpf_map_lookup_elem(&pmtu_any, &zero);
	if (!any || !*any)
		return limit;
	blitz_pmtu_key_of(s, &k);
	v = bpf_map_lookup_elem(&pmtu, &k);
	if (!v || v->expires_ns <= bpf_ktime_get_ns())
		return limit;
	m = v->mss > opt ? v->mss - opt : 0;
	return m < limit ? m : limit;
}

#endif /* BLITZ_PMTU_H */
