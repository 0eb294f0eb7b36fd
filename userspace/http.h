/* SPDX-License-Identifier: GPL-2.0 */
/*
 * http.h - the one HTTP/1.1 request parser and response builder that every
 * engine (epoll, afxdp, dpdk, and the xdp engine's templates) uses.
 *
 * Owns: request framing and the wire contract's verdicts (DESIGN.md, "One
 * wire contract"), and the prebuilt response bytes. Must never allocate on
 * the request path nor make syscalls: engines call it per request.
 */
#ifndef BLITZ_HTTP_H
#define BLITZ_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <time.h>

#include "../bpf/blitz_shared.h"

#define HTTP_MAX_HEADER 8192 /* header section limit: over it, 431 */

enum http_parse_result {
	HTTP_INCOMPLETE = 0, /* need more bytes; nothing consumed */
	HTTP_OK = 1,	     /* a complete GET/HEAD request: answer 200 */
	HTTP_ERROR = 2,	     /* a complete verdict with an error response */
};

struct http_request {
	/* Which prebuilt response answers this request (enum blitz_resp_kind).
	 * For the error kinds the connection closes after the response. */
	int resp;
	bool close;	   /* close the connection after the response */
	bool head;	   /* HEAD request */
	int version;	   /* 10 or 11; 0 when unknown */
	size_t header_len; /* bytes of request line + headers + final CRLF */
	/* Request body framing (GET/HEAD with a body): skip it before the
	 * next request. chunked: feed bytes to http_chunked_skip(). */
	uint64_t content_length;
	bool chunked;
};

/*
 * Parse one request at the start of buf[0..len).
 * HTTP_INCOMPLETE: the header section is not complete yet and is still
 *   under HTTP_MAX_HEADER bytes (if len >= HTTP_MAX_HEADER with no end of
 *   headers, the result is HTTP_ERROR with resp = BLITZ_RESP_431).
 * HTTP_OK / HTTP_ERROR: *req is filled; header_len bytes are the request's
 *   header section. Error verdicts: malformed request line or header -> 400,
 *   method other than GET/HEAD (well formed) -> 405, version not HTTP/1.0
 *   or 1.1 -> 505, header section over 8 KiB -> 431. All close.
 */
enum http_parse_result http_parse_request(const uint8_t *buf, size_t len,
					  struct http_request *req);

/* State for skipping a chunked body (zero-initialise before first use). */
struct http_chunked {
	int state;
	uint64_t remaining;
};

/*
 * Consume chunked body bytes. Returns the bytes of buf consumed, sets
 * *done when the last chunk and trailers are complete, returns -1 on a
 * malformed chunked body (answer 400 and close).
 */
long http_chunked_skip(struct http_chunked *st, const uint8_t *buf, size_t len,
		       bool *done);

/* The prebuilt responses, built once at configuration time. */
struct http_responses {
	uint8_t bytes[BLITZ_RESP_KINDS][BLITZ_RESP_MAX];
	uint16_t len[BLITZ_RESP_KINDS];
	uint16_t date_off[BLITZ_RESP_KINDS];
	time_t date_now; /* the second the Date bytes currently show */
};

/*
 * Build every response kind for this body and content type, with the Date
 * of `now`. Returns 0, or -EMSGSIZE when the 200 response would not fit
 * BLITZ_RESP_MAX (message in err), -EINVAL for a content type with
 * control characters.
 */
int http_responses_build(struct http_responses *r, const void *body,
			 size_t body_len, const char *content_type, time_t now,
			 char *err, size_t errlen);

/* Rewrite the Date bytes of every kind when `now` moved to another second
 * (cheap when it did not). */
void http_responses_set_date(struct http_responses *r, time_t now);

/* Format an IMF-fixdate, exactly BLITZ_DATE_LEN bytes, not terminated. */
void http_format_date(time_t t, char out[BLITZ_DATE_LEN]);

/* The folded 16-bit ones' complement sum of buf as if it started at an
 * even offset (not inverted), in network byte order: store it as is (RFC
 * 1071's example 00 01 f2 03 f4 f5 f6 f7 gives the bytes dd f2); ntohs()
 * of it is the numeric sum. */
uint16_t http_csum16(const uint8_t *buf, size_t len);

/* Fill the BPF map metadata for the xdp kinds (length, date offset,
 * checksum with the Date zeroed, in network byte order like http_csum16). */
void http_responses_meta(const struct http_responses *r,
			 struct blitz_resp_meta meta[BLITZ_RESP_XDP_KINDS]);

#endif /* BLITZ_HTTP_H */
