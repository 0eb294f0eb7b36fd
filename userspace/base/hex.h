/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hex.h - one hexadecimal digit's value, for the parsers that read hex
 * (chunk sizes, key files). Must never allocate or make syscalls.
 */
#ifndef BLITZ_HEX_H
#define BLITZ_HEX_H

/* The value of the hex digit c (either case), -1 when c is none. */
static inline int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

#endif /* BLITZ_HEX_H */
