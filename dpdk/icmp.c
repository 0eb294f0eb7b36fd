// SPDX-License-Identifier: GPL-2.0
/*
 * icmp.c - ICMPv4 echo for the service addresses, answered in place.
 *
 * Owns: echo requests to a service address (the caller checked the
 * address). Every other ICMP message (errors, timestamps, ICMPv6 of any
 * kind) is the kernel's, through the TAP.
 * Must never: answer a request with a bad IPv4 header or ICMP checksum
 * (the echo data is not ours to vouch for), or allocate: the request becomes
 * the reply.
 */
#include <rte_icmp.h>
#include <rte_ip.h>

#include "dpdk_engine.h"

void icmp4_input(struct worker *w, struct rte_mbuf *m, uint32_t l3_off)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, l3_off);
	uint32_t ihl = (uint32_t)(ip->version_ihl & 0x0f) * 4;
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	struct rte_icmp_hdr *icmp;
	struct rte_ether_addr tmp;
	uint32_t ip_tmp;

	if (tot < ihl + sizeof(*icmp) || l3_off + tot > rte_pktmbuf_data_len(m))
		goto drop;
	/* The header's sum too: a corrupted source address is not answered. */
	if (rte_raw_cksum(ip, ihl) != 0xffff)
		goto drop;
	icmp = (struct rte_icmp_hdr *)((uint8_t *)ip + ihl);
	if (icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code) {
		exception_to_kernel(w, m);
		return;
	}
	if (rte_raw_cksum(icmp, tot - ihl) != 0xffff)
		goto drop;

	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	icmp->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, tot - ihl);
	ip_tmp = ip->src_addr;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = ip_tmp;
	ip->time_to_live = 64;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	tmp = eth->src_addr;
	eth->src_addr = eth->dst_addr;
	eth->dst_addr = tmp;
	/* Trailing padding of a short frame goes back as it came. */
	w->st.icmp_echo++;
	worker_tx_ip(w, m);
	return;
drop:
	w->st.drop_other++;
	rte_pktmbuf_free(m);
}
