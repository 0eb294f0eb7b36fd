/* SPDX-License-Identifier: GPL-2.0 */
/*
 * http_conn.h - the request loop of one HTTP/1.1 connection, shared by
 * every engine that parses HTTP in userspace: the TCP core (afxdp, dpdk)
 * and the epoll engine.
 *
 * Owns: what happens between the bytes a connection received and the
 * answers it owes: finding each complete request (http_parse_request),
 * skipping request bodies (Content-Length, chunked), the close rules
 * (Connection: close, HTTP/1.0 without keep-alive, every error answer, a
 * malformed chunked body, draining), and which prebuilt response answers
 * each request. The engine owns the bytes (its receive buffer or the
 * frame), the output (a TCP core response queue, an epoll output buffer),
 * and when to call again.
 *
 * Must never allocate, make a syscall, or copy request bytes: the TCP core
 * runs it per segment on its hot path. The state is a few words per
 * connection, zero-initialised (http_conn_init or memset).
 *
 *   receive bytes ──▶ http_conn_consume(state, buf, len, out, flags)
 *                        │ returns the bytes it is done with
 *                        ▼
 *                 out->kind[0..n): enum blitz_resp_kind, in request order
 *                 http_conn_closing(state): close after these answers
 */
#ifndef BLITZ_HTTP_CONN_H
#define BLITZ_HTTP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "http.h"

struct http_conn {
	uint64_t body_left;	   /* Content-Length body bytes to skip */
	struct http_chunked chunk; /* the chunked body being skipped */
	bool chunked;		   /* skipping a chunked body */
	bool closing; /* a closing answer was given: the rest is discarded */
};

/* Where the answers go: kind[n++] per answer, never more than room. */
struct http_conn_out {
	uint8_t *kind;
	unsigned int n;
	unsigned int room;
};

/* Every answer closes: keep-alive kinds become their close kinds (the
 * epoll engine while it drains for shutdown). */
#define HTTP_CONN_DRAIN 1u

/*
 * Consume buf[0..len), the connection's next unconsumed bytes, in order:
 * answer every complete request into out (after out->n), skip the bodies.
 * Returns the bytes consumed; the caller drops them and keeps the rest,
 * which begins where the next call must begin. It stops:
 * - at an incomplete request (the rest is its beginning: call again with
 *   more bytes after it);
 * - when an answer is owed and out is full (out->n == out->room, with
 *   bytes left): make room, call again with the rest;
 * - at a closing answer: then http_conn_closing() is true, the return is
 *   len (what follows is discarded), and every later call answers nothing
 *   and consumes everything.
 * Body bytes are skipped even when out is full.
 */
size_t http_conn_consume(struct http_conn *hc, const uint8_t *buf, size_t len,
			 struct http_conn_out *out, unsigned int flags);

static inline void http_conn_init(struct http_conn *hc)
{
	memset(hc, 0, sizeof(*hc));
}

/* A closing answer was given: send the answers, then close (FIN). */
static inline bool http_conn_closing(const struct http_conn *hc)
{
	return hc->closing;
}

/* Inside a request body: the bytes that come next are not a request. */
static inline bool http_conn_in_body(const struct http_conn *hc)
{
	return hc->body_left || hc->chunked;
}

#endif /* BLITZ_HTTP_CONN_H */
