/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_pipe.h - the TC program's multi-segment replies
 * (docs/tcp-security.md "Pipelined batches"): a segment of complete
 * trivial requests whose replies do not fit the one frame XDP can send
 * (XDP passed it: pass_too_big, pass_no_room) is answered here, in full,
 * as several segments within the client's MSS class, its (scaled) window
 * and an IW10 burst: the request skb is rewritten into each reply segment
 * in turn and sent with bpf_clone_redirect() to the device's egress; the
 * request itself is then dropped. A burst of several segments holds the
 * ack of its last request back and leaves a record (blitz_flow.h), from
 * which a segment the client lacks is sent again, byte for byte.
 *
 * Owns: the request parse for TC (the XDP program's DFA, with the end of
 * each request), the reply stream (the prebuilt responses and a Date),
 * the segment headers and checksums, the burst records and what a segment
 * that comes back to one gets.
 * Must never: answer a segment whose cookie the caller did not verify in
 * this program (blitz_pipe_answer() is only called after cookie_check()),
 * write a record for anything but a burst it just sent, ack a byte of a
 * request it does not answer, put different bytes at one sequence range
 * (every segment of a burst, and every one sent again, is cut from one
 * stream rebuilt from the same kinds and Date; the TSval of every segment
 * is the burst's), send a segment above the cookie's MSS class, or more
 * than the client's window or PIPE_BURST_SEGS segments.
 * Include after blitz_maps.h, blitz_ring.h, blitz_date.h, blitz_flow.h and
 * blitz_http_dfa.h.
 */
#ifndef BLITZ_PIPE_H
#define BLITZ_PIPE_H

#include "blitz_csum.h"

#define PIPE_REQ_MAX 8192     /* request bytes parsed per segment */
#define PIPE_MAX_REQS 128     /* requests answered per segment */
#define PIPE_STREAM_MAX 16384 /* reply bytes per burst */
#define PIPE_SEG_MAX 4096     /* payload bytes per segment (<= MSS too) */
#define PIPE_BURST_SEGS 10    /* IW10 (RFC 6928): segments per burst */
#define PIPE_HDR_MAX 128      /* Ethernet + IP + TCP with timestamps */
/* How far before a burst's ack a segment that belongs to it may start:
 * the request the burst before held back, and this batch's
 * (blitz_pipe_burst_on). */
#define PIPE_SEQ_BEFORE (2 * PIPE_REQ_MAX)
/* The reply's header lengths: where TCP starts (no IP options, no
 * extension headers), and all headers with and without timestamps. */
#define PIPE_L4_V4 (ETH_HLEN + BLITZ_IP4_HLEN)
#define PIPE_L4_V6 (ETH_HLEN + BLITZ_IP6_HLEN)
#define PIPE_HLEN_MIN (PIPE_L4_V4 + BLITZ_TCP_HLEN)
#define PIPE_HLEN_MAX (PIPE_L4_V6 + BLITZ_TCP_HLEN + TCPOLEN_TSTAMP_ALIGNED)

/* What the caller parsed out of the verified segment. */
struct pipe_in {
	__u32 saddr[4], daddr[4]; /* network order, IPv4 in [0] */
	__u32 seq, ack;		  /* host order */
	__u32 plen, payoff;	  /* payload bytes and where they start */
	__u32 tsval_be;		  /* the client's TSval, echoed */
	__u32 tsecr;		  /* its TSecr (host order) */
	__u16 sport, dport;	  /* network order */
	__u16 win;		  /* host order, unscaled */
	__u8 v6, has_ts, fin, gso;
	__u8 mac_src[6], mac_dst[6]; /* the client's, ours */
};

struct pipe_scratch {
	/* the TC program's TCP option bytes (blitz_seg_opts()): off its
	 * stack, which the calls below need */
	__u8 optbuf[BLITZ_TCPOPT_BUF];
	struct pipe_in in;
	__u8 req[PIPE_REQ_MAX];
	__u64 slots[BLITZ_DFA_SLOTS];
	__u16 ends[BLITZ_DFA_SLOTS]; /* byte after request k */
	__u8 kinds[PIPE_MAX_REQS];
	__u8 hdr[PIPE_HDR_MAX];
	/* the burst's payload; PIPE_SEG_MAX of slack so that a masked
	 * offset plus a bounded length stays inside */
	__u8 stream[PIPE_STREAM_MAX + PIPE_SEG_MAX];
	struct blitz_dfa_run d;	  /* the request parse */
	__u32 parsed;		  /* request bytes parsed */
	__u32 nreq;		  /* requests to answer (<= PIPE_MAX_REQS) */
	__u32 nslots;		  /* of them complete ones (the DFA's slots) */
	__u32 endkind;		  /* else the last is this error (400, 505) */
	__u32 cut;		  /* stopped at our limits, not at the end */
	__u32 budget;		  /* reply bytes this burst may carry */
	__u32 nans, closing, err; /* requests answered; the last closes */
	__u32 ack;		  /* what the burst acknowledges */
	__u32 hlen, thlen, l4;	  /* the reply's header lengths, TCP offset */
	__u32 total, seglen, nseg, seq0;
	__u32 addrsum; /* native sum of both addresses (pseudo-header) */
	__u32 fin;     /* our last segment carries FIN */
	__u32 zero;
	__u32 withheld;	  /* every request answered, the last one's ack held */
	__u32 ack_end;	  /* what acking every answered request would ack */
	__u32 tsval;	  /* the burst's TSval (host order) */
	__u32 resend_off; /* the stream offset to send again */
	__u32 win;	  /* our window field for a burst record's segments */
	__u8 date[32];	  /* the Date the stream carries */
	struct blitz_burst rec; /* the record being written */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pipe_scratch);
} pipe_scratch SEC(".maps");

