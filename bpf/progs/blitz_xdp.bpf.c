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
 * The CLI relies on the names here: program blitz_xdp, maps config,
 * responses, counters, xsks (config, responses and counters are defined
 * in blitz_maps.h, shared with the TC program). The other maps are internal,
 * per CPU:
 * date_cache (the Date of the current second), scratch (payload and parse
 * state), req_cache (payloads already parsed, see requests()).
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

#define L4_V4 BLITZ_L4_V4
#define L4_V6 BLITZ_L4_V6

#define PAYLOAD_MAX 2048 /* longest request segment parsed here */
#define MAX_PIPELINE 8	 /* most responses put in one reply */
#define HEAD_GROW 192	 /* headroom surely left after the xdp_frame */

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

/* Per-CPU scratch: too big for the 512-byte BPF stack. */
struct blitz_scratch {
	__u8 buf[PAYLOAD_MAX];	      /* the segment's payload */
	__u8 opts[64];		      /* its TCP options */
	__u64 slots[BLITZ_DFA_SLOTS]; /* per-request DFA lanes */
	__u8 kinds[MAX_PIPELINE];     /* response kind of each request */
	struct blitz_seq_rec rec;     /* where the reply goes, what it sent */
	/* Always 0. Loop state starts from it so the verifier sees an
	 * unknown value: from a constant it would walk every iteration of a
	 * bpf_loop callback and the rest of the program after each. */
	__u32 zero;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_scratch);
} scratch SEC(".maps");

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

static __always_inline int pass(__u32 reason)
{
	cnt_add(reason, 1);
	return XDP_PASS;
}

static __always_inline int drop(__u32 reason)
{
	cnt_add(reason, 1);
	return XDP_DROP;
}

static __always_inline __u32 fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s;
}

static __always_inline __u32 swab16(__u32 s)
{
	return ((s & 0xff) << 8) | ((s >> 8) & 0xff);
}

/* The checksum field of a sum: ~fold. make cost's ablation build
 * (BLITZ_COST_NO_CSUM) writes 0, and the sums become dead code. */
static __always_inline __u16 csum_field(__u32 sum)
{
#ifdef BLITZ_COST_NO_CSUM
	(void)fold; /* its other user moved to blitz_date.h */
	return 0;
#else
	return (__u16)~fold(sum);
#endif
}

/* ------------------------------------------------------------------ */
/* Stateless TCP                                                       */
/* ------------------------------------------------------------------ */

/* The segment's 4-tuple as cookie v2 hashes it (blitz_cookie2.h). */
static __always_inline void seg_tuple(const struct seg *s,
				      struct blitz_ck2_tuple *t)
{
	if (s->v6)
		blitz_ck2_tuple_v6(t, s->saddr, s->daddr, s->sport, s->dport);
	else
		blitz_ck2_tuple_v4(t, s->saddr[0], s->daddr[0], s->sport,
				   s->dport);
}

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

/* The state of the kernel socket the segment's 4-tuple finds (a listener
 * included), or -1 when there is none. */
static __always_inline int kernel_sk_state(struct xdp_md *ctx,
					   const struct seg *s)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	int state;

	if (s->v6) {
		__builtin_memcpy(t.ipv6.saddr, s->saddr, 16);
		__builtin_memcpy(t.ipv6.daddr, s->daddr, 16);
		t.ipv6.sport = s->sport;
		t.ipv6.dport = s->dport;
		sk = bpf_skc_lookup_tcp(ctx, &t, sizeof(t.ipv6),
					BPF_F_CURRENT_NETNS, 0);
	} else {
		t.ipv4.saddr = s->saddr[0];
		t.ipv4.daddr = s->daddr[0];
		t.ipv4.sport = s->sport;
		t.ipv4.dport = s->dport;
		sk = bpf_skc_lookup_tcp(ctx, &t, sizeof(t.ipv4),
					BPF_F_CURRENT_NETNS, 0);
	}
	if (!sk)
		return -1;
	state = (int)sk->state;
	bpf_sk_release(sk);
	return state;
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
		cnt_add(BLITZ_CNT_KSOCK_SKIP, 1);
		return 0;
	}
	state = kernel_sk_state(ctx, s);
	return state >= 0 && state != BPF_TCP_LISTEN;
}

