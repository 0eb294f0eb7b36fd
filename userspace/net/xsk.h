/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xsk.h - one AF_XDP socket with its own UMEM: the only place blitz sets
 * up AF_XDP. Used by the afxdp engine (one per RX queue) and by the load
 * generator of `blitz bench`.
 *
 * Background. An AF_XDP socket receives the frames an XDP program
 * redirects into it (through an XSKMAP entry keyed by RX queue) and sends
 * frames from user memory, the UMEM: one mmap'd area cut into frames of
 * frame_size bytes, registered with the kernel. Four single-producer,
 * single-consumer rings of frame addresses move frames between the two:
 *
 *   ring        producer -> consumer   carries
 *   fill        owner    -> kernel     empty frames for RX
 *   rx          kernel   -> owner      received frames (addr, len)
 *   tx          owner    -> kernel     frames to send (addr, len)
 *   completion  kernel   -> owner      sent frames, free again
 *
 * The UMEM is split once: the first n_rx frames are RX frames, all handed
 * to the fill ring at open and handed back there after each receive (so
 * the fill ring never runs dry while the owner keeps up); the last n_tx
 * frames are TX frames, on a free stack (tx_free) owned by the owner, given
 * to the kernel on the tx ring and taken back from the completion ring.
 * A frame is owned by exactly one side at any time.
 *
 * Ownership. One thread owns a struct blitz_xsk (and every ring of it):
 * nothing here locks. The caller owns the XSKMAP entry and the XDP
 * program; blitz_xsk_open() loads and attaches nothing
 * (XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD).
 *
 * Fallbacks, in order, each logged at debug level:
 *   size  the UMEM is locked memory: with RLIMIT_MEMLOCK low (8 MiB without
 *         CAP_IPC_LOCK) registration fails, so the frame count is halved
 *         until it registers or falls below min_frames;
 *   mode  XDP_ZEROCOPY is tried first (the driver DMAs into the UMEM),
 *         then XDP_COPY (the kernel copies each frame: always available).
 * The mode the kernel really gave (getsockopt XDP_OPTIONS) and why are in
 * zerocopy / mode_why after open, for `serve` and `status` to report.
 *
 * need_wakeup is always requested: the kernel says on the fill and tx
 * rings when it needs a syscall to make progress, and the kick helpers
 * make one only then. In copy mode every transmission is done inside the
 * sendto() kick (a bounded batch per call: more may need a retry).
 */
#ifndef BLITZ_XSK_H
#define BLITZ_XSK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/if_xdp.h>

#include <xdp/xsk.h>

struct blitz_xsk_cfg {
	const char *ifname;
	uint32_t queue;	     /* RX queue to bind */
	uint32_t frames;     /* UMEM frames wanted; rounded down to 2^k */
	uint32_t min_frames; /* smallest acceptable when halving; 0: 256 */
	uint32_t tx_frames;  /* of frames, TX frames (at most half); 0: half */
	uint32_t frame_size; /* power of two; 0: 2048 */
	uint32_t xdp_flags;  /* the XDP attach mode, for libxdp's config */
	bool force_copy;     /* skip the zero-copy attempt */
};

struct blitz_xsk {
	/* UMEM */
	void *area;
	size_t area_size;
	uint32_t frame_size;
	uint32_t nframes, n_rx, n_tx;
	struct xsk_umem *umem;
	/* the socket and its rings */
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	int fd;
	uint32_t queue;
	bool zerocopy;
	char mode_why[160]; /* why this mode, e.g. the zero-copy bind's errno */
	/* the TX free stack */
	uint64_t *tx_free;
	uint32_t n_tx_free;
	uint32_t tx_unkicked; /* queued since the last kick */
	/* counters, owned by the owner thread */
	uint64_t kicks, kick_ns, tx_ring_full, rx_kicks;
};

