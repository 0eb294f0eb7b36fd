// SPDX-License-Identifier: GPL-2.0
/*
 * test_http_conn.c - unit tests of the request loop every userspace engine
 * shares (userspace/http_conn.c): requests split at every byte boundary,
 * pipelined batches against a full output, Content-Length and chunked
 * bodies, the close rules, draining, the header limit. Each check names
 * the exact answers (response kinds) and the bytes consumed. Never touches
 * the network.
 */
#include <stdlib.h>

#include "testlib.h"
#include "http_conn.h"

#define MAX_ANS 256

/* What an engine would have answered: the kinds in order, and whether it
 * would close, after feeding a stream the way an engine does. */
struct run {
	uint8_t kind[MAX_ANS];
	unsigned int n;
	bool closing;
	size_t consumed; /* bytes the loop said it was done with */
	size_t kept;	 /* bytes an engine still holds at the end */
	int calls;
};

/* The engine's side: a receive buffer of what is not consumed yet; each
 * piece is appended, then the loop runs until it stops for input, with an
 * output of `room` answers that the engine empties whenever it is full. */
static void feed(struct run *r, const uint8_t *s, const size_t *cuts, int ncuts,
		 size_t total, unsigned int room, unsigned int flags)
{
	static uint8_t buf[65536];
	struct http_conn hc;
	size_t have = 0, from = 0;

	memset(r, 0, sizeof(*r));
	http_conn_init(&hc);
	for (int p = 0; p <= ncuts; p++) {
		size_t to = p < ncuts ? cuts[p] : total;

		memcpy(buf + have, s + from, to - from);
		have += to - from;
		from = to;
		for (;;) {
			uint8_t k[MAX_ANS];
			struct http_conn_out out = {k, 0, room};
			size_t n =
				http_conn_consume(&hc, buf, have, &out, flags);

			r->calls++;
			if (n > have || out.n > room || r->calls > 100000) {
				r->n = MAX_ANS + 1; /* fails every check */
				return;
			}
			for (unsigned int i = 0; i < out.n && r->n < MAX_ANS;
			     i++)
				r->kind[r->n++] = k[i];
			memmove(buf, buf + n, have - n);
			have -= n;
			r->consumed += n;
			if (out.n < room || !have)
				break;
		}
	}
	r->closing = http_conn_closing(&hc);
	r->kept = have;
}

static void feed_whole(struct run *r, const char *s, unsigned int room,
		       unsigned int flags)
{
	feed(r, (const uint8_t *)s, NULL, 0, strlen(s), room, flags);
}

static bool same_kinds(const struct run *r, const uint8_t *want, unsigned int n)
{
	return r->n == n && !memcmp(r->kind, want, n);
}

#define GET11 "GET / HTTP/1.1\r\nHost: a\r\n\r\n"

/* A stream with every framing the loop knows, and what answers it. Body
 * bytes that look like requests must never be answered. */
static const char MIXED[] =
	GET11 "HEAD /h HTTP/1.1\r\nHost: a\r\n\r\n"
	      "GET /cl HTTP/1.1\r\nHost: a\r\nContent-Length: 27\r\n\r\n" GET11
	      "GET /ch HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
	      "\r\n"
	      "1b;ext=1\r\n" GET11 "\r\n"
	      "3\r\nabc\r\n"
	      "0\r\nX-Trailer: GET / HTTP/1.1\r\n\r\n"
	      "GET /10 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
	      "HEAD /10 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
	      "GET /last HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
	      "GET /after-close HTTP/1.1\r\nHost: a\r\n\r\n";

static const uint8_t MIXED_KINDS[] = {BLITZ_RESP_GET_KA,   BLITZ_RESP_HEAD_KA,
				      BLITZ_RESP_GET_KA,   BLITZ_RESP_GET_KA,
				      BLITZ_RESP_GET_KA10, BLITZ_RESP_HEAD_KA10,
				      BLITZ_RESP_GET_CLOSE};

static void test_http_conn_mixed_whole(void)
{
	struct run r;

	feed_whole(&r, MIXED, 32, 0);
	T_CHECK_MSG(same_kinds(&r, MIXED_KINDS, sizeof(MIXED_KINDS)),
		    "%u answers", r.n);
	T_CHECK(r.closing);
	T_EQ_INT(r.consumed, strlen(MIXED)); /* after close: discarded */
	T_EQ_INT(r.kept, 0);
}

