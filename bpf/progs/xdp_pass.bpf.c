// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_pass.bpf.c - a program that passes every frame. The testbed puts it
 * on the client's veth: veth drops XDP_TX'd and redirected frames unless
 * the peer has an XDP program of its own (docs/architecture.md, "Facts about
 * the machines it is built on").
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/* The same, multi-buffer: attachable at any MTU (a single-buffer program
 * caps the veth peer's MTU at about 3500): `sec xdp.frags`. */
SEC("xdp.frags")
int xdp_pass_frags(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
