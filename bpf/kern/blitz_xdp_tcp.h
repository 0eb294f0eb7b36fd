/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_xdp_tcp.h - the XDP program's TCP path: whether a kernel socket
 * owns the segment's 4-tuple (the kernel-socket filter, then the socket
 * lookup), the SYN answered with a SYN-ACK carrying cookie v2, and every
 * later segment checked (the TSecr cookie, the handshake's ISN, a flow
 * entry, the point entry of blitz_tspt.h) before it is answered, passed
 * or dropped.
 *
 * Owns: the tspts map, the order of the checks and the counter of each
 * outcome. Must never answer or redirect a segment of a 4-tuple a kernel
 * socket holds, answer a segment the cookie or an entry does not prove,
 * or act on one whose checksum does not verify.
 */
#ifndef BLITZ_XDP_TCP_H
#define BLITZ_XDP_TCP_H

#include "blitz_xdp_answer.h"

/* May a kernel socket hold the segment's tuple? 0 only when the
 * kernel-socket filter (blitz_ksock.h) is ready for this port and the
 * tuple's bit is clear: the kernel never hashed a socket for it. */
static __always_inline int ksock_may_own(const struct seg *s)
{
	__u32 k = 0, b, a;
	__u64 *w;

#ifdef BLITZ_COST_NO_KSOCK /* make cost's ablation build: lookup always */
	return 1;
#endif
	w = bpf_map_lookup_elem(&ksock, &k);
	if (!w || *w != (BLITZ_KSOCK_READY | bpf_ntohs(s->dport)))
		return 1;
	a = s->saddr[0];
	if (s->v6)
		a ^= s->saddr[1] ^ s->saddr[2] ^ s->saddr[3];
	b = blitz_ksock_bit(a, bpf_ntohs(s->sport), bpf_ntohs(s->dport));
	k = 1 + (b >> 6);
	w = bpf_map_lookup_elem(&ksock, &k);
	return !w || ((*w >> (b & 63)) & 1);
}

/* The state of the kernel socket a 4-tuple finds (a listener included),
 * or -1 when there is none. A global function: its socket tuple lives in
 * its own frame, not in the program's. It takes the addresses, not the
 * struct seg: the verifier forgets every pointer in memory a global is
 * given, and struct seg holds the counters' (kernel_sk_state() below). */
__noinline int kernel_sk_state_of(struct xdp_md *ctx, const struct seg_addrs *a,
				  __u16 sport, __u16 dport, __u8 v6)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	int state;

	if (!ctx || !a)
		return -1;
	if (v6) {
		__builtin_memcpy(t.ipv6.saddr, a->saddr, 16);
		__builtin_memcpy(t.ipv6.daddr, a->daddr, 16);
		t.ipv6.sport = sport;
		t.ipv6.dport = dport;
		sk = bpf_skc_lookup_tcp(ctx, &t, sizeof(t.ipv6),
					BPF_F_CURRENT_NETNS, 0);
	} else {
		t.ipv4.saddr = a->saddr[0];
		t.ipv4.daddr = a->daddr[0];
		t.ipv4.sport = sport;
		t.ipv4.dport = dport;
		sk = bpf_skc_lookup_tcp(ctx, &t, sizeof(t.ipv4),
					BPF_F_CURRENT_NETNS, 0);
	}
	if (!sk)
		return -1;
	state = (int)sk->state;
	bpf_sk_release(sk);
	return state;
}

static __always_inline int kernel_sk_state(struct xdp_md *ctx,
					   const struct seg *s)
{
	return kernel_sk_state_of(ctx, &s->addrs, s->sport, s->dport, s->v6);
}

/* Does a kernel socket other than the listener hold this 4-tuple (the
 * connection was handed over, or is the kernel's own)? */
static __always_inline int kernel_owns(struct xdp_md *ctx, const struct seg *s)
{
	int state;

#ifdef BLITZ_COST_NO_SKLOOKUP /* make cost's ablation build only */
	return 0;
#endif
	if (!ksock_may_own(s)) {
		cnt_inc(s->cnt, BLITZ_CNT_KSOCK_SKIP, 1);
		return 0;
	}
	state = kernel_sk_state(ctx, s);
	return state >= 0 && state != BPF_TCP_LISTEN;
}

