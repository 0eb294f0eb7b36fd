// SPDX-License-Identifier: GPL-2.0
/*
 * test_nic.c - the rule doctor reports and the loader follows for an MTU
 * (single-buffer up to a page, then multi-buffer where both the program
 * and the driver have it), and the netdev family's xdp-features spoken
 * over generic netlink (nic_info.c) against loopback, which has no native
 * XDP: the kernel's own report, not a guess.
 */
#include <errno.h>
#include <unistd.h>

#include "loader.h"
#include "nic_info.h"
#include "testlib.h"

static void mtu_fit_rule(void)
{
	const long lim = 3506;

	T_EQ_INT(blitz_xdp_mtu_fit(575, lim, true, true), BLITZ_MTU_TOO_SMALL);
	T_EQ_INT(blitz_xdp_mtu_fit(576, lim, false, false), BLITZ_MTU_SINGLE);
	T_EQ_INT(blitz_xdp_mtu_fit(1500, lim, true, false), BLITZ_MTU_SINGLE);
	T_EQ_INT(blitz_xdp_mtu_fit(3506, lim, false, false), BLITZ_MTU_SINGLE);
	/* One byte over a page: what a single-buffer program cannot take. */
	T_EQ_INT(blitz_xdp_mtu_fit(3507, lim, false, true),
		 BLITZ_MTU_PROG_SINGLE);
	T_EQ_INT(blitz_xdp_mtu_fit(9000, lim, false, true),
		 BLITZ_MTU_PROG_SINGLE);
	T_EQ_INT(blitz_xdp_mtu_fit(9000, lim, true, false),
		 BLITZ_MTU_DRIVER_NO_SG);
	T_EQ_INT(blitz_xdp_mtu_fit(9000, lim, true, true), BLITZ_MTU_MULTI);
	T_EQ_INT(blitz_xdp_mtu_fit(65535, lim, true, true), BLITZ_MTU_MULTI);
}

static void single_buffer_limit_is_a_page(void)
{
	/* 4 KiB pages: 4096 - 256 headroom - 320 shared info - 14 Ethernet,
	 * the most veth takes for a single-buffer program (it says ERANGE
	 * at 3507; tests/e2e/test_doctor.sh). */
	if (sysconf(_SC_PAGESIZE) != 4096) {
		T_SKIP("pages are not 4 KiB here");
		return;
	}
	T_EQ_INT(blitz_xdp_single_buffer_mtu(), 3506);
}

static void program_is_built_multi_buffer(void)
{
	T_CHECK(blitz_xdp_has_frags());
}

static void xdp_features_of_loopback(void)
{
	uint64_t f = ~0ull;
	uint32_t segs = ~0u;
	int err = nic_xdp_features(1, &f, &segs);

	if (err == -ENOENT) {
		T_SKIP("no netdev netlink family (Linux < 6.3)");
		return;
	}
	T_EQ_INT(err, 0);
	T_CHECK_MSG(!(f & NIC_XDP_BASIC), "lo reports native XDP: %#llx",
		    (unsigned long long)f);
	T_CHECK(!(f & NIC_XDP_XSK_ZEROCOPY));
	/* An interface that does not exist: the kernel says so. */
	T_CHECK(nic_xdp_features(0x7ffffff0, &f, &segs) < 0);
}

/* The partial checksum form is accepted on veth and its kin, never on
 * a NIC driver; lo (driver "loopback"... or none) is not one of them. */
static void csum_partial_only_software_peers(void)
{
	T_CHECK(nic_driver_csum_partial("veth"));
	T_CHECK(nic_driver_csum_partial("netkit"));
	T_CHECK(nic_driver_csum_partial("tun"));
	T_CHECK(!nic_driver_csum_partial("ixgbe"));
	T_CHECK(!nic_driver_csum_partial("mlx5_core"));
	T_CHECK(!nic_driver_csum_partial("virtio_net"));
	T_CHECK(!nic_driver_csum_partial("vethx"));
	T_CHECK(!nic_driver_csum_partial(""));
	T_CHECK(!nic_csum_partial("lo"));
	T_CHECK(!nic_csum_partial("no-such-if0"));
}

int main(void)
{
	T_RUN(mtu_fit_rule);
	T_RUN(single_buffer_limit_is_a_page);
	T_RUN(program_is_built_multi_buffer);
	T_RUN(xdp_features_of_loopback);
	T_RUN(csum_partial_only_software_peers);
	T_EXIT();
}