/* v & mask, kept: clang drops a mask it proves useless, the verifier
 * needs to see it. */
static __always_inline __u32 pipe_mask(__u32 v, __u32 mask)
{
	asm volatile("" : "+r"(v));
	return v & mask;
}

/* ---- the requests ---- */

/* The bpf_loop callbacks get no context: they look the per-CPU maps up
 * themselves (inlined array lookups), so that their callers' frames stay
 * small (the TC program's own frame is nearly the whole stack). */
static __always_inline struct pipe_scratch *pipe_sc(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&pipe_scratch, &key);
}

static __always_inline struct blitz_config *pipe_cfg(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&config, &key);
}

/* Eight request bytes per call; ends[k] ends up one past the byte that
 * completed request k (written for every byte of it, branch-free). */
static long pipe_dfa_word(__u64 idx, void *arg)
{
	struct pipe_scratch *sc = pipe_sc();
	__u32 off = (__u32)idx * 8, j, n0, len;
	__u64 w;

	if (!sc)
		return 1;
	len = sc->parsed;
	w = *(__u64 *)&sc->req[off & (PIPE_REQ_MAX - 8)];
	for (j = 0; j < 8; j++) {
		if (off + j >= len)
			break;
		n0 = sc->d.n;
		blitz_dfa_step(&sc->d, (__u32)(w >> (8 * j)), sc->slots);
		sc->ends[n0 & (BLITZ_DFA_SLOTS - 1)] = (__u16)(off + j + 1);
	}
	/* Enough requests for one burst: stop (the rest stays unacked). */
	return sc->d.n >= PIPE_MAX_REQS;
}

/* ---- the reply stream ---- */

/* Request k's response, when it still fits the budget. */
static long pipe_pick_one(__u64 k, void *arg)
{
	struct pipe_scratch *sc = pipe_sc();
	const struct blitz_config *cfg = pipe_cfg();
	__u32 kind, len;
	int close;

	if (!sc || !cfg)
		return 1;
	/* After the complete requests, an error the DFA judged before the
	 * end of the request (http.c's 400 or 505), which closes. */
	if (k >= sc->nslots) {
		kind = sc->endkind;
		close = 1;
	} else {
		kind = blitz_dfa_slot_kind(sc->slots[k & (BLITZ_DFA_SLOTS - 1)],
					   &close);
	}
	/* BLITZ_DFA_KIND_PASS: a body to skip, the kernel path frames it */
	if (kind >= BLITZ_RESP_KINDS) {
		sc->err = 1;
		return 1;
	}
	len = cfg->resp[kind].len;
	if (!len || len > BLITZ_RESP_MAX) {
		sc->err = 1; /* no templates loaded */
		return 1;
	}
	if (sc->total + len > sc->budget)
		return 1;
	sc->kinds[k & (PIPE_MAX_REQS - 1)] = (__u8)kind;
	sc->total += len;
	sc->nans = (__u32)k + 1;
	if (close) {
		sc->closing = 1;
		return 1;
	}
	return 0;
}

