// SPDX-License-Identifier: GPL-2.0
/*
 * veth_mss.c - make a veth's peer send wire-sized segments to the af_packet
 * PMD: attach a pass-all XDP program to the veth, in native mode.
 *
 * Why: a Linux client on the other end of a veth keeps TSO/GSO on by
 * default, and veth hands its TSO super-frames (up to 64 KB) through
 * unsegmented; af_packet's 2 KB frames truncate them and the request is
 * never answered (a 7 KB request: one 7 KB frame). With an XDP program on
 * a veth, the kernel clears the GSO features of its peer
 * (veth_fix_features), so the peer's stack segments to the MSS before the
 * frames cross, and af_packet sees what a wire would carry. The program
 * passes everything: the kernel and af_packet see the frames as before.
 *
 * It is attached as a bpf_link held by this process, so it goes away with
 * blitz-dpdk, however it ends. On a real NIC none of this applies: the
 * port is configured without LRO or RX scatter (port.c), so every mbuf
 * holds one wire frame, and lcore.c drops (and counts) a chained mbuf
 * should a PMD deliver one anyway.
 * Must never: touch an interface that is not a veth, or replace an XDP
 * program someone else attached (the kernel refuses: we say so and go on).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "log.h"
#include "nic_info.h"
#include "veth_mss.h"

static int link_fd = -1;

/* The kernel driver behind ifname is "veth". */
static bool is_veth(const char *ifname)
{
	struct nic_drvinfo di;

	return !nic_drvinfo(ifname, &di) && !strcmp(di.driver, "veth");
}

int veth_mss_attach(const char *ifname)
{
	/* r0 = XDP_PASS; exit */
	const struct bpf_insn pass[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K,
		 .dst_reg = BPF_REG_0,
		 .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);
	unsigned int ifindex = if_nametoindex(ifname);
	int prog, err;

	if (!ifindex || !is_veth(ifname))
		return 1;
	prog = bpf_prog_load(BPF_PROG_TYPE_XDP, "blitz_veth_mss", "GPL", pass,
			     2, NULL);
	if (prog < 0) {
		err = -errno;
		pr_warn("%s: cannot load the XDP pass program that makes the "
			"veth's peer segment to the MSS: %s; turn TSO/GSO off "
			"on the peer (ethtool -K PEER tso off gso off)\n",
			ifname, strerror(-err));
		return err;
	}
	link_fd = bpf_link_create(prog, (int)ifindex, BPF_XDP, &lo);
	err = link_fd < 0 ? -errno : 0;
	close(prog); /* the link holds it */
	if (err) {
		pr_warn("%s: cannot attach an XDP pass program (%s: %s); its "
			"veth peer may send TSO frames larger than "
			"af_packet's: "
			"turn TSO/GSO off on the peer (ethtool -K PEER tso off "
			"gso off)\n",
			ifname,
			err == -EBUSY ? "another XDP program is attached"
				      : "bpf_link_create",
			strerror(-err));
		link_fd = -1;
		return err;
	}
	pr_info("%s is a veth: an XDP pass program on it makes its peer "
		"segment to the MSS (no TSO frames for af_packet)\n",
		ifname);
	return 0;
}

void veth_mss_detach(void)
{
	if (link_fd >= 0)
		close(link_fd);
	link_fd = -1;
}
