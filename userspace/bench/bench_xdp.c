// SPDX-License-Identifier: GPL-2.0
/*
 * bench_xdp.c - the load generator's XDP program and AF_XDP socket
 * (bench_int.h): bench_gen.bpf.c attached to the client interface for a run,
 * the program that was there put back after.
 *
 * Owns: the client interface's XDP attachment during a run, and the pin
 * BENCH_PREV_PIN/<ifname> of the program it displaced. Must never leave
 * bench_gen.bpf.c attached when it returns. A run killed (SIGKILL) takes
 * its program with it when the interface had none (a bpf_link); when it
 * displaced one (netlink: a link cannot replace it), the next run finds
 * its own program left there and puts the pinned one back after it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_gen.skel.h"
#include "bench_int.h"
#include "loader.h"
#include "log.h"

/* ---- setup and teardown ---- */

#define BENCH_PREV_PIN "/sys/fs/bpf/blitz-bench"

static void prev_pin(char *buf, size_t len, const char *ifname)
{
	snprintf(buf, len, "%s/%s", BENCH_PREV_PIN, ifname);
}

/* The program to put back after the run, from old_id (attached now), in
 * g->old_prog_fd (-1: none). 0, or -errno said. */
static int take_old_prog(struct gen *g, __u32 old_id)
{
	char pin[128], name[BPF_OBJ_NAME_LEN];
	int fd;

	prev_pin(pin, sizeof(pin), g->p->ifname);
	fd = bpf_prog_get_fd_by_id(old_id);
	if (fd < 0) {
		pr_warn("cannot take a handle on XDP program %u of %s to "
			"restore it later: %s\n",
			old_id, g->p->ifname, strerror(errno));
		return -errno;
	}
	/* This generator's own program: a killed run left it. */
	if (!blitz_prog_name(old_id, name) && !strcmp(name, "bench_gen_rx")) {
		close(fd);
		g->old_prog_fd = bpf_obj_get(pin); /* -1: nothing was there */
		pr_warn("%s: a killed `blitz bench` left its XDP program "
			"there; %s after this run\n",
			g->p->ifname,
			g->old_prog_fd >= 0
				? "the program it displaced goes back"
				: "it goes");
		return 0;
	}
	g->old_prog_fd = fd;
	/* Kept pinned for the run: a killed run must not lose it. */
	mkdir(BENCH_PREV_PIN, 0700);
	unlink(pin);
	if (bpf_obj_pin(fd, pin))
		pr_warn("cannot pin XDP program %u of %s at %s (%s): a killed "
			"run would lose it\n",
			old_id, g->p->ifname, pin, strerror(errno));
	return 0;
}

int bg_xdp_attach(struct gen *g)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
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
		err = take_old_prog(g, old_id);
		if (err)
			return err;
	}
	if (g->old_prog_fd >= 0) {
		/* Swapped in by netlink: a link cannot replace it. */
		err = bpf_xdp_attach(g->ifindex, fd, g->xdp_flags, NULL);
	} else {
		/* A link: gone with the process, however it ends. (A killed
		 * run's own program, if any, goes first.) */
		if (old_id)
			bpf_xdp_detach(g->ifindex, g->xdp_flags, NULL);
		lo.flags = g->xdp_flags;
		g->link_fd = bpf_link_create(fd, g->ifindex, BPF_XDP, &lo);
		if (g->link_fd < 0) {
			g->xdp_flags = XDP_FLAGS_SKB_MODE;
			lo.flags = g->xdp_flags;
			g->link_fd =
				bpf_link_create(fd, g->ifindex, BPF_XDP, &lo);
		}
		err = g->link_fd < 0 ? -errno : 0;
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
	char pin[128];

	if (g->attached) {
		int err = 0;

		if (g->link_fd >= 0)
			close(g->link_fd); /* the link's only fd: detached */
		else if (g->old_prog_fd >= 0)
			err = bpf_xdp_attach(g->ifindex, g->old_prog_fd,
					     g->xdp_flags, NULL);
		if (err)
			pr_warn("could not restore the XDP program of %s: %s "
				"(check with `ip link show %s`)\n",
				g->p->ifname, strerror(-err), g->p->ifname);
		else if (g->old_prog_fd >= 0) {
			prev_pin(pin, sizeof(pin), g->p->ifname);
			unlink(pin);
		}
		g->attached = false;
		g->link_fd = -1;
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
