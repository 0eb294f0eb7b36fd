/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksock.h - the kernel-socket filter's userspace side: load
 * blitz_ksock.bpf.c's tracers, attach them, seed the bitmap from the
 * sockets already there, and mark it ready (bpf/blitz_ksock.h says what
 * the bitmap means; docs/cost.md why this order is sound).
 *
 * Owns: the tracer object and its links. Must never mark the bitmap ready
 * unless every tracer is attached and the seed ran to its end after them;
 * on any failure the bitmap stays not ready, and the XDP program looks up
 * every segment as before.
 */
#ifndef BLITZ_KSOCK_USER_H
#define BLITZ_KSOCK_USER_H

#include <stddef.h>

#include <linux/types.h>

struct blitz_ksock;

/*
 * Attach the tracers for local port port (host order) and seed from this
 * network namespace's sockets. 0 and *out, or -errno with one line in why
 * (for `blitz status` and the load's own line) and *out NULL.
 */
int blitz_ksock_start(__u16 port, struct blitz_ksock **out, char *why,
		      size_t why_len);
/* The bitmap's fd, for bpf_map__reuse_fd() on the XDP program's ksock. */
int blitz_ksock_map_fd(const struct blitz_ksock *k);
/* Pin every tracer link as dir/ksock_<program> (blitz load: the tracers
 * outlive the process, and go when the pins go); a pin of that name that
 * is there already is replaced in one step. 0 or -errno. */
int blitz_ksock_pin(struct blitz_ksock *k, const char *dir);
/* Close the handles. Links not pinned detach, and the bitmap is marked
 * not ready first (no tracer feeds it any more). */
void blitz_ksock_free(struct blitz_ksock *k);

/* What the XDP program's ksock map (fd) says: 1 ready for port (*bits set
 * of BLITZ_KSOCK_WORDS * 64), 0 not ready (every segment looked up),
 * -errno. */
int blitz_ksock_state(int map_fd, __u16 *port, unsigned long *bits);

#endif /* BLITZ_KSOCK_USER_H */
