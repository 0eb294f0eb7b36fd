/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_xdp_req.h - the XDP program's request parse: the payload run
 * through the request DFA (blitz_http_dfa.h), through a small per-CPU
 * cache of payloads already parsed (req_cache), into one response kind
 * per request.
 *
 * Owns: the req_cache map and when a payload is ours to answer (complete
 * trivial requests, at most MAX_PIPELINE, up to the first that closes).
 * Must never answer differently from userspace/service/http.c: a payload
 * it cannot judge goes to the kernel path with the counter that says why.
 */
#ifndef BLITZ_XDP_REQ_H
#define BLITZ_XDP_REQ_H

#include "blitz_xdp.h"

/* Payloads already parsed and answered, with their parse (see requests). */
#define CACHE_BYTES 512
#define CACHE_WAYS 4

struct req_cache_ent {
	__u32 len; /* 0: empty */
	__u8 nresp;
	__u8 closing;
	__u8 pad[2];
	__u8 kinds[MAX_PIPELINE];
	__u8 bytes[CACHE_BYTES];
};

struct req_cache {
	struct req_cache_ent e[CACHE_WAYS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct req_cache);
} req_cache SEC(".maps");

struct dfa_run {
	struct blitz_scratch *sc;
	struct blitz_dfa_run d;
	__u32 off;
};

/* Eight payload bytes per call: bpf_loop's call costs more than a step. */
static long dfa_chunk(__u64 idx, void *arg)
{
	struct dfa_run *r = arg;
	struct blitz_scratch *sc = r->sc;
	struct blitz_dfa_run d = r->d;

	if (!sc)
		return 1;
	blitz_dfa_word(&d, *(__u64 *)&sc->buf[(idx * 8) & (PAYLOAD_MAX - 8)],
		       sc->slots);
	r->d = d;
	return 0;
}

static long dfa_byte(__u64 idx, void *arg)
{
	struct dfa_run *r = arg;
	struct blitz_scratch *sc = r->sc;
	struct blitz_dfa_run d = r->d;

	if (!sc)
		return 1;
	blitz_dfa_step(&d, sc->buf[(r->off + idx) & (PAYLOAD_MAX - 1)],
		       sc->slots);
	r->d = d;
	return 0;
}

/*
 * Run the DFA over the payload in sc->buf: on success fill sc->kinds,
 * *nresp and *closing and return 0; else return the counter to pass with.
 * The answers are http.c's, request by request, up to the first that
 * closes: Connection: close, HTTP/1.0 without keep-alive, or an error
 * (400, 405, 505: the bytes after it are read by no one, as the kernel
 * path's lingering close discards them).
 */
static __always_inline int parse_requests(struct blitz_scratch *sc, __u32 plen,
					  __u32 *nresp, int *closing)
{
	struct dfa_run run = {.sc = sc, .d.st = S_START};
	__u32 nchunks = plen / 8, k, kind, err;
	int close;

	nchunks = plen / 8;
	if (nchunks)
		bpf_loop(nchunks, dfa_chunk, &run, 0);
	run.off = nchunks * 8;
	if (plen & 7)
		bpf_loop(plen & 7, dfa_byte, &run, 0);

	/* The requests in order up to the first that closes. */
	*nresp = 0;
	*closing = 0;
	for (k = 0; k < MAX_PIPELINE; k++) {
		if (k >= run.d.n)
			break;
		kind = blitz_dfa_slot_kind(sc->slots[k], &close);
		/* A body to skip: the kernel path frames it. */
		if (kind == BLITZ_DFA_KIND_PASS)
			return BLITZ_CNT_PASS_NOT_TRIVIAL;
		sc->kinds[k & (MAX_PIPELINE - 1)] = (__u8)kind;
		*nresp = k + 1;
		if (close) {
			*closing = 1;
			return 0;
		}
	}
	/* After the last complete request: a request http.c answers with
	 * 400 or 505 before its end, garbage the kernel path must judge, a
	 * partial request, or more requests than one reply carries. */
	if (run.d.n > MAX_PIPELINE)
		return BLITZ_CNT_PASS_TOO_BIG;
	err = blitz_dfa_end_error(run.d.st);
	if (err) {
		if (run.d.n >= MAX_PIPELINE)
			return BLITZ_CNT_PASS_TOO_BIG;
		sc->kinds[run.d.n & (MAX_PIPELINE - 1)] = (__u8)err;
		*nresp = run.d.n + 1;
		*closing = 1;
		return 0;
	}
	if (run.d.st == DFA_ERR)
		return BLITZ_CNT_PASS_NOT_TRIVIAL;
	if (run.d.st != S_DONE)
		return BLITZ_CNT_PASS_PARTIAL;
	return 0;
}

struct cmp_run {
	struct blitz_scratch *sc;
	struct req_cache_ent *ent;
	__u32 len;
	__u32 diff;
};