/* Every way of cutting the stream in two, then in three (every first cut,
 * second cuts a prime stride apart), in the order an engine receives them,
 * gives the same answers as the whole. */
static void test_http_conn_split_every_boundary(void)
{
	size_t len = strlen(MIXED), cuts[2];
	int bad = 0;
	struct run r;

	for (size_t i = 0; i <= len && bad < 5; i++) {
		cuts[0] = i;
		feed(&r, (const uint8_t *)MIXED, cuts, 1, len, 32, 0);
		if (!same_kinds(&r, MIXED_KINDS, sizeof(MIXED_KINDS)) ||
		    !r.closing || r.consumed != len) {
			printf("  cut at %zu: %u answers, closing %d\n", i, r.n,
			       r.closing);
			bad++;
		}
		for (size_t j = i; j <= len && bad < 5; j += 7) {
			cuts[1] = j;
			feed(&r, (const uint8_t *)MIXED, cuts, 2, len, 32, 0);
			if (!same_kinds(&r, MIXED_KINDS, sizeof(MIXED_KINDS)) ||
			    !r.closing || r.consumed != len) {
				printf("  cuts at %zu,%zu: %u answers\n", i, j,
				       r.n);
				bad++;
			}
		}
	}
	T_EQ_INT(bad, 0);
}

/* One byte at a time, and with an output of one answer. */
static void test_http_conn_byte_by_byte(void)
{
	size_t len = strlen(MIXED);
	size_t *cuts = malloc(len * sizeof(*cuts));
	struct run r;

	for (size_t i = 0; i < len; i++)
		cuts[i] = i;
	feed(&r, (const uint8_t *)MIXED, cuts, (int)len, len, 1, 0);
	T_CHECK_MSG(same_kinds(&r, MIXED_KINDS, sizeof(MIXED_KINDS)),
		    "%u answers", r.n);
	T_CHECK(r.closing);
	free(cuts);
}

/* An incomplete request is not consumed: the engine keeps it whole. */
static void test_http_conn_incomplete_kept(void)
{
	const char *s = GET11 "GET / HTTP/1.1\r\nHo";
	uint8_t k[4];
	struct http_conn_out out = {k, 0, 4};
	struct http_conn hc;
	size_t n;

	http_conn_init(&hc);
	n = http_conn_consume(&hc, (const uint8_t *)s, strlen(s), &out, 0);
	T_EQ_INT(n, strlen(GET11));
	T_EQ_INT(out.n, 1);
	T_EQ_INT(k[0], BLITZ_RESP_GET_KA);
	T_CHECK(!http_conn_closing(&hc));
	T_CHECK(!http_conn_in_body(&hc));
}

/* 40 pipelined GETs against an output of 32 (the TCP core's queue): 32
 * answers, consumed up to the 33rd request exactly; the rest once there
 * is room. An output with no room answers nothing and consumes nothing. */
static void test_http_conn_pipelined_batch(void)
{
	static char s[40 * sizeof(GET11)];
	size_t one = strlen(GET11), len = 0, n;
	uint8_t k[32];
	struct http_conn_out out = {k, 0, 32};
	struct http_conn hc;

	for (int i = 0; i < 40; i++) {
		memcpy(s + len, GET11, one);
		len += one;
	}
	http_conn_init(&hc);
	out.room = 0;
	T_EQ_INT(http_conn_consume(&hc, (uint8_t *)s, len, &out, 0), 0);
	T_EQ_INT(out.n, 0);
	out.room = 32;
	n = http_conn_consume(&hc, (uint8_t *)s, len, &out, 0);
	T_EQ_INT(n, 32 * one);
	T_EQ_INT(out.n, 32);
	out.n = 0;
	n = http_conn_consume(&hc, (uint8_t *)s + 32 * one, len - 32 * one,
			      &out, 0);
	T_EQ_INT(n, 8 * one);
	T_EQ_INT(out.n, 8);
	for (unsigned int i = 0; i < out.n; i++)
		T_EQ_INT(k[i], BLITZ_RESP_GET_KA);
	T_CHECK(!http_conn_closing(&hc));
}

/* A Content-Length body is skipped even when the output is full, across
 * calls, and never parsed as a request. */
