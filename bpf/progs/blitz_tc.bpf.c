// SPDX-License-Identifier: GPL-2.0
/*
 * blitz_tc.bpf.c - the TC ingress half of the xdp engine: hands a
 * connection the XDP program answered statelessly over to the kernel's
 * listening socket, on the same connection (docs/architecture.md, "Stateless
 * TCP").
 *
 * What reaches it: every frame the XDP program passed. For a non-SYN TCP
 * segment to the service address:port it looks the 4-tuple up:
 *   - a kernel socket owns it (established, time-wait, request sock):
 *     TC_ACT_OK, the kernel carries on as usual;
 *   - only the listener: the segment is validated with the XDP program's
 *     own cookie functions (blitz_ring.h, cookie v2: the TSecr cookie, or
 *     without timestamps the handshake-completing segment, or a later one
 *     at the frontier of the flow entry the XDP program keeps for it,
 *     blitz_flow.h: the loader shares that map); a bad
 *     one is dropped and counted, a good one gets a request sock from
 *     bpf_sk_assign_tcp_reqsk() with the MSS, window scale and SACK the
 *     cookie carries, and the kernel builds the connection
 *     from this segment's numbers (ISNs = seq - 1 and ack - 1); the
 *     segments that follow it in the same batch pass untouched (the
 *     "recent" map), as TCP will find the connection by then;
 *   - no socket at all (no kernel listener on the port): a validated
 *     segment gets TC_ACT_OK, and the kernel answers with RST as for any
 *     closed port; any other is dropped and counted (a RST to it would
 *     make blitz a RST reflector).
 * Not for the service: another port, a destination that is not ours by
 * blitz_addr.h (forwarded traffic, another host's MAC), SYN/RST.
 * Must never touch a frame that is not for the service, never answer or
 * rewrite anything, and never hand over a segment it could not validate.
 * Known limit (stateless): the kernel takes the first segment it is given
 * as the first unanswered byte; if a later segment of a request overtakes
 * the first one (reordering, loss), the connection starts mid-request and
 * the kernel path answers 400. Likewise a client that pipelines a request
 * before XDP's previous reply was acknowledged hands over an ack that does
 * not cover that reply.
 * The "config" and "counters" maps are the XDP program's (the loader
 * reuses their fds), so one set of counters tells the whole story.
 */
/* First: vmlinux.h (with its typedef named config out of the way) and
 * the XDP program's config and counters maps (the loader reuses those). */
#include "blitz_maps.h"
#include <bpf/bpf_endian.h>

#include "blitz_addr.h"
#include "blitz_date.h"
#include "blitz_flow.h"
#include "blitz_http_dfa.h"
#include "blitz_proto.h"
#include "blitz_ring.h"
#include "blitz_seg.h"
#include "blitz_seq.h"

#include "blitz_pipe.h"

/* linux/pkt_cls.h's verdicts; vmlinux.h has no #defines. */
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2

/* Ethernet + the largest IPv4 header + the largest TCP header. */
#define HDR_MAX (ETH_HLEN + BLITZ_IP4_HLEN_MAX + BLITZ_TCP_HLEN_MAX)

/*
 * The connections this program handed over in the last moment, and the
 * seq their next segment will carry. A request in several segments often
 * reaches TC in one batch: every segment passes TC before the first one
 * reaches TCP and makes the connection, so the later ones still see only
 * the listener. Given a request sock of their own they would each try to
 * make the connection again and be dropped (a 200 ms retransmission);
 * passed untouched, TCP finds the connection the first one just made.
 */
struct recent_key {
	__u32 saddr[4], daddr[4];
	__u16 sport, dport;
};

struct recent_val {
	__u64 at_ns;
	__u32 next_seq;
	__u32 pad;
};

#define RECENT_NS 1000000000ULL /* a batch takes microseconds */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct recent_key);
	__type(value, struct recent_val);
} recent SEC(".maps");

