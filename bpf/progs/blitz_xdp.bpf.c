// SPDX-License-Identifier: GPL-2.0
/*
 * blitz_xdp.bpf.c - the xdp engine: answers HTTP hello requests in the
 * driver with stateless TCP (docs/architecture.md, "Stateless TCP in the xdp
 * engine").
 *
 * Owns: the per-frame verdict for the service address:port. SYN -> SYN-ACK
 * with cookie v2 (blitz_ring.h, docs/cookie-v2.md); validated data with
 * complete trivial requests -> the prebuilt responses rewritten into the
 * same frame (XDP_TX), no segment above the client's MSS class; FIN ->
 * FIN-ACK; an expired cookie -> RST; pure ACK and RST -> dropped;
 * everything else for the service ->
 * XDP_PASS to the kernel path, counted by reason. In afxdp mode, service
 * traffic is redirected to the XSKMAP instead.
 *
 * Must never: touch a frame that is not for the service (XDP_PASS,
 * untouched), answer or redirect a segment (SYN included) of a 4-tuple
 * a kernel socket holds, answer a segment that fails the cookie check, answer a
 * request userspace/http.c would answer differently, drop a segment of a
 * connection the kernel already owns, or reject a frame on its checksum
 * (veth frames from a local stack carry partial checksums).
 *
 * The program is this file and its parts in bpf/kern, included in order:
 * blitz_xdp.h (limits, scratch, verdicts), blitz_xdp_reply.h (the reply
 * frame and its headers), blitz_xdp_req.h (the request parse and its
 * cache), blitz_xdp_answer.h (replies at a proved point),
 * blitz_xdp_tcp.h (kernel sockets, SYN cookies, the checks of every later
 * segment); here: the ICMP path and the entry point.
 *
 * The CLI relies on the names: program blitz_xdp, maps config, responses,
 * counters (blitz_maps.h, shared with the TC program) and xsks
 * (blitz_xdp.h). The other maps are internal, per CPU: date_cache (the
 * Date of the current second), scratch (payload and parse state),
 * req_cache (payloads already parsed), rendered_resp, tspts.
 */
/* First: vmlinux.h (with its typedef named config out of the way) and
 * the config and counters maps the TC hand-off shares. */
#include "blitz_maps.h"
#include <bpf/bpf_endian.h>

#include "blitz_addr.h"
#include "blitz_date.h"
#include "blitz_flow.h"
#include "blitz_http_dfa.h"
#include "blitz_ksock.h"
#include "blitz_ring.h"
#include "blitz_pmtu.h"
#include "blitz_proto.h"
#include "blitz_seg.h"
#include "blitz_seq.h"
#include "blitz_tspt.h"

#include "blitz_xdp.h"
#include "blitz_xdp_reply.h"
#include "blitz_xdp_req.h"
#include "blitz_xdp_answer.h"
#include "blitz_xdp_tcp.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * ICMP "fragmentation needed" / ICMPv6 "packet too big" about a reply of
 * ours (blitz_seg_icmp): when the quoted reply's TSval is our cookie for
 * where it ended, the client's path MTU goes into blitz_pmtu.h's cache and
 * bounds the next replies. Always passed on: the message is the host's
 * too (a kernel socket of the same client learns from it).
 */
static __always_inline int
handle_icmp(struct xdp_md *ctx, const struct blitz_config *cfg, struct seg *s)
{
	struct blitz_ring_cache *rc;
	struct blitz_ck2_q *q;
	__u32 mtu = 0;
	int why;

	why = blitz_seg_icmp(ctx, BLITZ_PKT_XDP, cfg, s, &mtu);
	if (!why) /* believed only with a checksum that verifies */
		why = blitz_seg_icmp_csum(ctx, BLITZ_PKT_XDP, s);
	if (why)
		return pass(why);
	rc = ring_query(cfg, s, 1);
	if (!rc)
		return XDP_PASS;
	q = &rc->q;
	if (blitz_ck2_q_check(&rc->r, q) != BLITZ_CK2_OK)
		return pass(BLITZ_CNT_ICMP_PMTU_BAD);
	blitz_pmtu_note(s, mtu);
	return pass(BLITZ_CNT_ICMP_PMTU);
}

/*
 * Multi-buffer (xdp.frags): native XDP at an MTU over a page (jumbo
 * frames). Headers are read from the linear part (data..data_end, which
 * always holds them); lengths come from bpf_xdp_get_buff_len() and the
 * payload from bpf_xdp_load_bytes(), both of which see every fragment.
 */
SEC("xdp.frags")
int blitz_xdp(struct xdp_md *ctx)
{
	void *data, *end;
	struct ethhdr *eth;
	struct blitz_config *cfg;
	struct blitz_scratch *sc;
	struct seg s = {};
	__u32 key = 0;
	int why;

	s.cnt = cnt_block();
	cfg = bpf_map_lookup_elem(&config, &key);
	sc = bpf_map_lookup_elem(&scratch, &key);
	if (!s.cnt || !cfg || !sc)
		return XDP_PASS;
	cnt_inc(s.cnt, BLITZ_CNT_RX_FRAMES, 1);
	/* One parser for XDP and TC (blitz_seg.h). */
	why = blitz_seg_parse(ctx, BLITZ_PKT_XDP, cfg, &s, sc->opts, sc->zero);
	if (why == BLITZ_SEG_ICMP)
		return handle_icmp(ctx, cfg, &s);
	if (why == BLITZ_CNT_DROP_MARTIAN)
		return drop(why);
	if (why)
		return pass(why);
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > end)
		return pass(BLITZ_CNT_PASS_MALFORMED);
	__builtin_memcpy(s.mac_src, eth->h_source, ETH_ALEN);
	__builtin_memcpy(s.mac_dst, eth->h_dest, ETH_ALEN);

	if (cfg->mode == BLITZ_MODE_AFXDP) {
		__u32 q = ctx->rx_queue_index;

		/* Connections the kernel accepted while no AF_XDP socket was
		 * bound stay the kernel's: userspace TCP would reset them. */
		if (kernel_owns(ctx, &s))
			return pass(BLITZ_CNT_PASS_KERNEL_OWNS);
		if (!bpf_map_lookup_elem(&xsks, &q))
			return pass(BLITZ_CNT_PASS_NO_XSK);
		cnt_inc(s.cnt, BLITZ_CNT_REDIRECT, 1);
		return bpf_redirect_map(&xsks, q, XDP_PASS);
	}
	return handle_tcp(ctx, cfg, &s, sc);
}
