// SPDX-License-Identifier: GPL-2.0
/*
 * http_conn.c - the request loop of one connection (see http_conn.h): the
 * one place that decides, for the TCP core and the epoll engine alike,
 * which requests a connection's bytes hold, which bodies to skip, which
 * prebuilt answer each request gets, and when the connection closes.
 *
 * Must never allocate, make syscalls, or look at a byte twice per call
 * beyond what http_parse_request does (it re-parses an incomplete request
 * from its start on the next call).
 */
#include "http_conn.h"

/* The closing answer: while draining, the keep-alive kinds become the same
 * answer with Connection: close; every other kind already closes. */
static int close_kind(int kind, unsigned int flags)
{
	if (!(flags & HTTP_CONN_DRAIN))
		return kind;
	switch (kind) {
	case BLITZ_RESP_GET_KA:
	case BLITZ_RESP_GET_KA10:
		return BLITZ_RESP_GET_CLOSE;
	case BLITZ_RESP_HEAD_KA:
	case BLITZ_RESP_HEAD_KA10:
		return BLITZ_RESP_HEAD_CLOSE;
	default:
		return kind;
	}
}

/* Give the last answer and discard what follows it. */
static size_t answer_and_close(struct http_conn *hc, struct http_conn_out *out,
			       int kind, size_t len)
{
	out->kind[out->n++] = (uint8_t)kind;
	hc->closing = true;
	return len;
}

size_t http_conn_consume(struct http_conn *hc, const uint8_t *buf, size_t len,
			 struct http_conn_out *out, unsigned int flags)
{
	size_t off = 0;

	if (hc->closing)
		return len;
	for (;;) {
		struct http_request req;
		enum http_parse_result r;
		int kind;

		if (hc->body_left) {
			uint64_t s = hc->body_left < len - off ? hc->body_left
							       : len - off;

			off += (size_t)s;
			hc->body_left -= s;
			if (hc->body_left)
				return off;
		}
		if (hc->chunked) {
			bool done = false;
			long n = http_chunked_skip(&hc->chunk, buf + off,
						   len - off, &done);

			if (n < 0) {
				/* The 400 waits for room; the chunk state
				 * stays bad, so the next call gives it. */
				if (out->n == out->room)
					return off;
				return answer_and_close(hc, out, BLITZ_RESP_400,
							len);
			}
			off += (size_t)n;
			if (!done)
				return off; /* took every byte: need more */
			hc->chunked = false;
		}
		if (off == len || out->n == out->room)
			return off;
		r = http_parse_request(buf + off, len - off, &req);
		if (r == HTTP_INCOMPLETE)
			return off;
		kind = req.resp;
		if (kind < 0 || kind >= BLITZ_RESP_KINDS)
			kind = BLITZ_RESP_400;
		/* Errors, Connection: close, HTTP/1.0 without keep-alive
		 * (req.close says both) and draining: the last answer. */
		if (r != HTTP_OK || req.close || kind >= BLITZ_RESP_OK_KINDS ||
		    (flags & HTTP_CONN_DRAIN))
			return answer_and_close(hc, out,
						close_kind(kind, flags), len);
		out->kind[out->n++] = (uint8_t)kind;
		off += req.header_len < len - off ? req.header_len : len - off;
		if (req.chunked) {
			memset(&hc->chunk, 0, sizeof(hc->chunk));
			hc->chunked = true;
		} else {
			hc->body_left = req.content_length;
		}
	}
}
