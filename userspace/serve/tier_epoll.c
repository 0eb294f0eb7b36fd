// SPDX-License-Identifier: GPL-2.0
/*
 * engine_epoll.c - the epoll engine alone: serve's kernel path (started
 * for every engine) is the whole server. The tier of `serve` without an
 * interface, of --engine epoll, and auto's last fallback.
 *
 * Owns: nothing but the tier line. Must never attach anything.
 */
#include <stdio.h>

#include "engine.h"

static int epoll_run(struct serve_ctx *c)
{
	printf("blitz: serving on %s port %u: tier epoll (%d threads)%s\n",
	       serve_where(c), epoll_engine_port(c->kernel),
	       epoll_engine_threads(c->kernel),
	       c->fallback_why ? c->fallback_why : "");
	fflush(stdout);
	serve_set_tier(c, c->fallback_tier ? c->fallback_tier : "epoll", 0);
	serve_wait(c);
	return 0;
}

const struct engine_desc engine_epoll = {
	.name = "epoll",
	.about = "kernel sockets only: the kernel path alone",
	.xdp = ENGINE_XDP_NONE,
	.run = epoll_run,
};