/* The MSS we advertise; config.mss is the IPv4 one (MTU - 40). */
static __always_inline __u32 our_mss(const struct blitz_config *cfg,
				     const struct seg *s)
{
	__u32 mss = cfg->mss ? cfg->mss : BLITZ_DEFAULT_MSS;

	return s->v6 ? mss - (BLITZ_IP6_HLEN - BLITZ_IP4_HLEN) : mss;
}

/* What the reply's TCP header says. */
struct reply {
	__u32 seq; /* host order */
	__u32 ack;
	__u32 paylen;
	__u32 paysum; /* native ones' complement sum of the payload */
	__u32 tsval;  /* host order */
	__u16 mss;    /* SYN-ACK: the MSS option (always sent) */
	__u16 win;    /* the window field, host order */
	__u8 flags;
	__u8 ts;     /* a timestamp option (TSval, their TSval echoed) */
	__u8 sack;   /* SYN-ACK: SACK-permitted */
	__u8 wscale; /* SYN-ACK: our shift, 0xff: no window scaling */
};

/* Linux's layouts: MSS; SACK-permitted with the timestamps, or NOP NOP
 * before either alone; NOP and window scale. At most 40 bytes. */
static __always_inline __u32 reply_thlen(const struct reply *r)
{
	__u32 w = sizeof(__u32); /* an option word */
	__u32 n = BLITZ_TCP_HLEN +
		  (r->ts || r->sack ? (r->ts ? TCPOLEN_TSTAMP_ALIGNED : w) : 0);

	if (r->mss)
		n += w + (r->wscale != BLITZ_CK2_WS_NONE ? w : 0);
	return n;
}

/*
 * Grow or shrink the frame to newlen bytes (all of it: its fragments too).
 * Every header and payload byte of a reply is written afterwards (from
 * struct seg and the responses), so where the old bytes went does not
 * matter. A reply grows at the head first: bpf_xdp_adjust_head only moves
 * a pointer, where bpf_xdp_adjust_tail also zeroes the bytes it adds (and
 * veth hands XDP frames with almost no tailroom). The head keeps 256
 * bytes minus the kernel's xdp_frame; when that is not enough, the tail,
 * or both ends.
 */
static __always_inline int resize(struct xdp_md *ctx, __u32 newlen)
{
	int delta = (int)newlen - (int)bpf_xdp_get_buff_len(ctx);

	if (!delta)
		return 0;
	if (delta < 0)
		return bpf_xdp_adjust_tail(ctx, delta) ? -1 : 0;
	if (!bpf_xdp_adjust_head(ctx, -delta))
		return 0;
	if (!bpf_xdp_adjust_tail(ctx, delta))
		return 0;
	if (delta > HEAD_GROW && !bpf_xdp_adjust_head(ctx, -HEAD_GROW)) {
		if (!bpf_xdp_adjust_tail(ctx, delta - HEAD_GROW))
			return 0;
		/* undo: the frame goes to the kernel as it came */
		bpf_xdp_adjust_head(ctx, HEAD_GROW);
	}
	return -1;
}

/* The TCP header's 32-bit words by what they hold, as write_headers()
 * builds them: ports; seq; ack; data offset, flags and window; checksum
 * and urgent pointer; then the options. */
#define TCPW_PORTS (BLITZ_OFF(struct tcphdr, source) / 4)
#define TCPW_SEQ (BLITZ_OFF(struct tcphdr, seq) / 4)
#define TCPW_ACK (BLITZ_OFF(struct tcphdr, ack_seq) / 4)
#define TCPW_FLAGS (BLITZ_OFF(struct tcphdr, window) / 4)
#define TCPW_CSUM (BLITZ_OFF(struct tcphdr, check) / 4)
#define TCPW_OPT (BLITZ_TCP_HLEN / 4)
/* The first word of each IP header: the version (and IPv4's IHL, no
 * options) above the rest. */
#define IP4_W0 (4U << 28 | (BLITZ_IP4_HLEN / 4) << 24)
#define IP6_W0 (6U << 28)

/* A 64-bit sum of native 32-bit words folded to 16 bits: the same ones'
 * complement sum as adding the 16-bit halves one by one. */
static __always_inline __u32 fold64(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	return fold((__u32)(s & 0xffff) + (__u32)(s >> 16));
}

