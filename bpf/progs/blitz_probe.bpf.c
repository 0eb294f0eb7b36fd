// SPDX-License-Identifier: GPL-2.0
/*
 * blitz_probe.bpf.c - asks the kernel whether bpf_sk_assign_tcp_reqsk()
 * works here, for tc_handoff_usable() (userspace/tc_handoff.c).
 *
 * The kfunc is in the BTF of every kernel >= 6.9, but a kernel built
 * without CONFIG_SYN_COOKIES compiles it to `return -EOPNOTSUPP`. Run once
 * with BPF_PROG_TEST_RUN on a segment whose 4-tuple a listening socket
 * holds, the program calls it on that listener and leaves its answer in
 * probe_rc: a test run is not a TC ingress hook, so a working kfunc
 * refuses with -EINVAL after checking its arguments, and a stub says
 * -EOPNOTSUPP. Must never be attached anywhere.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TC_ACT_OK 0
#define PROBE_NO_LISTENER 1 /* the lookup found no listener: no answer */

char LICENSE[] SEC("license") = "GPL";

int probe_rc = PROBE_NO_LISTENER;

extern int bpf_sk_assign_tcp_reqsk(struct __sk_buff *skb, struct sock *sk,
				   struct bpf_tcp_req_attrs *attrs,
				   int attrs__sz) __ksym;

SEC("tc")
int blitz_probe_reqsk(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct bpf_tcp_req_attrs attrs = {.mss = 1460};
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct tcphdr *th = (void *)(ip + 1);
	struct bpf_sock_tuple t = {};
	struct bpf_sock *skc;
	struct tcp_sock *tp;

	if ((void *)(th + 1) > end)
		return TC_ACT_OK;
	t.ipv4.saddr = ip->saddr;
	t.ipv4.daddr = ip->daddr;
	t.ipv4.sport = th->source;
	t.ipv4.dport = th->dest;
	skc = bpf_skc_lookup_tcp(skb, &t, sizeof(t.ipv4), BPF_F_CURRENT_NETNS,
				 0);
	if (!skc)
		return TC_ACT_OK;
	tp = bpf_skc_to_tcp_sock(skc);
	if (tp && skc->state == BPF_TCP_LISTEN)
		probe_rc = bpf_sk_assign_tcp_reqsk(skb, (struct sock *)tp,
						   &attrs, sizeof(attrs));
	bpf_sk_release(skc);
	return TC_ACT_OK;
}