/* Response k and its Date into the stream at sc->total (the bytes so
 * far). */
static long pipe_fill_one(__u64 k, void *arg)
{
	struct pipe_scratch *sc = pipe_sc();
	const struct blitz_config *cfg = pipe_cfg();
	struct blitz_resp *resp;
	__u32 kind, len, doff, pos;

	/* sc->date: the caller's (this second's, or a burst record's) */
	if (!sc || !cfg)
		return 1;
	pos = sc->total;
	kind = sc->kinds[k & (PIPE_MAX_REQS - 1)];
	if (kind >= BLITZ_RESP_KINDS)
		goto bad;
	/* read before the lookup: the key's stack copy has no bounds */
	len = cfg->resp[kind].len;
	doff = cfg->resp[kind].date_off;
	resp = bpf_map_lookup_elem(&responses, &kind);
	if (!resp)
		goto bad;
	if (len < 1 || len > BLITZ_RESP_MAX || doff + BLITZ_DATE_LEN > len ||
	    pos >= PIPE_STREAM_MAX)
		goto bad;
	if (bpf_probe_read_kernel(
		    &sc->stream[pipe_mask(pos, PIPE_STREAM_MAX - 1)], len,
		    resp->bytes) ||
	    bpf_probe_read_kernel(
		    &sc->stream[pipe_mask(pos + doff, PIPE_STREAM_MAX - 1)],
		    BLITZ_DATE_LEN, sc->date))
		goto bad;
	sc->total = pos + len;
	return 0;
bad:
	sc->err = 1;
	return 1;
}

/* The reply's headers (Ethernet, IP, TCP with its options) into sc->hdr,
 * with the fields that change per segment (lengths, seq, flags, sums)
 * left for pipe_emit(). */
__noinline int blitz_pipe_headers(__u32 ack, __u32 win, __u32 tsval)
{
	__u32 key = 0, i, sum = 0;
	struct pipe_scratch *sc = bpf_map_lookup_elem(&pipe_scratch, &key);
	const struct pipe_in *in;
	struct ethhdr *eth;
	struct tcphdr *th;
	__u64 *z;

	if (!sc)
		return -1;
	in = &sc->in;
	z = (__u64 *)sc->hdr;
	for (i = 0; i < PIPE_HDR_MAX / 8; i++)
		z[i] = 0;
	eth = (struct ethhdr *)sc->hdr;
	__builtin_memcpy(eth->h_dest, in->mac_src, ETH_ALEN);
	__builtin_memcpy(eth->h_source, in->mac_dst, ETH_ALEN);
	if (in->v6) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		eth->h_proto = bpf_htons(ETH_P_IPV6);
		ip6->version = 6;
		ip6->nexthdr = IPPROTO_TCP;
		ip6->hop_limit = BLITZ_IP_TTL;
		__builtin_memcpy(&ip6->saddr, in->daddr, sizeof(ip6->saddr));
		__builtin_memcpy(&ip6->daddr, in->saddr, sizeof(ip6->daddr));
		for (i = 0; i < 4; i++)
			sum += (in->saddr[i] & 0xffff) + (in->saddr[i] >> 16) +
			       (in->daddr[i] & 0xffff) + (in->daddr[i] >> 16);
	} else {
		struct iphdr *ip = (void *)(eth + 1);

		eth->h_proto = bpf_htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = BLITZ_IP4_HLEN / 4;
		ip->frag_off = bpf_htons(BLITZ_IP_DF);
		ip->ttl = BLITZ_IP_TTL;
		ip->protocol = IPPROTO_TCP;
		ip->saddr = in->daddr[0];
		ip->daddr = in->saddr[0];
		sum = (in->saddr[0] & 0xffff) + (in->saddr[0] >> 16) +
		      (in->daddr[0] & 0xffff) + (in->daddr[0] >> 16);
	}
	sc->addrsum = sum;
	sc->l4 = in->v6 ? PIPE_L4_V6 : PIPE_L4_V4;
	sc->thlen = BLITZ_TCP_HLEN + (in->has_ts ? TCPOLEN_TSTAMP_ALIGNED : 0);
	sc->hlen = sc->l4 + sc->thlen;
	th = (struct tcphdr *)(sc->hdr + (in->v6 ? PIPE_L4_V6 : PIPE_L4_V4));
	th->source = in->dport;
	th->dest = in->sport;
	th->ack_seq = bpf_htonl(ack);
	th->doff = sc->thlen / 4;
	th->window = bpf_htons((__u16)win);
	if (in->has_ts) {
		__u32 *opt = (__u32 *)(th + 1);

		opt[0] = bpf_htonl(BLITZ_OPTW_NOP_NOP_TS);
		opt[1] = bpf_htonl(tsval);
		opt[2] = in->tsval_be;
	}
	return 0;
}