extern int bpf_sk_assign_tcp_reqsk(struct __sk_buff *skb, struct sock *sk,
				   struct bpf_tcp_req_attrs *attrs,
				   int attrs__sz) __ksym;

/* Parse with the XDP program's parser (blitz_seg.h), pulling the headers
 * into the linear part when the stack left them outside it: only for
 * frames that may be ours, so host traffic is never made writable.
 * 1: a service segment (s filled but for its options), 0: not ours. */
static __always_inline int parse_pulled(struct __sk_buff *skb,
					const struct blitz_config *cfg,
					struct seg *s)
{
	int r = blitz_seg_parse(skb, BLITZ_PKT_SKB, cfg, s, NULL, 0);
	struct blitz_counters *cnt;

	if (r != BLITZ_SEG_NEED_PULL)
		return !r;
	/* Short of bytes in the linear part, but not in the packet? */
	if (skb->len <= skb->data_end - skb->data ||
	    bpf_skb_pull_data(skb, skb->len < HDR_MAX ? skb->len : HDR_MAX))
		return 0;
	cnt = s->cnt;
	__builtin_memset(s, 0, sizeof(*s));
	s->cnt = cnt;
	return !blitz_seg_parse(skb, BLITZ_PKT_SKB, cfg, s, NULL, 0);
}

/* The 4-tuple as bpf_skc_lookup_tcp() wants it (remote = source). */
static __always_inline __u32 fill_tuple(const struct seg *s,
					struct bpf_sock_tuple *t)
{
	if (!s->v6) {
		t->ipv4.saddr = s->saddr[0];
		t->ipv4.daddr = s->daddr[0];
		t->ipv4.sport = s->sport;
		t->ipv4.dport = s->dport;
		return sizeof(t->ipv4);
	}
	__builtin_memcpy(t->ipv6.saddr, s->saddr, 16);
	__builtin_memcpy(t->ipv6.daddr, s->daddr, 16);
	t->ipv6.sport = s->sport;
	t->ipv6.dport = s->dport;
	return sizeof(t->ipv6);
}

/*
 * The XDP program's rule, through the same functions (blitz_ring.h,
 * blitz_cookie2.h): with timestamps the TSecr must be the TSval we would
 * have sent on a segment ending at its ack and acknowledging its seq;
 * without them the segment must be the one that completes the handshake
 * (ack - 1 is our ISN for its seq - 1). Returns 0 when it is ours (the
 * connection's options are then in rc->q.h), else the counter to drop it
 * with (an expired cookie is dropped here: XDP answers those with RST).
 * Without timestamps a later segment at its flow entry's frontier is ours
 * too (blitz_flow_frontier): *by_flow says so.
 */
static __always_inline __u32 cookie_check(const struct blitz_config *cfg,
					  const struct seg *s,
					  struct blitz_ring_cache *rc,
					  int *by_flow)
{
	struct blitz_ck2_q *q = &rc->q;

	if (!s->v6)
		blitz_ck2_tuple_v4(&q->t, s->saddr[0], s->daddr[0], s->sport,
				   s->dport);
	else
		blitz_ck2_tuple_v6(&q->t, s->saddr, s->daddr, s->sport,
				   s->dport);
	q->seq = s->seq;
	q->ack = s->ack;
	q->tsecr = s->tsecr;
	q->has_ts = s->has_ts;
	if (blitz_ck2_q_check(&rc->r, q) == BLITZ_CK2_OK)
		return 0;
	if (s->has_ts)
		return BLITZ_CNT_DROP_BAD_COOKIE;
	*by_flow = blitz_flow_frontier(rc);
	return *by_flow ? 0 : BLITZ_CNT_DROP_NO_TS;
}

static __always_inline void recent_key_of(const struct seg *s,
					  struct recent_key *k)
{
	__builtin_memcpy(k->saddr, s->saddr, sizeof(k->saddr));
	__builtin_memcpy(k->daddr, s->daddr, sizeof(k->daddr));
	k->sport = s->sport;
	k->dport = s->dport;
}

/* Is this the segment right after one just handed over (same batch)?
 * Then TCP will find the connection that one made: let it through. */