/*
 * Turn the (already resized) frame into the reply: swap the Ethernet and
 * IP addresses, write a fresh IP header and the TCP header with its
 * options, and both checksums. The payload, if any, is already in place.
 * Every header word is built whole in a register, stored straight into
 * the frame and summed as a 32-bit word (no copy on the stack first, no
 * byte or half-word pieces); the address sum is shared by the IP header
 * and the TCP pseudo-header.
 */
static __always_inline int
write_headers(struct xdp_md *ctx, const struct seg *s, const struct reply *r)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth;
	__u32 *tcp = data + (s->v6 ? L4_V6 : L4_V4);
	__u32 thlen = reply_thlen(r), i;
	__u64 asum = 0, sum;
	union {
		__u16 w[2];
		__u32 l;
	} ports = {.w = {s->dport, s->sport}}; /* then other word pairs */

	/* The address sum does not care which is which. */
	if (s->v6) {
		for (i = 0; i < 4; i++)
			asum += (__u64)s->saddr[i] + s->daddr[i];
	} else {
		asum = (__u64)s->saddr[0] + s->daddr[0];
	}
	/* Pseudo-header, then each header word as it is stored (checksum
	 * and urgent pointer 0 until the end), the payload's sum. */
	sum = asum + bpf_htons(IPPROTO_TCP) + bpf_htons(thlen + r->paylen) +
	      r->paysum;
#define PUT(i, v)                                  \
	do {                                       \
		__u32 v_ = (v);                    \
		if ((void *)(tcp + (i) + 1) > end) \
			return -1;                 \
		tcp[i] = v_;                       \
		sum += v_;                         \
	} while (0)
	PUT(TCPW_PORTS, ports.l);
	PUT(TCPW_SEQ, bpf_htonl(r->seq));
	PUT(TCPW_ACK, bpf_htonl(r->ack));
	/* the data offset in words in the top 4 bits, flags, window */
	PUT(TCPW_FLAGS,
	    bpf_htonl((thlen / 4) << 28 | (__u32)r->flags << 16 | r->win));
	if (r->mss) { /* SYN-ACK */
		__u32 ws = bpf_htonl(BLITZ_OPTW_NOP_WS(r->wscale));
		int has_ws = r->wscale != BLITZ_CK2_WS_NONE;

		PUT(TCPW_OPT, bpf_htonl(BLITZ_OPTW_MSS(r->mss)));
		if (r->ts) {
			PUT(TCPW_OPT + 1,
			    bpf_htonl(r->sack ? BLITZ_OPTW_SACKP_TS
					      : BLITZ_OPTW_NOP_NOP_TS));
			PUT(TCPW_OPT + 2, bpf_htonl(r->tsval));
			PUT(TCPW_OPT + 3, s->tsval_be);
			if (has_ws)
				PUT(TCPW_OPT + 4, ws);
		} else if (r->sack) {
			PUT(TCPW_OPT + 1, bpf_htonl(BLITZ_OPTW_NOP_NOP_SACKP));
			if (has_ws)
				PUT(TCPW_OPT + 2, ws);
		} else if (has_ws) {
			PUT(TCPW_OPT + 1, ws);
		}
	} else if (r->ts) {
		PUT(TCPW_OPT, bpf_htonl(BLITZ_OPTW_NOP_NOP_TS));
		PUT(TCPW_OPT + 1, bpf_htonl(r->tsval));
		PUT(TCPW_OPT + 2, s->tsval_be);
	}
