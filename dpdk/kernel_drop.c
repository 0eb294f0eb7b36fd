// SPDX-License-Identifier: GPL-2.0
/*
 * kernel_drop.c - on an interface taken over (takeover.c), a TCX ingress
 * program that drops every frame before the kernel's own stack sees it.
 *
 * Why: the af_packet PMD leaves the interface in the kernel, so every frame
 * also goes up the kernel's stack. Taken over, the interface has no
 * address, IPv6 off and rp_filter=1, so the kernel drops that IPv4 copy,
 * but only at the route check, after ip_rcv, TCP early demux (a lookup in
 * the kernel's established-socket hash: at 100,000 connections a cache miss
 * a frame) and two FIB lookups. Packet sockets get their copy before the
 * ingress hook, so af_packet still sees every frame; the kernel's business
 * on this link goes through the TAP (the exception path). The sysctls stay
 * as they are: where TCX is missing (Linux < 6.6) they still keep the
 * kernel from answering.
 *
 * It is a bpf_link held by this process: it goes away with blitz-dpdk,
 * however it ends, and is detached before the interface is given back.
 * Must never: be attached to an interface that is not taken over (the
 * kernel would lose its traffic there).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>

#include "kernel_drop.h"
#include "log.h"

/* Debian 12's linux/bpf.h predates TCX (Linux 6.6): the UAPI value. */
#define TCX_ATTACH_INGRESS 46 /* enum bpf_attach_type BPF_TCX_INGRESS */

static int link_fd = -1;

int kernel_drop_attach(const char *ifname)
{
	/* r0 = TC_ACT_SHOT; exit */
	const struct bpf_insn drop[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K,
		 .dst_reg = BPF_REG_0,
		 .imm = TC_ACT_SHOT},
		{.code = BPF_JMP | BPF_EXIT},
	};
	unsigned int ifindex = if_nametoindex(ifname);
	int prog, err;

	if (!ifindex)
		return -ENODEV;
	prog = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "blitz_kdrop", "GPL",
			     drop, 2, NULL);
	if (prog < 0) {
		err = -errno;
		goto fail;
	}
	link_fd = bpf_link_create(prog, (int)ifindex, TCX_ATTACH_INGRESS, NULL);
	err = link_fd < 0 ? -errno : 0;
	close(prog); /* the link holds it */
	if (err)
		goto fail;
	pr_info("%s: the kernel's stack drops its frames at tc ingress (after "
		"af_packet's copy)\n",
		ifname);
	return 0;
fail:
	link_fd = -1;
	pr_info("%s: no TCX ingress drop (%s): the kernel drops its copy of "
		"each frame at the route check (rp_filter), later\n",
		ifname, strerror(-err));
	return err;
}

void kernel_drop_detach(void)
{
	if (link_fd >= 0)
		close(link_fd);
	link_fd = -1;
}