/*
 * The track points of each timestamp connection's last replies
 * (bpf/blitz_tspt.h): a TSecr that verified may still be a segment sent
 * before our reply arrived whose MAC matched by chance (docs/cookie-v2.md).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BLITZ_TSPT_SLOTS);
	__type(key, __u32);
	__type(value, struct blitz_tspt);
} tspts SEC(".maps");

/* Is q's segment, a new connection's first, at its handshake? A global
 * function: the ISN MAC is verified once, on the rare path. */
__noinline int blitz_ck2_q_handshake(const struct blitz_ck2_ring *r,
				     const struct blitz_ck2_q *q)
{
	if (!r || !q)
		return 0;
	return blitz_ck2_ts_handshake(r, q->seq, q->ack, &q->h);
}

/*
 * May q's segment (its TSecr verified) be answered at its point? When it
 * may, its point goes into the entry (the handshake-completing ACK and
 * the segments TC answers included, so that a pipelined segment behind
 * them finds it), and *pp gets the entry (where the reply's end goes: one
 * lookup per segment), or 0 when there is none (the cookie alone decides).
 */
static __always_inline int tspt_check(struct blitz_ring_cache *rc,
				      struct blitz_tspt **pp)
{
	struct blitz_tspt *p;
	__u32 idx;

	*pp = 0;
	if (!rc)
		return 1;
	idx = blitz_tspt_idx(rc->q.h.flow0);
	p = bpf_map_lookup_elem(&tspts, &idx);
	if (!p)
		return 1;
	if (blitz_tspt_see(p, rc->q.h.flow0, rc->r.e_now, rc->q.seq, rc->q.ack,
			   rc->q.h.fin)) {
		if (!blitz_ck2_q_handshake(&rc->r, &rc->q))
			return 0;
		blitz_tspt_fresh(p, rc->q.h.flow0, rc->r.e_now, rc->q.seq,
				 rc->q.ack, rc->q.h.fin);
	}
	*pp = p;
	return 1;
}

/* test_seq_narrow's negative control (NARROW_D=-DBLITZ_TSPT_OFF): the
 * layout alone, no point entry */
#ifdef BLITZ_TSPT_OFF
#define BLITZ_TSPT_ON_OFF 1
#else
#define BLITZ_TSPT_ON_OFF 0
#endif

/* Note where the reply rec (timestamps) ends in its flow's entry p (from
 * tspt_check, which left it live: no second liveness check): a point on
 * the track when the one it was made at was. */
static __always_inline void tspt_note_end(struct blitz_tspt *p,
					  const struct blitz_seq_rec *rec)
{
	if (p)
		blitz_tspt_end_live(p, rec->sent.end_rcv, rec->sent.end_snd,
				    rec->sent.closed);
}

/* The source a flow entry is capped by: an IPv4 address, an IPv6 /64. */
static __always_inline __u64 flow_src_of(const struct seg *s)
{
	return (__u64)s->saddr[0] | (s->v6 ? (__u64)s->saddr[1] << 32 : 0);
}

/* What a verified segment at at gets (blitz_seq_action), and its entry. */
static __always_inline int
reply_at(struct xdp_md *ctx, const struct blitz_config *cfg,
	 const struct seg *s, struct blitz_scratch *sc,
	 struct blitz_ring_cache *rc, struct blitz_tspt *pt)
{
	struct blitz_seq_rec *rec = &sc->rec;
	const struct blitz_seq_at *at = &rec->at;
	int act, verdict;