static __always_inline bool follows_handoff(const struct seg *s)
{
	struct recent_key k = {};
	struct recent_val *v;

	recent_key_of(s, &k);
	v = bpf_map_lookup_elem(&recent, &k);
	if (!v || bpf_ktime_get_ns() - v->at_ns > RECENT_NS ||
	    v->next_seq != s->seq)
		return false;
	v->next_seq = s->seq + s->plen;
	return true;
}

static __always_inline void remember_handoff(const struct seg *s)
{
	struct recent_key k = {};
	struct recent_val v = {};

	recent_key_of(s, &k);
	v.at_ns = bpf_ktime_get_ns();
	v.next_seq = s->seq + s->plen;
	bpf_map_update_elem(&recent, &k, &v, BPF_ANY);
}

/* net.ipv4.tcp_sack of the listener's network namespace, now (the
 * loader's config.flags has it as it was at load or reload). */
static __always_inline int kernel_sack(struct sock *listener)
{
	struct net *net = listener->__sk_common.skc_net.net;

	return !net || net->ipv4.sysctl_tcp_sack;
}

/* Give the segment a request sock on the listener; the kernel finishes
 * the handshake from it. Returns the TC verdict. */
static __always_inline int hand_off(struct __sk_buff *skb, struct seg *s,
				    struct sock *listener, __u32 opts,
				    int by_flow)
{
	struct bpf_tcp_req_attrs attrs = {};

	/* What the client's SYN said, from the cookie (cookie-v2.md): its
	 * MSS class (never below the kfunc's floors, 536 and 1220), window
	 * scaling (its shift; ours is the one XDP offered) and SACK. */
	attrs.mss = (__u16)blitz_ck2_opts_mss(opts, s->v6);
	if (blitz_ck2_opts_wscale_ok(opts)) {
		attrs.wscale_ok = 1;
		attrs.snd_wscale = (__u8)blitz_ck2_opts_wscale(opts);
		attrs.rcv_wscale = BLITZ_WSCALE; /* XDP's, in its SYN-ACK */
	}
	/* SACK-permitted from a SYN-ACK sent while net.ipv4.tcp_sack was on
	 * (before a change the loader has not read yet): handed off without
	 * it, which the kfunc takes. The client may still send SACK blocks;
	 * the kernel ignores them, and a receiver need not send any (RFC
	 * 2018 section 4: "MAY"). Window scaling cannot be taken back so:
	 * the kfunc refuses it (handoff_fail), as Linux's own syncookies
	 * refuse such a cookie. */
	attrs.sack_ok =
		(__u8)blitz_ck2_opts_sack(opts) && kernel_sack(listener);
	if (s->has_ts) {
		/* The kernel continues TSval from our TSecr (its ts_off). */
		attrs.tstamp_ok = 1;
		attrs.rcv_tsval = bpf_ntohl(s->tsval_be);
		attrs.rcv_tsecr = s->tsecr;
	}
	if (bpf_sk_assign_tcp_reqsk(skb, listener, &attrs, sizeof(attrs))) {
		cnt_add(BLITZ_CNT_HANDOFF_FAIL, 1);
		/* The listener would answer the bare ACK with RST; dropping
		 * lets the peer's retransmission try again. */
		return TC_ACT_SHOT;
	}
	cnt_add(BLITZ_CNT_HANDOFF, 1);
	if (by_flow)
		cnt_add(BLITZ_CNT_HANDOFF_FROM_FLOW, 1);
	remember_handoff(s);
	return TC_ACT_OK;
}

/*
 * A verified segment of complete requests whose replies XDP could not put
 * in one frame: answered here as a burst of segments (blitz_pipe.h).
 * Returns PIPE_NOT_MINE, PIPE_ANSWERED or PIPE_NO_WINDOW. The segments are
 * sent from here, not from a function of blitz_pipe.h: this frame is the
 * only one the stack has room for next to the cookie calls.
 */
