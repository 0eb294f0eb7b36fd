/* SPDX-License-Identifier: GPL-2.0 */
/*
 * engine.h - the engine table of `blitz serve`: each engine is one
 * descriptor (struct engine_desc) in a file of its own (tier_<name>.c),
 * listed once in engine_table.c. serve (serve_run.c) runs every engine the
 * same way:
 *
 *   prepare()                 checks and records before anything starts
 *   epoll engine started      the kernel path, on the same port
 *   XDP program attached      when the engine needs one (desc->xdp)
 *   run()                     serves until SIGINT/SIGTERM (or the kernel
 *                             path failed); child engines are supervised
 *   finish()                  undoes what prepare() and run() left
 *   XDP detached, epoll stopped
 *
 * The tiers `--engine` takes are the table's names plus "auto" (xdp
 * native, then xdp skb, then epoll alone). Adding an engine is one row in
 * engine_table.c and one file.
 *
 * Owns: the contract between serve and its engines. Must never hold an
 * engine's own state: that lives in ctx->priv, the engine's file.
 */
#ifndef BLITZ_ENGINE_H
#define BLITZ_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "epoll_engine.h"
#include "loader.h"
#include "serve_state.h"
#include "service.h"

struct http_responses;
struct engine_desc;

#define SERVE_MAX_FWD 64 /* service options forwarded to a child binary */

/* What serve hands every engine. */
struct serve_ctx {
	const struct engine_desc *engine;
	const char *ifname; /* NULL: every interface (epoll alone) */
	enum blitz_xdp_mode_req xdp_mode;
	int queues; /* -q; 0: the engine's default */
	/* --max-conns; 0: each engine's default. afxdp and dpdk split it
	 * over their queues' connection tables. */
	int max_conns;
	/* --idle-timeout in ms; 0: each engine's default (60 s). */
	int idle_ms;
	/* --umem-frames (afxdp): UMEM frames a queue; 0: by its table. */
	int umem_frames;
	const struct blitz_service *svc;
	const struct http_responses *resp; /* built once from svc */
	/* The service options as typed, for a child binary's command line. */
	char *fwd[SERVE_MAX_FWD];
	int n_fwd;

	struct epoll_engine *kernel; /* the kernel path, started by serve */
	struct blitz_loaded *xdp;    /* the XDP program, when desc->xdp */
	struct serve_state *state;   /* what `blitz status` reads */
	volatile sig_atomic_t *stop; /* SIGINT/SIGTERM */
	volatile sig_atomic_t *usr1; /* SIGUSR1: "print your counters" */
	void *priv;		     /* the engine's own */
	/* engine_epoll as auto's fallback: the words after the tier, and
	 * the tier status shows ("epoll (behind blitz load)"); NULL: none. */
	const char *fallback_why, *fallback_tier;
};

enum engine_xdp {
	ENGINE_XDP_NONE,     /* no XDP program (dpdk takes the NIC, epoll) */
	ENGINE_XDP_ANSWER,   /* the program answers (BLITZ_MODE_XDP) */
	ENGINE_XDP_REDIRECT, /* the program redirects to AF_XDP sockets */
};

struct engine_desc {
	const char *name;    /* the tier name `--engine` takes */
	const char *about;   /* one line, for docs */
	enum engine_xdp xdp; /* which XDP program it needs */
	bool needs_ifname;
	/* Before the kernel path starts (may be NULL). 0, or -1 said why. */
	int (*prepare)(struct serve_ctx *c);
	/* Serve until *c->stop or the kernel path failed. The exit status
	 * of serve (0 or 1). */
	int (*run)(struct serve_ctx *c);
	/* After run (or a failed start): undo what prepare and run left
	 * (may be NULL), print the engine's summary line. 0, or 1 when
	 * something could not be undone (serve then exits 1). */
	int (*finish)(struct serve_ctx *c);
	/* serve passes SIGUSR1 on (the engine prints its counters). */
	bool usr1;
};

/* The table (engine_table.c), ending with a NULL name. */
extern const struct engine_desc *const engine_table[];
/* The descriptor called name, or NULL. */
const struct engine_desc *engine_find(const char *name);
/* "auto|xdp|afxdp|dpdk|epoll": the tiers, for the -e option's help. */
const char *engine_tier_names(void);
/* "auto, xdp, afxdp, dpdk or epoll": for the bad-engine line. */
const char *engine_tier_list(void);

extern const struct engine_desc engine_xdp, engine_afxdp, engine_dpdk,
	engine_epoll;

/* serve's helpers for the engines (serve_run.c). */
/* Sleep until *c->stop or the kernel path failed. */
void serve_wait(struct serve_ctx *c);
/* Set the tier `blitz status` shows, and the engine child's pid. */
void serve_set_tier(struct serve_ctx *c, const char *tier, pid_t child);
/* "ifname" or "all interfaces". */
const char *serve_where(const struct serve_ctx *c);

#endif /* BLITZ_ENGINE_H */