	act = blitz_seq_action(at, s->ack, s->plen, s->flags & TCPHDR_FIN);
	if (act == BLITZ_SEQ_DROP) {
		const struct blitz_burst *b = 0;

		if (!s->plen)
			b = blitz_burst_of(rc->q.h.flow0);
		/* The ACK of a whole TC burst that held its last request's
		 * ack back, at the point after it (r_n, E) that the cookie
		 * proved: that request's ACK, here (blitz_pipe.h). Any other
		 * pure ACK of a flow with a burst record: TC's to judge. */
		if (b && s->has_ts && (b->flags & BLITZ_BURST_WITHHELD) &&
		    s->seq == b->rcv_end &&
		    s->ack == b->snd_end + !!(b->flags & BLITZ_BURST_FIN))
			return burst_ack(ctx, s, rc, at);
		if (b)
			return pass(BLITZ_CNT_PASS_BURST);
		return drop(s->plen ? BLITZ_CNT_DROP_AFTER_FIN
				    : BLITZ_CNT_DROP_PURE_ACK);
	}
	if (act == BLITZ_SEQ_ANSWER) {
		if (!s->win)
			return pass(BLITZ_CNT_PASS_ZERO_WINDOW);
		verdict = answer(ctx, cfg, s, sc, rc, at, &rec->sent);
	} else {
		verdict = bare_at(ctx, s, rc, at, &rec->sent,
				  act == BLITZ_SEQ_FINACK);
	}
	if (verdict == XDP_TX && !s->has_ts) {
		rec->src = flow_src_of(s);
		blitz_flow_record(rc, rec);
	}
	if (verdict == XDP_TX && s->has_ts && !BLITZ_TSPT_ON_OFF)
		tspt_note_end(pt, rec);
	return verdict;
}

/* Does a kernel socket listen on the segment's port (address)? Asked only
 * on the rare path below; kernel_owns() has ruled out any other socket. */
static __always_inline int kernel_listens(struct xdp_md *ctx,
					  const struct seg *s)
{
	return kernel_sk_state(ctx, s) == BPF_TCP_LISTEN;
}

/* This CPU's count of a counter (per CPU: exact within one frame). */
static __always_inline __u64 cnt_now(__u32 id)
{
	struct blitz_counters *c = cnt_block();

	return c && id < BLITZ_CNT_MAX ? c->v[id] : 0;
}

/*
 * A segment without timestamps that is not the handshake-completing one
 * (the ISN cookie failed): ours only at a point of its flow entry
 * (blitz_seq.h; docs/tcp-security.md, "Clients without timestamps").
 * No entry (evicted, over the source cap, another CPU, or a spoof):
 * nothing proves it, dropped (drop_no_ts), never reset, never passed.
 * At a point but not answerable here (a body, another method, a batch
 * too big): a kernel listener takes the connection from it (XDP_PASS;
 * the TC hand-off checks the same entry, at its frontier); with none,
 * nobody ever will, and the segment is proved: a RST (seq = its ack,
 * RFC 9293), what the kernel sends for a closed port. A request cut in
 * segments is passed as before: the client's retransmission may bring
 * it whole (Linux collapses retransmitted segments), and XDP answers it.
 */
static __always_inline int no_ts_later(struct xdp_md *ctx,
				       const struct blitz_config *cfg,
				       const struct seg *s,
				       struct blitz_scratch *sc,
				       struct blitz_ring_cache *rc)
{
	struct reply r = {};
	__u64 partial;
	int v;

	if (!blitz_flow_locate(rc, &sc->rec)) {
		if (blitz_burst_of(rc->q.h.flow0))
			return pass(BLITZ_CNT_PASS_BURST);
		return drop(BLITZ_CNT_DROP_NO_TS);
	}
	partial = cnt_now(BLITZ_CNT_PASS_PARTIAL);
	v = reply_at(ctx, cfg, s, sc, rc, 0);
	if (v != XDP_PASS || cnt_now(BLITZ_CNT_PASS_PARTIAL) != partial ||
	    kernel_listens(ctx, s))
		return v;
	r.seq = s->ack;
	r.flags = TCPHDR_RST;
	r.wscale = BLITZ_CK2_WS_NONE;
	return send_bare(ctx, s, &r, BLITZ_CNT_RST_NO_LISTENER);
}

static __always_inline int handle_tcp(struct xdp_md *ctx,
				      const struct blitz_config *cfg,
				      const struct seg *s,
				      struct blitz_scratch *sc)
{
	struct blitz_ring_cache *rc;
	struct blitz_ck2_q *q;
	struct reply r = {};
	int v;

