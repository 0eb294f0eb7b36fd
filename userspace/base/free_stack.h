/* SPDX-License-Identifier: GPL-2.0 */
/*
 * free_stack.h - a stack of free slot indexes (connections, buffers),
 * filled highest first so that slot 0 is handed out first and the low,
 * warm slots are reused. Allocates at setup only; never on a hot path.
 */
#ifndef BLITZ_FREE_STACK_H
#define BLITZ_FREE_STACK_H

#include <stdint.h>
#include <stdlib.h>

/* A stack (free() it) of every index below n, n - 1 at the bottom, or
 * NULL without memory. */
static inline uint32_t *free_stack_new(uint32_t n)
{
	uint32_t *s = malloc((n ? n : 1) * sizeof(*s));

	for (uint32_t i = 0; s && i < n; i++)
		s[i] = n - 1 - i;
	return s;
}

#endif /* BLITZ_FREE_STACK_H */