static void test_http_conn_content_length_body(void)
{
	const char *h =
		"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 40\r\n\r\n";
	char s[256];
	uint8_t k[2];
	struct http_conn_out out = {k, 0, 1};
	struct http_conn hc;
	size_t hl = strlen(h), n;

	snprintf(s, sizeof(s), "%s%-40s" GET11, h, "GET /x HTTP/1.1");
	http_conn_init(&hc);
	/* The header and 10 body bytes; room for one answer. */
	n = http_conn_consume(&hc, (uint8_t *)s, hl + 10, &out, 0);
	T_EQ_INT(n, hl + 10);
	T_EQ_INT(out.n, 1);
	T_CHECK(http_conn_in_body(&hc));
	/* The rest of the body with the output still full: skipped; the
	 * next request waits for room. */
	n = http_conn_consume(&hc, (uint8_t *)s + hl + 10, strlen(s) - hl - 10,
			      &out, 0);
	T_EQ_INT(n, 30);
	T_EQ_INT(out.n, 1);
	T_CHECK(!http_conn_in_body(&hc));
	out.n = 0;
	n = http_conn_consume(&hc, (uint8_t *)s + hl + 40, strlen(GET11), &out,
			      0);
	T_EQ_INT(n, strlen(GET11));
	T_EQ_INT(out.n, 1);
	T_EQ_INT(k[0], BLITZ_RESP_GET_KA);
}

/* A malformed chunked body: 400, close, nothing after it answered. With
 * the output full the 400 waits, then comes once there is room. */
static void test_http_conn_chunked_malformed(void)
{
	const char *s = "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
			"chunked\r\n\r\nzz\r\n" GET11;
	static const uint8_t want[] = {BLITZ_RESP_GET_KA, BLITZ_RESP_400};
	uint8_t k[2];
	struct http_conn_out out = {k, 0, 1};
	struct http_conn hc;
	size_t len = strlen(s), n;
	struct run r;

	feed_whole(&r, s, 8, 0);
	T_CHECK(same_kinds(&r, want, 2));
	T_CHECK(r.closing);
	T_EQ_INT(r.consumed, len);

	http_conn_init(&hc);
	n = http_conn_consume(&hc, (const uint8_t *)s, len, &out, 0);
	T_EQ_INT(out.n, 1);
	T_CHECK(!http_conn_closing(&hc));
	T_CHECK(n < len);
	out.n = 0;
	n = http_conn_consume(&hc, (const uint8_t *)s + n, len - n, &out, 0);
	T_EQ_INT(out.n, 1);
	T_EQ_INT(k[0], BLITZ_RESP_400);
	T_CHECK(http_conn_closing(&hc));
}

/* A chunked body split at every byte, one answer of room: the same two
 * answers (the request, the one after the body), never the body's. */
static void test_http_conn_chunked_split(void)
{
	const char *s = "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
			"gzip, chunked\r\n\r\n"
			"A\r\nGET / HTTP\r\n1B\r\n" GET11 "\r\n0\r\n\r\n" GET11;
	static const uint8_t want[] = {BLITZ_RESP_GET_KA, BLITZ_RESP_GET_KA};
	size_t len = strlen(s), cut;
	int bad = 0;
	struct run r;

	for (cut = 0; cut <= len; cut++) {
		feed(&r, (const uint8_t *)s, &cut, 1, len, 1, 0);
		if (!same_kinds(&r, want, 2) || r.closing || r.kept) {
			printf("  cut at %zu: %u answers kept %zu\n", cut, r.n,
			       r.kept);
			bad++;
		}
	}
	T_EQ_INT(bad, 0);
}

/* The close rules: which answer, closing or not, and nothing answered
 * after a closing answer (its bytes are consumed, i.e. discarded). */
static void test_http_conn_close_rules(void)
{
	static const struct {
		const char *req;
		uint8_t kind;
		bool closing;
	} cases[] = {
		{GET11, BLITZ_RESP_GET_KA, false},
		{"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", BLITZ_RESP_HEAD_KA,
		 false},
		{"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
		 BLITZ_RESP_GET_CLOSE, true},
		{"HEAD / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n",
		 BLITZ_RESP_HEAD_CLOSE, true},
		{"GET / HTTP/1.0\r\n\r\n", BLITZ_RESP_GET_CLOSE, true},
		{"HEAD / HTTP/1.0\r\n\r\n", BLITZ_RESP_HEAD_CLOSE, true},
		{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		 BLITZ_RESP_GET_KA10, false},
		{"POST / HTTP/1.1\r\nHost: a\r\n\r\n", BLITZ_RESP_405, true},
		{"GET / HTTP/1.1\r\n\r\n", BLITZ_RESP_400, true},
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", BLITZ_RESP_400,
		 true},
		{"GET / HTTP/2.0\r\nHost: a\r\n\r\n", BLITZ_RESP_505, true},
		{"GET / HTTP/1.1\r\nHost: a\r\nbad header\r\n\r\n",
		 BLITZ_RESP_400, true},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char s[512];
		struct run r;

		snprintf(s, sizeof(s), "%s" GET11, cases[i].req);
		feed_whole(&r, s, 8, 0);
		T_CHECK_MSG(r.n >= 1 && r.kind[0] == cases[i].kind,
			    "case %zu: kind %d, want %d", i,
			    r.n ? r.kind[0] : -1, cases[i].kind);
		T_CHECK_MSG(r.n == (cases[i].closing ? 1u : 2u),
			    "case %zu: %u answers", i, r.n);
		T_CHECK_MSG(r.closing == cases[i].closing, "case %zu", i);
		T_EQ_INT(r.consumed, strlen(s));
	}
}

