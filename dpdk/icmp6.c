// SPDX-License-Identifier: GPL-2.0
/*
 * icmp6.c - ICMPv6 echo and neighbour solicitation for the service
 * addresses, answered in place: IPv6's counterpart of icmp.c and ARP.
 *
 * Owns: echo requests to a service address, and neighbour solicitations
 * whose target is one (answered with a solicited neighbour advertisement
 * carrying our MAC; the sender's MAC is learnt from its option). Every
 * other ICMPv6 message (router discovery, advertisements answering the
 * kernel's own solicitations, DAD probes, errors) is the kernel's, through
 * the TAP.
 * Must never: answer a message with a bad checksum, one with extension
 * headers, or neighbour discovery that did not come with hop limit 255
 * (RFC 4861: it may have been forwarded from off-link).
 */
#include <string.h>

#include <rte_ip.h>

#include "dpdk_engine.h"

#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ND_NEIGHBOR_SOLICIT 135
#define ND_NEIGHBOR_ADVERT 136
#define ND_OPT_SOURCE_LL 1
#define ND_OPT_TARGET_LL 2
#define ND_NA_FLAG_SOLICITED 0x40
#define ND_NA_FLAG_OVERRIDE 0x20

struct icmp6_hdr {
	uint8_t type;
	uint8_t code;
	uint16_t cksum;
	uint8_t body[4]; /* echo: id, seq; NS/NA: flags, reserved */
} __rte_packed;

/* NS and NA: the header, the target, then options. */
struct nd_msg {
	struct icmp6_hdr h;
	uint8_t target[16];
	uint8_t opt[];
} __rte_packed;

static bool icmp6_csum_ok(const struct rte_ipv6_hdr *ip6, const void *l4)
{
	uint32_t len = rte_be_to_cpu_16(ip6->payload_len);
	uint32_t sum = rte_ipv6_phdr_cksum(ip6, 0) + rte_raw_cksum(l4, len);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static void icmp6_csum_set(struct rte_ipv6_hdr *ip6, struct icmp6_hdr *h)
{
	h->cksum = 0;
	/* The TCP/UDP helper is the ICMPv6 one too: the pseudo-header takes
	 * the next header from ip6->proto. */
	h->cksum = rte_ipv6_udptcp_cksum(ip6, h);
}

/* Neighbour advertisement in place of the solicitation. */
static void answer_ns(struct worker *w, struct rte_mbuf *m,
		      struct rte_ether_hdr *eth, struct rte_ipv6_hdr *ip6,
		      struct nd_msg *ns, uint32_t len)
{
	struct engine *eng = w->eng;
	const uint8_t *o = ns->opt, *end = (const uint8_t *)ns + len;
	uint8_t *tl;

	/* Learn the sender from its source link-layer address option. */
	while (o + 8 <= end && o[1]) {
		if (o + o[1] * 8 > end)
			break;
		if (o[0] == ND_OPT_SOURCE_LL)
			neigh_learn(eng->neigh, ip6->src_addr,
				    (const struct rte_ether_addr *)(o + 2));
		o += o[1] * 8;
	}
	memcpy(ip6->dst_addr, ip6->src_addr, 16);
	memcpy(ip6->src_addr, ns->target, 16);
	ip6->hop_limits = 255;
	ip6->payload_len = rte_cpu_to_be_16(sizeof(*ns) + 8);
	ns->h.type = ND_NEIGHBOR_ADVERT;
	ns->h.code = 0;
	memset(ns->h.body, 0, 4);
	ns->h.body[0] = ND_NA_FLAG_SOLICITED | ND_NA_FLAG_OVERRIDE;
	tl = ns->opt;
	tl[0] = ND_OPT_TARGET_LL;
	tl[1] = 1; /* in units of 8 bytes */
	memcpy(tl + 2, eng->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	icmp6_csum_set(ip6, &ns->h);
	rte_pktmbuf_data_len(m) =
		(uint16_t)(sizeof(*eth) + sizeof(*ip6) + sizeof(*ns) + 8);
	rte_pktmbuf_pkt_len(m) = rte_pktmbuf_data_len(m);
	eth->dst_addr = eth->src_addr;
	eth->src_addr = eng->mac;
	w->st.nd_advert++;
	worker_tx_port(w, m);
}

void icmp6_input(struct worker *w, struct rte_mbuf *m)
{
	struct engine *eng = w->eng;
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(eth + 1);
	struct icmp6_hdr *h = (struct icmp6_hdr *)(ip6 + 1);
	uint32_t len = rte_be_to_cpu_16(ip6->payload_len);
	uint8_t tmp[16];

	if (len < sizeof(*h) ||
	    sizeof(*eth) + sizeof(*ip6) + len > rte_pktmbuf_data_len(m))
		goto kernel;
	if (h->type == ND_NEIGHBOR_SOLICIT) {
		struct nd_msg *ns = (struct nd_msg *)h;
		static const uint8_t unspec[16];

		/* DAD probes (source ::) and foreign targets: the kernel's. */
		if (len < sizeof(*ns) || ip6->hop_limits != 255 || h->code ||
		    !memcmp(ip6->src_addr, unspec, 16) ||
		    !engine_has_addr6(eng, ns->target))
			goto kernel;
		if (!icmp6_csum_ok(ip6, h))
			goto drop;
		/* The advertisement is 32 bytes; a solicitation without
		 * options is 24: the frame grows into its tailroom. */
		if (sizeof(*eth) + sizeof(*ip6) + sizeof(*ns) + 8 >
		    rte_pktmbuf_data_len(m) + rte_pktmbuf_tailroom(m))
			goto drop;
		answer_ns(w, m, eth, ip6, ns, len);
		return;
	}
	if (h->type != ICMP6_ECHO_REQUEST || h->code ||
	    !engine_has_addr6(eng, ip6->dst_addr))
		goto kernel;
	if (!icmp6_csum_ok(ip6, h))
		goto drop;
	if (eng->learn_from_ip)
		neigh_learn(eng->neigh, ip6->src_addr, &eth->src_addr);
	h->type = ICMP6_ECHO_REPLY;
	memcpy(tmp, ip6->src_addr, 16);
	memcpy(ip6->src_addr, ip6->dst_addr, 16);
	memcpy(ip6->dst_addr, tmp, 16);
	ip6->hop_limits = 64;
	icmp6_csum_set(ip6, h);
	eth->dst_addr = eth->src_addr;
	w->st.icmp6_echo++;
	worker_tx_ip(w, m);
	return;
kernel:
	exception_to_kernel(w, m);
	return;
drop:
	w->st.drop_other++;
	rte_pktmbuf_free(m);
}