/* What the reply segments need of the segment s. 0, or -1. */
static __always_inline int pipe_in_of(struct __sk_buff *skb,
				      const struct seg *s, struct pipe_in *in)
{
	__u32 l4 = s->v6 ? BLITZ_L4_V6 : BLITZ_L4_V4;

	/* IP options and extension headers are the kernel's. */
	if (s->l4off != l4)
		return -1;
	__builtin_memcpy(in->saddr, s->saddr, sizeof(in->saddr));
	__builtin_memcpy(in->daddr, s->daddr, sizeof(in->daddr));
	in->seq = s->seq;
	in->ack = s->ack;
	in->plen = s->plen;
	in->payoff = l4 + s->thlen;
	in->tsval_be = s->tsval_be;
	in->tsecr = s->tsecr;
	in->sport = s->sport;
	in->dport = s->dport;
	in->win = s->win;
	in->v6 = s->v6;
	in->has_ts = s->has_ts;
	in->fin = s->flags & TCPHDR_FIN;
	in->gso = skb->gso_segs > 1;
	if (bpf_skb_load_bytes(skb, BLITZ_OFF(struct ethhdr, h_source),
			       in->mac_src, ETH_ALEN) ||
	    bpf_skb_load_bytes(skb, BLITZ_OFF(struct ethhdr, h_dest),
			       in->mac_dst, ETH_ALEN))
		return -1;
	return 0;
}

static __always_inline int pipe_try(struct __sk_buff *skb,
				    const struct blitz_config *cfg,
				    const struct seg *s,
				    struct blitz_ring_cache *rc)
{
	__u32 key = 0, tsval = 0, k;
	struct pipe_scratch *sc = bpf_map_lookup_elem(&pipe_scratch, &key);
	struct blitz_date *date;
	struct pipe_in *in;
	int r;

	if (!sc || !rc || !s->plen)
		return PIPE_NOT_MINE;
	in = &sc->in;
	if (pipe_in_of(skb, s, in))
		return PIPE_NOT_MINE;
	if (blitz_pipe_load(skb) != PIPE_READY)
		return PIPE_NOT_MINE;
	bpf_loop((sc->parsed + 7) / 8, pipe_dfa_word, NULL, 0);
	r = blitz_pipe_parsed();
	if (r == PIPE_READY)
		r = blitz_pipe_plan(rc->q.h.opts);
	if (r != PIPE_READY)
		return r;
	/* here: date_fill() needs this frame's room */
	date = date_now(cfg);
	if (!date)
		return PIPE_NOT_MINE;
	__builtin_memcpy(sc->date, date->bytes, sizeof(sc->date));
	if (blitz_pipe_fill() != PIPE_READY)
		return PIPE_NOT_MINE;
	/* Every segment carries the TSval of the burst's end and of the end
	 * of the requests it answers (x, even when the ack held the last one
	 * back): whichever segment the client stores as ts_recent (GRO may
	 * merge them too: their options are equal), its next segment, sent
	 * once it has the whole burst, is at that point and verifies
	 * (docs/tcp-security.md, "Pipelined batches"). */
	if (in->has_ts) {
		rc->q.a = sc->seq0 + sc->total + sc->fin;
		/* with our FIN in it: the FIN mark (bpf/blitz_seq.h) */
		rc->q.x = blitz_seq_mint_x(sc->ack_end, sc->fin);
		tsval = blitz_ck2_q_tsval(&rc->r, &rc->q);
	}
	sc->tsval = tsval;
	if (blitz_pipe_headers(
		    sc->ack,
		    BLITZ_WINDOW_FIELD(blitz_ck2_opts_wscale_ok(rc->q.h.opts)),
		    tsval))
		return PIPE_NOT_MINE;
	for (k = 0; k < PIPE_BURST_SEGS; k++) {
		if (k >= sc->nseg)
			break;
		if (blitz_pipe_emit(skb, k * sc->seglen)) {
			cnt_add(BLITZ_CNT_TC_FAIL, 1);
			return PIPE_ANSWERED; /* what went out stays out */
		}
		cnt_add(BLITZ_CNT_TC_SEGMENTS, 1);
	}
	/* Several segments: what the client may lack is re-sent from the
	 * record (blitz_pipe_burst_on). */
	if (sc->nseg > 1)
		blitz_pipe_record(rc->q.h.flow0, rc->q.h.opts, s->tsecr);
	cnt_add(BLITZ_CNT_TX_BYTES, sc->nseg * sc->hlen + sc->total);
	cnt_add(BLITZ_CNT_REQUESTS, sc->nans);
	cnt_add(BLITZ_CNT_TC_REQUESTS, sc->nans);
	if (sc->kinds[(sc->nans - 1) & (PIPE_MAX_REQS - 1)] >=
	    BLITZ_RESP_OK_KINDS)
		cnt_add(BLITZ_CNT_HTTP_ERRORS, 1);
	if (!sc->closing && (sc->nans < sc->nreq || sc->cut))
		cnt_add(BLITZ_CNT_TC_PARTIAL, 1);
	if (in->gso)
		cnt_add(BLITZ_CNT_TC_GSO, 1);
	return PIPE_ANSWERED;
}