/* Once closing, every later call consumes everything and answers nothing. */
static void test_http_conn_after_close(void)
{
	const char *s = "GET / HTTP/1.0\r\n\r\n";
	uint8_t k[4];
	struct http_conn_out out = {k, 0, 4};
	struct http_conn hc;

	http_conn_init(&hc);
	T_EQ_INT(http_conn_consume(&hc, (const uint8_t *)s, strlen(s), &out, 0),
		 strlen(s));
	T_CHECK(http_conn_closing(&hc));
	out.n = 0;
	T_EQ_INT(http_conn_consume(&hc, (const uint8_t *)GET11, strlen(GET11),
				   &out, 0),
		 strlen(GET11));
	T_EQ_INT(out.n, 0);
}

/* Draining: keep-alive answers become their close kinds, and the first
 * answer closes; error answers stay as they are. */
static void test_http_conn_drain(void)
{
	static const struct {
		const char *req;
		uint8_t kind;
	} cases[] = {
		{GET11, BLITZ_RESP_GET_CLOSE},
		{"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", BLITZ_RESP_HEAD_CLOSE},
		{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		 BLITZ_RESP_GET_CLOSE},
		{"HEAD / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		 BLITZ_RESP_HEAD_CLOSE},
		{"POST / HTTP/1.1\r\nHost: a\r\n\r\n", BLITZ_RESP_405},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char s[512];
		struct run r;

		snprintf(s, sizeof(s), "%s" GET11, cases[i].req);
		feed_whole(&r, s, 8, HTTP_CONN_DRAIN);
		T_CHECK_MSG(r.n == 1 && r.kind[0] == cases[i].kind,
			    "case %zu: %u answers, kind %d", i, r.n,
			    r.n ? r.kind[0] : -1);
		T_CHECK(r.closing);
	}
}

/* The header limit: a header section still open under 8 KiB waits (none
 * of it consumed); at 8 KiB without its end, 431 and close. */
static void test_http_conn_header_limit(void)
{
	static uint8_t s[HTTP_MAX_HEADER + 64];
	const char *h = "GET / HTTP/1.1\r\nHost: a\r\nX: ";
	uint8_t k[2];
	struct http_conn_out out = {k, 0, 2};
	struct http_conn hc;

	memset(s, 'x', sizeof(s));
	memcpy(s, h, strlen(h));
	http_conn_init(&hc);
	T_EQ_INT(http_conn_consume(&hc, s, HTTP_MAX_HEADER - 1, &out, 0), 0);
	T_EQ_INT(out.n, 0);
	T_CHECK(!http_conn_closing(&hc));
	T_EQ_INT(http_conn_consume(&hc, s, sizeof(s), &out, 0), sizeof(s));
	T_EQ_INT(out.n, 1);
	T_EQ_INT(k[0], BLITZ_RESP_431);
	T_CHECK(http_conn_closing(&hc));
}

int main(void)
{
	T_RUN(test_http_conn_mixed_whole);
	T_RUN(test_http_conn_split_every_boundary);
	T_RUN(test_http_conn_byte_by_byte);
	T_RUN(test_http_conn_incomplete_kept);
	T_RUN(test_http_conn_pipelined_batch);
	T_RUN(test_http_conn_content_length_body);
	T_RUN(test_http_conn_chunked_malformed);
	T_RUN(test_http_conn_chunked_split);
	T_RUN(test_http_conn_close_rules);
	T_RUN(test_http_conn_after_close);
	T_RUN(test_http_conn_drain);
	T_RUN(test_http_conn_header_limit);
	T_EXIT();
}
