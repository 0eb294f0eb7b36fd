/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_cookie.h - the keyed hash behind the xdp engine's stateless TCP:
 * the ISN of our SYN-ACK and the TSval we put in every segment, and the
 * check that a later segment can only come from a peer that saw them.
 *
 * Owns: SipHash-2-4 over the 4-tuple (key = config.secret) and the
 * validation rule of DESIGN.md ("Stateless TCP"). Used by the XDP program,
 * the TC hand-off program and the tests, so it compiles with clang -target
 * bpf and with the userspace compiler: plain values in, plain values out;
 * it must never touch packets, maps or libc.
 *
 * Orientation: the 4-tuple is always taken as the client's segment sees
 * it (saddr = client, daddr = us, sport = client port, dport = service
 * port), all in network byte order exactly as they sit in the headers.
 */
#ifndef BLITZ_COOKIE_H
#define BLITZ_COOKIE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "blitz_siphash.h"

/*
 * Without timestamps, ack - 1 - ISN is the number of bytes we have sent on
 * the connection; a value beyond this window cannot be ours. A random ack
 * passes with odds 2^24 / 2^32 = 1/256; with timestamps the 32-bit MAC is
 * checked instead. A connection without timestamps that has received more
 * than 16 MiB from the xdp engine stops being answered (its segments are
 * dropped as bad cookies): clients that negotiate timestamps (Linux, the
 * BSDs, macOS by default) are not limited.
 */
#define BLITZ_ACK_WINDOW (1U << 24)

/* The cookie of an IPv4 4-tuple: the low half is the ISN, the high half
 * the timestamp MAC. The family is part of the message. */
BLITZ_INLINE __u64 blitz_cookie_v4(__u64 k0, __u64 k1, __u32 saddr_be,
				   __u32 daddr_be, __u16 sport_be,
				   __u16 dport_be)
{
	__u64 m[2];

	m[0] = (__u64)saddr_be | (__u64)daddr_be << 32;
	m[1] = (__u64)sport_be | (__u64)dport_be << 16 | 4ULL << 32;
	return blitz_siphash(k0, k1, m, 2);
}

BLITZ_INLINE __u64 blitz_cookie_v6(__u64 k0, __u64 k1, const __u32 *saddr_be,
				   const __u32 *daddr_be, __u16 sport_be,
				   __u16 dport_be)
{
	__u64 m[5];

	m[0] = (__u64)saddr_be[0] | (__u64)saddr_be[1] << 32;
	m[1] = (__u64)saddr_be[2] | (__u64)saddr_be[3] << 32;
	m[2] = (__u64)daddr_be[0] | (__u64)daddr_be[1] << 32;
	m[3] = (__u64)daddr_be[2] | (__u64)daddr_be[3] << 32;
	m[4] = (__u64)sport_be | (__u64)dport_be << 16 | 6ULL << 32;
	return blitz_siphash(k0, k1, m, 5);
}

/* Our initial sequence number (host byte order). */
BLITZ_INLINE __u32 blitz_cookie_isn(__u64 cookie)
{
	return (__u32)cookie;
}

/* The TSval of every segment we send (host byte order). */
BLITZ_INLINE __u32 blitz_cookie_tsval(__u64 cookie)
{
	return (__u32)(cookie >> 32);
}

/* Without timestamps: does ack (host order) acknowledge something we can
 * have sent after our SYN-ACK? */
BLITZ_INLINE int blitz_cookie_ack_ok(__u64 cookie, __u32 ack)
{
	return ack - 1 - blitz_cookie_isn(cookie) < BLITZ_ACK_WINDOW;
}

/*
 * The validation of every non-SYN segment (DESIGN.md): with a timestamp
 * option its TSecr (host order) must be our MAC; without one, ack must lie
 * in the window. Returns 1 when the segment can be answered.
 */
BLITZ_INLINE int blitz_cookie_segment_ok(__u64 cookie, __u32 ack, int has_ts,
					 __u32 tsecr)
{
	if (has_ts)
		return tsecr == blitz_cookie_tsval(cookie);
	return blitz_cookie_ack_ok(cookie, ack);
}

#endif /* BLITZ_COOKIE_H */