/*
 * A segment of a flow whose last TC burst has a record: a duplicate ACK
 * (a segment of the burst was lost), the client's retransmission of what
 * the burst left unacked, or its ACK of the whole burst. Sends what the
 * record says it needs (blitz_pipe_burst_on). PIPE_BURST_NONE when the
 * record does not know the segment.
 */
static __always_inline int burst_try(struct __sk_buff *skb, const struct seg *s,
				     struct blitz_ring_cache *rc)
{
	__u32 key = 0;
	struct pipe_scratch *sc = bpf_map_lookup_elem(&pipe_scratch, &key);
	int r;

	if (!sc || !rc || pipe_in_of(skb, s, &sc->in))
		return PIPE_BURST_NONE;
	r = blitz_pipe_burst_on(rc->q.h.flow0);
	if (r == PIPE_BURST_RESEND) {
		sc->total = 0;
		sc->err = 0;
		bpf_loop(sc->nans, pipe_fill_one, NULL, 0);
		if (blitz_pipe_refilled())
			r = PIPE_BURST_SEEN;
	}
	if (r == PIPE_BURST_SEEN)
		cnt_add(BLITZ_CNT_TC_BURST_SEEN, 1);
	if (r != PIPE_BURST_ACK && r != PIPE_BURST_RESEND)
		return r;
	if (blitz_pipe_headers(sc->ack, sc->win, sc->tsval) ||
	    blitz_pipe_emit(skb, r == PIPE_BURST_RESEND ? sc->resend_off : 0)) {
		cnt_add(BLITZ_CNT_TC_FAIL, 1);
		return r;
	}
	cnt_add(r == PIPE_BURST_RESEND ? BLITZ_CNT_RETRANSMITS
				       : BLITZ_CNT_TC_WITHHELD_ACK,
		1);
	return r;
}