#undef PUT
	ports.w[0] = csum_field(fold64(sum));
	ports.w[1] = 0; /* the urgent pointer */
	if ((void *)(tcp + TCPW_CSUM + 1) > end)
		return -1;
	tcp[TCPW_CSUM] = ports.l;

	eth = data;
	if (s->v6) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return -1;
		/* version 6, traffic class and flow label 0 */
		*(__u32 *)ip6 = bpf_htonl(IP6_W0);
		/* payload length, next header TCP, hop limit */
		*(__u32 *)&ip6->payload_len =
			bpf_htonl((thlen + r->paylen) << 16 | IPPROTO_TCP << 8 |
				  BLITZ_IP_TTL);
		for (i = 0; i < 4; i++) {
			ip6->saddr.in6_u.u6_addr32[i] = s->daddr[i];
			ip6->daddr.in6_u.u6_addr32[i] = s->saddr[i];
		}
	} else {
		struct iphdr *ip = (void *)(eth + 1);
		__u32 w0;

		if ((void *)(ip + 1) > end)
			return -1;
		/* version 4, no options, TOS 0, total length; ID 0, DF; TTL,
		 * TCP, then the checksum */
		w0 = bpf_htonl(IP4_W0 | (BLITZ_IP4_HLEN + thlen + r->paylen));
		ports.w[0] = bpf_htons(BLITZ_IP_TTL << 8 | IPPROTO_TCP);
		ports.w[1] = 0;
		sum = asum + w0 + bpf_htonl(BLITZ_IP_DF) + ports.l;
		ports.w[1] = csum_field(fold64(sum));
		*(__u32 *)ip = w0;
		*(__u32 *)&ip->id = bpf_htonl(BLITZ_IP_DF);
		*(__u32 *)&ip->ttl = ports.l;
		ip->saddr = s->daddr[0];
		ip->daddr = s->saddr[0];
	}
	__builtin_memcpy(eth->h_dest, s->mac_src, ETH_ALEN);
	__builtin_memcpy(eth->h_source, s->mac_dst, ETH_ALEN);
	eth->h_proto = bpf_htons(s->v6 ? ETH_P_IPV6 : ETH_P_IP);
	return 0;
}

/* A reply with no payload (SYN-ACK, FIN-ACK): resize, headers, XDP_TX. */
static __always_inline int send_bare(struct xdp_md *ctx, const struct seg *s,
				     const struct reply *r, __u32 counter)
{
	__u32 len = (s->v6 ? L4_V6 : L4_V4) + reply_thlen(r);

	if (resize(ctx, len))
		return pass(BLITZ_CNT_PASS_NO_ROOM);
	if (write_headers(ctx, s, r))
		return XDP_ABORTED; /* cannot happen: the frame was resized */
	cnt_add(counter, 1);
	cnt_add(BLITZ_CNT_TX_BYTES, len);
	return XDP_TX;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

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
	e->sum = fold((__u32)m->csum_nodate +
		      (doff & 1 ? swab16(d->sum) : d->sum));
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
	__u32 l4 = s->v6 ? L4_V6 : L4_V4, payoff, po = 0, k;
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

	for (k = 0; k < MAX_PIPELINE; k++) {
		const struct blitz_resp_meta *m;
		__u8 *bytes;
		__u32 kind = sc->kinds[k & (MAX_PIPELINE - 1)], len, sum;

		if (k >= nresp)
			break;
		if (kind >= BLITZ_RESP_KINDS)
			return XDP_ABORTED;
		m = &cfg->resp[kind];
		len = m->len;
		if (len < 1 || len > BLITZ_RESP_MAX)
			return XDP_ABORTED;
#ifndef BLITZ_COST_NO_RENDER
		{
			struct blitz_rendered *ren = rendered(kind, m, date);

			if (!ren)
				return XDP_ABORTED;
			bytes = ren->bytes;
			sum = ren->sum;
		}
#else /* make cost's ablation build: the template, without its Date */
		(void)rendered;
		{
			struct blitz_resp *t =
				bpf_map_lookup_elem(&responses, &kind);

			if (!t)
				return XDP_ABORTED;
			bytes = t->bytes;
			sum = m->csum_nodate;
		}
#endif
#ifndef BLITZ_COST_NO_STORE_RESP /* make cost's ablation build */
		if (bpf_xdp_store_bytes(ctx, payoff + po, bytes, len))
			return XDP_ABORTED;
#else
		(void)bytes;
#endif
		/* A block at an odd offset adds its sum byte-swapped. */
		r.paysum += po & 1 ? swab16(sum) : sum;
		po += len;
	}
	if (write_headers(ctx, s, &r))
		return XDP_ABORTED;
	cnt_add(BLITZ_CNT_REQUESTS, nresp);
	if (nresp &&
	    sc->kinds[(nresp - 1) & (MAX_PIPELINE - 1)] >= BLITZ_RESP_OK_KINDS)
		cnt_add(BLITZ_CNT_HTTP_ERRORS, 1);
	cnt_add(at->by_state ? BLITZ_CNT_ANSWERED_FROM_FLOW
			     : BLITZ_CNT_ANSWERED_STATELESS,
		nresp);
	cnt_add(BLITZ_CNT_REPLIES, 1);
	cnt_add(BLITZ_CNT_TX_BYTES, payoff + total);
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
 * them finds it).
 */