/* The native ones' complement sum of stream[off, off + len), len a
 * multiple of 4 (the bytes after the stream's end are zero). */
static __always_inline __s64 pipe_stream_sum(struct pipe_scratch *sc, __u32 off,
					     __u32 len)
{
	__s64 sum = 0;
	__u32 i, n;

	for (i = 0; i < PIPE_SEG_MAX / 512; i++) {
		if (i * 512 >= len)
			break;
		n = len - i * 512;
		if (n > 512)
			n = 512;
		n &= 0x3fc;
		if (n < 4)
			break;
		sum = bpf_csum_diff(
			0, 0,
			(__be32 *)&sc->stream[pipe_mask(off + i * 512,
							PIPE_STREAM_MAX - 1)],
			n, (__wsum)sum);
		if (sum < 0)
			return sum;
	}
	return sum;
}

/*
 * The segment of the burst at stream offset off (sc->seq0 + off): the skb
 * is resized to it, its headers and payload written, and a clone sent out
 * of the device it came in on. With sc->total 0: an ACK alone at sc->seq0.
 * 0 or -1. A global function: the verifier checks it once.
 */
__noinline int blitz_pipe_emit(struct __sk_buff *skb, __u32 off)
{
	__u32 key = 0, len, last, tlen, sum, j, hl, seglen;
	struct pipe_scratch *sc = bpf_map_lookup_elem(&pipe_scratch, &key);
	struct tcphdr *th;
	__u16 *w;
	__s64 ps = 0;
	__u8 flags;

	if (!sc)
		return -1;
	hl = sc->hlen;
	seglen = sc->seglen;
	if (seglen > PIPE_SEG_MAX || seglen < 4 || hl > PIPE_HLEN_MAX ||
	    hl < PIPE_HLEN_MIN || sc->l4 > PIPE_L4_V6)
		return -1;
	if (!sc->total) {
		len = 0;
		flags = TCPHDR_ACK;
	} else {
		if (off >= sc->total || off >= PIPE_STREAM_MAX)
			return -1;
		len = sc->total - off;
		last = len <= seglen;
		if (!last)
			len = seglen;
		if (len > PIPE_SEG_MAX || len < 1)
			return -1;
		flags = TCPHDR_ACK | (last ? TCPHDR_PSH : 0) |
			(last && sc->fin ? TCPHDR_FIN : 0);
	}
	tlen = sc->thlen + len;

	/* The per-segment fields. */
	th = (struct tcphdr *)(sc->hdr + (sc->l4 & 63));
	th->seq = bpf_htonl(sc->seq0 + off);
	((__u8 *)th)[BLITZ_TCP_FLAGS_OFF] = flags;
	th->check = 0;
	if (sc->in.v6) {
		struct ipv6hdr *ip6 = (void *)(sc->hdr + ETH_HLEN);

		ip6->payload_len = bpf_htons((__u16)tlen);
	} else {
		struct iphdr *ip = (void *)(sc->hdr + ETH_HLEN);
		__u16 *iw = (__u16 *)ip;

		ip->tot_len = bpf_htons((__u16)(BLITZ_IP4_HLEN + tlen));
		ip->check = 0;
		sum = 0;
		for (j = 0; j < BLITZ_IP4_HLEN / 2; j++)
			sum += iw[j];
		ip->check = (__u16)~blitz_fold(sum);
	}
	if (len) {
		ps = pipe_stream_sum(sc, off, (len + 3) & ~3U);
		if (ps < 0)
			return -1;
	}
	sum = blitz_fold((__u32)ps) + sc->addrsum + bpf_htons(IPPROTO_TCP) +
	      bpf_htons((__u16)tlen);
	w = (__u16 *)th;
	for (j = 0; j < (BLITZ_TCP_HLEN + TCPOLEN_TSTAMP_ALIGNED) / 2; j++) {
		if (j * 2 >= sc->thlen)
			break;
		sum += w[j];
	}
	th->check = (__u16)~blitz_fold(sum);

	/* PIPE_HLEN_MIN..MAX in a form the verifier keeps */
	hl = pipe_mask(hl - PIPE_HLEN_MIN, 63) + PIPE_HLEN_MIN;
	if (bpf_skb_change_tail(skb, hl + len, 0) ||
	    bpf_skb_store_bytes(skb, 0, sc->hdr, hl, 0))
		return -1;
	if (len) {
		/* 1..PIPE_SEG_MAX in a form the verifier keeps */
		len = pipe_mask(len - 1, PIPE_SEG_MAX - 1) + 1;
		if (bpf_skb_store_bytes(
			    skb, hl,
			    &sc->stream[pipe_mask(off, PIPE_STREAM_MAX - 1)],
			    len, 0))
			return -1;
	}
	if (bpf_clone_redirect(skb, skb->ifindex, 0))
		return -1;
	return 0;
}

