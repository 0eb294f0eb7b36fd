/* SPDX-License-Identifier: GPL-2.0 */
/*
 * epoll_engine.h - the kernel-path engine: HTTP/1.1 over ordinary kernel
 * TCP sockets, one epoll loop per thread.
 *
 * Background. This engine is what answers whatever the fast paths (xdp,
 * afxdp, dpdk) do not, on the same port, and it is the whole server when
 * no fast path can attach. It speaks the same wire contract with the same
 * prebuilt response bytes (http.h) as every other engine.
 *
 * Shape. Each worker thread owns: one SO_REUSEPORT listener per configured
 * address (or one dual-stack wildcard listener on [::]), one epoll
 * instance, a table of connections and a pool of I/O buffers, both sized
 * by max_conns / threads and reserved (not touched) up front, and its own
 * copy of the responses whose Date it rewrites once per second. Nothing
 * is shared between workers but the stop flag and the rate limit of the
 * "connection cap reached" message, so the hot path takes no lock.
 *
 * Per connection: sockets are registered once, edge-triggered, for input
 * and output. A buffer is taken from the pool when bytes arrive and given
 * back when the connection is idle again (no unparsed input, no unsent
 * output), so idle keep-alive connections cost a table slot only. A read
 * batch is parsed request by request by the request loop every engine
 * shares (http_conn.h: bodies, chunked, the close rules); the responses of
 * one batch go out in one send(). After a closing response: shutdown(SHUT_WR),
 * then read and discard until the peer closes (bounded), so unread request
 * bytes never turn the close into a RST that would destroy the response.
 *
 * Timeouts (checked once per loop tick): idle keep-alive, a header
 * section not complete within header_timeout_ms of its first byte (closed
 * silently), lingering close, graceful-shutdown drain.
 *
 * Must never: allocate or make syscalls other than recv/send/epoll_wait
 * per request; block; answer with bytes other than http_responses'.
 */
#ifndef BLITZ_EPOLL_ENGINE_H
#define BLITZ_EPOLL_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "service.h"

struct http_responses;
#include "../bpf/blitz_shared.h"

#define EPOLL_DEFAULT_MAX_CONNS 100000
#define EPOLL_DEFAULT_IDLE_MS 60000
#define EPOLL_DEFAULT_HEADER_MS 10000
#define EPOLL_DEFAULT_DRAIN_MS 2000

struct epoll_engine_opts {
	const struct blitz_service *svc; /* port, addresses */
	/* The responses built once from svc (service_responses()): copied
	 * at start, with the body they reference. */
	const struct http_responses *resp;
	int threads; /* 0: the CPUs this process may run on */
	/* Open connections per process, split evenly over the threads.
	 * 0: EPOLL_DEFAULT_MAX_CONNS, lowered silently to what the open
	 * files limit allows; a value given explicitly that the limit
	 * cannot hold is lowered with a warning. */
	int max_conns;
	int idle_timeout_ms;   /* keep-alive idle; 0: default */
	int header_timeout_ms; /* first byte to end of headers; 0: default */
	int drain_ms;	       /* graceful shutdown budget; 0: default */
};

struct epoll_engine_stats {
	uint64_t accepted;		 /* connections accepted */
	uint64_t closed;		 /* connections closed (any reason) */
	uint64_t requests;		 /* requests answered (any status) */
	uint64_t resp[BLITZ_RESP_KINDS]; /* answers by response kind */
	uint64_t tx_bytes;	  /* response bytes handed to the kernel */
	uint64_t idle_timeouts;	  /* keep-alive connections timed out */
	uint64_t header_timeouts; /* slow header senders closed */
	uint64_t cap_pauses;	  /* times a thread stopped accepting (cap) */
	uint64_t accept_errors;	  /* accept() failures other than EAGAIN */
	uint64_t conn_errors;	  /* connections closed on a socket error */
	uint64_t open;		  /* connections open now */
};

struct epoll_engine; /* opaque */

/*
 * Copy the responses, raise RLIMIT_NOFILE, bind every listener (so a
 * port in use or an address not on this host is reported here, in one
 * line, before any thread runs) and start the worker threads. SIGINT,
 * SIGTERM, SIGHUP and SIGPIPE are blocked in the workers, so the caller's
 * thread gets the signals (sends use MSG_NOSIGNAL: no SIGPIPE at all).
 * Returns 0 or -errno with a message printed; on error nothing is open.
 */
int epoll_engine_start(const struct epoll_engine_opts *o,
		       struct epoll_engine **out);

/* The port the listeners are bound to (the chosen one when svc->port was
 * 0, which only tests use). */
uint16_t epoll_engine_port(const struct epoll_engine *e);
int epoll_engine_threads(const struct epoll_engine *e);
/* Open connections at most, after fitting the open files limit. */
long epoll_engine_max_conns(const struct epoll_engine *e);
/* True when a worker stopped on an error (it said why): stop and join. */
bool epoll_engine_failed(const struct epoll_engine *e);

/* Ask the workers to stop: close the listeners, finish what is in flight
 * (answers to requests already received, with Connection: close) within
 * drain_ms, then close everything. Async-signal-safe. Returns at once. */
void epoll_engine_request_stop(struct epoll_engine *e);

/* Wait for the workers after request_stop (or a fatal worker error),
 * then free e. Fills *st with the final totals when st is not NULL.
 * Returns 0, or -errno when a worker failed. */
int epoll_engine_join(struct epoll_engine *e, struct epoll_engine_stats *st);

/* Totals over the workers, readable while they run (a snapshot; each
 * counter is only written by its own thread). */
void epoll_engine_stats(const struct epoll_engine *e,
			struct epoll_engine_stats *st);
void epoll_engine_stats_print(FILE *f, const struct epoll_engine_stats *st);

/*
 * The whole engine in the caller's thread: start, wait until *stop
 * becomes non-zero (the caller's SIGINT/SIGTERM handler sets it), stop
 * gracefully, print the summary on stdout, join. Returns 0 or -errno.
 */
int epoll_engine_run(const struct epoll_engine_opts *o,
		     volatile sig_atomic_t *stop);

#endif /* BLITZ_EPOLL_ENGINE_H */
