/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_csum.h - the ones' complement fold of every BPF program: a sum of
 * 16-bit words (or of native 32-bit words, in 64 bits) folded with its
 * end-around carries to 16 bits, as the Internet checksum wants (RFC
 * 1071). The XDP replies, the TC bursts, the Date's sum and the checks of
 * blitz_seg.h all fold here.
 *
 * Owns: the fold, and the byte swap of a sum taken at an odd offset.
 * Must never read packets or maps: numbers in, numbers out.
 */
#ifndef BLITZ_CSUM_H
#define BLITZ_CSUM_H

/* A 32-bit sum folded to 16 bits: two steps always suffice (the first
 * leaves at most 0x1fffe). 0 only for 0. */
static __always_inline __u32 blitz_fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s;
}

/* A 64-bit sum (of native 32-bit words, say) folded to 16 bits: two steps
 * to 32 bits (the first leaves at most 2^33 - 2), then blitz_fold. */
static __always_inline __u32 blitz_fold64(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	return blitz_fold((__u32)s);
}

/* A 16-bit sum of bytes that start at an odd offset of the whole: the
 * same sum with its bytes swapped (RFC 1071 2.(B)). */
static __always_inline __u32 blitz_swab16(__u32 s)
{
	return ((s & 0xff) << 8) | ((s >> 8) & 0xff);
}

#endif /* BLITZ_CSUM_H */