/* What the steps below decided. */
#define PIPE_NOT_MINE 0	 /* not complete trivial requests: go on */
#define PIPE_READY 1	 /* the burst is in the scratch: emit it */
#define PIPE_NO_WINDOW 2 /* ours, but not one reply fits the window now */
#define PIPE_ANSWERED 3	 /* sent (in full or in part): drop the request */

/*
 * Step 1: read the requests of sc->in from skb (the caller verified the
 * cookie) for the DFA. Steps are global
 * functions called one after the other: each is verified once, and none
 * nests deeper than one call below the TC program's big frame.
 */
__noinline int blitz_pipe_load(struct __sk_buff *skb)
{
	struct pipe_scratch *sc = pipe_sc();
	__u32 plen;

	if (!sc)
		return PIPE_NOT_MINE;
	plen = sc->in.plen;
	if (!plen)
		return PIPE_NOT_MINE;
	sc->cut = plen > PIPE_REQ_MAX;
	if (sc->cut)
		plen = PIPE_REQ_MAX;
	plen = pipe_mask(plen - 1, PIPE_REQ_MAX - 1) + 1;
	if (bpf_skb_load_bytes(skb, sc->in.payoff, sc->req, plen))
		return PIPE_NOT_MINE;
	__builtin_memset(&sc->d, 0, sizeof(sc->d));
	sc->d.st = S_START;
	sc->parsed = plen;
	return PIPE_READY;
}

/* Step 2 (after the caller ran pipe_dfa_word over the bytes: the
 * callback's frame fits only right below the TC program's): are they
 * ours to answer? */
