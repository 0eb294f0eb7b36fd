// SPDX-License-Identifier: GPL-2.0
/*
 * blitz_ksock.bpf.c - feeds the kernel-socket filter (blitz_ksock.h): marks
 * the tuple of every TCP socket with the service's local port that enters
 * the kernel's established hash, so the XDP program may skip its socket
 * lookup for a tuple whose bit is clear.
 *
 * No tracing program may hook the hash insert itself here (fentry, fexit,
 * fmod_ret and lsm are refused with EPERM on the machines blitz is tested
 * on, and kprobes are not built in): the marks come from two tracepoints
 * instead, which together see every such socket after it is hashed and
 * before a segment of its peer can arrive (docs/cost.md has the case
 * analysis for 6.x kernels):
 *   net:net_dev_queue       every frame the kernel transmits on any device
 *                           (lo included) whose skb->sk is a TCP socket or
 *                           request sock with the local port: a connect()'s
 *                           SYN (sent after the port is chosen and the
 *                           socket hashed), a request sock's SYN-ACK (sent
 *                           after it is hashed), a Fast Open child's
 *                           SYN-ACK, and anything later;
 *   sock:inet_sock_set_state every state change with the tuple set: the
 *                           child made from a SYN cookie's ACK (the
 *                           kernel's or the TC hand-off's) turns
 *                           ESTABLISHED while that ACK is processed, before
 *                           it sends anything; TIME_WAIT follows a socket
 *                           already marked.
 * The sockets already hashed at the attach are marked by ks_seed, the tcp
 * iterator the loader runs after attaching (each bucket under its lock):
 * every trigger above comes after its socket is hashed, so a socket is
 * either in the hash for the iterator or triggers after the attach.
 *
 * Must never: miss one of those paths (a false negative hands a kernel
 * connection's segments to the XDP program); clear a bit.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

#include "blitz_ksock.h"

#define AF_INET 2
#define AF_INET6 10

char LICENSE[] SEC("license") = "GPL";

/* The service's local port, host order (set before load). */
const volatile __u16 blitz_ksock_port = 0;

static __always_inline void mark(__u32 addr, __u16 rport_be, __u16 lport)
{
	__u32 b = blitz_ksock_bit(addr, bpf_ntohs(rport_be), lport);
	__u32 k = 1 + (b >> 6);
	__u64 *w = bpf_map_lookup_elem(&ksock, &k);

	if (w)
		__sync_fetch_and_or(w, 1ULL << (b & 63));
}

/* Both forms: an IPv6 socket may hold a v4-mapped tuple, which IPv4
 * segments find (skc_daddr has the IPv4 address then). */
static __always_inline void mark_skc(const struct sock_common *c, __u16 lport)
{
	if (lport != blitz_ksock_port)
		return;
	mark(c->skc_daddr, c->skc_dport, lport);
	if (c->skc_family == AF_INET6)
		mark(c->skc_v6_daddr.in6_u.u6_addr32[0] ^
			     c->skc_v6_daddr.in6_u.u6_addr32[1] ^
			     c->skc_v6_daddr.in6_u.u6_addr32[2] ^
			     c->skc_v6_daddr.in6_u.u6_addr32[3],
		     c->skc_dport, lport);
}

#define TCP_NEW_SYN_RECV 12
#define IPPROTO_TCP 6

SEC("tp_btf/net_dev_queue")
int BPF_PROG(ks_xmit, struct sk_buff *skb)
{
	struct sock *sk = skb->sk;
	struct sock_common *c;

	if (!sk)
		return 0;
	c = &sk->__sk_common;
	if (c->skc_num != blitz_ksock_port ||
	    (c->skc_family != AF_INET && c->skc_family != AF_INET6))
		return 0;
	/* a request sock is only its sock_common; a full one says TCP */
	if (c->skc_state != TCP_NEW_SYN_RECV && sk->sk_protocol != IPPROTO_TCP)
		return 0;
	mark_skc(c, c->skc_num);
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(ks_state, const struct sock *sk, int oldstate, int newstate)
{
	if (sk->sk_protocol == IPPROTO_TCP)
		mark_skc(&sk->__sk_common, sk->__sk_common.skc_num);
	return 0;
}

/* The seed: every socket of the loader's network namespace (listeners,
 * established, request and TIME_WAIT socks alike). */
SEC("iter/tcp")
int ks_seed(struct bpf_iter__tcp *ctx)
{
	struct sock_common *c = ctx->sk_common;

	if (c)
		mark_skc(c, c->skc_num);
	return 0;
}
