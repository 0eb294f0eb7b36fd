/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_http_dfa.h - the request subset the xdp engine answers, as a DFA.
 *
 * Owns: the byte-level grammar of a "trivial" request (DESIGN.md, stateless
 * TCP): "GET|HEAD SP target SP HTTP/1.0|HTTP/1.1 CRLF", header lines
 * "tchar+ : value CRLF" with value bytes HTAB/SP/0x21..0x7E, a final CRLF;
 * Connection exactly "close" or "keep-alive" (any case, OWS around);
 * Host lines counted (RFC 9112 3.2): a request whose count http.c answers
 * with 400 (none under HTTP/1.1, several in any version) ends in DFA_ERR;
 * Content-Length, Transfer-Encoding, Expect, Upgrade, obs-text and anything
 * userspace/http.c would parse differently send the DFA to DFA_ERR, so the
 * segment goes to the kernel path. It must accept only what
 * http_parse_request() answers with HTTP_OK and the same response kind;
 * tests/bpf/test_xdp.c checks that against http.c on generated requests.
 *
 * A table DFA because the verifier sees a few loads per byte and no
 * branches, and the XDP program pays a handful of instructions per byte.
 * Per byte: class = blitz_dfa_class[b]; st = next[st][class];
 * acc += action[st]. The action adds 1 to an 8-bit lane of a u64 per
 * request: which method, which version, Connection tokens, Host lines,
 * and "request complete" in the top lane. Compiled by clang -target bpf
 * and by the userspace C compiler: only __u8/__u64, constant tables and
 * the inline step and verdict functions both the XDP program and
 * tests/bpf/test_xdp.c call (one copy, so the test checks the program's).
 */
#ifndef BLITZ_HTTP_DFA_H
#define BLITZ_HTTP_DFA_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "blitz_shared.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Byte classes. DC_BAD (CTLs, DEL, obs-text) goes to DFA_ERR everywhere. */
enum blitz_dfa_class {
	DC_BAD = 0,
	DC_CR,
	DC_LF,
	DC_SP,
	DC_HT,
	DC_COLON,
	DC_SLASH,
	DC_DOT,
	DC_DASH,
	DC_0,
	DC_1,
	DC_TCHAR, /* a tchar no keyword needs */
	DC_VCHAR, /* visible, neither tchar nor ':' nor '/' */
	/* Letters of case-insensitive keywords: both cases share a class... */
	DC_a,
	DC_c,
	DC_d,
	DC_e,
	DC_f,
	DC_g,
	DC_h,
	DC_i,
	DC_k,
	DC_l,
	DC_n,
	DC_o,
	DC_p,
	DC_r,
	DC_s,
	DC_t,
	DC_u,
	DC_v,
	DC_x,
	/* ...but the method and "HTTP" are case-sensitive. */
	DC_A,
	DC_D,
	DC_E,
	DC_G,
	DC_H,
	DC_P,
	DC_T,
	DC_NUM,
};

#define BLITZ_DFA_NCLASS 256 /* row stride: no masks needed on a u8 class */
#define BLITZ_DFA_NSTATE 256 /* rows for every u8: no mask on a u8 state */

enum blitz_dfa_state {
	DFA_ERR = 0, /* absorbing: not something the fast path answers */
	/* request line */
	S_START,
	S_G,
	S_GE,
	S_GET,
	S_H,
	S_HE,
	S_HEA,
	S_HEAD,
	S_TARGET,
	S_VER,
	S_VH,
	S_VHT,
	S_VHTT,
	S_VHTTP,
	S_VSL,
	S_V1,
	S_VDOT,
	S_RL_CR,
	S_LINE, /* start of a header line or of the final CRLF */
	S_FINAL_CR,
	/* header names and values */
	N_OTHER,
	V_ANY,
	V_CR,
	N_C,
	N_CO,
	N_CON,
	N_CONN,
	N_CONNE,
	N_CONNEC,
	N_CONNECT,
	N_CONNECTI,
	N_CONNECTIO,
	N_CONNECTION,
	N_CONT,
	N_CONTE,
	N_CONTEN,
	N_CONTENT,
	N_CONTENT_,
	N_CL_L,
	N_CL_LE,
	N_CL_LEN,
	N_CL_LENG,
	N_CL_LENGT,
	N_T,
	N_TR,
	N_TRA,
	N_TRAN,
	N_TRANS,
	N_TRANSF,
	N_TRANSFE,
	N_TRANSFER,
	N_TE_,
	N_TE_E,
	N_TE_EN,
	N_TE_ENC,
	N_TE_ENCO,
	N_TE_ENCOD,
	N_TE_ENCODI,
	N_TE_ENCODIN,
	N_E,
	N_EX,
	N_EXP,
	N_EXPE,
	N_EXPEC,
	N_U,
	N_UP,
	N_UPG,
	N_UPGR,
	N_UPGRA,
	N_UPGRAD,
	N_H,
	N_HO,
	N_HOS,
	N_HOST,
	N_FORBID, /* a whole name the fast path refuses: ':' -> DFA_ERR */
	/* Connection value */
	CV_OWS,
	CV_C,
	CV_CL,
	CV_CLO,
	CV_CLOS,
	CV_K,
	CV_KE,
	CV_KEE,
	CV_KEEP,
	CV_KEEP_,
	CV_KEEP_A,
	CV_KEEP_AL,
	CV_KEEP_ALI,
	CV_KEEP_ALIV,
	CV_TRAIL,
	/* States entered with an action: the step only looks up actions
	 * from here on, so they must stay last. */
	DFA_FIRST_ACTION,
	S_GET_SP = DFA_FIRST_ACTION,
	S_HEAD_SP,
	S_V10,
	S_V11,
	CV_CLOSE,
	CV_KA,
	V_HOST, /* the value of a Host line: counts it, then as V_ANY */
	S_DONE, /* a request just ended; same transitions as S_START */
	DFA_NSTATES,
};

/* Lanes of the per-request accumulator (8 bits each). */
#define DFA_LANE_GET 0
#define DFA_LANE_HEAD 8
#define DFA_LANE_V10 16
#define DFA_LANE_V11 24
#define DFA_LANE_CLOSE 32
#define DFA_LANE_KA 40
#define DFA_LANE_HOST 48 /* never above 2: the second one is DFA_ERR */
#define DFA_LANE_DONE 56 /* only ever 0 or 1: the step adds it to n */
#define DFA_LANE(acc, lane) ((__u32)((acc) >> (lane)) & 0xff)

/* Tables: designated initializers, later ones override earlier ones. */
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

static const __u8 blitz_dfa_class[256] = {
	[0x21 ... 0x7e] = DC_VCHAR,
	['!'] = DC_TCHAR,
	['#' ... '\''] = DC_TCHAR,
	['*'] = DC_TCHAR,
	['+'] = DC_TCHAR,
	['^'] = DC_TCHAR,
	['_'] = DC_TCHAR,
	['`'] = DC_TCHAR,
	['|'] = DC_TCHAR,
	['~'] = DC_TCHAR,
	['2' ... '9'] = DC_TCHAR,
	['A' ... 'Z'] = DC_TCHAR,
	['a' ... 'z'] = DC_TCHAR,
	['0'] = DC_0,
	['1'] = DC_1,
	['.'] = DC_DOT,
	['-'] = DC_DASH,
	['/'] = DC_SLASH,
	[':'] = DC_COLON,
	['\r'] = DC_CR,
	['\n'] = DC_LF,
	[' '] = DC_SP,
	['\t'] = DC_HT,
	['a'] = DC_a,
	['c'] = DC_c,
	['C'] = DC_c,
	['d'] = DC_d,
	['e'] = DC_e,
	['f'] = DC_f,
	['F'] = DC_f,
	['g'] = DC_g,
	['h'] = DC_h,
	['i'] = DC_i,
	['I'] = DC_i,
	['k'] = DC_k,
	['K'] = DC_k,
	['l'] = DC_l,
	['L'] = DC_l,
	['n'] = DC_n,
	['N'] = DC_n,
	['o'] = DC_o,
	['O'] = DC_o,
	['p'] = DC_p,
	['r'] = DC_r,
	['R'] = DC_r,
	['s'] = DC_s,
	['S'] = DC_s,
	['t'] = DC_t,
	['u'] = DC_u,
	['U'] = DC_u,
	['v'] = DC_v,
	['V'] = DC_v,
	['x'] = DC_x,
	['X'] = DC_x,
	['A'] = DC_A,
	['D'] = DC_D,
	['E'] = DC_E,
	['G'] = DC_G,
	['H'] = DC_H,
	['P'] = DC_P,
	['T'] = DC_T,
};

/* Row fragments: designated initializers, later ones override earlier. */
#define DFA_LETTERS(x)                                                        \
	[DC_a] = (x), [DC_c] = (x), [DC_d] = (x), [DC_e] = (x), [DC_f] = (x), \
	[DC_g] = (x), [DC_h] = (x), [DC_i] = (x), [DC_k] = (x), [DC_l] = (x), \
	[DC_n] = (x), [DC_o] = (x), [DC_p] = (x), [DC_r] = (x), [DC_s] = (x), \
	[DC_t] = (x), [DC_u] = (x), [DC_v] = (x), [DC_x] = (x), [DC_A] = (x), \
	[DC_D] = (x), [DC_E] = (x), [DC_G] = (x), [DC_H] = (x), [DC_P] = (x), \
	[DC_T] = (x)
#define DFA_TCHARS(x)                                                  \
	DFA_LETTERS(x), [DC_DOT] = (x), [DC_DASH] = (x), [DC_0] = (x), \
			[DC_1] = (x), [DC_TCHAR] = (x)
#define DFA_VCHARS(x) \
	DFA_TCHARS(x), [DC_VCHAR] = (x), [DC_COLON] = (x), [DC_SLASH] = (x)
#define DFA_OWS(x) [DC_SP] = (x), [DC_HT] = (x)
/* Case-insensitive letters (a class per case where the method needs it). */
#define CI_a(x) [DC_a] = (x), [DC_A] = (x)
#define CI_c(x) [DC_c] = (x)
#define CI_d(x) [DC_d] = (x), [DC_D] = (x)
#define CI_e(x) [DC_e] = (x), [DC_E] = (x)
#define CI_f(x) [DC_f] = (x)
#define CI_g(x) [DC_g] = (x), [DC_G] = (x)
#define CI_h(x) [DC_h] = (x), [DC_H] = (x)
#define CI_i(x) [DC_i] = (x)
#define CI_k(x) [DC_k] = (x)
#define CI_l(x) [DC_l] = (x)
#define CI_n(x) [DC_n] = (x)
#define CI_o(x) [DC_o] = (x)
#define CI_p(x) [DC_p] = (x), [DC_P] = (x)
#define CI_r(x) [DC_r] = (x)
#define CI_s(x) [DC_s] = (x)
#define CI_t(x) [DC_t] = (x), [DC_T] = (x)
#define CI_u(x) [DC_u] = (x)
#define CI_v(x) [DC_v] = (x)
#define CI_x(x) [DC_x] = (x)

/* Inside a header name: other tchars leave the keyword trie. */
#define NAME_ROW(...)                                                \
	{                                                            \
		DFA_TCHARS(N_OTHER), [DC_COLON] = V_ANY, __VA_ARGS__ \
	}
#define START_ROW                          \
	{                                  \
		[DC_G] = S_G, [DC_H] = S_H \
	}
#define CV_END_ROW                                \
	{                                         \
		DFA_OWS(CV_TRAIL), [DC_CR] = V_CR \
	}

static const __u8 blitz_dfa_next[BLITZ_DFA_NSTATE][BLITZ_DFA_NCLASS] = {
	[S_START] = START_ROW,
	[S_G] = {[DC_E] = S_GE},
	[S_GE] = {[DC_T] = S_GET},
	[S_GET] = {[DC_SP] = S_GET_SP},
	[S_GET_SP] = {DFA_VCHARS(S_TARGET)},
	[S_H] = {[DC_E] = S_HE},
	[S_HE] = {[DC_A] = S_HEA},
	[S_HEA] = {[DC_D] = S_HEAD},
	[S_HEAD] = {[DC_SP] = S_HEAD_SP},
	[S_HEAD_SP] = {DFA_VCHARS(S_TARGET)},
	[S_TARGET] = {DFA_VCHARS(S_TARGET), [DC_SP] = S_VER},
	[S_VER] = {[DC_H] = S_VH},
	[S_VH] = {[DC_T] = S_VHT},
	[S_VHT] = {[DC_T] = S_VHTT},
	[S_VHTT] = {[DC_P] = S_VHTTP},
	[S_VHTTP] = {[DC_SLASH] = S_VSL},
	[S_VSL] = {[DC_1] = S_V1},
	[S_V1] = {[DC_DOT] = S_VDOT},
	[S_VDOT] = {[DC_0] = S_V10, [DC_1] = S_V11},
	[S_V10] = {[DC_CR] = S_RL_CR},
	[S_V11] = {[DC_CR] = S_RL_CR},
	[S_RL_CR] = {[DC_LF] = S_LINE},
	[S_LINE] = {DFA_TCHARS(N_OTHER), [DC_CR] = S_FINAL_CR, CI_c(N_C),
		    CI_t(N_T), CI_e(N_E), CI_u(N_U), CI_h(N_H)},
	[S_FINAL_CR] = {[DC_LF] = S_DONE},
	[S_DONE] = START_ROW,
	[N_OTHER] = NAME_ROW(),
	[V_ANY] = {DFA_VCHARS(V_ANY), DFA_OWS(V_ANY), [DC_CR] = V_CR},
	[V_HOST] = {DFA_VCHARS(V_ANY), DFA_OWS(V_ANY), [DC_CR] = V_CR},
	/* host */
	[N_H] = NAME_ROW(CI_o(N_HO)),
	[N_HO] = NAME_ROW(CI_s(N_HOS)),
	[N_HOS] = NAME_ROW(CI_t(N_HOST)),
	[N_HOST] = NAME_ROW([DC_COLON] = V_HOST),
	[V_CR] = {[DC_LF] = S_LINE},
	/* connection */
	[N_C] = NAME_ROW(CI_o(N_CO)),
	[N_CO] = NAME_ROW(CI_n(N_CON)),
	[N_CON] = NAME_ROW(CI_n(N_CONN), CI_t(N_CONT)),
	[N_CONN] = NAME_ROW(CI_e(N_CONNE)),
	[N_CONNE] = NAME_ROW(CI_c(N_CONNEC)),
	[N_CONNEC] = NAME_ROW(CI_t(N_CONNECT)),
	[N_CONNECT] = NAME_ROW(CI_i(N_CONNECTI)),
	[N_CONNECTI] = NAME_ROW(CI_o(N_CONNECTIO)),
	[N_CONNECTIO] = NAME_ROW(CI_n(N_CONNECTION)),
	[N_CONNECTION] = NAME_ROW([DC_COLON] = CV_OWS),
	/* content-length */
	[N_CONT] = NAME_ROW(CI_e(N_CONTE)),
	[N_CONTE] = NAME_ROW(CI_n(N_CONTEN)),
	[N_CONTEN] = NAME_ROW(CI_t(N_CONTENT)),
	[N_CONTENT] = NAME_ROW([DC_DASH] = N_CONTENT_),
	[N_CONTENT_] = NAME_ROW(CI_l(N_CL_L)),
	[N_CL_L] = NAME_ROW(CI_e(N_CL_LE)),
	[N_CL_LE] = NAME_ROW(CI_n(N_CL_LEN)),
	[N_CL_LEN] = NAME_ROW(CI_g(N_CL_LENG)),
	[N_CL_LENG] = NAME_ROW(CI_t(N_CL_LENGT)),
	[N_CL_LENGT] = NAME_ROW(CI_h(N_FORBID)),
	/* transfer-encoding */
	[N_T] = NAME_ROW(CI_r(N_TR)),
	[N_TR] = NAME_ROW(CI_a(N_TRA)),
	[N_TRA] = NAME_ROW(CI_n(N_TRAN)),
	[N_TRAN] = NAME_ROW(CI_s(N_TRANS)),
	[N_TRANS] = NAME_ROW(CI_f(N_TRANSF)),
	[N_TRANSF] = NAME_ROW(CI_e(N_TRANSFE)),
	[N_TRANSFE] = NAME_ROW(CI_r(N_TRANSFER)),
	[N_TRANSFER] = NAME_ROW([DC_DASH] = N_TE_),
	[N_TE_] = NAME_ROW(CI_e(N_TE_E)),
	[N_TE_E] = NAME_ROW(CI_n(N_TE_EN)),
	[N_TE_EN] = NAME_ROW(CI_c(N_TE_ENC)),
	[N_TE_ENC] = NAME_ROW(CI_o(N_TE_ENCO)),
	[N_TE_ENCO] = NAME_ROW(CI_d(N_TE_ENCOD)),
	[N_TE_ENCOD] = NAME_ROW(CI_i(N_TE_ENCODI)),
	[N_TE_ENCODI] = NAME_ROW(CI_n(N_TE_ENCODIN)),
	[N_TE_ENCODIN] = NAME_ROW(CI_g(N_FORBID)),
	/* expect */
	[N_E] = NAME_ROW(CI_x(N_EX)),
	[N_EX] = NAME_ROW(CI_p(N_EXP)),
	[N_EXP] = NAME_ROW(CI_e(N_EXPE)),
	[N_EXPE] = NAME_ROW(CI_c(N_EXPEC)),
	[N_EXPEC] = NAME_ROW(CI_t(N_FORBID)),
	/* upgrade */
	[N_U] = NAME_ROW(CI_p(N_UP)),
	[N_UP] = NAME_ROW(CI_g(N_UPG)),
	[N_UPG] = NAME_ROW(CI_r(N_UPGR)),
	[N_UPGR] = NAME_ROW(CI_a(N_UPGRA)),
	[N_UPGRA] = NAME_ROW(CI_d(N_UPGRAD)),
	[N_UPGRAD] = NAME_ROW(CI_e(N_FORBID)),
	[N_FORBID] = {DFA_TCHARS(N_OTHER)},
	/* Connection: close | keep-alive, nothing else */
	[CV_OWS] = {DFA_OWS(CV_OWS), CI_c(CV_C), CI_k(CV_K)},
	[CV_C] = {CI_l(CV_CL)},
	[CV_CL] = {CI_o(CV_CLO)},
	[CV_CLO] = {CI_s(CV_CLOS)},
	[CV_CLOS] = {CI_e(CV_CLOSE)},
	[CV_CLOSE] = CV_END_ROW,
	[CV_K] = {CI_e(CV_KE)},
	[CV_KE] = {CI_e(CV_KEE)},
	[CV_KEE] = {CI_p(CV_KEEP)},
	[CV_KEEP] = {[DC_DASH] = CV_KEEP_},
	[CV_KEEP_] = {CI_a(CV_KEEP_A)},
	[CV_KEEP_A] = {CI_l(CV_KEEP_AL)},
	[CV_KEEP_AL] = {CI_i(CV_KEEP_ALI)},
	[CV_KEEP_ALI] = {CI_v(CV_KEEP_ALIV)},
	[CV_KEEP_ALIV] = {CI_e(CV_KA)},
	[CV_KA] = CV_END_ROW,
	[CV_TRAIL] = CV_END_ROW,
};

#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* What entering a state adds to the request's accumulator. */
static const __u64 blitz_dfa_action[BLITZ_DFA_NSTATE] = {
	[S_GET_SP] = 1ULL << DFA_LANE_GET,
	[S_HEAD_SP] = 1ULL << DFA_LANE_HEAD,
	[S_V10] = 1ULL << DFA_LANE_V10,
	[S_V11] = 1ULL << DFA_LANE_V11,
	[CV_CLOSE] = 1ULL << DFA_LANE_CLOSE,
	[CV_KA] = 1ULL << DFA_LANE_KA,
	[V_HOST] = 1ULL << DFA_LANE_HOST,
	[S_DONE] = 1ULL << DFA_LANE_DONE,
};

#define BLITZ_DFA_SLOTS 128 /* > requests in 2 KiB (the shortest is 18) */

/* Where a run over a payload stands: carried from one call to the next. */
struct blitz_dfa_run {
	__u64 acc; /* lanes of the request being read */
	__u32 st;  /* enum blitz_dfa_state; start at S_START */
	__u32 n;   /* complete requests so far */
};

/*
 * One byte. slots[k] ends up holding request k's lanes (DONE lane set once
 * it is complete); n counts complete requests. The only branch is taken on
 * the few states that carry an action (a method, a version, a Connection
 * token, a Host line, the end of a request), so the common byte costs two
 * loads. The Host count is judged there too: a second Host line, or the
 * end of an HTTP/1.1 request without one, is DFA_ERR and no request.
 */
static __always_inline void blitz_dfa_step(struct blitz_dfa_run *r, __u32 byte,
					   __u64 *slots)
{
	__u32 st = blitz_dfa_next[r->st & (BLITZ_DFA_NSTATE - 1)]
				 [blitz_dfa_class[byte & 0xff]];

	if (st >= DFA_FIRST_ACTION) {
		__u64 a = blitz_dfa_action[st & (BLITZ_DFA_NSTATE - 1)];
		__u64 d = a >> DFA_LANE_DONE, acc = r->acc + a;
		__u64 hosts = (acc >> DFA_LANE_HOST) & 0xff; /* 0, 1 or 2 */
		__u64 v11 = (acc >> DFA_LANE_V11) & 1;
		/* Without branches (each would double the verifier's paths
		 * through the unrolled steps): bad is 1 for a second Host, or
		 * for the end of an HTTP/1.1 request with none; then the
		 * state is DFA_ERR (0) and no request is counted. */
		__u64 bad = (hosts >> 1) | (d & v11 & ((hosts - 1) >> 63));

		st &= (__u32)(bad - 1);
		d &= bad ^ 1;
		slots[r->n & (BLITZ_DFA_SLOTS - 1)] = acc;
		r->n += (__u32)d;
		acc &= d - 1;
		r->acc = acc;
	}
	r->st = st;
}

/* Eight bytes, the first in the low byte of w (a little-endian load). */
static __always_inline void blitz_dfa_word(struct blitz_dfa_run *r, __u64 w,
					   __u64 *slots)
{
	int j;

#if defined(__clang__)
#pragma unroll
#endif
	for (j = 0; j < 8; j++)
		blitz_dfa_step(r, (__u32)(w >> (8 * j)), slots);
}

/* The response kind of a complete request's lanes, as http_parse_request
 * picks it; *close says whether the connection closes after it. */
static __always_inline __u32 blitz_dfa_slot_kind(__u64 slot, int *close)
{
	int v10 = DFA_LANE(slot, DFA_LANE_V10) != 0;
	int head = DFA_LANE(slot, DFA_LANE_HEAD) != 0;

	*close = DFA_LANE(slot, DFA_LANE_CLOSE) ||
		 (v10 && !DFA_LANE(slot, DFA_LANE_KA));
	if (*close)
		return head ? BLITZ_RESP_HEAD_CLOSE : BLITZ_RESP_GET_CLOSE;
	if (v10)
		return head ? BLITZ_RESP_HEAD_KA10 : BLITZ_RESP_GET_KA10;
	return head ? BLITZ_RESP_HEAD_KA : BLITZ_RESP_GET_KA;
}

#endif /* BLITZ_HTTP_DFA_H */