__noinline int blitz_pipe_parsed(void)
{
	struct pipe_scratch *sc = pipe_sc();
	__u32 plen;

	if (!sc)
		return PIPE_NOT_MINE;
	plen = sc->parsed;
	sc->nslots = sc->d.n < PIPE_MAX_REQS ? sc->d.n : PIPE_MAX_REQS;
	sc->nreq = sc->nslots;
	sc->endkind = 0;
	if (sc->d.n >= PIPE_MAX_REQS &&
	    plen > sc->ends[(sc->nslots - 1) & (BLITZ_DFA_SLOTS - 1)])
		sc->cut = 1;
	/* Every byte a complete request (the DFA ends in S_DONE), or an
	 * error http.c answers before the request's end (then FIN), or the
	 * requests up to our own limits; anything else (garbage, a request
	 * split across segments) is not ours to answer. */
	if (!sc->cut && sc->d.st != S_DONE) {
		sc->endkind = blitz_dfa_end_error(sc->d.st);
		if (sc->endkind) {
			if (sc->nslots >= PIPE_MAX_REQS)
				return PIPE_NOT_MINE;
			sc->nreq = sc->nslots + 1;
		} else if (sc->d.st != DFA_ERR && sc->nslots) {
			/* Complete requests, then the start of the next (a
			 * batch the client's stack cut in segments): the
			 * complete ones, acked up to their end; the client
			 * sends the rest again with what follows. */
			sc->cut = 1;
		} else {
			return PIPE_NOT_MINE;
		}
	}
	return sc->nreq ? PIPE_READY : PIPE_NOT_MINE;
}

/* Step 3: which requests this burst answers, within the MSS class of the
 * cookie's options (and ours), the window and the burst bound. */
__noinline int blitz_pipe_plan(__u32 opts)
{
	struct pipe_scratch *sc = pipe_sc();
	struct blitz_config *cfg = pipe_cfg();
	__u32 limit, win;

	if (!sc || !cfg)
		return PIPE_NOT_MINE;
	limit = cfg->mss ? cfg->mss : BLITZ_DEFAULT_MSS;
	if (sc->in.v6)
		limit -= BLITZ_IP6_HLEN - BLITZ_IP4_HLEN;
	if (limit > blitz_ck2_opts_mss(opts, sc->in.v6))
		limit = blitz_ck2_opts_mss(opts, sc->in.v6);
	limit -= sc->in.has_ts ? TCPOLEN_TSTAMP_ALIGNED : 0;
	if (limit > PIPE_SEG_MAX)
		limit = PIPE_SEG_MAX;
	limit &= ~3U; /* segments start at even offsets of the stream */
	if (limit < 4)
		return PIPE_NOT_MINE;
	sc->seglen = limit;
	win = (__u32)sc->in.win << blitz_ck2_opts_wscale(opts);
	sc->budget = PIPE_BURST_SEGS * limit;
	if (sc->budget > win)
		sc->budget = win;
	if (sc->budget > PIPE_STREAM_MAX - 4)
		sc->budget = PIPE_STREAM_MAX - 4;
	sc->total = 0;
	sc->nans = 0;
	sc->closing = 0;
	sc->err = 0;
	bpf_loop(sc->nreq, pipe_pick_one, NULL, 0);
	if (sc->err)
		return PIPE_NOT_MINE;
	return sc->nans ? PIPE_READY : PIPE_NO_WINDOW;
}

/* Step 4 (after date_now()): the stream, and what the burst acks. */
__noinline int blitz_pipe_fill(void)
{
	struct pipe_scratch *sc = pipe_sc();

	if (!sc || sc->seglen < 4)
		return PIPE_NOT_MINE;
	sc->total = 0;
	sc->err = 0;
	bpf_loop(sc->nans, pipe_fill_one, NULL, 0);
	if (sc->err || sc->total > PIPE_STREAM_MAX - 4 || !sc->total)
		return PIPE_NOT_MINE;
	/* zeros after the end: the last segment's sum is taken in words */
	*(__u32 *)&sc->stream[pipe_mask(sc->total, PIPE_STREAM_MAX - 1)] = 0;

	sc->seq0 = sc->in.ack;
	sc->nseg = (sc->total + sc->seglen - 1) / sc->seglen;
	/* Ack what was answered: the whole payload (and a FIN) when every
	 * request was, or we close; else up to the last request answered
	 * (the rest stays unacked: the client sends it again). */
	sc->withheld = 0;
	if ((!sc->cut && sc->nans == sc->nreq) || sc->closing) {
		sc->ack = sc->in.seq + sc->in.plen + sc->in.fin;
		sc->fin = sc->closing || sc->in.fin;
	} else {
		sc->ack = sc->in.seq +
			  sc->ends[(sc->nans - 1) & (BLITZ_DFA_SLOTS - 1)];
		sc->fin = 0;
	}
	sc->ack_end = sc->ack;
	/* A burst of several segments never acks its last request (nor a
	 * FIN): should any segment be lost, the client still has a byte
	 * unacked, so its retransmission timer brings back a segment that
	 * tells us what it lacks (docs/tcp-security.md). Once it has the
	 * whole burst its next segment acks the burst's end, and that is
	 * answered (or acked) as usual. */
	if (sc->nseg > 1 && sc->ack == sc->in.seq + sc->in.plen + sc->in.fin) {
		sc->withheld = 1;
		sc->ack = sc->in.seq +
			  (sc->nans > 1 ? sc->ends[(sc->nans - 2) &
						   (BLITZ_DFA_SLOTS - 1)]
					: 0);
	}
	return PIPE_READY;
}

