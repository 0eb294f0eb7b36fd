/* SPDX-License-Identifier: GPL-2.0 */
/*
 * listener.h - is there a kernel TCP listener on the service port, in
 * the caller's network namespace (the interface's: the CLI sees only its
 * own namespace's interfaces)? Read from /proc/net/tcp and tcp6.
 *
 * Owns: that question and the one line load and status print about it:
 * what becomes of the requests the xdp engine passes to the kernel
 * (split requests, bodies) with and without a listener.
 * Read-only; prints nothing itself.
 */
#ifndef BLITZ_KERNEL_LISTENER_H
#define BLITZ_KERNEL_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * 1 when a socket in LISTEN state has local port port (any address,
 * IPv4 or IPv6), 0 when none has, -errno when neither file can be read.
 * addr (may be NULL) gets the first such listener's address as text.
 */
int kernel_listener(uint16_t port, char *addr, size_t len);

/*
 * The line (no newline) saying whether a kernel listener exists on port
 * and what becomes of what the xdp engine passes; handoff: the TC
 * hand-off is attached (without it the kernel resets those anyway).
 */
void kernel_listener_line(uint16_t port, bool handoff, char *out, size_t len);

#endif