/* 32 bytes of the payload against the cached request per call. */
static long cmp_chunk(__u64 idx, void *arg)
{
	struct cmp_run *c = arg;
	struct blitz_scratch *sc = c->sc;
	struct req_cache_ent *ent = c->ent;
	__u32 off = (__u32)(idx * 32) & (CACHE_BYTES - 32), rem, j;
	__u64 x = 0, w;

	if (!sc || !ent)
		return 1;
	rem = c->len - off;
	for (j = 0; j < 4; j++) {
		w = *(__u64 *)&sc->buf[off + 8 * j] ^
		    *(__u64 *)&ent->bytes[off + 8 * j];
		/* bytes past the end are stale in both: ignore them */
		if (rem <= 8 * j)
			w = 0;
		else if (rem < 8 * (j + 1))
			w &= (1ULL << ((rem - 8 * j) * 8)) - 1;
		x |= w;
	}
	if (x) {
		c->diff = 1;
		return 1;
	}
	return 0;
}

/*
 * The parse cache's answer for the payload at payoff, read in place from
 * the frame (no copy into scratch first): the way (0..CACHE_WAYS-1)
 * whose entry holds exactly these plen bytes, -1 when none does, -2 when
 * the payload is not all in the frame's linear part (multi-buffer) and
 * the copy must decide. A global function: verified once, on its own.
 */
__noinline int blitz_req_cache_hit(struct xdp_md *ctx, __u32 payoff, __u32 plen,
				   const struct req_cache *cache)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	const struct req_cache_ent *ent;
	const __u8 *b;
	__u32 way, i, n, o;
	__u8 *p;

	if (!cache || plen < 8 || plen > CACHE_BYTES || payoff > 0x1fff)
		return -2;
	p = data + opaque_mask(payoff, 0x1fff);
	if ((void *)(p + 8) > end)
		return -2;
	way = (__u32)((*(__u64 *)p * 0x9E3779B97F4A7C15ULL) >> 60) ^ plen;
	way &= CACHE_WAYS - 1;
	ent = &cache->e[way];
	if (ent->len != plen)
		return -1;
	b = __builtin_assume_aligned(ent->bytes, 8);
	/* whole words before the last, then the last 8 bytes (one exit per
	 * iteration keeps the verifier's walk of the loop linear) */
	n = (plen - 1) / 8;
	for (i = 0; i < CACHE_BYTES / 8 - 1; i++) {
		if (i >= n)
			break;
		o = i * 8;
		if ((void *)(p + o + 8) > end)
			return -2;
		if (*(__u64 *)(p + o) != *(const __u64 *)(b + o))
			return -1;
	}
	o = opaque_mask(plen - 8, CACHE_BYTES - 1);
	if (o > CACHE_BYTES - 8 || (void *)(p + o + 8) > end)
		return -2;
	if (*(__u64 *)(p + o) != *(const __u64 *)(b + o))
		return -1;
	return (int)way;
}

/*
 * Parse the requests in the payload, through a small per-CPU cache of
 * payloads already parsed: load generators and many clients send the same
 * bytes every time, and comparing words is several times cheaper than the
 * DFA's dependent table loads. A hit needs the exact same bytes, so the
 * result is the DFA's.
 */
static __always_inline int requests(struct xdp_md *ctx,
				    struct blitz_scratch *sc, __u32 payoff,
				    __u32 plen, __u32 *nresp, int *closing)
{
	struct req_cache *cache;
	struct req_cache_ent *ent;
	__u32 key = 0, way;
	__u64 w0;
	int why, hit = -2;

#ifdef BLITZ_COST_NO_PARSE /* make cost's ablation builds */
	sc->kinds[0] = BLITZ_RESP_GET_KA;
	*nresp = 1;
	*closing = 0;
	return 0;
#endif
	cache = bpf_map_lookup_elem(&req_cache, &key);
	/* A hit in place needs no copy of the payload at all. */
	if (cache)
		hit = blitz_req_cache_hit(ctx, payoff, plen, cache);
	if (cache && hit >= 0) {
		ent = &cache->e[hit & (CACHE_WAYS - 1)];
		*(__u64 *)sc->kinds = *(__u64 *)ent->kinds;
		*nresp = ent->nresp;
		*closing = ent->closing;
		return 0;
	}
#ifndef BLITZ_COST_NO_LOAD_PAYLOAD
	if (bpf_xdp_load_bytes(ctx, payoff, sc->buf, plen))
		return BLITZ_CNT_PASS_MALFORMED;
#endif
	if (!cache || plen > CACHE_BYTES)
		return parse_requests(sc, plen, nresp, closing);
	w0 = *(__u64 *)sc->buf;
	way = (__u32)((w0 * 0x9E3779B97F4A7C15ULL) >> 60) ^ plen;
	ent = &cache->e[way & (CACHE_WAYS - 1)];
	/* -2: the frame could not say (multi-buffer); the copy can */
	if (hit == -2 && ent->len == plen) {
		struct cmp_run c = {.sc = sc, .ent = ent, .len = plen};

		bpf_loop((plen + 31) / 32, cmp_chunk, &c, 0);
		if (!c.diff) {
			*(__u64 *)sc->kinds = *(__u64 *)ent->kinds;
			*nresp = ent->nresp;
			*closing = ent->closing;
			return 0;
		}
	}
	why = parse_requests(sc, plen, nresp, closing);
	if (why)
		return why;
	if (plen >= 1 && !bpf_xdp_load_bytes(ctx, payoff, ent->bytes, plen)) {
		*(__u64 *)ent->kinds = *(__u64 *)sc->kinds;
		ent->nresp = (__u8)*nresp;
		ent->closing = (__u8)*closing;
		ent->len = plen;
	}
	return 0;
}

#endif /* BLITZ_XDP_REQ_H */