/* Step 5 (after the burst went out): its record, for the segments that
 * may come back short of its end (blitz_flow.h). */
__noinline int blitz_pipe_record(__u64 flow0, __u32 opts, __u32 tsecr)
{
	struct pipe_scratch *sc = pipe_sc();
	struct blitz_config *cfg = pipe_cfg();
	struct blitz_burst *b;
	__u32 i;

	if (!sc || !cfg || !flow0)
		return -1;
	b = &sc->rec;
	b->flow0 = flow0;
	b->snd0 = sc->seq0;
	b->snd_end = sc->seq0 + sc->total;
	b->rcv_ack = sc->ack;
	b->rcv_end = sc->ack_end;
	b->tsval = sc->tsval;
	b->tsecr_in = tsecr;
	b->last_ack = sc->seq0;
	b->resent_at = 0;
	b->resent_ns = 0;
	b->seglen = (__u16)sc->seglen;
	b->gen = cfg->resp[0].gen;
	b->nkinds = (__u8)sc->nans;
	b->opts = (__u8)opts;
	b->flags = (sc->in.has_ts ? BLITZ_BURST_TS : 0) |
		   (sc->fin ? BLITZ_BURST_FIN : 0) |
		   (sc->withheld ? BLITZ_BURST_WITHHELD : 0) |
		   (sc->in.fin ? BLITZ_BURST_RCV_FIN : 0);
	__builtin_memcpy(b->date, sc->date, sizeof(b->date));
	for (i = 0; i < BLITZ_BURST_KINDS; i++)
		b->kinds[i] = sc->kinds[i & (PIPE_MAX_REQS - 1)];
	return bpf_map_update_elem(&bursts, &flow0, b, BPF_ANY) ? -1 : 0;
}

/* What a segment matching a burst record gets (blitz_pipe_burst_on). */
#define PIPE_BURST_NONE 0   /* no record, or it does not match: not ours */
#define PIPE_BURST_SEEN 1   /* matched: nothing to send now, drop it */
#define PIPE_BURST_ACK 2    /* the client has it all: ACK the last request */
#define PIPE_BURST_RESEND 3 /* the segment at sc->resend_off again */

/*
 * A segment of flow0 (sc->in filled from it) that the cookie did not
 * prove, or a pure ACK it proved: does it belong to the flow's last
 * burst, and what does it need? It matches when its seq lies from just
 * before what the burst acked (PIPE_SEQ_BEFORE) to where the client's
 * requests ended (plus what it may have sent after them), its ack
 * within the burst, and (timestamps) its TSecr is the burst's TSval or
 * the one before it. What the client lacks
 * (the segment at its ack) is re-sent when its ack repeats (a duplicate
 * ACK: a later segment arrived) or it sends its unacked requests again
 * (its retransmission timer); the stream is rebuilt from the record's
 * kinds and Date, so the bytes are the ones sent first.
 */
