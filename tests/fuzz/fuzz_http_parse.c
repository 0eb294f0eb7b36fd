// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_http_parse.c - libFuzzer target for the request parser and the
 * chunked-body skipper (userspace/http.c).
 *
 * Treats the input as a client's byte stream: parses requests back to back
 * (pipelining), skips each body by Content-Length or chunked framing, and
 * checks the invariants the engines rely on. Any violation aborts, which
 * libFuzzer reports as a crash. Never touches anything but the input.
 */
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define CHECK(cond)              \
	do {                     \
		if (!(cond))     \
			abort(); \
	} while (0)

static bool resp_is_close(int resp)
{
	return resp == BLITZ_RESP_GET_CLOSE || resp == BLITZ_RESP_HEAD_CLOSE ||
	       resp >= BLITZ_RESP_OK_KINDS;
}

static void check_request(const uint8_t *b, size_t len,
			  enum http_parse_result v,
			  const struct http_request *req)
{
	struct http_request again;

	CHECK(v == HTTP_INCOMPLETE || v == HTTP_OK || v == HTTP_ERROR);
	if (v == HTTP_INCOMPLETE) {
		/* Nothing consumed, and the limit is not reached. */
		CHECK(req->header_len == 0);
		CHECK(len < HTTP_MAX_HEADER);
		return;
	}
	CHECK(req->header_len >= 1 && req->header_len <= len);
	CHECK(req->header_len <= HTTP_MAX_HEADER);
	CHECK(req->resp >= 0 && req->resp < BLITZ_RESP_KINDS);
	CHECK(req->close == resp_is_close(req->resp));
	if (v == HTTP_OK) {
		CHECK(req->resp < BLITZ_RESP_OK_KINDS);
		CHECK(req->version == 10 || req->version == 11);
		CHECK(req->head == (req->resp >= BLITZ_RESP_HEAD_KA));
		CHECK(!(req->chunked && req->content_length));
		CHECK(req->content_length <= (1ULL << 53));
		/* A complete request ends with CRLF CRLF. */
		CHECK(req->header_len >= 18);
		CHECK(!memcmp(b + req->header_len - 4, "\r\n\r\n", 4));
		/* KA10 only for HTTP/1.0, plain KA only for 1.1. */
		if (req->resp == BLITZ_RESP_GET_KA10 ||
		    req->resp == BLITZ_RESP_HEAD_KA10)
			CHECK(req->version == 10);
		if (req->resp == BLITZ_RESP_GET_KA ||
		    req->resp == BLITZ_RESP_HEAD_KA)
			CHECK(req->version == 11);
	} else {
		CHECK(req->resp >= BLITZ_RESP_OK_KINDS);
		CHECK(req->close);
	}
	/* The verdict depends only on the first header_len bytes, and
	 * comes no earlier than its last byte. */
	CHECK(http_parse_request(b, req->header_len, &again) == v);
	CHECK(again.resp == req->resp && again.header_len == req->header_len &&
	      again.close == req->close);
	CHECK(http_parse_request(b, req->header_len - 1, &again) ==
	      HTTP_INCOMPLETE);
}

/* Skip a chunked body at b; compare a one-shot and a split feed. */
static long skip_chunked(const uint8_t *b, size_t len, bool *done)
{
	struct http_chunked a = {0}, s = {0};
	bool da = false, ds = false;
	long na = http_chunked_skip(&a, b, len, &da);
	long n1, n2 = 0;
	size_t half = len / 2;

	CHECK(na >= -1 && na <= (long)len);
	n1 = http_chunked_skip(&s, b, half, &ds);
	CHECK(n1 >= -1 && n1 <= (long)half);
	if (n1 >= 0 && !ds)
		n2 = http_chunked_skip(&s, b + n1, len - (size_t)n1, &ds);
	if (na < 0) {
		CHECK(n1 < 0 || n2 < 0);
	} else {
		CHECK(n1 >= 0 && n2 >= 0);
		CHECK(na == n1 + n2 && da == ds);
	}
	*done = da;
	return na;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;
	int n;
	bool done;

	/* The skipper on the raw input, too: it must never misbehave. */
	skip_chunked(data, size, &done);

	for (n = 0; n < 64 && off < size; n++) {
		struct http_request req;
		enum http_parse_result v;
		long used;

		memset(&req, 0x5a, sizeof(req));
		v = http_parse_request(data + off, size - off, &req);
		check_request(data + off, size - off, v, &req);
		if (v != HTTP_OK)
			break;
		off += req.header_len;
		if (req.chunked) {
			used = skip_chunked(data + off, size - off, &done);
			if (used < 0 || !done)
				break;
			off += (size_t)used;
		} else {
			if (req.content_length > size - off)
				break;
			off += (size_t)req.content_length;
		}
		CHECK(off <= size);
		if (req.close)
			break;
	}
	return 0;
}
