/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rx_csum.h - a DPDK port's checksum verdicts (mbuf ol_flags) as the TCP
 * core's (tcp_frame.rx_csum, TCP_RX_CSUM_*).
 *
 * Owns: that mapping alone, header-only so a unit test can feed it
 * crafted flags. Must never vouch for a frame the NIC did not check:
 * UNKNOWN leaves the sum to the core.
 */
#ifndef BLITZ_DPDK_RX_CSUM_H
#define BLITZ_DPDK_RX_CSUM_H

#include <stdint.h>
#include <rte_mbuf_core.h>

#include "tcp_core.h"

/*
 * GOOD: verified, the core skips its sum. BAD: dropped by the core and
 * counted (bad_csum). UNKNOWN: the core sums it. NONE (both bits) is
 * DPDK's "the checksum in the data is not correct, but the integrity of
 * the header (L4: the data) is verified": a partial sum the device
 * checked, taken as good (summed here, a good frame would be dropped).
 */
static inline uint8_t rx_csum_verdict(uint64_t ol_flags)
{
	uint64_t ip = ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	uint64_t l4 = ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	uint8_t v = 0;

	if (ip == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
	    l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return TCP_RX_CSUM_BAD;
	if (ip == RTE_MBUF_F_RX_IP_CKSUM_GOOD ||
	    ip == RTE_MBUF_F_RX_IP_CKSUM_NONE)
		v |= TCP_RX_CSUM_IP_GOOD;
	if (l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD ||
	    l4 == RTE_MBUF_F_RX_L4_CKSUM_NONE)
		v |= TCP_RX_CSUM_L4_GOOD;
	return v;
}

#endif /* BLITZ_DPDK_RX_CSUM_H */
