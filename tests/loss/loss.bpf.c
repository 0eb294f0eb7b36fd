// SPDX-License-Identifier: GPL-2.0
/*
 * loss.bpf.c - a lossy link for the tests and benchmarks: a tc BPF program
 * that drops LOSS_PERMILLE frames in 1000 at random where it is attached
 * (this kernel has no sch_netem). Built once per rate by the Makefile as
 * build/tests/loss/loss_<permille>.bpf.o; tests/e2e/lib_loss.sh attaches it.
 *
 * Owns: the drop decision and its counters (seen, dropped).
 * Must never: change a frame, or drop anything but at the compiled rate.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#ifndef LOSS_PERMILLE
#error "build with -DLOSS_PERMILLE=N (frames dropped in 1000)"
#endif

/* [0] frames seen, [1] frames dropped: read with bpftool map dump, by the
 * tests that must show the loss happened. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} loss_stats SEC(".maps");

static __always_inline void count(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&loss_stats, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("tc")
int loss(struct __sk_buff *skb)
{
	(void)skb;
	count(0);
	if (bpf_get_prandom_u32() % 1000 < LOSS_PERMILLE) {
		count(1);
		return TC_ACT_SHOT;
	}
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
