// SPDX-License-Identifier: GPL-2.0
/*
 * xsk.c - one AF_XDP socket and its UMEM (the contract is in xsk.h).
 *
 * Owns: the UMEM mapping, the socket, its four rings and the TX free
 * stack. Must never load or attach an XDP program, never allocate after
 * open, and never make a syscall per frame.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "log.h"
#include "xsk.h"

#define DEFAULT_FRAME_SIZE 2048
#define DEFAULT_MIN_FRAMES 256

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t pow2_floor(uint32_t v)
{
	uint32_t p = 1;

	while (p * 2 <= v)
		p *= 2;
	return p;
}

static uint32_t pow2_ceil(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p *= 2;
	return p;
}

/* The TX frames of an n-frame UMEM. */
static uint32_t tx_share(const struct blitz_xsk_cfg *c, uint32_t n)
{
	return c->tx_frames && c->tx_frames < n / 2 ? c->tx_frames : n / 2;
}

/* Map and register the UMEM, halving until it registers. */
static int xsk_umem_open(struct blitz_xsk *x, const struct blitz_xsk_cfg *c)
{
	uint32_t min = c->min_frames ? c->min_frames : DEFAULT_MIN_FRAMES;
	uint32_t want = c->frames > min ? c->frames : min;
	uint32_t n = pow2_floor(want);
	int ret = -ENOMEM;

	for (; n >= min; n /= 2) {
		uint32_t ntx = tx_share(c, n);
		struct xsk_umem_config uc = {
			.fill_size = pow2_ceil(n - ntx),
			.comp_size = pow2_ceil(ntx),
			.frame_size = x->frame_size,
			.frame_headroom = 0,
			.flags = 0,
		};

		x->area_size = (size_t)n * x->frame_size;
		x->area =
			mmap(NULL, x->area_size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (x->area == MAP_FAILED) {
			x->area = NULL;
			ret = -errno;
			continue;
		}
		ret = xsk_umem__create(&x->umem, x->area, x->area_size, &x->fq,
				       &x->cq, &uc);
		if (!ret) {
			x->nframes = n;
			x->n_tx = ntx;
			x->n_rx = n - ntx;
			return 0;
		}
		pr_debug("xsk_umem__create(%u frames of %u): %s\n", n,
			 x->frame_size, strerror(-ret));
		munmap(x->area, x->area_size);
		x->area = NULL;
		x->umem = NULL;
	}
	pr_warn("xsk_umem__create(%s queue %u, %u..%u frames of %u bytes): "
		"%s: raise `ulimit -l` or run with CAP_IPC_LOCK\n",
		c->ifname, c->queue, min, want, x->frame_size, strerror(-ret));
	return ret;
}

/* Bind zero-copy, else copy; record what the kernel gave and why. */
static int xsk_socket_open(struct blitz_xsk *x, const struct blitz_xsk_cfg *c)
{
	struct xsk_socket_config sc = {
		.rx_size = pow2_ceil(x->n_rx),
		.tx_size = pow2_ceil(x->n_tx),
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = c->xdp_flags,
	};
	struct xdp_options opts;
	socklen_t ol = sizeof(opts);
	int ret;

	if (c->force_copy) {
		snprintf(x->mode_why, sizeof(x->mode_why),
			 "copy mode asked for");
	} else {
		sc.bind_flags = XDP_USE_NEED_WAKEUP | XDP_ZEROCOPY;
		ret = xsk_socket__create(&x->xsk, c->ifname, c->queue, x->umem,
					 &x->rx, &x->tx, &sc);
		if (!ret)
			goto bound;
		x->xsk = NULL;
		snprintf(x->mode_why, sizeof(x->mode_why),
			 "bind with XDP_ZEROCOPY: %s%s", strerror(-ret),
			 ret == -EOPNOTSUPP || ret == -EPROTONOSUPPORT
				 ? " (the driver has no zero-copy AF_XDP)"
				 : "");
		pr_debug("xsk_socket__create(%s, queue %u, XDP_ZEROCOPY): %s; "
			 "trying XDP_COPY\n",
			 c->ifname, c->queue, strerror(-ret));
	}
	sc.bind_flags = XDP_USE_NEED_WAKEUP | XDP_COPY;
	ret = xsk_socket__create(&x->xsk, c->ifname, c->queue, x->umem, &x->rx,
				 &x->tx, &sc);
	if (ret) {
		x->xsk = NULL;
		pr_warn("xsk_socket__create(%s, queue %u, XDP_COPY): %s\n",
			c->ifname, c->queue, strerror(-ret));
		return ret;
	}
bound:
	x->fd = xsk_socket__fd(x->xsk);
	/* Trust the kernel's word over the flag we asked for. */
	if (!getsockopt(x->fd, SOL_XDP, XDP_OPTIONS, &opts, &ol))
		x->zerocopy = opts.flags & XDP_OPTIONS_ZEROCOPY;
	else
		x->zerocopy = !c->force_copy && !x->mode_why[0];
	if (x->zerocopy)
		snprintf(x->mode_why, sizeof(x->mode_why),
			 "the driver does zero-copy AF_XDP");
	return 0;
}

int blitz_xsk_open(struct blitz_xsk *x, const struct blitz_xsk_cfg *c)
{
	uint32_t i, idx;
	int ret;

	memset(x, 0, sizeof(*x));
	x->fd = -1;
	x->queue = c->queue;
	x->frame_size = c->frame_size ? c->frame_size : DEFAULT_FRAME_SIZE;
	if (x->frame_size & (x->frame_size - 1)) {
		pr_warn("AF_XDP frame size %u: must be a power of two\n",
			x->frame_size);
		return -EINVAL;
	}
	ret = xsk_umem_open(x, c);
	if (ret)
		goto fail;
	ret = xsk_socket_open(x, c);
	if (ret)
		goto fail;
	x->tx_free = calloc(x->n_tx, sizeof(*x->tx_free));
	if (!x->tx_free) {
		ret = -ENOMEM;
		goto fail;
	}
	if (xsk_ring_prod__reserve(&x->fq, x->n_rx, &idx) != x->n_rx) {
		pr_warn("fill ring of %s queue %u: cannot reserve %u entries\n",
			c->ifname, c->queue, x->n_rx);
		ret = -ENOSPC;
		goto fail;
	}
	for (i = 0; i < x->n_rx; i++)
		*xsk_ring_prod__fill_addr(&x->fq, idx + i) =
			(uint64_t)i * x->frame_size;
	xsk_ring_prod__submit(&x->fq, x->n_rx);
	for (i = x->n_rx; i < x->nframes; i++)
		x->tx_free[x->n_tx_free++] = (uint64_t)i * x->frame_size;
	return 0;
fail:
	blitz_xsk_close(x);
	return ret;
}

void blitz_xsk_close(struct blitz_xsk *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	x->xsk = NULL;
	x->fd = -1;
	if (x->umem)
		xsk_umem__delete(x->umem);
	x->umem = NULL;
	if (x->area)
		munmap(x->area, x->area_size);
	x->area = NULL;
	free(x->tx_free);
	x->tx_free = NULL;
	x->n_tx_free = 0;
}

void blitz_xsk_log_stats(const struct blitz_xsk *x, const char *who)
{
	struct xdp_statistics st;
	socklen_t sl = sizeof(st);

	if (!x->xsk || getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &st, &sl))
		return;
	pr_debug("%s: AF_XDP queue %u (%s): rx_dropped %llu rx_invalid %llu "
		 "tx_invalid %llu rx_ring_full %llu fill_ring_empty %llu "
		 "tx_ring_empty %llu\n",
		 who, x->queue, blitz_xsk_mode(x),
		 (unsigned long long)st.rx_dropped,
		 (unsigned long long)st.rx_invalid_descs,
		 (unsigned long long)st.tx_invalid_descs,
		 (unsigned long long)st.rx_ring_full,
		 (unsigned long long)st.rx_fill_ring_empty_descs,
		 (unsigned long long)st.tx_ring_empty_descs);
}

