/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_xdp_answer.h - the XDP program's replies at a proved point (the
 * cookie or a flow entry: blitz_seq.h): the responses to a segment's
 * requests with this second's Date, the FIN-ACK or ACK without payload,
 * the RST to an expired cookie, and the ACK a TC burst held back.
 *
 * Owns: the rendered_resp map (each response kind with this second's Date
 * and its sum), what a reply acknowledges and where it ends (the flow
 * entry's sent record, the TSval minted for it), our window field. Must
 * never send a segment above the client's MSS class (nor ours, nor the
 * path MTU blitz_pmtu.h knows), or more than the client's window.
 */
#ifndef BLITZ_XDP_ANSWER_H
#define BLITZ_XDP_ANSWER_H

#include "blitz_xdp_reply.h"
#include "blitz_xdp_req.h"

/*
 * Each response kind as it goes out this second, per CPU: the template
 * (responses) with this second's Date in it, and the sum of all its
 * bytes. A reply then costs one store per response and no sum: the copy
 * is rebuilt (rendered()) the first time a kind is sent in a new second
 * (on this CPU) or with a template meta (cfg->resp[kind]: length, Date
 * offset, sum, generation) other than the one it was built from. blitz
 * reload brings new maps, this one empty; the loader and the tests write
 * a template together with its meta (http_responses_meta() gives every
 * call a new generation), never under a running reply.
 */
struct blitz_rendered {
	__u64 sec;		     /* the Date second in bytes; 0: none */
	struct blitz_resp_meta meta; /* the template meta it was built from */
	__u32 sum; /* native ones' complement sum of bytes, even offset */
	__u8 bytes[BLITZ_RESP_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BLITZ_RESP_KINDS);
	__type(key, __u32);
	__type(value, struct blitz_rendered);
} rendered_resp SEC(".maps");

/* Build e from template t, meta m and the Date d (a global function:
 * verified once, run once a second per kind and CPU). */
__noinline int blitz_render(struct blitz_rendered *e,
			    const struct blitz_resp *t,
			    const struct blitz_date *d,
			    const struct blitz_resp_meta *m)
{
	__u32 len, doff, i;

	if (!e || !t || !d || !m)
		return -1;
	len = m->len;
	doff = m->date_off;
	if (len < 1 || len > BLITZ_RESP_MAX || doff + BLITZ_DATE_LEN > len)
		return -1;
	for (i = 0; i < BLITZ_RESP_MAX / 8; i++) {
		if (i * 8 >= len)
			break;
		*(__u64 *)&e->bytes[i * 8] = *(const __u64 *)&t->bytes[i * 8];
	}
	for (i = 0; i < BLITZ_DATE_LEN; i++)
		e->bytes[opaque_mask(doff + i, BLITZ_RESP_MAX - 1)] =
			d->bytes[i];
	/* The Date's sum is from an even offset: swapped at an odd one. */
	e->sum = blitz_fold((__u32)m->csum_nodate +
			    (doff & 1 ? blitz_swab16(d->sum) : d->sum));
	e->meta = *m;
	e->sec = d->sec;
	return 0;
}

/* The copy of response kind to send now, or NULL (cannot happen). */
static __always_inline struct blitz_rendered *
rendered(__u32 kind, const struct blitz_resp_meta *m,
	 const struct blitz_date *d)
{
	struct blitz_rendered *e = bpf_map_lookup_elem(&rendered_resp, &kind);
	struct blitz_resp *t;
	__u64 a, b;

	if (!e)
		return 0;
	__builtin_memcpy(&a, &e->meta, sizeof(a));
	__builtin_memcpy(&b, m, sizeof(b));
	if (e->sec == d->sec && a == b)
		return e;
	t = bpf_map_lookup_elem(&responses, &kind);
	if (!t || blitz_render(e, t, d, m))
		return 0;
	return e;
}

/* Our window field on a segment after the SYN-ACK. */
static __always_inline __u16 our_win(__u32 opts)
{
	return BLITZ_WINDOW_FIELD(blitz_ck2_opts_wscale_ok(opts));
}

/*
 * The nresp responses of sc->kinds, each with this second's Date, one
 * after the other from payoff in the (resized) frame; their sum is added
 * to *paysum. 0, or -1 (cannot happen: answer() checked every size).
 */
