/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_siphash.h - SipHash-c-d (Aumasson and Bernstein), the one keyed
 * hash of blitz: the xdp engine's cookies (blitz_cookie2.h) and the TCP
 * core's ISNs, timestamp offsets and connection-table hash.
 *
 * Compiles with clang -target bpf and with the userspace compiler: plain
 * values in, plain values out; it must never touch packets, maps or libc.
 */
#ifndef BLITZ_SIPHASH_H
#define BLITZ_SIPHASH_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#ifndef BLITZ_INLINE
#define BLITZ_INLINE static inline __attribute__((always_inline))
#endif

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

/* SipHash-2-4: the cookies' PRF. make cost's ablation build
 * (BLITZ_COST_NO_MAC, never shipped) runs no round at all: the same keyed
 * state and message words, xored. (A loop of its own in the state's place
 * left the program a stack too deep to load.) */
BLITZ_INLINE __u64 blitz_siphash(__u64 k0, __u64 k1, const __u64 *m, int nwords)
{
#ifdef BLITZ_COST_NO_MAC
	return blitz_siphash_cd(k0, k1, m, nwords, 0, 0);
#else
	return blitz_siphash_cd(k0, k1, m, nwords, 2, 4);
#endif
}

#endif /* BLITZ_SIPHASH_H */