uint32_t blitz_xsk_tx_queue(struct blitz_xsk *x, const uint64_t *addr,
			    const uint32_t *len, uint32_t n)
{
	uint32_t idx, got, i;

	got = xsk_ring_prod__reserve(&x->tx, n, &idx);
	for (i = 0; i < got; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);

		d->addr = addr[i];
		d->len = len[i];
		d->options = 0;
	}
	if (got)
		xsk_ring_prod__submit(&x->tx, got);
	x->tx_unkicked += got;
	for (i = got; i < n; i++) {
		x->tx_free[x->n_tx_free++] = addr[i];
		x->tx_ring_full++;
	}
	return got;
}

void blitz_xsk_complete(struct blitz_xsk *x)
{
	uint32_t idx, n, i;

	n = xsk_ring_cons__peek(&x->cq, x->n_tx, &idx);
	for (i = 0; i < n; i++)
		x->tx_free[x->n_tx_free++] =
			*xsk_ring_cons__comp_addr(&x->cq, idx + i);
	if (n)
		xsk_ring_cons__release(&x->cq, n);
}

int blitz_xsk_kick_tx(struct blitz_xsk *x, int tries)
{
	uint64_t t0;
	int i;

	if (!x->tx_unkicked) {
		/* Nothing new: kick only for frames still unsent. */
		blitz_xsk_complete(x);
		if (x->n_tx_free == x->n_tx)
			return 0;
	}
	x->tx_unkicked = 0;
	if (!xsk_ring_prod__needs_wakeup(&x->tx))
		return 0;
	t0 = mono_ns();
	/* Copy mode transmits inside this call (and on veth the peer's
	 * receive path may run in it too): timed apart. */
	for (i = 0; i < tries; i++)
		if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0 ||
		    errno != EAGAIN)
			break;
	x->kick_ns += mono_ns() - t0;
	x->kicks++;
	return 1;
}

uint32_t blitz_xsk_rx_burst(struct blitz_xsk *x, struct xdp_desc *d,
			    uint32_t max)
{
	uint32_t idx, n, i;

	n = xsk_ring_cons__peek(&x->rx, max, &idx);
	for (i = 0; i < n; i++)
		d[i] = *xsk_ring_cons__rx_desc(&x->rx, idx + i);
	if (n)
		xsk_ring_cons__release(&x->rx, n);
	return n;
}

void blitz_xsk_refill(struct blitz_xsk *x, const struct xdp_desc *d, uint32_t n)
{
	uint32_t idx, i;

	if (!n)
		return;
	while (xsk_ring_prod__reserve(&x->fq, n, &idx) != n)
		;
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&x->fq, idx + i) =
			blitz_xsk_frame_of(x, d[i].addr);
	xsk_ring_prod__submit(&x->fq, n);
}

void blitz_xsk_kick_rx(struct blitz_xsk *x)
{
	if (xsk_ring_prod__needs_wakeup(&x->fq)) {
		recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		x->rx_kicks++;
	}
}