static __always_inline int
put_responses(struct xdp_md *ctx, const struct blitz_config *cfg,
	      const struct blitz_scratch *sc, const struct blitz_date *date,
	      __u32 nresp, __u32 payoff, __u32 *paysum)
{
	__u32 po = 0, k;

	for (k = 0; k < MAX_PIPELINE; k++) {
		const struct blitz_resp_meta *m;
		__u8 *bytes;
		__u32 kind = sc->kinds[k & (MAX_PIPELINE - 1)], len, sum;

		if (k >= nresp)
			break;
		if (kind >= BLITZ_RESP_KINDS)
			return -1;
		m = &cfg->resp[kind];
		len = m->len;
		if (len < 1 || len > BLITZ_RESP_MAX)
			return -1;
#ifndef BLITZ_COST_NO_RENDER
		{
			struct blitz_rendered *ren = rendered(kind, m, date);

			if (!ren)
				return -1;
			bytes = ren->bytes;
			sum = ren->sum;
		}
#else /* make cost's ablation build: the template, without its Date */
		(void)rendered;
		{
			struct blitz_resp *t =
				bpf_map_lookup_elem(&responses, &kind);

			if (!t)
				return -1;
			bytes = t->bytes;
			sum = m->csum_nodate;
		}
#endif
#ifndef BLITZ_COST_NO_STORE_RESP /* make cost's ablation build */
		if (bpf_xdp_store_bytes(ctx, payoff + po, bytes, len))
			return -1;
#else
		(void)bytes;
#endif
		/* A block at an odd offset adds its sum byte-swapped. */
		*paysum += po & 1 ? blitz_swab16(sum) : sum;
		po += len;
	}
	return 0;
}

/*
 * The responses to the requests of s, at at (blitz_seq.h: at->snd is
 * pos(s->seq), proved by the cookie or a flow entry); what was sent goes
 * to *sent for the flow entry.
 */
static __always_inline int
answer(struct xdp_md *ctx, const struct blitz_config *cfg, const struct seg *s,
       struct blitz_scratch *sc, struct blitz_ring_cache *rc,
       const struct blitz_seq_at *at, struct blitz_seq_sent *sent)
{
	__u32 opts = rc->q.h.opts;
	struct blitz_date *date;
	struct reply r = {};
	__u32 plen = s->plen, nresp = 0, total = 0, limit, win;
	__u32 l4 = s->v6 ? L4_V6 : L4_V4, payoff, k;
	int closing = 0, why;

	if (plen > PAYLOAD_MAX)
		return pass(BLITZ_CNT_PASS_NOT_TRIVIAL);
	why = requests(ctx, sc, l4 + s->thlen, plen, &nresp, &closing);
	if (why)
		return pass(why);
	for (k = 0; k < MAX_PIPELINE; k++) {
		const struct blitz_resp_meta *m;
		__u32 kind = sc->kinds[k & (MAX_PIPELINE - 1)];

		if (k >= nresp)
			break;
		if (kind >= BLITZ_RESP_KINDS)
			return pass(BLITZ_CNT_PASS_NOT_TRIVIAL);
		m = &cfg->resp[kind];
		/* An empty or inconsistent template: config not loaded. */
		if (!m->len || m->len > BLITZ_RESP_MAX ||
		    m->date_off + BLITZ_DATE_LEN > m->len)
			return pass(BLITZ_CNT_PASS_NOT_TRIVIAL);
		total += m->len;
	}
	/* Never a segment above the client's MSS class (nor ours). */
	limit = blitz_ck2_opts_mss(opts, s->v6);
	if (limit > our_mss(cfg, s))
		limit = our_mss(cfg, s);
	limit -= s->has_ts ? TCPOLEN_TSTAMP_ALIGNED : 0;
	limit = blitz_pmtu_limit(s, limit); /* ICMP said less (blitz_pmtu.h) */
	if (total > limit)
		return pass(BLITZ_CNT_PASS_TOO_BIG);
	win = (__u32)s->win << blitz_ck2_opts_wscale(opts);
	if (total > win)
		return pass(BLITZ_CNT_PASS_ZERO_WINDOW);
	date = date_now(cfg);
	if (!date)
		return XDP_PASS;

	r.seq = at->snd;
	r.ack = at->rcv + plen + (s->flags & TCPHDR_FIN ? 1 : 0);
	r.flags = TCPHDR_ACK | TCPHDR_PSH;
	/* A client FIN ends the connection too: close our side with it. */
	if (closing || (s->flags & TCPHDR_FIN))
		r.flags |= TCPHDR_FIN;
	r.paylen = total;
	r.win = our_win(opts);
	r.ts = s->has_ts;
	/* Minted with where this reply ends and what it acknowledges
	 * (FIN-marked when it closes: blitz_seq.h). */
	sent->end_snd = r.seq + total + (r.flags & TCPHDR_FIN ? 1 : 0);
	sent->end_rcv = r.ack;
	sent->closed = (r.flags & TCPHDR_FIN) ? 1 : 0;
	sent->fin_here = sent->closed;
	sent->mid_rcv = at->rcv + plen;
	sent->mid_snd = r.seq + total;
	if (s->has_ts) {
		rc->q.a = sent->end_snd;
		rc->q.x = blitz_seq_mint_x(r.ack, sent->closed);
		r.tsval = blitz_ck2_q_tsval(&rc->r, &rc->q);
	}
	payoff = l4 + reply_thlen(&r);
	if (resize(ctx, payoff + total))
		return pass(BLITZ_CNT_PASS_NO_ROOM);

	if (put_responses(ctx, cfg, sc, date, nresp, payoff, &r.paysum))
		return XDP_ABORTED;
	if (write_headers(ctx, s, &r))
		return XDP_ABORTED;
	cnt_inc(s->cnt, BLITZ_CNT_REQUESTS, nresp);
	if (nresp &&
	    sc->kinds[(nresp - 1) & (MAX_PIPELINE - 1)] >= BLITZ_RESP_OK_KINDS)
		cnt_inc(s->cnt, BLITZ_CNT_HTTP_ERRORS, 1);
	cnt_inc(s->cnt,
		at->by_state ? BLITZ_CNT_ANSWERED_FROM_FLOW
			     : BLITZ_CNT_ANSWERED_STATELESS,
		nresp);
	cnt_inc(s->cnt, BLITZ_CNT_REPLIES, 1);
	cnt_inc(s->cnt, BLITZ_CNT_TX_BYTES, payoff + total);
	return XDP_TX;
}