static __always_inline int tspt_check(struct blitz_ring_cache *rc)
{
	struct blitz_tspt *p;
	__u32 idx;

	if (!rc)
		return 1;
	idx = blitz_tspt_idx(rc->q.h.flow0);
	p = bpf_map_lookup_elem(&tspts, &idx);
	if (!p)
		return 1;
	if (!blitz_tspt_see(p, rc->q.h.flow0, rc->r.e_now, rc->q.seq, rc->q.ack,
			    rc->q.h.fin))
		return 1;
	if (!blitz_ck2_q_handshake(&rc->r, &rc->q))
		return 0;
	blitz_tspt_fresh(p, rc->q.h.flow0, rc->r.e_now, rc->q.seq, rc->q.ack,
			 rc->q.h.fin);
	return 1;
}

/* test_seq_narrow's negative control (NARROW_D=-DBLITZ_TSPT_OFF): the
 * layout alone, no point entry */
#ifdef BLITZ_TSPT_OFF
#define BLITZ_TSPT_ON_OFF 1
#else
#define BLITZ_TSPT_ON_OFF 0
#endif

/* Note where the reply rec (timestamps) ends in its flow's entry: a
 * point on the track when the one it was made at was (tspt_check). */
static __always_inline void tspt_note_end(struct blitz_ring_cache *rc,
					  const struct blitz_seq_rec *rec)
{
	__u32 idx = blitz_tspt_idx(rc->q.h.flow0);
	struct blitz_tspt *p = bpf_map_lookup_elem(&tspts, &idx);

	if (p)
		blitz_tspt_end(p, rc->q.h.flow0, rc->r.e_now, rec->sent.end_rcv,
			       rec->sent.end_snd, rec->sent.closed);
}

/* The source a flow entry is capped by: an IPv4 address, an IPv6 /64. */
static __always_inline __u64 flow_src_of(const struct seg *s)
{
	return (__u64)s->saddr[0] | (s->v6 ? (__u64)s->saddr[1] << 32 : 0);
}

/* What a verified segment at at gets (blitz_seq_action), and its entry. */
static __always_inline int reply_at(struct xdp_md *ctx,
				    const struct blitz_config *cfg,
				    const struct seg *s,
				    struct blitz_scratch *sc,
				    struct blitz_ring_cache *rc)
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
		tspt_note_end(rc, rec);
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
	__u64 *c = bpf_map_lookup_elem(&counters, &id);

	return c ? *c : 0;
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
	v = reply_at(ctx, cfg, s, sc, rc);
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
	rc = blitz_ring_now(cfg);
	if (!rc)
		return XDP_PASS;
	q = &rc->q;
	seg_tuple(s, &q->t);
	q->seq = s->seq;
	q->ack = s->ack;
	q->tsecr = s->tsecr;
	q->has_ts = s->has_ts;
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
		/* A pipelined segment whose MAC matched by chance: our last
		 * reply's point says it cannot echo a TSval minted here. */
		if (s->has_ts && !BLITZ_TSPT_ON_OFF && !tspt_check(rc))
			return drop(BLITZ_CNT_DROP_OFF_POINT);
		blitz_seq_at_cookie(&sc->rec.at, s->seq, s->ack, q->h.fin);
		/* Without timestamps, a connection whose reply no flow entry
		 * could remember (its source at its cap) would lose every
		 * later request: a kernel listener takes it from this one. */
		if (!s->has_ts && s->plen &&
		    !blitz_flow_room(rc, flow_src_of(s)) &&
		    kernel_listens(ctx, s))
			return pass(BLITZ_CNT_PASS_FLOW_FULL);
		return reply_at(ctx, cfg, s, sc, rc);
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
	rc = blitz_ring_now(cfg);
	if (!rc)
		return XDP_PASS;
	q = &rc->q;
	seg_tuple(s, &q->t);
	q->seq = s->seq;
	q->ack = s->ack;
	q->tsecr = s->tsecr;
	q->has_ts = 1;
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

	cnt_add(BLITZ_CNT_RX_FRAMES, 1);
	cfg = bpf_map_lookup_elem(&config, &key);
	sc = bpf_map_lookup_elem(&scratch, &key);
	if (!cfg || !sc)
		return XDP_PASS;
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
		cnt_add(BLITZ_CNT_REDIRECT, 1);
		return bpf_redirect_map(&xsks, q, XDP_PASS);
	}
	return handle_tcp(ctx, cfg, &s, sc);
}
