/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_xsks.h - the "xsks" map: AF_XDP sockets by queue, named for the
 * CLI and the loaders (the afxdp engine's in blitz_xdp, the generator's
 * in bench_gen). Owns that map's declaration only.
 */
#ifndef BLITZ_XSKS_H
#define BLITZ_XSKS_H

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

#endif /* BLITZ_XSKS_H */