SEC("tc")
int blitz_handoff(struct __sk_buff *skb)
{
	struct bpf_sock_tuple tuple = {};
	struct blitz_config *cfg;
	struct bpf_sock *skc;
	struct tcp_sock *tp;
	struct blitz_ring_cache *rc;
	struct pipe_scratch *psc;
	struct seg s = {};
	__u32 key = 0, tlen, why;
	int verdict, by_flow = 0;

	s.cnt = cnt_block();
	cfg = bpf_map_lookup_elem(&config, &key);
	/* Only the xdp engine answers with cookies; the afxdp engine's
	 * connections live in userspace, not in the kernel. */
	if (!s.cnt || !cfg || cfg->mode != BLITZ_MODE_XDP || !cfg->port_be ||
	    parse_pulled(skb, cfg, &s) != 1)
		return TC_ACT_OK;
	/* SYNs, RSTs and segments without ACK are the kernel's as usual:
	 * XDP answers SYNs itself, so a SYN here has a reason to be here. */
	if ((s.flags & (TCPHDR_SYN | TCPHDR_RST)) || !(s.flags & TCPHDR_ACK))
		return TC_ACT_OK;

	tlen = fill_tuple(&s, &tuple);
	skc = bpf_skc_lookup_tcp(skb, &tuple, tlen, BPF_F_CURRENT_NETNS, 0);
	if (skc && skc->state != BPF_TCP_LISTEN) {
		/* Already the kernel's: established, closing, request sock. */
		bpf_sk_release(skc);
		return TC_ACT_OK;
	}
	tp = skc ? bpf_skc_to_tcp_sock(skc) : NULL;
	if (skc && !tp) {
		bpf_sk_release(skc);
		return TC_ACT_OK;
	}

	/* The options only now: most segments here are the kernel's. */
	psc = bpf_map_lookup_elem(&pipe_scratch, &key);
	if (!psc ||
	    blitz_seg_opts(skb, BLITZ_PKT_SKB, &s, psc->optbuf, 0, s.l4off)) {
		if (skc)
			bpf_sk_release(skc);
		return TC_ACT_OK;
	}
	/* Never handed off or answered with a checksum that does not
	 * verify (blitz_seg.h): dropped, as the kernel would drop it. */
	why = blitz_seg_csum(skb, BLITZ_PKT_SKB, cfg, &s);
	if (why) {
		if (skc)
			bpf_sk_release(skc);
		if (why != BLITZ_CNT_BAD_CSUM)
			return TC_ACT_OK;
		cnt_add(why, 1);
		return TC_ACT_SHOT;
	}
	rc = blitz_ring_now(cfg);
	why = rc ? cookie_check(cfg, &s, rc, &by_flow)
		 : BLITZ_CNT_DROP_BAD_COOKIE;
	if (why) {
		/* Not proved by the cookie: a segment after a TC burst that
		 * its record knows, else not ours: dropped, listener or not
		 * (never reset). */
		if (!rc || burst_try(skb, &s, rc) == PIPE_BURST_NONE)
			cnt_add(why, 1);
		verdict = TC_ACT_SHOT;
	} else if (!s.plen && !(s.flags & TCPHDR_FIN)) {
		/* A pure ACK (XDP passes one only for a flow with a burst
		 * record): the ACK of a whole burst that held its last request
		 * back gets that request's ACK; none is ever handed off. */
		if (burst_try(skb, &s, rc) == PIPE_BURST_NONE)
			cnt_add(BLITZ_CNT_DROP_PURE_ACK, 1);
		verdict = TC_ACT_SHOT;
	} else if (skc && follows_handoff(&s)) {
		verdict = TC_ACT_OK;
	} else if (by_flow || (!s.has_ts && skc)) {
		/* Without timestamps no TC burst where a listener can take
		 * the connection: a burst leaves no flow entry, so nothing
		 * would prove the segments after it. Proved by the entry:
		 * the kernel's, or its RST when nobody listens. */
		verdict = skc ? hand_off(skb, &s, (struct sock *)tp,
					 rc->q.h.opts, by_flow)
			      : TC_ACT_OK;
	} else {
		/* The fast path first: a pipelined batch of trivial requests
		 * is answered here, listener or not. */
		int p = pipe_try(skb, cfg, &s, rc);

		if (p == PIPE_NO_WINDOW)
			cnt_add(BLITZ_CNT_TC_NO_WINDOW, 1);
		if (p == PIPE_ANSWERED)
			verdict = TC_ACT_SHOT;
		else if (skc)
			verdict = hand_off(skb, &s, (struct sock *)tp,
					   rc ? rc->q.h.opts : 0, 0);
		/* No listener: a batch that waits for the window is dropped
		 * (the client retransmits it), the kernel resets the rest. */
		else
			verdict = p == PIPE_NO_WINDOW ? TC_ACT_SHOT : TC_ACT_OK;
	}
	if (skc)
		bpf_sk_release(skc);
	return verdict;
}

char LICENSE[] SEC("license") = "GPL";
