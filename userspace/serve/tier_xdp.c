// SPDX-License-Identifier: GPL-2.0
/*
 * engine_xdp.c - the xdp engine as serve runs it: the XDP program (a
 * bpf_link of serve, attached by serve) answers in the driver, and the TC
 * hand-off gives the kernel's listener, serve's epoll engine, what it does
 * not answer, on the same connection.
 *
 * Owns: the hand-off's attachment while serve runs. Must never outlive
 * serve: the link goes with the process, and finish() detaches TC.
 */
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "counters_xdp.h"
#include "engine.h"
#include "log.h"
#include "tc_handoff.h"

/* The TC hand-off, when the kernel has what it needs; a line otherwise. */
static struct tc_handoff *attach_handoff(struct serve_ctx *c)
{
	struct tc_handoff *h = NULL;

	if (!tc_handoff_supported()) {
		pr_info("blitz: no TC hand-off: bpf_sk_assign_tcp_reqsk "
			"needs Linux 6.9 or later; this kernel is %s: segments "
			"the XDP program does not answer reach the kernel "
			"without a connection\n",
			kernel_release(NULL));
		return NULL;
	}
	if (tc_handoff_attach(c->ifname, blitz_ifindex(c->ifname),
			      blitz_loaded_config_fd(c->xdp),
			      blitz_loaded_counters_fd(c->xdp),
			      blitz_loaded_responses_fd(c->xdp),
			      blitz_loaded_flows_fd(c->xdp), false, &h)) {
		pr_warn("serving without the TC hand-off: segments the XDP "
			"program does not answer reach the kernel without a "
			"connection\n");
		return NULL;
	}
	return h;
}

static int xdp_run(struct serve_ctx *c)
{
	char tier[64];

	/* The program passes everything until armed (serve_run.c's
	 * attach_xdp): a handshake it answered before the hand-off was
	 * there would be reset by the kernel at its first passed segment. */
	c->priv = attach_handoff(c);
	if (blitz_loaded_arm(c->xdp))
		return 1;
	printf("blitz: serving on %s port %u: tier xdp (%s) + epoll "
	       "fallback\n",
	       c->ifname, c->svc->port, blitz_loaded_mode(c->xdp));
	fflush(stdout);
	snprintf(tier, sizeof(tier), "xdp-%s+epoll", blitz_loaded_mode(c->xdp));
	serve_set_tier(c, tier, 0);
	serve_wait(c);
	return 0;
}

/* New connections reach the kernel listener until it stops. */
static int xdp_finish(struct serve_ctx *c)
{
	struct tc_handoff *h = c->priv;
	uint64_t tot[BLITZ_CNT_MAX] = {0};
	int ret = 0;

	if (!c->xdp) /* the XDP program never attached: nothing to undo */
		return 0;
	/* Unreadable: 0s (the map is this build's, so it never is). */
	counters_xdp_read(blitz_loaded_counters_fd(c->xdp), tot);
	printf("xdp: %llu requests answered in the driver, %llu "
	       "segments handed to the kernel\n",
	       (unsigned long long)tot[BLITZ_CNT_REQUESTS],
	       (unsigned long long)tot[BLITZ_CNT_HANDOFF]);
	/* XDP first: until the hand-off goes, what XDP answered still
	 * reaches the kernel on its connection. */
	if (blitz_loader_detach(c->xdp))
		ret = 1;
	c->xdp = NULL;
	if (h && tc_handoff_detach(h))
		ret = 1;
	c->priv = NULL;
	return ret;
}

const struct engine_desc engine_xdp = {
	.name = "xdp",
	.about = "answers in the NIC driver (XDP_TX), stateless cookies; the "
		 "TC hand-off passes the rest to the kernel",
	.xdp = ENGINE_XDP_ANSWER,
	.needs_ifname = true,
	.run = xdp_run,
	.finish = xdp_finish,
};