__noinline int blitz_pipe_burst_on(__u64 flow0)
{
	struct pipe_scratch *sc = pipe_sc();
	struct blitz_config *cfg = pipe_cfg();
	struct blitz_burst *b = blitz_burst_of(flow0);
	__u32 end, a, i, dup, fin;
	__u64 now;

	if (!sc || !cfg || !b)
		return PIPE_BURST_NONE;
	if (!!(b->flags & BLITZ_BURST_TS) != !!sc->in.has_ts)
		return PIPE_BURST_NONE;
	if (sc->in.has_ts) {
		__u32 tsecr = sc->in.tsecr;

		if (tsecr != b->tsval && tsecr != b->tsecr_in)
			return PIPE_BURST_NONE;
	}
	fin = (b->flags & BLITZ_BURST_FIN) ? 1 : 0;
	end = b->snd_end + fin;
	sc->win = BLITZ_WINDOW_FIELD(blitz_ck2_opts_wscale_ok(b->opts));
	a = sc->in.ack;
	/* Its seq: from PIPE_SEQ_BEFORE before what the burst acked (the
	 * client's timer re-sends from its oldest unacked byte: the request
	 * the burst before held back, when our ACK of it and every segment
	 * of this burst were lost) to 64 KiB past its requests. */
	if (a - b->snd0 > end - b->snd0 ||
	    sc->in.seq - (b->rcv_ack - PIPE_SEQ_BEFORE) >
		    b->rcv_end - b->rcv_ack + PIPE_SEQ_BEFORE + 65536)
		return PIPE_BURST_NONE;
	if (a == end) {
		/* The client has every byte: ack the request held back, to
		 * a segment at or below the end of the requests (a pure ACK,
		 * or the held-back request sent again). */
		if (!(b->flags & BLITZ_BURST_WITHHELD) ||
		    sc->in.seq - b->rcv_ack > b->rcv_end - b->rcv_ack)
			return PIPE_BURST_SEEN;
		sc->seq0 = end;
		sc->ack = b->rcv_end;
		sc->total = 0;
		sc->fin = 0;
		sc->seglen = b->seglen;
		sc->tsval = b->tsval;
		return PIPE_BURST_ACK;
	}
	/* A hole at a: an ack repeated (a pure ACK at the burst's start
	 * counts: the client sent it after our burst went out, so a later
	 * segment of it arrived first), or the request the burst held back
	 * sent again (the client's retransmission timer). Data at a new ack
	 * may have been sent before the burst arrived: not yet. */
	dup = (a == b->last_ack &&
	       (!sc->in.plen || (b->flags & BLITZ_BURST_ACK_SEEN))) ||
	      (sc->in.plen && blitz_seq_before(sc->in.seq, b->rcv_end));
	b->last_ack = a;
	b->flags |= BLITZ_BURST_ACK_SEEN;
	now = bpf_ktime_get_ns();
	if (!dup || (a == b->resent_at && now - b->resent_ns < 1000000))
		return PIPE_BURST_SEEN;
	if (b->gen != cfg->resp[0].gen || !b->nkinds || b->seglen < 4 ||
	    b->seglen > PIPE_SEG_MAX)
		return PIPE_BURST_SEEN; /* new templates: never other bytes */
	b->resent_at = a;
	b->resent_ns = now;
	for (i = 0; i < BLITZ_BURST_KINDS; i++)
		sc->kinds[i & (PIPE_MAX_REQS - 1)] = b->kinds[i];
	__builtin_memcpy(sc->date, b->date, sizeof(sc->date));
	sc->nans = b->nkinds;
	sc->seglen = b->seglen;
	sc->seq0 = b->snd0;
	sc->ack = b->rcv_ack;
	sc->ack_end = b->snd_end - b->snd0; /* the stream's length */
	sc->fin = fin;
	sc->tsval = b->tsval;
	sc->resend_off = a - b->snd0;
	return PIPE_BURST_RESEND;
}

/* The stream of a burst to re-send (sc set by blitz_pipe_burst_on),
 * after the caller ran pipe_fill_one over its kinds: the same length. */
__noinline int blitz_pipe_refilled(void)
{
	struct pipe_scratch *sc = pipe_sc();

	if (!sc || sc->err || sc->total != sc->ack_end ||
	    sc->total > PIPE_STREAM_MAX - 4 || sc->resend_off >= sc->total)
		return -1;
	*(__u32 *)&sc->stream[pipe_mask(sc->total, PIPE_STREAM_MAX - 1)] = 0;
	return 0;
}

#endif /* BLITZ_PIPE_H */
