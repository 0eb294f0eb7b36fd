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
#include <string.h>
#include <arpa/inet.h>

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

/*
 * The receive side's sum, for checking whole segments fast: eight bytes a
 * step into a 64-bit one's complement accumulator (end-around carry: add,
 * adc), in the machine's byte order. The one's complement sum commutes
 * with byte swapping (RFC 1071 2.B), so a sum checked against all ones
 * needs no swap; csum_ne_be() turns one into csum_add()'s order. buf at
 * an even offset of the summed stream; unaligned is fine (memcpy loads).
 */
static inline uint64_t csum_ne_add(uint64_t acc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t x, y;
	uint32_t w;
	uint16_t h;

	while (len >= 16) {
		memcpy(&x, p, 8);
		memcpy(&y, p + 8, 8);
		acc += x;
		acc += acc < x;
		acc += y;
		acc += acc < y;
		p += 16;
		len -= 16;
	}
	if (len >= 8) {
		memcpy(&x, p, 8);
		acc += x;
		acc += acc < x;
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		memcpy(&w, p, 4);
		acc += w;
		acc += acc < w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		memcpy(&h, p, 2);
		acc += h;
		acc += acc < h;
		p += 2;
		len -= 2;
	}
	if (len) {
		const uint8_t last[2] = {p[0], 0};

		memcpy(&h, last, 2);
		acc += h;
		acc += acc < h;
	}
	return acc;
}

/* Add a 32-bit value of host order as if its big-endian bytes were summed
 * (the pseudo-header's protocol and length). */
static inline uint64_t csum_ne_add32(uint64_t acc, uint32_t v)
{
	uint32_t be = htonl(v);

	acc += be;
	return acc + (acc < be);
}

/* Fold a csum_ne_add() accumulator to 16 bits, machine order: all ones
 * when the summed bytes verify. */
static inline uint16_t csum_ne_fold(uint64_t acc)
{
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

/* A csum_ne_add() accumulator as a csum_add() sum (host order). */
static inline uint64_t csum_ne_be(uint64_t acc)
{
	return ntohs(csum_ne_fold(acc));
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
