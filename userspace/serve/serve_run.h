/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve_run.h - the serve runtime: what `blitz serve` does once its
 * command line is read. The CLI (cmd_serve.c) fills a struct serve_ctx
 * (engine.h), installs the signal handlers behind c->stop and c->usr1,
 * and calls serve_run().
 *
 * Owns: running one engine with the kernel path beside it. Must never
 * return with anything attached or a thread running.
 */
#ifndef BLITZ_SERVE_RUN_H
#define BLITZ_SERVE_RUN_H

#include <stdbool.h>

#include "engine.h"
#include "epoll_engine.h"

struct serve_run_opts {
	const struct epoll_engine_opts *eo; /* the kernel path's options */
	const char *metrics;		    /* --metrics [ADDR:]PORT, or NULL */
	/* auto: an XDP attach that fails falls back to the epoll engine
	 * alone instead of stopping serve. */
	bool auto_tier;
};

/*
 * Run c->engine: prepare, start the epoll engine (the kernel path), attach
 * the XDP program the engine needs, serve until *c->stop, then undo it all
 * in reverse and print the epoll summary. The exit status of serve (0 or
 * 1); every failure said why in one line.
 */
int serve_run(struct serve_ctx *c, const struct serve_run_opts *o);

#endif /* BLITZ_SERVE_RUN_H */