/*
 * Map a UMEM (MAP_POPULATE), register it, create and bind the socket,
 * put every RX frame in the fill ring and every TX frame on the free
 * stack. Syscalls: mmap, setsockopt/mmap of the rings, bind, getsockopt.
 * 0, or a negative errno after one pr_warn line that names the failing
 * call and its arguments; x is then closed (blitz_xsk_close is harmless).
 */
int blitz_xsk_open(struct blitz_xsk *x, const struct blitz_xsk_cfg *c);

/* Undo blitz_xsk_open, also a partial one; a zeroed x is fine. Closing
 * the socket removes it from every XSKMAP it was in. */
void blitz_xsk_close(struct blitz_xsk *x);

/* "zero-copy" or "copy". */
static inline const char *blitz_xsk_mode(const struct blitz_xsk *x)
{
	return x->zerocopy ? "zero-copy" : "copy";
}

/* The kernel's XDP_STATISTICS of the socket, logged at debug level. */
void blitz_xsk_log_stats(const struct blitz_xsk *x, const char *who);

static inline void *blitz_xsk_data(const struct blitz_xsk *x, uint64_t addr)
{
	return xsk_umem__get_data(x->area, addr);
}

/* The start of the frame an RX descriptor's address points into. */
static inline uint64_t blitz_xsk_frame_of(const struct blitz_xsk *x,
					  uint64_t addr)
{
	return addr & ~(uint64_t)(x->frame_size - 1);
}

/* ---- TX: no syscall except in blitz_xsk_kick_tx ---- */

/* A free TX frame's address into *addr; false when none is free. */
static inline bool blitz_xsk_tx_alloc(struct blitz_xsk *x, uint64_t *addr)
{
	if (!x->n_tx_free)
		return false;
	*addr = x->tx_free[--x->n_tx_free];
	return true;
}

/* Give back a TX frame that was allocated and not sent. */
static inline void blitz_xsk_tx_free(struct blitz_xsk *x, uint64_t addr)
{
	x->tx_free[x->n_tx_free++] = addr;
}

/*
 * Queue n allocated frames (addr[i], len[i]) on the tx ring and publish
 * them. Returns how many were queued; the rest went back to the free stack
 * (counted in tx_ring_full: the ring holds n_tx entries, so only a caller
 * that queues frames it did not allocate here can see that).
 */
uint32_t blitz_xsk_tx_queue(struct blitz_xsk *x, const uint64_t *addr,
			    const uint32_t *len, uint32_t n);

/* Take the frames the kernel has sent back onto the free stack. */
void blitz_xsk_complete(struct blitz_xsk *x);

/*
 * Make the kernel send what is on the tx ring when it asks for a wakeup:
 * sendto(MSG_DONTWAIT), repeated while it says EAGAIN (copy mode moves a
 * bounded batch per call) up to tries times. Only when frames are queued
 * since the last kick or still unsent. Time spent is added to kick_ns.
 * Returns 1 when it made the call, 0 when nothing needed it.
 */
int blitz_xsk_kick_tx(struct blitz_xsk *x, int tries);

/* ---- RX ---- */

/*
 * Up to max received descriptors into d (addr points at the frame's data,
 * len its length), released from the rx ring. The frames stay the
 * caller's until blitz_xsk_refill() hands them back. No syscall.
 */
uint32_t blitz_xsk_rx_burst(struct blitz_xsk *x, struct xdp_desc *d,
			    uint32_t max);

/* Hand n received frames back to the fill ring (the frame of each addr).
 * The fill ring has room for every RX frame: this cannot come up short
 * for long and spins rather than lose a frame. No syscall. */
void blitz_xsk_refill(struct blitz_xsk *x, const struct xdp_desc *d,
		      uint32_t n);

/* recvfrom(MSG_DONTWAIT) when the fill ring asks for a wakeup (the kernel
 * stopped receiving because it found the fill ring empty). */
void blitz_xsk_kick_rx(struct blitz_xsk *x);

#endif /* BLITZ_XSK_H */
