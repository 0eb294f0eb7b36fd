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

#ifndef BLITZ_INLINE
#define BLITZ_INLINE static inline __attribute__((always_inline))
#endif

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

#define BLITZ_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

#define BLITZ_SIPROUND(v0, v1, v2, v3)     \
	do {                               \
		v0 += v1;                  \
		v1 = BLITZ_ROTL64(v1, 13); \
		v1 ^= v0;                  \
		v0 = BLITZ_ROTL64(v0, 32); \
		v2 += v3;                  \
		v3 = BLITZ_ROTL64(v3, 16); \
		v3 ^= v2;                  \
		v0 += v3;                  \
		v3 = BLITZ_ROTL64(v3, 21); \
		v3 ^= v0;                  \
		v2 += v1;                  \
		v1 = BLITZ_ROTL64(v1, 17); \
		v1 ^= v2;                  \
		v2 = BLITZ_ROTL64(v2, 32); \
	} while (0)

/*
 * SipHash-c-d of nwords little-endian 64-bit words (a message of
 * 8 * nwords bytes). nwords, c and d are compile-time constants at every
 * caller so the loops unroll and the BPF verifier sees straight-line code.
 * The userspace TCP core uses it too (1-3 for its table hash).
 */
BLITZ_INLINE __u64 blitz_siphash_cd(__u64 k0, __u64 k1, const __u64 *m,
				    int nwords, int c, int d)
{
	__u64 v0 = k0 ^ 0x736f6d6570736575ULL;
	__u64 v1 = k1 ^ 0x646f72616e646f6dULL;
	__u64 v2 = k0 ^ 0x6c7967656e657261ULL;
	__u64 v3 = k1 ^ 0x7465646279746573ULL;
	__u64 b = (__u64)(nwords * 8) << 56;
	int i, r;

	for (i = 0; i < nwords; i++) {
		v3 ^= m[i];
		for (r = 0; r < c; r++)
			BLITZ_SIPROUND(v0, v1, v2, v3);
		v0 ^= m[i];
	}
	v3 ^= b;
	for (r = 0; r < c; r++)
		BLITZ_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (r = 0; r < d; r++)
		BLITZ_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* SipHash-2-4: the cookies' PRF. */
BLITZ_INLINE __u64 blitz_siphash(__u64 k0, __u64 k1, const __u64 *m, int nwords)
{
	return blitz_siphash_cd(k0, k1, m, nwords, 2, 4);
}

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
