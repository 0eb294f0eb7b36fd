// SPDX-License-Identifier: GPL-2.0
/*
 * bench_xdp.c - the load generator's XDP program and AF_XDP socket
 * (bench_int.h): bench_gen.bpf.c attached to the client interface for a run,
 * the program that was there put back after.
 *
 * Owns: the client interface's XDP attachment during a run. Must never
 * leave bench_gen.bpf.c attached when it returns.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_gen.skel.h"
#include "bench_int.h"
#include "log.h"

/* ---- setup and teardown ---- */

int bg_xdp_attach(struct gen *g)
{
	const struct bench_params *p = g->p;
	uint32_t old_id = 0;
	int err, fd;

	g->old_prog_fd = -1;
	g->skel = bench_gen_bpf__open();
	if (!g->skel) {
		pr_warn("cannot open the bench XDP program: %s\n",
			strerror(errno));
		return -errno;
	}
	g->skel->rodata->target_v6 = (__u8)p->v6;
	memcpy((void *)&g->skel->rodata->target_ip_be, p->dst_addr, 4);
	memcpy((void *)g->skel->rodata->target_ip6, p->dst_addr, 16);
	g->skel->rodata->target_port_be = htons(p->dst_port);
	/* Every thread's ports: each thread has a slice of them. */
	g->skel->rodata->port_lo = g->all_port_lo;
	g->skel->rodata->port_hi = g->all_port_hi;
	err = bench_gen_bpf__load(g->skel);
	if (err) {
		pr_warn("cannot load the bench XDP program: %s\n",
			strerror(-err));
		return err;
	}
	fd = bpf_program__fd(g->skel->progs.bench_gen_rx);
	/* veth drops redirected and XDP_TX'd frames unless the receiving
	 * side runs a native program, so native first; whatever program was
	 * there (the testbed's xdp_pass) is put back afterwards. */
	g->xdp_flags = XDP_FLAGS_DRV_MODE;
	if (!bpf_xdp_query_id(g->ifindex, XDP_FLAGS_DRV_MODE, &old_id) &&
	    old_id) {
		g->old_prog_fd = bpf_prog_get_fd_by_id(old_id);
		if (g->old_prog_fd < 0) {
			err = -errno;
			pr_warn("cannot take a handle on XDP program %u of %s "
				"to restore it later: %s\n",
				old_id, p->ifname, strerror(errno));
			return err;
		}
	}
	err = bpf_xdp_attach(g->ifindex, fd, g->xdp_flags, NULL);
	if (err && g->old_prog_fd < 0) {
		g->xdp_flags = XDP_FLAGS_SKB_MODE;
		err = bpf_xdp_attach(g->ifindex, fd, g->xdp_flags, NULL);
	}
	if (err) {
		pr_warn("cannot attach the bench XDP program to %s: %s\n",
			p->ifname, strerror(-err));
		return err;
	}
	g->attached = true;
	g->r->xdp_mode = g->xdp_flags == XDP_FLAGS_DRV_MODE ? "native" : "skb";
	return 0;
}

void bg_xdp_detach(struct gen *g)
{
	if (g->attached) {
		int err;

		if (g->old_prog_fd >= 0)
			err = bpf_xdp_attach(g->ifindex, g->old_prog_fd,
					     g->xdp_flags, NULL);
		else
			err = bpf_xdp_detach(g->ifindex, g->xdp_flags, NULL);
		if (err)
			pr_warn("could not restore the XDP program of %s: %s "
				"(check with `ip link show %s`)\n",
				g->p->ifname, strerror(-err), g->p->ifname);
		g->attached = false;
	}
	if (g->old_prog_fd >= 0)
		close(g->old_prog_fd);
	bench_gen_bpf__destroy(g->skel);
}

int bg_xsk_setup(struct gen *g)
{
	struct blitz_xsk_cfg xc = {
		.ifname = g->p->ifname,
		.queue = g->p->queue,
		.frames = UMEM_FRAMES_BIG,
		.min_frames = UMEM_FRAMES_SMALL,
		.tx_frames = TX_FRAMES,
		.frame_size = BENCH_FRAME_SIZE,
		.xdp_flags = g->xdp_flags,
	};
	int err;

	err = blitz_xsk_open(&g->x, &xc);
	if (err)
		return err;
	g->r->xsk_mode = blitz_xsk_mode(&g->x);
	/* RX: 3/4 of the frames for replies to batches and SYNs (a batch's
	 * replies may take two frames: a third of them); TX: the batches
	 * and SYNs leave OPEN_TX_RESERVE frames for ACKs and RSTs. */
	g->max_syn = MAX_SYN;
	g->max_out = g->x.n_rx / 3;
	if (g->max_out > g->x.n_tx - OPEN_TX_RESERVE * 2 - g->max_syn)
		g->max_out = g->x.n_tx - OPEN_TX_RESERVE * 2 - g->max_syn;
	if (g->max_out > (g->p->window ? g->p->window : MAX_OUT))
		g->max_out = g->p->window ? g->p->window : MAX_OUT;
	err = xsk_socket__update_xskmap(g->x.xsk,
					bpf_map__fd(g->skel->maps.xsks));
	if (err) {
		pr_warn("cannot put the AF_XDP socket in the XSKMAP: %s\n",
			strerror(-err));
		return err;
	}
	return 0;
}

void bg_xsk_teardown(struct gen *g)
{
	blitz_xsk_log_stats(&g->x, "bench");
	blitz_xsk_close(&g->x);
}
