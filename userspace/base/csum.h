/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csum.h - the Internet checksum (RFC 1071) for the userspace code that
 * builds frames or templates: the HTTP response metadata, the TCP core and
 * the bench generator. One implementation, inline because the engines call
 * it per frame. Must never allocate or make syscalls.
 */
#ifndef BLITZ_CSUM_H
#define BLITZ_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Add buf's big-endian 16-bit words to sum (unfolded); buf is taken to
 * start at an even offset of the summed stream, an odd last byte is padded
 * with zero. */
static inline uint64_t csum_add(uint64_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf, *end = p + (len & ~(size_t)1);

	/* A pointer loop: GCC keeps it at 8 instructions per word wherever
	 * it inlines it (an index loop cost one more in some callers). */
	while (p < end) {
		sum += (uint32_t)(p[0] << 8 | p[1]);
		p += 2;
	}
	if (len & 1)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* Fold to 16 bits, host order, not inverted. */
static inline uint16_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The checksum field's value, host order: the inverted folded sum. */
static inline uint16_t csum_finish(uint64_t sum)
{
	return (uint16_t)~csum_fold(sum);
}

#endif /* BLITZ_CSUM_H */