/* A RST to a segment whose cookie verified under an older epoch or a
 * retired key: the connection is over (RFC 9293: seq = its ack). */
static __always_inline int send_rst(struct xdp_md *ctx, const struct seg *s)
{
	struct reply r = {};

	r.seq = s->ack;
	r.flags = TCPHDR_RST;
	r.wscale = BLITZ_CK2_WS_NONE;
	return send_bare(ctx, s, &r, BLITZ_CNT_RST_EXPIRED);
}

/* A reply without payload at at: FIN|ACK to a bare FIN, or after our FIN an
 * ACK of the client's FIN or (discarded) data. */
static __always_inline int bare_at(struct xdp_md *ctx, const struct seg *s,
				   struct blitz_ring_cache *rc,
				   const struct blitz_seq_at *at,
				   struct blitz_seq_sent *sent, int fin)
{
	struct reply r = {};

	r.seq = at->snd;
	r.ack = at->rcv + s->plen + (s->flags & TCPHDR_FIN ? 1 : 0);
	r.flags = fin ? TCPHDR_FIN | TCPHDR_ACK : TCPHDR_ACK;
	r.win = our_win(rc->q.h.opts);
	r.wscale = BLITZ_CK2_WS_NONE;
	r.ts = s->has_ts;
	sent->end_snd = r.seq + (fin ? 1 : 0);
	sent->end_rcv = r.ack;
	sent->closed = 1;
	sent->fin_here = fin;
	sent->mid_rcv = at->rcv;
	sent->mid_snd = at->snd;
	if (s->has_ts) {
		rc->q.a = sent->end_snd;
		rc->q.x = blitz_seq_mint_x(r.ack, 1);
		r.tsval = blitz_ck2_q_tsval(&rc->r, &rc->q);
	}
	return send_bare(ctx, s, &r,
			 fin ? BLITZ_CNT_FINACK : BLITZ_CNT_ACK_AFTER_FIN);
}

/* The ACK, at the point at (its ack, our E), of the request a TC burst
 * held back, minted as any reply there (the burst's own TSval or, an epoch
 * later, above it). */
static __always_inline int burst_ack(struct xdp_md *ctx, const struct seg *s,
				     struct blitz_ring_cache *rc,
				     const struct blitz_seq_at *at)
{
	struct reply r = {};

	r.seq = at->snd;
	r.ack = at->rcv;
	r.flags = TCPHDR_ACK;
	r.win = our_win(rc->q.h.opts);
	r.wscale = BLITZ_CK2_WS_NONE;
	r.ts = 1;
	rc->q.a = r.seq;
	rc->q.x = blitz_seq_mint_x(r.ack, at->closed);
	r.tsval = blitz_ck2_q_tsval(&rc->r, &rc->q);
	return send_bare(ctx, s, &r, BLITZ_CNT_TC_WITHHELD_ACK);
}

#endif /* BLITZ_XDP_ANSWER_H */
