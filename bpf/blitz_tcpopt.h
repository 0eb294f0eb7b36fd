/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_tcpopt.h - the one TCP option walker of the BPF programs (the XDP
 * engine and the TC hand-off): what a SYN announces (MSS, window scale,
 * SACK-permitted, timestamps) and the timestamps of any later segment.
 *
 * Owns: the walk rule, tcp_parse_options()'s: stop at EOL, at a length
 * below 2 or one that runs past the header; an option of the wrong length
 * is skipped, not believed. Plain values in and out: it works on a copy of
 * the option bytes (a 64-byte buffer, indexes masked so the verifier sees
 * the bound), one option per call, so the programs drive it with bpf_loop.
 * Also owns which of a SYN's options our SYN-ACK answers
 * (blitz_tcpopt_syn_offer). Must never touch packets or maps.
 */
#ifndef BLITZ_TCPOPT_H
#define BLITZ_TCPOPT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "blitz_proto.h"  /* TCPOPT_*, TCPOLEN_* */
#include "blitz_shared.h" /* BLITZ_CFG_NO_SACK, BLITZ_CFG_NO_WSCALE */

#define BLITZ_TCPOPT_BUF 64 /* option bytes are at most TCPOLEN_MAX */

/* What the options say; wscale 0xff: none. Wire values as they sit in
 * memory (_be), as a native load would see them. */
struct blitz_tcpopts {
	__u16 mss; /* 0: no MSS option */
	__u8 wscale;
	__u8 sack_ok;
	__u8 has_ts;
	__u8 pad[3];
	__u32 tsval_be;
	__u32 tsecr_be;
};

static inline __attribute__((always_inline)) __u32
blitz_tcpopt_u32(const __u8 *p, __u32 off)
{
	return (__u32)p[off & 63] | (__u32)p[(off + 1) & 63] << 8 |
	       (__u32)p[(off + 2) & 63] << 16 | (__u32)p[(off + 3) & 63] << 24;
}

/* One option at *off of buf[0..len) (len <= TCPOLEN_MAX): 0 to go on, 1 to
 * stop. */
static inline __attribute__((always_inline)) int
blitz_tcpopt_step(const __u8 *buf, __u32 len, __u32 *off,
		  struct blitz_tcpopts *o)
{
	__u32 at = *off, kind, olen;

	if (at >= len || len > TCPOLEN_MAX)
		return 1;
	kind = buf[at & 63];
	if (kind == TCPOPT_EOL)
		return 1;
	if (kind == TCPOPT_NOP) {
		*off = at + 1;
		return 0;
	}
	if (at + 1 >= len)
		return 1;
	olen = buf[(at + 1) & 63];
	if (olen < 2 || at + olen > len)
		return 1;
	if (kind == TCPOPT_MAXSEG && olen == TCPOLEN_MAXSEG)
		o->mss = (__u16)(buf[(at + 2) & 63] << 8 | buf[(at + 3) & 63]);
	else if (kind == TCPOPT_WINDOW && olen == TCPOLEN_WINDOW)
		o->wscale = buf[(at + 2) & 63];
	else if (kind == TCPOPT_SACK_PERMITTED &&
		 olen == TCPOLEN_SACK_PERMITTED)
		o->sack_ok = 1;
	else if (kind == TCPOPT_TIMESTAMP && olen == TCPOLEN_TIMESTAMP) {
		o->has_ts = 1;
		o->tsval_be = blitz_tcpopt_u32(buf, at + 2);
		o->tsecr_be = blitz_tcpopt_u32(buf, at + 6);
	}
	*off = at + olen;
	return 0;
}

/*
 * A SYN's window scale and SACK-permitted as the xdp engine takes them:
 * the way Linux's tcp_parse_options() reads a SYN, an option whose
 * net.ipv4 sysctl is 0 in the server's namespace (config.flags
 * BLITZ_CFG_NO_WSCALE / BLITZ_CFG_NO_SACK) is as if the SYN had not carried
 * it. What comes out goes into the cookie (docs/cookie-v2.md), so the
 * SYN-ACK's options, every later window and the hand-off's attributes
 * all follow from it. wscale 0xff: none.
 */
static inline __attribute__((always_inline)) void
blitz_tcpopt_syn_offer(__u32 cfg_flags, __u8 *wscale, __u8 *sack_ok)
{
	if (cfg_flags & BLITZ_CFG_NO_WSCALE)
		*wscale = 0xff;
	if (cfg_flags & BLITZ_CFG_NO_SACK)
		*sack_ok = 0;
}

#endif /* BLITZ_TCPOPT_H */
