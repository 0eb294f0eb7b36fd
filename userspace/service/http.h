/* SPDX-License-Identifier: GPL-2.0 */
/*
 * http.h - the one HTTP/1.1 request parser and response builder that every
 * engine (epoll, afxdp, dpdk, and the xdp engine's templates) uses.
 *
 * Owns: request framing and the wire contract's verdicts (docs/architecture.md,
 * "One wire contract"), and the prebuilt response bytes. Must never allocate on
 * the request path nor make syscalls: engines call it per request.
 */
#ifndef BLITZ_HTTP_H
#define BLITZ_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <time.h>
#include <sys/uio.h>

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
 *   HTTP/1.1 without a Host line or any request with more than one (RFC
 *   9112 3.2) -> 400 (before 405: the request is malformed first),
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

/*
 * Largest body a response may carry (a --body-file up to 16 MiB). The
 * Content-Length and every engine's offsets are sized for it.
 */
#define BLITZ_BODY_MAX (16u << 20)

/*
 * The prebuilt responses, built once at configuration time.
 *
 * bytes[k] always holds the header section of kind k (hdr_len[k] bytes,
 * Date included). When body_inline is true (every GET kind fits
 * BLITZ_RESP_MAX with the body; the common small body), bytes[k] is the
 * whole response, exactly as the xdp templates need it, and len[k] is its
 * length. When body_inline is false (a larger body), the GET kinds' bytes
 * stop after the header section (len[k] == hdr_len[k]) and the response on
 * the wire is bytes[k][0..hdr_len[k]) followed by body[0..body_len): use
 * http_response_iov() and never len[k] alone for the wire length.
 * HEAD and error kinds are always whole in bytes[k].
 *
 * body points at the CALLER's buffer given to http_responses_build (not
 * copied, never freed here): it must stay valid and unchanged for as long
 * as r is used. It is NULL when body_inline is true. A struct copy (an
 * engine thread's own copy for its Date) shares that buffer read-only.
 */
struct http_responses {
	uint8_t bytes[BLITZ_RESP_KINDS][BLITZ_RESP_MAX];
	uint16_t len[BLITZ_RESP_KINDS];	    /* bytes used in bytes[k] */
	uint16_t hdr_len[BLITZ_RESP_KINDS]; /* header section of kind k */
	uint16_t date_off[BLITZ_RESP_KINDS];
	bool body_inline;    /* GET kinds are whole in bytes[k] */
	const uint8_t *body; /* !body_inline: the caller's body bytes */
	size_t body_len;     /* the configured body's length (GET kinds) */
	time_t date_now;     /* the second the Date bytes currently show */
};

/*
 * Build every response kind for this body and content type, with the Date
 * of `now`. A body too large to be inline is referenced, not copied (see
 * struct http_responses): body_inline then says false. Returns 0, or
 * -EMSGSIZE when the body is over BLITZ_BODY_MAX or a header section would
 * not fit BLITZ_RESP_MAX (a huge content type) (message in err), -EINVAL
 * for a content type with control characters. Callers that need whole
 * responses in bytes[] (the xdp engine's templates) must check body_inline.
 */
int http_responses_build(struct http_responses *r, const void *body,
			 size_t body_len, const char *content_type, time_t now,
			 char *err, size_t errlen);

/* True for the GET kinds: the kinds that carry the configured body. */
static inline bool http_kind_has_body(int kind)
{
	return kind == BLITZ_RESP_GET_KA || kind == BLITZ_RESP_GET_KA10 ||
	       kind == BLITZ_RESP_GET_CLOSE;
}

/*
 * The wire bytes of kind `kind` as one or two pieces: iov[0] the bytes in
 * bytes[kind] (the whole response when it is inline), iov[1] the shared
 * body when it is not. Returns the count (1 or 2). The pieces point into
 * r and at the caller's body: read them, never write. Cheap: engines call
 * it per response.
 */
static inline int http_response_iov(const struct http_responses *r, int kind,
				    struct iovec iov[2])
{
	iov[0].iov_base = (void *)r->bytes[kind];
	iov[0].iov_len = r->len[kind];
	if (r->body_inline || !http_kind_has_body(kind) || !r->body_len)
		return 1;
	iov[1].iov_base = (void *)r->body;
	iov[1].iov_len = r->body_len;
	return 2;
}

/* Total bytes on the wire of kind `kind` (header section plus body). */
static inline size_t http_response_len(const struct http_responses *r, int kind)
{
	struct iovec iov[2];

	return http_response_iov(r, kind, iov) == 2
		       ? iov[0].iov_len + iov[1].iov_len
		       : iov[0].iov_len;
}

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

/* Fill the BPF map metadata of every kind (length, date offset,
 * checksum with the Date zeroed, in network byte order like http_csum16).
 * Meaningful only when r->body_inline (the xdp engine needs it anyway). */
void http_responses_meta(const struct http_responses *r,
			 struct blitz_resp_meta meta[BLITZ_RESP_KINDS]);

#endif /* BLITZ_HTTP_H */