	/* Before anything else, SYNs included: a 4-tuple with a kernel
	 * socket (handed over, the kernel's own, TIME_WAIT, a request sock)
	 * is the kernel's, whatever its segments look like to us. */
	if (kernel_owns(ctx, s))
		return pass(BLITZ_CNT_PASS_KERNEL_OWNS);
		/* Nothing below acts on a segment whose checksum does not
		 * verify (blitz_seg.h): dropped, as the kernel would drop it.
		 * make cost's ablation build (BLITZ_COST_NO_VERIFY) skips the
		 * sum. */
#ifndef BLITZ_COST_NO_VERIFY
	v = blitz_seg_csum(ctx, BLITZ_PKT_XDP, cfg, s);
	if (v)
		return v == BLITZ_CNT_BAD_CSUM ? drop(v) : pass(v);
#endif
	rc = ring_query(cfg, s, s->has_ts);
	if (!rc)
		return XDP_PASS;
	q = &rc->q;
	r.wscale = BLITZ_CK2_WS_NONE;
	if (s->flags & TCPHDR_SYN) {
		__u8 ws = s->syn_wscale, sack = s->syn_sack;

		/* SYN-ACK, SYN+FIN, SYN+RST: the kernel knows what to do. */
		if (s->flags & (TCPHDR_ACK | TCPHDR_RST | TCPHDR_FIN))
			return pass(BLITZ_CNT_PASS_NOT_TRIVIAL);
		/* The client's options travel in the cookie (cookie-v2.md),
		 * less those the kernel's sysctls leave out (blitz_tcpopt.h).
		 */
		blitz_tcpopt_syn_offer(cfg->flags, &ws, &sack);
		q->opts = blitz_ck2_opts(s->syn_mss, ws, sack, s->v6);
		if (blitz_ck2_q_synack(&rc->r, q))
			return XDP_PASS; /* no key: cannot happen */
		r.seq = q->isn;
		r.tsval = q->tsval;
		r.ack = s->seq + 1;
		r.flags = TCPHDR_SYN | TCPHDR_ACK;
		r.mss = (__u16)our_mss(cfg, s);
		r.win = BLITZ_WINDOW; /* never scaled on a SYN */
		r.ts = s->has_ts;
		r.sack = (__u8)blitz_ck2_opts_sack(q->opts);
		if (blitz_ck2_opts_wscale_ok(q->opts))
			r.wscale = BLITZ_WSCALE;
		return send_bare(ctx, s, &r, BLITZ_CNT_SYNACK);
	}
	if (s->flags & TCPHDR_RST)
		return drop(BLITZ_CNT_DROP_RST);
	if (!(s->flags & TCPHDR_ACK))
		return drop(BLITZ_CNT_DROP_BAD_COOKIE);
	/* With timestamps the TSecr carries the cookie (and the FIN mark:
	 * our side is closed); without, only the segment that completes the
	 * handshake can be checked (its ack is our ISN for its seq - 1, plus
	 * one): docs/cookie-v2.md. What the cookie does not prove, a flow
	 * entry may (blitz_seq.h); else the client's retransmission will. */
	q->mark = BLITZ_SEQ_FIN_MARK;
	v = blitz_ck2_q_check(&rc->r, q);
	if (v == BLITZ_CK2_EXPIRED)
		return send_rst(ctx, s);
	if (v == BLITZ_CK2_OK) {
		struct blitz_tspt *pt = 0;

		/* A pipelined segment whose MAC matched by chance: our last
		 * reply's point says it cannot echo a TSval minted here. */
		if (s->has_ts && !BLITZ_TSPT_ON_OFF && !tspt_check(rc, &pt))
			return drop(BLITZ_CNT_DROP_OFF_POINT);
		blitz_seq_at_cookie(&sc->rec.at, s->seq, s->ack, q->h.fin);
		/* Without timestamps, a connection whose reply no flow entry
		 * could remember (its source at its cap) would lose every
		 * later request: a kernel listener takes it from this one. */
		if (!s->has_ts && s->plen &&
		    !blitz_flow_room(rc, flow_src_of(s)) &&
		    kernel_listens(ctx, s))
			return pass(BLITZ_CNT_PASS_FLOW_FULL);
		return reply_at(ctx, cfg, s, sc, rc, pt);
	}
	if (s->has_ts) {
		/* A duplicate ACK or a retransmission after a TC burst (its
		 * segments ack short of the burst's end): TC checks it against
		 * the burst's record and re-sends what the client lacks. */
		if (blitz_burst_of(q->h.flow0))
			return pass(BLITZ_CNT_PASS_BURST);
		return drop(BLITZ_CNT_DROP_BAD_COOKIE);
	}
	return no_ts_later(ctx, cfg, s, sc, rc);
}

#endif /* BLITZ_XDP_TCP_H */
