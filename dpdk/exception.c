// SPDX-License-Identifier: GPL-2.0
/*
 * exception.c - the exception path: frames between the port and the
 * kernel's TAP interface.
 *
 * Owns: handing the kernel what blitz does not answer, in a form the
 * kernel accepts, and sending the kernel's frames out of the port.
 * Must never: touch service traffic, or fix a checksum that is simply
 * wrong (only a partial one, see below, is completed).
 *
 * Partial checksums: a frame a local stack sent over veth (or a guest
 * over virtio) may carry only the pseudo-header sum in its TCP/UDP
 * checksum field, the NIC being expected to finish it. The af_packet PMD
 * does not say so (TP_STATUS_CSUMNOTREADY is dropped), and net_tap writes
 * to the TAP without a virtio-net header, so the kernel would verify the
 * field and drop the frame. A field that equals the pseudo-header sum
 * and does not verify is such a frame: it is completed here.
 */
#include <stddef.h>

#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "dpdk_engine.h"

/* The L4 checksum field of a TCP/UDP frame that may need completing. */
static unaligned_uint16_t *l4_csum_field(uint8_t proto, void *l4)
{
	if (proto == IPPROTO_TCP)
		return (unaligned_uint16_t *)((uint8_t *)l4 +
					      offsetof(struct rte_tcp_hdr,
						       cksum));
	if (proto == IPPROTO_UDP)
		return (unaligned_uint16_t *)((uint8_t *)l4 +
					      offsetof(struct rte_udp_hdr,
						       dgram_cksum));
	return NULL;
}

static void complete_csum4(struct worker *w, struct rte_mbuf *m,
			   struct rte_ipv4_hdr *ip)
{
	uint32_t ihl = (uint32_t)(ip->version_ihl & 0x0f) * 4;
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	unaligned_uint16_t *field;
	uint16_t orig, full;
	void *l4;

	if (ihl < sizeof(*ip) || tot < ihl + 8 ||
	    sizeof(struct rte_ether_hdr) + tot > rte_pktmbuf_data_len(m) ||
	    (ip->fragment_offset &
	     rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK | RTE_IPV4_HDR_MF_FLAG)))
		return;
	l4 = (uint8_t *)ip + ihl;
	field = l4_csum_field(ip->next_proto_id, l4);
	if (!field || (ip->next_proto_id == IPPROTO_TCP &&
		       tot < ihl + sizeof(struct rte_tcp_hdr)))
		return;
	orig = *field;
	if (!orig && ip->next_proto_id == IPPROTO_UDP)
		return; /* UDP without a checksum */
	if (orig != rte_ipv4_phdr_cksum(ip, 0))
		return;
	*field = 0;
	full = rte_ipv4_udptcp_cksum(ip, l4);
	*field = full;
	if (full != orig)
		w->st.tap_csum_fix++;
}

static void complete_csum6(struct worker *w, struct rte_mbuf *m,
			   struct rte_ipv6_hdr *ip6)
{
	uint32_t plen = rte_be_to_cpu_16(ip6->payload_len);
	unaligned_uint16_t *field;
	uint16_t orig, full;

	if (plen < 8 || sizeof(struct rte_ether_hdr) + sizeof(*ip6) + plen >
				rte_pktmbuf_data_len(m))
		return;
	field = l4_csum_field(ip6->proto, ip6 + 1);
	if (!field ||
	    (ip6->proto == IPPROTO_TCP && plen < sizeof(struct rte_tcp_hdr)))
		return;
	orig = *field;
	if (orig != rte_ipv6_phdr_cksum(ip6, 0))
		return;
	*field = 0;
	full = rte_ipv6_udptcp_cksum(ip6, ip6 + 1);
	*field = full;
	if (full != orig)
		w->st.tap_csum_fix++;
}

void exception_to_kernel(struct worker *w, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	uint32_t len = rte_pktmbuf_data_len(m);

	if (!w->eng->have_tap) {
		worker_tx_tap(w, m); /* counts and frees */
		return;
	}
	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
	    len >= sizeof(*eth) + sizeof(struct rte_ipv4_hdr))
		complete_csum4(w, m, (struct rte_ipv4_hdr *)(eth + 1));
	else if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
		 len >= sizeof(*eth) + sizeof(struct rte_ipv6_hdr))
		complete_csum6(w, m, (struct rte_ipv6_hdr *)(eth + 1));
	worker_tx_tap(w, m);
}

/*
 * The kernel's frames leave as they are: it resolved their destination
 * itself (its ARP requests go out here, the replies come back through
 * arp_input) and the TAP has our MAC, so the source is right.
 */
void exception_from_kernel(struct worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	w->st.from_tap_frames += n;
	for (i = 0; i < n; i++)
		worker_tx_port(w, pkts[i]);
}
