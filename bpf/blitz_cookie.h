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
 * Two values come from the key and the 4-tuple:
 *   - the timestamp MAC, blitz_cookie_v4/v6() (high half): the TSval of
 *     every segment we send, checked against the TSecr of every segment
 *     that carries a timestamp option;
 *   - our ISN, blitz_isn_v4/v6(): a MAC of the 4-tuple and the peer's ISN
 *     (the SYN's seq). A segment without timestamps is accepted only when
 *     it completes the handshake the way Linux's __cookie_v4_check() sees
 *     one: ack - 1 is the ISN we would have sent to a SYN whose seq was
 *     this segment's seq - 1. One equality checks both numbers, statelessly.
 * There is no window of acceptable acks: the bound of every path is in
 * docs/tcp-security.md.
 */

/* The timestamp cookie of an IPv4 4-tuple (its high half is the TSval,
 * blitz_cookie_tsval()). The family is part of the message. */
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

/* Domain tag of the ISN messages: they are one word longer than the
 * timestamp ones (SipHash hashes the length in), and tagged besides. */
#define BLITZ_ISN_TAG (0x49ULL << 40) /* 'I' */

/* Our ISN (host order) for a SYN of this IPv4 4-tuple whose seq (host
 * order) was peer_isn. */
BLITZ_INLINE __u32 blitz_isn_v4(__u64 k0, __u64 k1, __u32 saddr_be,
				__u32 daddr_be, __u16 sport_be, __u16 dport_be,
				__u32 peer_isn)
{
	__u64 m[3];

	m[0] = (__u64)saddr_be | (__u64)daddr_be << 32;
	m[1] = (__u64)sport_be | (__u64)dport_be << 16 | 4ULL << 32 |
	       BLITZ_ISN_TAG;
	m[2] = peer_isn;
	return (__u32)blitz_siphash(k0, k1, m, 3);
}

BLITZ_INLINE __u32 blitz_isn_v6(__u64 k0, __u64 k1, const __u32 *saddr_be,
				const __u32 *daddr_be, __u16 sport_be,
				__u16 dport_be, __u32 peer_isn)
{
	__u64 m[6];

	m[0] = (__u64)saddr_be[0] | (__u64)saddr_be[1] << 32;
	m[1] = (__u64)saddr_be[2] | (__u64)saddr_be[3] << 32;
	m[2] = (__u64)daddr_be[0] | (__u64)daddr_be[1] << 32;
	m[3] = (__u64)daddr_be[2] | (__u64)daddr_be[3] << 32;
	m[4] = (__u64)sport_be | (__u64)dport_be << 16 | 6ULL << 32 |
	       BLITZ_ISN_TAG;
	m[5] = peer_isn;
	return (__u32)blitz_siphash(k0, k1, m, 6);
}

/* The TSval of every segment we send (host byte order). */
BLITZ_INLINE __u32 blitz_cookie_tsval(__u64 cookie)
{
	return (__u32)(cookie >> 32);
}

/*
 * A segment without timestamps (seq, ack in host order) completes the
 * handshake of our SYN-ACK: isn is blitz_isn_*() of seq - 1, and ack
 * acknowledges exactly our SYN. Nothing else without timestamps is ours.
 */
BLITZ_INLINE int blitz_cookie_handshake_ok(__u32 isn, __u32 ack)
{
	return ack == isn + 1;
}

/* A segment with a timestamp option: its TSecr (host order) is our MAC. */
BLITZ_INLINE int blitz_cookie_ts_ok(__u64 cookie, __u32 tsecr)
{
	return tsecr == blitz_cookie_tsval(cookie);
}

#endif /* BLITZ_COOKIE_H */
