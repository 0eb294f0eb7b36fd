/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_maps.h - the maps the XDP program (blitz_xdp.bpf.c) and the TC
 * hand-off (blitz_tc.bpf.c) share, and the counter helpers both use.
 *
 * Owns: the definitions of the "config", "responses" and "counters" maps.
 * The loader gives the TC program the XDP program's fds for them, so both
 * must declare them identically: change them here only, and never rename
 * them (the CLI, the pins and the skeletons use these names).
 * Must never define a map only one of the programs uses: every map here
 * is created for both.
 */
#ifndef BLITZ_MAPS_H
#define BLITZ_MAPS_H

/* vmlinux.h has a typedef named config; the map must have that name. */
#define config blitz_vmlinux_config
#include "vmlinux.h"
#undef config
#include <bpf/bpf_helpers.h>

#include "blitz_shared.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_config);
} config SEC(".maps");

/* The prebuilt responses: the XDP program's replies and the TC program's
 * multi-segment ones copy the same bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BLITZ_RESP_KINDS);
	__type(key, __u32);
	__type(value, struct blitz_resp);
} responses SEC(".maps");

/* One entry: this CPU's whole block (blitz_shared.h, struct
 * blitz_counters). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_counters);
} counters SEC(".maps");

/* This CPU's counters. The hot path looks them up once per run and keeps
 * the pointer (struct seg's cnt): a map lookup per counter cost more. */
static __always_inline struct blitz_counters *cnt_block(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&counters, &key);
}

/* c is never NULL: the program checked it once, and the verifier
 * refuses a program that did not. */
static __always_inline void cnt_inc(struct blitz_counters *c, __u32 id, __u64 v)
{
	if (id < BLITZ_CNT_MAX)
		c->v[id] += v; /* per-CPU: no atomics needed */
}

/* Where no block is at hand (rare paths): a lookup of its own. */
static __always_inline void cnt_add(__u32 id, __u64 v)
{
	struct blitz_counters *c = cnt_block();

	if (c)
		cnt_inc(c, id, v);
}

#endif /* BLITZ_MAPS_H */
