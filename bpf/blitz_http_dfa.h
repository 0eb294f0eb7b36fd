/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_http_dfa.h - the requests the xdp engine judges, as a DFA.
 *
 * Owns: the byte-level grammar of userspace/http.c's request parser as far
 * as one segment can judge it (docs/architecture.md, "The contract without a
 * kernel listener"): "method SP target SP HTTP/d.d CRLF", header lines "tchar+
 * : value CRLF" (value: HTAB, SP, visible, obs-text), a final CRLF. Every byte
 * http.c rejects leads to E400 at that byte (rows default there: an unlisted
 * transition is a 400, as http.c's "goto bad"); a well-formed version other
 * than 1.0/1.1 to E505 at the request line's LF; a complete request records its
 * lanes: GET or HEAD (neither: 405), the version, Connection tokens (a list:
 * "keep-alive, close", any case, OWS, parameters), Host lines (none under
 * HTTP/1.1 or two in any version: 400, judged at the end as http.c does),
 * Content-Length (a valid value: a body follows, so a GET or HEAD with one goes
 * to the kernel path; a bad value: 400 at the LF of its line),
 * Transfer-Encoding (a list: the last coding chunked is a body, so again the
 * kernel path for GET and HEAD, 405 for another method; not chunked: 400; with
 * Content-Length or on HTTP/1.0: 400 at the line's LF).
 * DFA_ERR (absorbing): what one segment cannot settle the way http.c does
 * (a Content-Length of 16 digits or more, a second Content-Length or
 * Transfer-Encoding line): the segment goes to the kernel path. The XDP
 * program answers a segment only where http.c would answer the same
 * bytes the same way; tests/bpf/test_xdp.c checks that against http.c on
 * 300,000 generated requests (verdict, response kind, close, and where
 * each request or error ends).
 *
 * A table DFA because the verifier sees a few loads per byte and no
 * branches, and the XDP program pays a handful of instructions per byte.
 * Per byte: class = blitz_dfa_class[b]; st = next[st][class]; states
 * from DFA_FIRST_ACTION on OR a flag into the request's u64 of lanes.
 * Compiled by clang -target bpf and by the userspace C compiler: only
 * __u8/__u64, constant tables and the inline step and verdict functions
 * both the XDP program and tests/bpf/test_xdp.c call (one copy, so the
 * test checks the program's).
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

/* Byte classes. DC_BAD (CTLs other than HTAB, CR, LF; DEL) is never
 * listed: it leads to E400 everywhere, as in http.c. */
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
	DC_COMMA,
	DC_SEMI,
	DC_0,
	DC_1,
	DC_DIG,	  /* 2-9 */
	DC_TCHAR, /* a tchar no keyword needs */
	DC_VCHAR, /* visible, neither tchar nor one of the above */
	DC_OBS,	  /* obs-text 0x80-0xff: only in field values */
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
	/* 0: what every unlisted transition leads to. Absorbing: http.c
	 * answers 400 (and closes) at the byte that entered it. */
	E400 = 0,
	DFA_ERR, /* absorbing: the kernel path judges this segment */
	E505,	 /* absorbing: HTTP/x.y other than 1.0, 1.1: 505 */
	/* request line */
	S_START,
	S_G,
	S_GE,
	S_GET,
	S_H,
	S_HE,
	S_HEA,
	S_HEAD,
	M_OTHER, /* a method other than GET and HEAD (405 when complete) */
	M_SP,	 /* its SP */
	S_TARGET,
	S_VER,
	S_VH,
	S_VHT,
	S_VHTT,
	S_VHTTP,
	S_VSL,
	S_V1,
	S_VX, /* a major version other than 1 */
	S_VDOT,
	S_VXDOT,
	S_VXD, /* a version other than 1.0 and 1.1, complete */
	S_RL_CR,
	S_VX_CR,
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
	N_CL_LENGTH,
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
	N_TE_ENCODING,
	N_H,
	N_HO,
	N_HOS,
	N_HOST,
	/* Connection value: a list; each element's first word counts */
	CV_SEP,	 /* before an element (OWS and commas skipped) */
	CV_REST, /* the rest of an element, up to a comma */
	CV_C,
	CV_CL,
	CV_CLO,
	CV_CLOS,
	CV_CLOSE_W, /* the word so far is "close" */
	CV_K,
	CV_KE,
	CV_KEE,
	CV_KEEP,
	CV_KEEP_,
	CV_KEEP_A,
	CV_KEEP_AL,
	CV_KEEP_ALI,
	CV_KEEP_ALIV,
	CV_KA_W, /* the word so far is "keep-alive" */
	/* Content-Length value: 1*DIGIT with OWS around */
	CL_OWS,
	CL_D1,
	CL_D2,
	CL_D3,
	CL_D4,
	CL_D5,
	CL_D6,
	CL_D7,
	CL_D8,
	CL_D9,
	CL_D10,
	CL_D11,
	CL_D12,
	CL_D13,
	CL_D14,
	CL_D15, /* a 16th digit might pass 2^53: DFA_ERR */
	CL_TRAIL,
	CL_BAD,	  /* not a number: 400 once the line ends */
	CL_BADCR, /* its CR: any byte now is a 400 */
	/* Transfer-Encoding value: a list; is the last coding chunked? The
	 * digit says what the last element so far was (1: chunked). */
	TE_SEP0,
	TE_SEP1,
	TE_REST0,
	TE_REST1,
	TE_C,
	TE_CH,
	TE_CHU,
	TE_CHUN,
	TE_CHUNK,
	TE_CHUNKE,
	TE_CHUNKED_W, /* the word so far is "chunked" */
	/* States entered with an action: the step only looks up actions
	 * from here on, so they must stay last. */
	DFA_FIRST_ACTION,
	S_GET_SP = DFA_FIRST_ACTION,
	S_HEAD_SP,
	S_V10,
	S_V11,
	CV_CLOSE_R, /* "close" ended by OWS or ';': as CV_REST */
	CV_CLOSE_S, /* by a comma: as CV_SEP */
	CV_CLOSE_CR,
	CV_KA_R,
	CV_KA_S,
	CV_KA_CR,
	V_HOST, /* the value of a Host line: counts it, then as V_ANY */
	CL_CR,	/* a valid Content-Length line's CR */
	TE_CR0, /* a Transfer-Encoding line's CR: last coding not chunked */
	TE_CR1, /* ... chunked */
	S_DONE, /* a request just ended; same transitions as S_START */
	DFA_NSTATES,
};

/* Flags of the per-request accumulator (one bit each; ORed, so a token
 * repeated any number of times cannot carry into another lane). */
#define DFA_LANE_GET 0
#define DFA_LANE_HEAD 1
#define DFA_LANE_V10 2
#define DFA_LANE_V11 3
#define DFA_LANE_CLOSE 4
#define DFA_LANE_KA 5
#define DFA_LANE_HOST 6	 /* a Host line... */
#define DFA_LANE_HOST2 7 /* ...and a second one: HOST + 1, set by the step */
#define DFA_LANE_CL 8	 /* a valid Content-Length */
#define DFA_LANE_TE 9	 /* a Transfer-Encoding line... */
#define DFA_LANE_TECH 10 /* ...whose last coding is chunked */
#define DFA_LANE_DONE 63 /* the step adds it to n */
#define DFA_LANE(acc, lane) ((__u32)((acc) >> (lane)) & 1)

/* blitz_dfa_slot_kind() for a request the kernel path must answer (a GET
 * or HEAD with a body to skip). */
#define BLITZ_DFA_KIND_PASS 0xff

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
	[0x80 ... 0xff] = DC_OBS,
	['!'] = DC_TCHAR,
	['#' ... '\''] = DC_TCHAR,
	['*'] = DC_TCHAR,
	['+'] = DC_TCHAR,
	['^'] = DC_TCHAR,
	['_'] = DC_TCHAR,
	['`'] = DC_TCHAR,
	['|'] = DC_TCHAR,
	['~'] = DC_TCHAR,
	['A' ... 'Z'] = DC_TCHAR,
	['a' ... 'z'] = DC_TCHAR,
	['2' ... '9'] = DC_DIG,
	['0'] = DC_0,
	['1'] = DC_1,
	['.'] = DC_DOT,
	['-'] = DC_DASH,
	[','] = DC_COMMA,
	[';'] = DC_SEMI,
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
	['G'] = DC_G,
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
	['A'] = DC_A,
	['D'] = DC_D,
	['E'] = DC_E,
	['H'] = DC_H,
	['P'] = DC_P,
	['T'] = DC_T,
};

/* Row fragments: designated initializers, later ones override earlier. */
#define DFA_ALL(x) [0 ... DC_NUM - 1] = (x)
#define DFA_DIGITS(x) [DC_0] = (x), [DC_1] = (x), [DC_DIG] = (x)
#define DFA_LETTERS(x)                                                        \
	[DC_a] = (x), [DC_c] = (x), [DC_d] = (x), [DC_e] = (x), [DC_f] = (x), \
	[DC_g] = (x), [DC_h] = (x), [DC_i] = (x), [DC_k] = (x), [DC_l] = (x), \
	[DC_n] = (x), [DC_o] = (x), [DC_p] = (x), [DC_r] = (x), [DC_s] = (x), \
	[DC_t] = (x), [DC_u] = (x), [DC_v] = (x), [DC_A] = (x), [DC_D] = (x), \
	[DC_E] = (x), [DC_G] = (x), [DC_H] = (x), [DC_P] = (x), [DC_T] = (x)
#define DFA_TCHARS(x)                                                   \
	DFA_LETTERS(x), DFA_DIGITS(x), [DC_DOT] = (x), [DC_DASH] = (x), \
				       [DC_TCHAR] = (x)
/* The bytes of a request target (0x21-0x7e). */
#define DFA_VCHARS(x)                                                        \
	DFA_TCHARS(x), [DC_VCHAR] = (x), [DC_COLON] = (x), [DC_SLASH] = (x), \
		       [DC_COMMA] = (x), [DC_SEMI] = (x)
#define DFA_OWS(x) [DC_SP] = (x), [DC_HT] = (x)
/* The bytes of a field value (http.c's is_fval). */
#define DFA_FVAL(x) DFA_VCHARS(x), DFA_OWS(x), [DC_OBS] = (x)
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

/* A request starts: GET and HEAD are spelled out, any other token is
 * another method. */
#define START_ROW                                               \
	{                                                       \
		DFA_TCHARS(M_OTHER), [DC_G] = S_G, [DC_H] = S_H \
	}
/* Inside the method: other tchars make it another method. */
#define METHOD_ROW(...)                                          \
	{                                                        \
		DFA_TCHARS(M_OTHER), [DC_SP] = M_SP, __VA_ARGS__ \
	}
/* Inside a header name: other tchars leave the keyword trie. */
#define NAME_ROW(...)                                                \
	{                                                            \
		DFA_TCHARS(N_OTHER), [DC_COLON] = V_ANY, __VA_ARGS__ \
	}
/* Inside a Connection element: a comma starts the next one. */
#define CV_ROW(...)                                                     \
	{                                                               \
		DFA_FVAL(CV_REST), [DC_COMMA] = CV_SEP, [DC_CR] = V_CR, \
				   __VA_ARGS__                          \
	}
#define CV_SEP_ROW CV_ROW(DFA_OWS(CV_SEP), CI_c(CV_C), CI_k(CV_K))
/* Inside a Content-Length value: anything but digits and OWS is a 400. */
#define CL_ROW(...)                                               \
	{                                                         \
		DFA_FVAL(CL_BAD), [DC_CR] = CL_BADCR, __VA_ARGS__ \
	}
/* Inside a Transfer-Encoding element whose first word is not (or not
 * yet) "chunked"; L: what the last complete element was. */
#define TE_ROW(L, ...)                                              \
	{                                                           \
		DFA_FVAL(TE_REST0), [DC_COMMA] = TE_SEP##L,         \
				    [DC_CR] = TE_CR##L, __VA_ARGS__ \
	}
#define CL_DIGIT_ROW(next) \
	CL_ROW(DFA_DIGITS(next), DFA_OWS(CL_TRAIL), [DC_CR] = CL_CR)

static const __u8 blitz_dfa_next[BLITZ_DFA_NSTATE][BLITZ_DFA_NCLASS] = {
	[DFA_ERR] = {DFA_ALL(DFA_ERR)},
	[E505] = {DFA_ALL(E505)},
	[S_START] = START_ROW,
	[S_G] = METHOD_ROW([DC_E] = S_GE),
	[S_GE] = METHOD_ROW([DC_T] = S_GET),
	[S_GET] = METHOD_ROW([DC_SP] = S_GET_SP),
	[S_H] = METHOD_ROW([DC_E] = S_HE),
	[S_HE] = METHOD_ROW([DC_A] = S_HEA),
	[S_HEA] = METHOD_ROW([DC_D] = S_HEAD),
	[S_HEAD] = METHOD_ROW([DC_SP] = S_HEAD_SP),
	[M_OTHER] = METHOD_ROW(),
	[M_SP] = {DFA_VCHARS(S_TARGET)},
	[S_GET_SP] = {DFA_VCHARS(S_TARGET)},
	[S_HEAD_SP] = {DFA_VCHARS(S_TARGET)},
	[S_TARGET] = {DFA_VCHARS(S_TARGET), [DC_SP] = S_VER},
	[S_VER] = {[DC_H] = S_VH},
	[S_VH] = {[DC_T] = S_VHT},
	[S_VHT] = {[DC_T] = S_VHTT},
	[S_VHTT] = {[DC_P] = S_VHTTP},
	[S_VHTTP] = {[DC_SLASH] = S_VSL},
	[S_VSL] = {[DC_1] = S_V1, [DC_0] = S_VX, [DC_DIG] = S_VX},
	[S_V1] = {[DC_DOT] = S_VDOT},
	[S_VX] = {[DC_DOT] = S_VXDOT},
	[S_VDOT] = {[DC_0] = S_V10, [DC_1] = S_V11, [DC_DIG] = S_VXD},
	[S_VXDOT] = {DFA_DIGITS(S_VXD)},
	[S_V10] = {[DC_CR] = S_RL_CR},
	[S_V11] = {[DC_CR] = S_RL_CR},
	[S_VXD] = {[DC_CR] = S_VX_CR},
	[S_RL_CR] = {[DC_LF] = S_LINE},
	[S_VX_CR] = {[DC_LF] = E505},
	[S_LINE] = {DFA_TCHARS(N_OTHER), [DC_CR] = S_FINAL_CR, CI_c(N_C),
		    CI_t(N_T), CI_h(N_H)},
	[S_FINAL_CR] = {[DC_LF] = S_DONE},
	[S_DONE] = START_ROW,
	[N_OTHER] = NAME_ROW(),
	[V_ANY] = {DFA_FVAL(V_ANY), [DC_CR] = V_CR},
	[V_HOST] = {DFA_FVAL(V_ANY), [DC_CR] = V_CR},
	[V_CR] = {[DC_LF] = S_LINE},
	/* host */
	[N_H] = NAME_ROW(CI_o(N_HO)),
	[N_HO] = NAME_ROW(CI_s(N_HOS)),
	[N_HOS] = NAME_ROW(CI_t(N_HOST)),
	[N_HOST] = NAME_ROW([DC_COLON] = V_HOST),
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
	[N_CONNECTION] = NAME_ROW([DC_COLON] = CV_SEP),
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
	[N_CL_LENGT] = NAME_ROW(CI_h(N_CL_LENGTH)),
	[N_CL_LENGTH] = NAME_ROW([DC_COLON] = CL_OWS),
	/* transfer-encoding: a body framing one segment cannot settle */
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
	[N_TE_ENCODIN] = NAME_ROW(CI_g(N_TE_ENCODING)),
	[N_TE_ENCODING] = NAME_ROW([DC_COLON] = TE_SEP0),
	/* Connection: a list of tokens (http.c's scan_list) */
	[CV_SEP] = CV_SEP_ROW,
	[CV_REST] = CV_ROW(),
	[CV_C] = CV_ROW(CI_l(CV_CL)),
	[CV_CL] = CV_ROW(CI_o(CV_CLO)),
	[CV_CLO] = CV_ROW(CI_s(CV_CLOS)),
	[CV_CLOS] = CV_ROW(CI_e(CV_CLOSE_W)),
	[CV_CLOSE_W] = CV_ROW(DFA_OWS(CV_CLOSE_R), [DC_SEMI] = CV_CLOSE_R,
			      [DC_COMMA] = CV_CLOSE_S, [DC_CR] = CV_CLOSE_CR),
	[CV_CLOSE_R] = CV_ROW(),
	[CV_CLOSE_S] = CV_SEP_ROW,
	[CV_CLOSE_CR] = {[DC_LF] = S_LINE},
	[CV_K] = CV_ROW(CI_e(CV_KE)),
	[CV_KE] = CV_ROW(CI_e(CV_KEE)),
	[CV_KEE] = CV_ROW(CI_p(CV_KEEP)),
	[CV_KEEP] = CV_ROW([DC_DASH] = CV_KEEP_),
	[CV_KEEP_] = CV_ROW(CI_a(CV_KEEP_A)),
	[CV_KEEP_A] = CV_ROW(CI_l(CV_KEEP_AL)),
	[CV_KEEP_AL] = CV_ROW(CI_i(CV_KEEP_ALI)),
	[CV_KEEP_ALI] = CV_ROW(CI_v(CV_KEEP_ALIV)),
	[CV_KEEP_ALIV] = CV_ROW(CI_e(CV_KA_W)),
	[CV_KA_W] = CV_ROW(DFA_OWS(CV_KA_R), [DC_SEMI] = CV_KA_R,
			   [DC_COMMA] = CV_KA_S, [DC_CR] = CV_KA_CR),
	[CV_KA_R] = CV_ROW(),
	[CV_KA_S] = CV_SEP_ROW,
	[CV_KA_CR] = {[DC_LF] = S_LINE},
	/* Content-Length: 1*DIGIT (up to 15 here) */
	[CL_OWS] = CL_ROW(DFA_OWS(CL_OWS), DFA_DIGITS(CL_D1)),
	[CL_D1] = CL_DIGIT_ROW(CL_D2),
	[CL_D2] = CL_DIGIT_ROW(CL_D3),
	[CL_D3] = CL_DIGIT_ROW(CL_D4),
	[CL_D4] = CL_DIGIT_ROW(CL_D5),
	[CL_D5] = CL_DIGIT_ROW(CL_D6),
	[CL_D6] = CL_DIGIT_ROW(CL_D7),
	[CL_D7] = CL_DIGIT_ROW(CL_D8),
	[CL_D8] = CL_DIGIT_ROW(CL_D9),
	[CL_D9] = CL_DIGIT_ROW(CL_D10),
	[CL_D10] = CL_DIGIT_ROW(CL_D11),
	[CL_D11] = CL_DIGIT_ROW(CL_D12),
	[CL_D12] = CL_DIGIT_ROW(CL_D13),
	[CL_D13] = CL_DIGIT_ROW(CL_D14),
	[CL_D14] = CL_DIGIT_ROW(CL_D15),
	[CL_D15] = CL_DIGIT_ROW(DFA_ERR),
	[CL_TRAIL] = CL_ROW(DFA_OWS(CL_TRAIL), [DC_CR] = CL_CR),
	[CL_BAD] = CL_ROW(),
	/* CL_BADCR: every byte is a 400 (the row is all E400) */
	[CL_CR] = {[DC_LF] = S_LINE},
	/* Transfer-Encoding: a list of codings (http.c's scan_list) */
	[TE_SEP0] = TE_ROW(0, DFA_OWS(TE_SEP0), CI_c(TE_C)),
	[TE_SEP1] = TE_ROW(1, DFA_OWS(TE_SEP1), CI_c(TE_C)),
	[TE_REST0] = TE_ROW(0),
	[TE_REST1] = TE_ROW(
		1, DFA_FVAL(TE_REST1), [DC_COMMA] = TE_SEP1, [DC_CR] = TE_CR1),
	[TE_C] = TE_ROW(0, CI_h(TE_CH)),
	[TE_CH] = TE_ROW(0, CI_u(TE_CHU)),
	[TE_CHU] = TE_ROW(0, CI_n(TE_CHUN)),
	[TE_CHUN] = TE_ROW(0, CI_k(TE_CHUNK)),
	[TE_CHUNK] = TE_ROW(0, CI_e(TE_CHUNKE)),
	[TE_CHUNKE] = TE_ROW(0, CI_d(TE_CHUNKED_W)),
	[TE_CHUNKED_W] = TE_ROW(0, DFA_OWS(TE_REST1), [DC_SEMI] = TE_REST1,
				[DC_COMMA] = TE_SEP1, [DC_CR] = TE_CR1),
	[TE_CR0] = {[DC_LF] = S_LINE},
	[TE_CR1] = {[DC_LF] = S_LINE},
};

#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* What entering a state ORs into the request's accumulator. */
static const __u64 blitz_dfa_action[BLITZ_DFA_NSTATE] = {
	[S_GET_SP] = 1ULL << DFA_LANE_GET,
	[S_HEAD_SP] = 1ULL << DFA_LANE_HEAD,
	[S_V10] = 1ULL << DFA_LANE_V10,
	[S_V11] = 1ULL << DFA_LANE_V11,
	[CV_CLOSE_R] = 1ULL << DFA_LANE_CLOSE,
	[CV_CLOSE_S] = 1ULL << DFA_LANE_CLOSE,
	[CV_CLOSE_CR] = 1ULL << DFA_LANE_CLOSE,
	[CV_KA_R] = 1ULL << DFA_LANE_KA,
	[CV_KA_S] = 1ULL << DFA_LANE_KA,
	[CV_KA_CR] = 1ULL << DFA_LANE_KA,
	[V_HOST] = 1ULL << DFA_LANE_HOST,
	[CL_CR] = 1ULL << DFA_LANE_CL,
	[TE_CR0] = 1ULL << DFA_LANE_TE,
	[TE_CR1] = 1ULL << DFA_LANE_TE | 1ULL << DFA_LANE_TECH,
	[S_DONE] = 1ULL << DFA_LANE_DONE,
};

#define BLITZ_DFA_SLOTS 128 /* > requests in 2 KiB (the shortest is 16) */

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
 * token, a Host line, a Content-Length, the end of a request), so the
 * common byte costs two loads. Without further branches (each would
 * double the verifier's paths through the unrolled steps): a second Host
 * line sets HOST2; Content-Length with Transfer-Encoding, or
 * Transfer-Encoding on HTTP/1.0, is a 400 at the line's LF; a second line
 * of either makes the state DFA_ERR.
 */
static __always_inline void blitz_dfa_step(struct blitz_dfa_run *r, __u32 byte,
					   __u64 *slots)
{
	__u32 st = blitz_dfa_next[r->st & (BLITZ_DFA_NSTATE - 1)]
				 [blitz_dfa_class[byte & 0xff]];

	if (st >= DFA_FIRST_ACTION) {
		__u64 a = blitz_dfa_action[st & (BLITZ_DFA_NSTATE - 1)];
		__u64 old = r->acc, d = a >> DFA_LANE_DONE;
		__u64 again = old & a;
		__u64 acc = old | a | ((again & (1ULL << DFA_LANE_HOST)) << 1);
		/* http.c's 400 at the LF of a framing line: Content-Length
		 * with Transfer-Encoding, Transfer-Encoding on HTTP/1.0 */
		__u32 clash =
			(__u32)(((old >> DFA_LANE_CL) & (a >> DFA_LANE_TE)) |
				((old >> DFA_LANE_TE) & (a >> DFA_LANE_CL)) |
				((old >> DFA_LANE_V10) & (a >> DFA_LANE_TE))) &
			1;
		/* a second line of either: http.c compares values */
		__u32 dup = (__u32)((again >> DFA_LANE_CL) |
				    (again >> DFA_LANE_TE)) &
			    1;

		st ^= (st ^ CL_BADCR) & (0U - clash);
		st ^= (st ^ DFA_ERR) & (0U - dup);
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

/*
 * The response kind of a complete request's lanes, as http_parse_request
 * picks it (its order: Host count, then the method, then the body), or
 * BLITZ_DFA_KIND_PASS for a GET or HEAD with a body; *close says whether
 * the connection closes after it (every error closes).
 */
static __always_inline __u32 blitz_dfa_slot_kind(__u64 slot, int *close)
{
	int v10 = DFA_LANE(slot, DFA_LANE_V10);
	int head = DFA_LANE(slot, DFA_LANE_HEAD);
	int host = DFA_LANE(slot, DFA_LANE_HOST);

	*close = 1;
	/* a body with no end we know (the last coding is not chunked) */
	if (DFA_LANE(slot, DFA_LANE_TE) && !DFA_LANE(slot, DFA_LANE_TECH))
		return BLITZ_RESP_400;
	if (DFA_LANE(slot, DFA_LANE_HOST2) ||
	    (DFA_LANE(slot, DFA_LANE_V11) && !host))
		return BLITZ_RESP_400;
	if (!head && !DFA_LANE(slot, DFA_LANE_GET))
		return BLITZ_RESP_405;
	if (DFA_LANE(slot, DFA_LANE_CL) || DFA_LANE(slot, DFA_LANE_TE))
		return BLITZ_DFA_KIND_PASS;
	*close = DFA_LANE(slot, DFA_LANE_CLOSE) ||
		 (v10 && !DFA_LANE(slot, DFA_LANE_KA));
	if (*close)
		return head ? BLITZ_RESP_HEAD_CLOSE : BLITZ_RESP_GET_CLOSE;
	if (v10)
		return head ? BLITZ_RESP_HEAD_KA10 : BLITZ_RESP_GET_KA10;
	return head ? BLITZ_RESP_HEAD_KA : BLITZ_RESP_GET_KA;
}

/* The kind of the error a run ended in (E400 or E505), else 0. */
static __always_inline __u32 blitz_dfa_end_error(__u32 st)
{
	if (st == E400)
		return BLITZ_RESP_400;
	if (st == E505)
		return BLITZ_RESP_505;
	return 0;
}

#endif /* BLITZ_HTTP_DFA_H */
