// SPDX-License-Identifier: GPL-2.0
/*
 * test_dpdk_rx_csum.c - the dpdk engine's reading of a NIC's checksum
 * verdicts (dpdk/rx_csum.h), fed crafted mbuf ol_flags: every pair of
 * IP and L4 verdicts, and flags that are no verdict at all. Built only
 * where DPDK's headers are.
 */
#include "testlib.h"
#include "rx_csum.h"

#define IPG RTE_MBUF_F_RX_IP_CKSUM_GOOD
#define IPB RTE_MBUF_F_RX_IP_CKSUM_BAD
#define IPN RTE_MBUF_F_RX_IP_CKSUM_NONE
#define L4G RTE_MBUF_F_RX_L4_CKSUM_GOOD
#define L4B RTE_MBUF_F_RX_L4_CKSUM_BAD
#define L4N RTE_MBUF_F_RX_L4_CKSUM_NONE

static void test_unknown_is_software(void)
{
	/* No verdict: the core sums the frame itself. */
	T_EQ_INT(rx_csum_verdict(0), 0);
	/* Flags that say nothing of checksums change nothing. */
	T_EQ_INT(rx_csum_verdict(RTE_MBUF_F_RX_RSS_HASH | RTE_MBUF_F_RX_VLAN),
		 0);
	T_EQ_INT(rx_csum_verdict(RTE_MBUF_F_RX_OUTER_L4_CKSUM_BAD |
				 RTE_MBUF_F_RX_OUTER_IP_CKSUM_BAD),
		 0);
}

static void test_good(void)
{
	T_EQ_INT(rx_csum_verdict(IPG | L4G),
		 TCP_RX_CSUM_IP_GOOD | TCP_RX_CSUM_L4_GOOD);
	/* IPv6: no IP verdict, the TCP one alone. */
	T_EQ_INT(rx_csum_verdict(L4G), TCP_RX_CSUM_L4_GOOD);
	/* Only the header vouched for: the core sums the segment. */
	T_EQ_INT(rx_csum_verdict(IPG), TCP_RX_CSUM_IP_GOOD);
	/* NONE: the data's sum is partial but the integrity verified. */
	T_EQ_INT(rx_csum_verdict(IPN | L4N),
		 TCP_RX_CSUM_IP_GOOD | TCP_RX_CSUM_L4_GOOD);
	T_EQ_INT(rx_csum_verdict(IPG | L4N | RTE_MBUF_F_RX_RSS_HASH),
		 TCP_RX_CSUM_IP_GOOD | TCP_RX_CSUM_L4_GOOD);
}

static void test_bad_wins(void)
{
	const uint64_t ip[] = {0, IPG, IPB, IPN};
	const uint64_t l4[] = {0, L4G, L4B, L4N};

	/* Any BAD drops, whatever the other verdict. */
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			uint8_t v = rx_csum_verdict(ip[i] | l4[j]);
			bool bad = ip[i] == IPB || l4[j] == L4B;

			T_EQ_INT(v == TCP_RX_CSUM_BAD, bad);
			T_EQ_INT(!!(v & TCP_RX_CSUM_BAD), bad);
		}
}

int main(void)
{
	T_RUN(test_unknown_is_software);
	T_RUN(test_good);
	T_RUN(test_bad_wins);
	T_EXIT();
}
