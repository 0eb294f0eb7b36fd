// SPDX-License-Identifier: GPL-2.0
/*
 * test_http.c - unit tests of the request parser, the chunked-body skipper
 * and the prebuilt responses (userspace/http.c): every row of the wire
 * contract, exact verdicts and exact bytes. Never touches the network.
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>

#include "testlib.h"
#include "http.h"
#include "../../bpf/blitz_cookie2.h"

#define FIXED_TIME 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT */
#define FIXED_DATE "Sun, 06 Nov 1994 08:49:37 GMT"

static struct http_responses R;

/* ---- parser helpers ---- */

static enum http_parse_result parse_n(const char *s, size_t n,
				      struct http_request *req)
{
	return http_parse_request((const uint8_t *)s, n, req);
}

static enum http_parse_result parse(const char *s, struct http_request *req)
{
	return parse_n(s, strlen(s), req);
}

/* Whole request: verdict, response kind and header_len (0: whole string). */
static void expect(const char *s, enum http_parse_result v, int resp,
		   size_t hlen)
{
	struct http_request req;
	enum http_parse_result got = parse(s, &req);

	T_CHECK_MSG(got == v, "verdict %d, want %d for \"%s\"", got, v, s);
	if (got == HTTP_INCOMPLETE)
		return;
	T_CHECK_MSG(req.resp == resp, "resp %d, want %d for \"%s\"", req.resp,
		    resp, s);
	if (!hlen)
		hlen = strlen(s);
	T_CHECK_MSG(req.header_len == hlen, "header_len %zu, want %zu",
		    req.header_len, hlen);
	if (got == HTTP_ERROR)
		T_CHECK(req.close);
}

/* len bytes at s (they may hold a NUL) are a 400 that closes. */
static void expect_400_n(const char *s, size_t len)
{
	struct http_request req;
	enum http_parse_result got = parse_n(s, len, &req);

	T_CHECK_MSG(got == HTTP_ERROR && req.resp == BLITZ_RESP_400,
		    "verdict %d resp %d, want 400 for \"%s\"", got, req.resp,
		    s);
	T_CHECK(req.close);
	T_CHECK(req.header_len <= len);
}

static void expect_400(const char *s)
{
	expect_400_n(s, strlen(s));
}

/* ---- request line and method ---- */

static void test_get_http11(void)
{
	struct http_request req;
	const char *s = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

	T_EQ_INT(parse(s, &req), HTTP_OK);
	T_EQ_INT(req.resp, BLITZ_RESP_GET_KA);
	T_EQ_INT(req.header_len, strlen(s));
	T_EQ_INT(req.version, 11);
	T_CHECK(!req.close);
	T_CHECK(!req.head);
	T_CHECK(!req.chunked);
	T_EQ_INT(req.content_length, 0);
}

static void test_head_http11(void)
{
	struct http_request req;
	const char *s = "HEAD /index.html?q=1 HTTP/1.1\r\nHost: x\r\n\r\n";

	T_EQ_INT(parse(s, &req), HTTP_OK);
	T_EQ_INT(req.resp, BLITZ_RESP_HEAD_KA);
	T_CHECK(req.head);
	T_CHECK(!req.close);
}

static void test_no_headers(void)
{
	/* HTTP/1.0 needs no Host; HTTP/1.1 does (RFC 9112 3.2). */
	expect("GET / HTTP/1.0\r\n\r\n", HTTP_OK, BLITZ_RESP_GET_CLOSE, 0);
	expect("GET / HTTP/1.1\r\n\r\n", HTTP_ERROR, BLITZ_RESP_400, 0);
}

/* ---- Host (RFC 9112 3.2): exactly one under 1.1, at most one under 1.0 ----
 */

static void test_host_missing_11(void)
{
	struct http_request req;

	/* The verdict covers the whole header section, as a 200 would. */
	expect("GET / HTTP/1.1\r\n\r\n", HTTP_ERROR, BLITZ_RESP_400, 0);
	expect("HEAD / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n", HTTP_ERROR,
	       BLITZ_RESP_400, 0);
	/* Names that only look like Host do not count. */
	expect("GET / HTTP/1.1\r\nHosts: a\r\nX-Host: a\r\nHos: a\r\n\r\n",
	       HTTP_ERROR, BLITZ_RESP_400, 0);
	/* Malformed before it is a method we refuse: 400, not 405. */
	expect("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", HTTP_ERROR,
	       BLITZ_RESP_400, 0);
	T_EQ_INT(
		parse("GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n", &req),
		HTTP_ERROR);
	T_CHECK(req.close);
	T_EQ_INT(req.resp, BLITZ_RESP_400);
}

static void test_host_duplicate(void)
{
	/* Several Host lines: 400 in either version, equal values too. */
	expect("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", HTTP_ERROR,
	       BLITZ_RESP_400, 0);
	expect("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", HTTP_ERROR,
	       BLITZ_RESP_400, 0);
	expect("GET / HTTP/1.1\r\nhost: a\r\nX: y\r\nHOST: a\r\n\r\n",
	       HTTP_ERROR, BLITZ_RESP_400, 0);
	expect("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", HTTP_ERROR,
	       BLITZ_RESP_400, 0);
	expect("HEAD / HTTP/1.0\r\nConnection: keep-alive\r\nhOsT:\r\n"
	       "host: x\r\n\r\n",
	       HTTP_ERROR, BLITZ_RESP_400, 0);
	expect("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\nHost: c\r\n\r\n",
	       HTTP_ERROR, BLITZ_RESP_400, 0);
}

static void test_host_ok(void)
{
	/* Any case, any value (empty too: a target without authority). */
	expect("GET / HTTP/1.1\r\nhOsT: a\r\n\r\n", HTTP_OK, BLITZ_RESP_GET_KA,
	       0);
	expect("GET / HTTP/1.1\r\nHOST:\r\n\r\n", HTTP_OK, BLITZ_RESP_GET_KA,
	       0);
	expect("GET / HTTP/1.1\r\nX: 1\r\nhost:\t[::1]:80 \r\nY: 2\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_KA, 0);
	expect("GET / HTTP/1.0\r\nHost: a\r\n\r\n", HTTP_OK,
	       BLITZ_RESP_GET_CLOSE, 0);
	expect("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", HTTP_OK,
	       BLITZ_RESP_GET_KA10, 0);
}

static void test_host_pipelined(void)
{
	/* Judged per request: the first is answered, the second is a 400. */
	const char *s = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
			"GET / HTTP/1.1\r\n\r\n";
	struct http_request req;

	T_EQ_INT(parse(s, &req), HTTP_OK);
	T_EQ_INT(req.resp, BLITZ_RESP_GET_KA);
	T_EQ_INT(req.header_len, 27);
	T_EQ_INT(parse(s + 27, &req), HTTP_ERROR);
	T_EQ_INT(req.resp, BLITZ_RESP_400);
	T_EQ_INT(req.header_len, strlen(s) - 27);
	/* A Host line of one request does not count for the next. */
	s = "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: "
	    "a\r\n\r\n";
	T_EQ_INT(parse(s + 27, &req), HTTP_OK);
	T_EQ_INT(req.resp, BLITZ_RESP_GET_KA);
}

static void test_http10_no_keepalive(void)
{
	struct http_request req;

	T_EQ_INT(parse("GET / HTTP/1.0\r\n\r\n", &req), HTTP_OK);
	T_EQ_INT(req.resp, BLITZ_RESP_GET_CLOSE);
	T_EQ_INT(req.version, 10);
	T_CHECK(req.close);
	expect("HEAD / HTTP/1.0\r\nHost: a\r\n\r\n", HTTP_OK,
	       BLITZ_RESP_HEAD_CLOSE, 0);
}

static void test_http10_keepalive(void)
{
	struct http_request req;

	T_EQ_INT(
		parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &req),
		HTTP_OK);
	T_EQ_INT(req.resp, BLITZ_RESP_GET_KA10);
	T_CHECK(!req.close);
	expect("HEAD / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n", HTTP_OK,
	       BLITZ_RESP_HEAD_KA10, 0);
}

static void test_http10_keepalive_and_close(void)
{
	expect("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_CLOSE, 0);
	/* Two Connection headers combine. */
	expect("GET / HTTP/1.0\r\nConnection: keep-alive\r\n"
	       "Connection: close\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_CLOSE, 0);
	expect("GET / HTTP/1.0\r\nConnection: x\r\n"
	       "Connection: keep-alive\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_KA10, 0);
}

static void test_connection_close(void)
{
	struct http_request req;

	T_EQ_INT(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
		       &req),
		 HTTP_OK);
	T_EQ_INT(req.resp, BLITZ_RESP_GET_CLOSE);
	T_CHECK(req.close);
	expect("HEAD / HTTP/1.1\r\nHost: h\r\nCONNECTION:CLOSE \r\n\r\n",
	       HTTP_OK, BLITZ_RESP_HEAD_CLOSE, 0);
	expect("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade,\t close "
	       ",x\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_CLOSE, 0);
}

static void test_connection_list_keepalive(void)
{
	expect("GET / HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive, "
	       "Upgrade\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_KA, 0);
	/* A token that merely contains "close" is not close. */
	expect("GET / HTTP/1.1\r\nHost: h\r\nConnection: closed, "
	       "xclose\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_KA, 0);
	/* Other headers whose value says close do not count. */
	expect("GET / HTTP/1.1\r\nHost: h\r\nX-Connection: close\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_KA, 0);
}

static void test_pipelined_three(void)
{
	const char *s =
		"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
		"HEAD /b HTTP/1.1\r\nHost: x\r\n\r\n"
		"GET /c HTTP/1.1\r\nConnection: close\r\nHost: x\r\n\r\n";
	const int want[3] = {BLITZ_RESP_GET_KA, BLITZ_RESP_HEAD_KA,
			     BLITZ_RESP_GET_CLOSE};
	const size_t want_len[3] = {28, 29, 47};
	size_t off = 0, len = strlen(s);
	struct http_request req;
	int i;

	for (i = 0; i < 3; i++) {
		T_EQ_INT(parse_n(s + off, len - off, &req), HTTP_OK);
		T_EQ_INT(req.resp, want[i]);
		T_EQ_INT(req.header_len, want_len[i]);
		off += req.header_len;
	}
	T_EQ_INT(off, len);
	T_EQ_INT(parse_n(s + off, 0, &req), HTTP_INCOMPLETE);
}

static void test_post_405(void)
{
	struct http_request req;
	const char *s = "POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: "
			"3\r\n\r\nabc";

	T_EQ_INT(parse(s, &req), HTTP_ERROR);
	T_EQ_INT(req.resp, BLITZ_RESP_405);
	T_CHECK(req.close);
	T_EQ_INT(req.header_len, strlen(s) - 3);
	/* Methods are case-sensitive: "get" is another method. */
	expect("get / HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_ERROR, BLITZ_RESP_405,
	       0);
	expect("GETX / HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_ERROR, BLITZ_RESP_405,
	       0);
	expect("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_ERROR,
	       BLITZ_RESP_405, 0);
	/* 405 waits for the header section: incomplete before it. */
	expect("DELETE / HTTP/1.1\r\nHost: x\r\n", HTTP_INCOMPLETE, 0, 0);
	/* A malformed header in a POST is a 400. */
	expect_400("POST / HTTP/1.1\r\nHost: h\r\nBad header\r\n\r\n");
}

static void test_bad_request_line(void)
{
	static const char *const bad[] = {
		" GET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1 \r\n\r\n",
		"GET /  HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / http/1.1\r\n\r\n",
		"GET / HTTP/1.1\n\r\n",
		"GET / HTTP/1.1\r\r\n",
		"GET / HTTP/1\r\n\r\n",
		"GET / HTTP/1.\r\n\r\n",
		"GET / HTTP/11\r\n\r\n",
		"GET / HTTP/10.0\r\n\r\n",
		"GET / HTTP/1.10\r\n\r\n",
		"GET / HTTPS/1.1\r\n\r\n",
		"GET /\r\n\r\n",
		"GET\r\n\r\n",
		"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"G(T / HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / X HTTP/1.1\r\nHost: h\r\n\r\n",
		"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_400(bad[i]);
}

/* A garbage sender gets 400 at once, without any end of line. */
static void test_bad_request_line_early(void)
{
	struct http_request req;

	expect_400("\x16\x03");
	expect_400("GET /\x01");
	expect_400("GET / HTTX");
	T_EQ_INT(parse("GET / HTTP/1.1x", &req), HTTP_ERROR);
	T_EQ_INT(req.resp, BLITZ_RESP_400);
	T_EQ_INT(req.header_len, 15);
	/* A valid prefix is only incomplete. */
	expect("GET / HTTP/1.", HTTP_INCOMPLETE, 0, 0);
	expect("G", HTTP_INCOMPLETE, 0, 0);
	expect("", HTTP_INCOMPLETE, 0, 0);
}

static void test_bad_nul_in_target(void)
{
	const char s[] = "GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n";

	expect_400_n(s, sizeof(s) - 1);
}

static void test_non_ascii_target_400(void)
{
	expect_400("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n");
	expect_400("GET /\x7f HTTP/1.1\r\nHost: h\r\n\r\n");
	expect_400("GET /\x80 HTTP/1.1\r\nHost: h\r\n\r\n");
	expect_400("GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n");
}

static void test_version_505(void)
{
	struct http_request req;

	T_EQ_INT(parse("GET / HTTP/2.0\r\n\r\n", &req), HTTP_ERROR);
	T_EQ_INT(req.resp, BLITZ_RESP_505);
	T_CHECK(req.close);
	expect("GET / HTTP/1.2\r\nHost: x\r\n\r\n", HTTP_ERROR, BLITZ_RESP_505,
	       16);
	expect("GET / HTTP/0.9\r\n\r\n", HTTP_ERROR, BLITZ_RESP_505, 16);
	expect("GET / HTTP/3.0\r\n\r\n", HTTP_ERROR, BLITZ_RESP_505, 16);
	/* The HTTP/2 connection preface. */
	expect("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", HTTP_ERROR, BLITZ_RESP_505,
	       16);
	/* Known as soon as the request line ends. */
	expect("GET / HTTP/2.0\r\n", HTTP_ERROR, BLITZ_RESP_505, 16);
}

static void test_version_trailing_garbage_400(void)
{
	expect_400("GET / HTTP/1.1x\r\n\r\n");
	expect_400("GET / HTTP/2.0x\r\n\r\n");
}

/* ---- header fields ---- */

static void test_header_without_colon(void)
{
	expect_400("GET / HTTP/1.1\r\nHost x\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\n: x\r\n\r\n");
}

static void test_space_before_colon(void)
{
	expect_400("GET / HTTP/1.1\r\nHost : x\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost\t: x\r\n\r\n");
}

static void test_obs_fold(void)
{
	expect_400(
		"GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n  continued\r\n\r\n");
	expect_400(
		"GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\tcontinued\r\n\r\n");
	/* Whitespace before the first header line too. */
	expect_400("GET / HTTP/1.1\r\n Host: x\r\n\r\n");
}

static void test_control_in_value(void)
{
	const char nul[] = "GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n";

	expect_400("GET / HTTP/1.1\r\nHost: h\r\nX: a\x01z\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nX: a\x7fz\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nX: a\rz\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nX: a\nz\r\n\r\n");
	expect_400_n(nul, sizeof(nul) - 1);
}

static void test_bare_lf_400(void)
{
	expect_400("GET / HTTP/1.1\nHost: x\n\n");
	expect_400("GET / HTTP/1.1\r\nHost: x\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: x\r\n\n");
}

static void test_obs_text_in_value_ok(void)
{
	expect("GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\xc3\xa9 "
	       "\xff\x80\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_KA, 0);
	expect("GET / HTTP/1.1\r\nHost: h\r\nX-Empty:\r\nX-Tab:\tv\t\r\n\r\n",
	       HTTP_OK, BLITZ_RESP_GET_KA, 0);
}

static void test_non_tchar_in_name_400(void)
{
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nX(A): 1\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nX\xc3\xa9: 1\r\n\r\n");
}

/* ---- the 8 KiB limit ---- */

/* Build "GET / HTTP/1.1\r\nHost: h\r\nX: aaa...\r\n\r\n" of exactly total
 * bytes. */
static char *request_of_size(size_t total)
{
	const char *head = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
	size_t hl = strlen(head);
	char *s = malloc(total + 1);

	memcpy(s, head, hl);
	memset(s + hl, 'a', total - hl - 4);
	memcpy(s + total - 4, "\r\n\r\n", 5);
	return s;
}

static void test_at_limit_ok(void)
{
	char *s = request_of_size(HTTP_MAX_HEADER);
	char *more = malloc(HTTP_MAX_HEADER + 100);
	struct http_request req;

	T_EQ_INT(parse_n(s, HTTP_MAX_HEADER, &req), HTTP_OK);
	T_EQ_INT(req.header_len, HTTP_MAX_HEADER);
	T_EQ_INT(req.resp, BLITZ_RESP_GET_KA);
	/* And with bytes of the next request behind it. */
	memcpy(more, s, HTTP_MAX_HEADER);
	memset(more + HTTP_MAX_HEADER, 'G', 100);
	T_EQ_INT(parse_n(more, HTTP_MAX_HEADER + 100, &req), HTTP_OK);
	T_EQ_INT(req.header_len, HTTP_MAX_HEADER);
	free(more);
	free(s);
}

static void test_over_limit_431(void)
{
	char *s = request_of_size(HTTP_MAX_HEADER + 1);
	struct http_request req;

	T_EQ_INT(parse_n(s, HTTP_MAX_HEADER + 1, &req), HTTP_ERROR);
	T_EQ_INT(req.resp, BLITZ_RESP_431);
	T_CHECK(req.close);
	T_CHECK(req.header_len <= HTTP_MAX_HEADER + 1);
	/* Exactly 8192 bytes in hand, one short of the end: already 431. */
	T_EQ_INT(parse_n(s, HTTP_MAX_HEADER, &req), HTTP_ERROR);
	T_EQ_INT(req.resp, BLITZ_RESP_431);
	/* One byte fewer: still only incomplete. */
	T_EQ_INT(parse_n(s, HTTP_MAX_HEADER - 1, &req), HTTP_INCOMPLETE);
	free(s);
}

static void test_over_limit_no_end_431(void)
{
	char *s = request_of_size(20000);
	struct http_request req;

	T_EQ_INT(parse_n(s, 20000, &req), HTTP_ERROR);
	T_EQ_INT(req.resp, BLITZ_RESP_431);
	/* A malformed byte inside the limit is still a 400. */
	s[100] = '\x01';
	T_EQ_INT(parse_n(s, 20000, &req), HTTP_ERROR);
	T_EQ_INT(req.resp, BLITZ_RESP_400);
	free(s);
}

static void test_long_request_line_431(void)
{
	char *s = malloc(HTTP_MAX_HEADER + 10);

	memcpy(s, "GET /", 5);
	memset(s + 5, 'a', HTTP_MAX_HEADER + 5);
	expect("GET /aaaa", HTTP_INCOMPLETE, 0, 0);
	{
		struct http_request req;

		T_EQ_INT(parse_n(s, HTTP_MAX_HEADER + 10, &req), HTTP_ERROR);
		T_EQ_INT(req.resp, BLITZ_RESP_431);
	}
	free(s);
}

/* ---- incremental feeding ---- */

static void check_incremental(const char *s)
{
	size_t len = strlen(s), k;
	struct http_request whole, part;
	enum http_parse_result v = parse(s, &whole);
	bool seen = false;

	for (k = 0; k <= len; k++) {
		enum http_parse_result got = parse_n(s, k, &part);

		if (got == HTTP_INCOMPLETE) {
			T_CHECK_MSG(!seen,
				    "prefix %zu incomplete after a "
				    "verdict in \"%s\"",
				    k, s);
			continue;
		}
		seen = true;
		T_CHECK_MSG(got == v && part.resp == whole.resp &&
				    part.header_len == whole.header_len &&
				    part.close == whole.close,
			    "prefix %zu of \"%s\": %d/%d/%zu vs %d/%d/%zu", k,
			    s, got, part.resp, part.header_len, v, whole.resp,
			    whole.header_len);
		/* The verdict comes exactly when its last byte arrives. */
		if (k == whole.header_len)
			T_CHECK(got == v);
		if (k < whole.header_len)
			T_CHECK_MSG(0, "verdict at %zu before header_len %zu",
				    k, whole.header_len);
	}
	T_CHECK(seen || v == HTTP_INCOMPLETE);
}

static void test_incremental_byte_by_byte(void)
{
	check_incremental("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	check_incremental("HEAD /x HTTP/1.0\r\nConnection: keep-alive\r\n"
			  "Content-Length: 0\r\n\r\n");
	check_incremental(
		"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
		"\r\n0\r\n\r\n");
	check_incremental(
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nab");
	check_incremental("GET / HTTP/2.0\r\n\r\n");
	check_incremental("GET / HTTP/1.1x\r\n\r\n");
	check_incremental("GET / HTTP/1.1\r\nHost : x\r\n\r\n");
	check_incremental("GET / HTTP/1.1\r\nHost: h\r\nX: 1\r\n fold\r\n\r\n");
	check_incremental(
		"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n");
	check_incremental("GET / HTTP/1.1\r\nX: 1\r\n\r\n");
	check_incremental("GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n");
}

/* ---- body framing ---- */

static void test_content_length(void)
{
	struct http_request req;

	T_EQ_INT(
		parse("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 42\r\n\r\n",
		      &req),
		HTTP_OK);
	T_EQ_INT(req.content_length, 42);
	T_CHECK(!req.chunked);
	T_EQ_INT(parse("GET / HTTP/1.1\r\nHost: h\r\ncontent-length:  007 "
		       "\r\n\r\n",
		       &req),
		 HTTP_OK);
	T_EQ_INT(req.content_length, 7);
	/* Duplicates with one value are fine. */
	T_EQ_INT(parse("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
		       "Content-Length: 5\r\n\r\n",
		       &req),
		 HTTP_OK);
	T_EQ_INT(req.content_length, 5);
	/* 2^53 is the largest accepted. */
	T_EQ_INT(parse("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: "
		       "9007199254740992"
		       "\r\n\r\n",
		       &req),
		 HTTP_OK);
	T_EQ_INT(req.content_length, 9007199254740992ULL);
}

static void test_content_length_bad(void)
{
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
		   "Content-Length: 6\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n");
	expect_400(
		"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 9007199254740993"
		"\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: "
		   "99999999999999999999999999\r\n\r\n");
}

static void test_chunked_header(void)
{
	struct http_request req;

	T_EQ_INT(parse("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
		       "chunked\r\n\r\n",
		       &req),
		 HTTP_OK);
	T_CHECK(req.chunked);
	T_EQ_INT(parse("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, "
		       "Chunked"
		       "\r\n\r\n",
		       &req),
		 HTTP_OK);
	T_CHECK(req.chunked);
	T_EQ_INT(
		parse("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n"
		      "Transfer-Encoding: chunked\r\n\r\n",
		      &req),
		HTTP_OK);
	T_CHECK(req.chunked);
}

static void test_chunked_header_bad(void)
{
	expect_400(
		"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n");
	expect_400(
		"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip"
		"\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
		   "chunkedx\r\n\r\n");
	/* Both framings: request smuggling bait. */
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n"
		   "Transfer-Encoding: chunked\r\n\r\n");
	expect_400("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
		   "Content-Length: 3\r\n\r\n");
	/* HTTP/1.0 has no chunked framing. */
	expect_400("GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n");
}

/* ---- chunked body skipping ---- */

#define CHUNKED_BODY                  \
	"4\r\nWiki\r\n"               \
	"5;name=\"v;x\"\r\npedia\r\n" \
	"A \t; e\r\n0123456789\r\n"   \
	"0\r\n"                       \
	"Trailer-One: 1\r\nT2:\r\n"   \
	"\r\n"
static const char chunked_body[] = CHUNKED_BODY;
#define NEXT_REQ "GET / HTTP/1.1\r\nHost: h\r\n\r\n"

static void test_chunked_skip_whole(void)
{
	const char *s = CHUNKED_BODY NEXT_REQ;
	struct http_chunked st = {0};
	bool done = true;
	long n = http_chunked_skip(&st, (const uint8_t *)s, strlen(s), &done);

	T_EQ_INT(n, sizeof(chunked_body) - 1);
	T_CHECK(done);
	/* Once done, nothing more is consumed. */
	n = http_chunked_skip(&st, (const uint8_t *)NEXT_REQ, 5, &done);
	T_EQ_INT(n, 0);
	T_CHECK(done);
}

static void test_chunked_skip_every_split(void)
{
	const char *s = CHUNKED_BODY NEXT_REQ;
	size_t len = strlen(s), body = sizeof(chunked_body) - 1, k;

	for (k = 0; k <= body; k++) {
		struct http_chunked st = {0};
		bool done;
		long a = http_chunked_skip(&st, (const uint8_t *)s, k, &done);
		long b;

		T_CHECK_MSG(a == (long)k, "split %zu: first part took %ld", k,
			    a);
		if (k < body)
			T_CHECK_MSG(!done, "split %zu: done too early", k);
		b = http_chunked_skip(&st, (const uint8_t *)s + a, len - a,
				      &done);
		T_CHECK_MSG(a + b == (long)body && done,
			    "split %zu: took %ld+%ld done %d", k, a, b, done);
	}
}

static void test_chunked_skip_byte_by_byte(void)
{
	const char *s = CHUNKED_BODY NEXT_REQ;
	size_t len = strlen(s), i, total = 0;
	struct http_chunked st = {0};
	bool done = false;

	for (i = 0; i < len && !done; i++) {
		long n = http_chunked_skip(&st, (const uint8_t *)s + i, 1,
					   &done);

		T_CHECK(n == 1);
		total += (size_t)n;
	}
	T_CHECK(done);
	T_EQ_INT(total, sizeof(chunked_body) - 1);
}

static void expect_chunked_bad(const char *s)
{
	struct http_chunked st = {0};
	bool done;

	T_CHECK_MSG(http_chunked_skip(&st, (const uint8_t *)s, strlen(s),
				      &done) == -1,
		    "\"%s\" accepted", s);
}

static void test_chunked_skip_malformed(void)
{
	expect_chunked_bad("\r\n");
	expect_chunked_bad("x\r\n");
	expect_chunked_bad("0x10\r\n");
	expect_chunked_bad("-1\r\n");
	expect_chunked_bad("4\nWiki\r\n0\r\n\r\n");
	expect_chunked_bad("4\r\nWikiX\r\n");
	expect_chunked_bad("4\r\nWiki\r\r");
	expect_chunked_bad("4;\x01\r\n");
	expect_chunked_bad("0\r\n\n");
	expect_chunked_bad("0\r\n bad\r\n\r\n");
	expect_chunked_bad("0\r\nNo colon\r\n\r\n");
	expect_chunked_bad("0\r\nT: \x01\r\n\r\n");
	expect_chunked_bad("0\r\n\r\r");
}

static void test_chunked_skip_overflow(void)
{
	struct http_chunked st = {0};
	bool done;
	const char *max = "FFFFFFFFFFFFFFFF\r\n";

	/* 16 hex digits fit 64 bits; a 17th does not. */
	T_EQ_INT(http_chunked_skip(&st, (const uint8_t *)max, strlen(max),
				   &done),
		 strlen(max));
	T_CHECK(st.remaining == UINT64_MAX);
	expect_chunked_bad("10000000000000000\r\n");
	expect_chunked_bad("FFFFFFFFFFFFFFFFF\r\n");
	/* Leading zeros do not overflow. */
	memset(&st, 0, sizeof(st));
	max = "000000000000000000000001\r\nx\r\n0\r\n\r\n";
	T_EQ_INT(http_chunked_skip(&st, (const uint8_t *)max, strlen(max),
				   &done),
		 strlen(max));
	T_CHECK(done);
}

/* ---- responses ---- */

/* The first lines of every 200 below: a 12-byte text/plain body. */
#define OK_12                          \
	"HTTP/1.1 200 OK\r\n"          \
	"Server: blitz\r\n"            \
	"Date: " FIXED_DATE "\r\n"     \
	"Content-Type: text/plain\r\n" \
	"Content-Length: 12\r\n"

static const char *const expected[BLITZ_RESP_KINDS] = {
	[BLITZ_RESP_GET_KA] = OK_12 "Keep-Alive: timeout=60\r\n"
				    "\r\n"
				    "Hello World!",
	[BLITZ_RESP_GET_KA10] = OK_12 "Connection: keep-alive\r\n"
				      "Keep-Alive: timeout=60\r\n"
				      "\r\n"
				      "Hello World!",
	[BLITZ_RESP_GET_CLOSE] = OK_12 "Connection: close\r\n"
				       "\r\n"
				       "Hello World!",
	[BLITZ_RESP_HEAD_KA] = OK_12 "Keep-Alive: timeout=60\r\n"
				     "\r\n",
	[BLITZ_RESP_HEAD_KA10] = OK_12 "Connection: keep-alive\r\n"
				       "Keep-Alive: timeout=60\r\n"
				       "\r\n",
	[BLITZ_RESP_HEAD_CLOSE] = OK_12 "Connection: close\r\n"
					"\r\n",
	[BLITZ_RESP_400] = "HTTP/1.1 400 Bad Request\r\n"
			   "Server: blitz\r\n"
			   "Date: " FIXED_DATE "\r\n"
			   "Content-Type: text/plain\r\n"
			   "Content-Length: 12\r\n"
			   "Connection: close\r\n"
			   "\r\n"
			   "Bad Request\n",
	[BLITZ_RESP_405] = "HTTP/1.1 405 Method Not Allowed\r\n"
			   "Server: blitz\r\n"
			   "Date: " FIXED_DATE "\r\n"
			   "Allow: GET, HEAD\r\n"
			   "Content-Type: text/plain\r\n"
			   "Content-Length: 19\r\n"
			   "Connection: close\r\n"
			   "\r\n"
			   "Method Not Allowed\n",
	[BLITZ_RESP_431] = "HTTP/1.1 431 Request Header Fields Too Large\r\n"
			   "Server: blitz\r\n"
			   "Date: " FIXED_DATE "\r\n"
			   "Content-Type: text/plain\r\n"
			   "Content-Length: 32\r\n"
			   "Connection: close\r\n"
			   "\r\n"
			   "Request Header Fields Too Large\n",
	[BLITZ_RESP_505] = "HTTP/1.1 505 HTTP Version Not Supported\r\n"
			   "Server: blitz\r\n"
			   "Date: " FIXED_DATE "\r\n"
			   "Content-Type: text/plain\r\n"
			   "Content-Length: 27\r\n"
			   "Connection: close\r\n"
			   "\r\n"
			   "HTTP Version Not Supported\n",
};

static void check_kind(int k)
{
	size_t n = strlen(expected[k]);
	const char *date = strstr(expected[k], FIXED_DATE);

	T_CHECK_MSG(R.len[k] == n, "kind %d: len %u, want %zu", k, R.len[k], n);
	T_CHECK_MSG(R.len[k] == n && !memcmp(R.bytes[k], expected[k], n),
		    "kind %d: bytes differ:\n%.*s", k, (int)R.len[k],
		    (const char *)R.bytes[k]);
	T_EQ_INT(R.date_off[k], date - expected[k]);
}

static void build_default(void)
{
	char err[128];

	T_EQ_INT(http_responses_build(&R, "Hello World!", 12, NULL, FIXED_TIME,
				      err, sizeof(err)),
		 0);
}

static void test_resp_get_ka(void)
{
	build_default();
	check_kind(BLITZ_RESP_GET_KA);
}

static void test_resp_get_ka10(void)
{
	build_default();
	check_kind(BLITZ_RESP_GET_KA10);
}

static void test_resp_get_close(void)
{
	build_default();
	check_kind(BLITZ_RESP_GET_CLOSE);
}

static void test_resp_head_ka(void)
{
	build_default();
	check_kind(BLITZ_RESP_HEAD_KA);
}

static void test_resp_head_ka10(void)
{
	build_default();
	check_kind(BLITZ_RESP_HEAD_KA10);
}

static void test_resp_head_close(void)
{
	build_default();
	check_kind(BLITZ_RESP_HEAD_CLOSE);
}

static void test_resp_400(void)
{
	build_default();
	check_kind(BLITZ_RESP_400);
}

static void test_resp_405(void)
{
	build_default();
	check_kind(BLITZ_RESP_405);
}

static void test_resp_431(void)
{
	build_default();
	check_kind(BLITZ_RESP_431);
}

static void test_resp_505(void)
{
	build_default();
	check_kind(BLITZ_RESP_505);
}

static void test_resp_date_line_third(void)
{
	int k;

	build_default();
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		const uint8_t *b = R.bytes[k];
		const uint8_t *l1 = memchr(b, '\n', R.len[k]);
		const uint8_t *l2 = memchr(l1 + 1, '\n', R.len[k]);

		T_CHECK(l2 && !memcmp(l2 + 1, "Date: ", 6) &&
			(size_t)(l2 + 7 - b) == R.date_off[k]);
		T_CHECK(!memcmp(b + R.date_off[k] + BLITZ_DATE_LEN, "\r\n", 2));
	}
}

static void test_resp_content_type_and_body(void)
{
	static const char body[] = "<h1>hi</h1>\n";
	static const char want[] = "HTTP/1.1 200 OK\r\n"
				   "Server: blitz\r\n"
				   "Date: " FIXED_DATE "\r\n"
				   "Content-Type: text/html; charset=utf-8\r\n"
				   "Content-Length: 12\r\n"
				   "Keep-Alive: timeout=60\r\n"
				   "\r\n"
				   "<h1>hi</h1>\n";
	char err[128];

	T_EQ_INT(http_responses_build(&R, body, 12, "text/html; charset=utf-8",
				      FIXED_TIME, err, sizeof(err)),
		 0);
	T_EQ_INT(R.len[BLITZ_RESP_GET_KA], sizeof(want) - 1);
	T_CHECK(!memcmp(R.bytes[BLITZ_RESP_GET_KA], want, sizeof(want) - 1));
	/* Error kinds keep text/plain. */
	T_CHECK(!memcmp(R.bytes[BLITZ_RESP_400] + 78,
			"Content-Type: text/plain\r\n", 26));
}

static void test_resp_empty_body(void)
{
	char err[128];

	T_EQ_INT(http_responses_build(&R, "", 0, "text/plain", FIXED_TIME, err,
				      sizeof(err)),
		 0);
	T_EQ_INT(R.len[BLITZ_RESP_GET_KA], R.len[BLITZ_RESP_HEAD_KA]);
	T_CHECK(!memcmp(
		R.bytes[BLITZ_RESP_GET_KA] + R.len[BLITZ_RESP_GET_KA] - 45,
		"Content-Length: 0\r\nKeep-Alive: timeout=60\r\n\r\n", 45));
}

/* expected[k] (built for "Hello World!") with Content-Length: n and
 * without the body: the header section every engine must send for a body
 * of n bytes. Returns its length. */
static size_t expected_head(int k, size_t n, char *out, size_t cap)
{
	const char *e = expected[k];
	const char *cl = strstr(e, "Content-Length: 12\r\n");
	const char *end = strstr(e, "\r\n\r\n") + 4;
	int len;

	len = snprintf(out, cap, "%.*sContent-Length: %zu\r\n%.*s",
		       (int)(cl - e), e, n, (int)(end - (cl + 20)), cl + 20);
	return (size_t)len;
}

/* The response of kind k as the wire carries it (the iov pieces joined). */
static size_t wire_bytes(int k, uint8_t *out)
{
	struct iovec iov[2];
	int i, n = http_response_iov(&R, k, iov);
	size_t len = 0;

	for (i = 0; i < n; i++) {
		memcpy(out + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	return len;
}

/* A small body: whole responses in bytes[], one piece, as before. */
static void test_resp_small_is_inline(void)
{
	struct iovec iov[2];
	int k;

	build_default();
	T_CHECK(R.body_inline);
	T_CHECK(R.body == NULL);
	T_EQ_INT(R.body_len, 12);
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		size_t body =
			k >= BLITZ_RESP_OK_KINDS
				? strlen(strstr(expected[k], "\r\n\r\n") + 4)
				: (http_kind_has_body(k) ? 12 : 0);

		T_EQ_INT(http_response_iov(&R, k, iov), 1);
		T_CHECK(iov[0].iov_base == R.bytes[k]);
		T_EQ_INT(iov[0].iov_len, R.len[k]);
		T_EQ_INT(R.hdr_len[k] + body, R.len[k]);
		T_EQ_INT(http_response_len(&R, k), strlen(expected[k]));
	}
}

/* The largest inline body, and one byte more: headers in bytes[], the
 * caller's body referenced, every kind's wire bytes exact. */
static void test_resp_body_inline_limit(void)
{
	static char body[BLITZ_RESP_MAX];
	static uint8_t wire[2 * BLITZ_RESP_MAX];
	static char head[BLITZ_RESP_MAX];
	char err[256] = "";
	size_t fit, hl, n;
	int k;

	memset(body, 'x', sizeof(body));
	/* The largest body that fits: the KA10 kind has the most headers. */
	fit = BLITZ_RESP_MAX - (strlen(expected[BLITZ_RESP_GET_KA10]) - 12) -
	      2; /* Content-Length grows by two digits */
	T_EQ_INT(http_responses_build(&R, body, fit, NULL, FIXED_TIME, err,
				      sizeof(err)),
		 0);
	T_CHECK(R.body_inline);
	T_EQ_INT(R.len[BLITZ_RESP_GET_KA10], BLITZ_RESP_MAX);
	T_EQ_INT(http_responses_build(&R, body, fit + 1, NULL, FIXED_TIME, err,
				      sizeof(err)),
		 0);
	T_CHECK(!R.body_inline);
	T_CHECK(R.body == (const uint8_t *)body);
	T_EQ_INT(R.body_len, fit + 1);
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		if (k >= BLITZ_RESP_OK_KINDS) {
			/* Error kinds do not change with the body. */
			check_kind(k);
			continue;
		}
		hl = expected_head(k, fit + 1, head, sizeof(head));
		T_EQ_INT(R.hdr_len[k], hl);
		T_EQ_INT(R.len[k], hl); /* only the headers in bytes[] */
		T_CHECK(!memcmp(R.bytes[k], head, hl));
		n = wire_bytes(k, wire);
		if (http_kind_has_body(k)) {
			T_EQ_INT(n, hl + fit + 1);
			T_CHECK(!memcmp(wire + hl, body, fit + 1));
		} else {
			T_EQ_INT(n, hl);
		}
		T_EQ_INT(http_response_len(&R, k), n);
	}
}

/* 64 KiB and 1 MiB bodies: the exact bytes on the wire for GET and HEAD. */
static void test_resp_large_bodies(void)
{
	static const size_t sizes[] = {65536, 1u << 20};
	static char head[BLITZ_RESP_MAX];
	char err[256] = "";
	size_t i, j;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], hl, wl;
		uint8_t *body = malloc(n), *wire = malloc(n + 4096);
		int k;

		if (!body || !wire) {
			T_CHECK(0);
			free(body);
			free(wire);
			return;
		}
		for (j = 0; j < n; j++)
			body[j] = (uint8_t)(j * 131 + j / 251);
		T_EQ_INT(http_responses_build(&R, body, n, "application/x-y",
					      FIXED_TIME, err, sizeof(err)),
			 0);
		T_CHECK(!R.body_inline);
		for (k = 0; k < BLITZ_RESP_OK_KINDS; k++) {
			char want[256];

			snprintf(want, sizeof(want),
				 "Content-Type: application/x-y\r\n"
				 "Content-Length: %zu\r\n",
				 n);
			hl = R.hdr_len[k];
			wl = wire_bytes(k, wire);
			T_CHECK(memmem(wire, hl, want, strlen(want)) != NULL);
			T_CHECK(!memcmp(wire + hl - 4, "\r\n\r\n", 4));
			T_CHECK(!memcmp(wire, "HTTP/1.1 200 OK\r\n", 17));
			T_CHECK(!memcmp(wire + R.date_off[k], FIXED_DATE,
					BLITZ_DATE_LEN));
			if (http_kind_has_body(k)) {
				T_EQ_INT(wl, hl + n);
				T_CHECK(!memcmp(wire + hl, body, n));
			} else {
				T_EQ_INT(wl, hl);
			}
		}
		/* The default content type: every kind byte for byte. */
		T_EQ_INT(http_responses_build(&R, body, n, NULL, FIXED_TIME,
					      err, sizeof(err)),
			 0);
		for (k = 0; k < BLITZ_RESP_OK_KINDS; k++) {
			hl = expected_head(k, n, head, sizeof(head));
			wl = wire_bytes(k, wire);
			T_CHECK_MSG(!memcmp(wire, head, hl), "kind %d", k);
			if (http_kind_has_body(k)) {
				T_EQ_INT(wl, hl + n);
				T_CHECK(!memcmp(wire + hl, body, n));
			} else {
				T_EQ_INT(wl, hl);
			}
		}
		free(body);
		free(wire);
	}
}

/* The Date moves in the header bytes only; the body stays the caller's. */
static void test_resp_large_set_date(void)
{
	static uint8_t body[100000];
	char d2[BLITZ_DATE_LEN], err[128];
	int k;

	memset(body, 'b', sizeof(body));
	T_EQ_INT(http_responses_build(&R, body, sizeof(body), NULL, FIXED_TIME,
				      err, sizeof(err)),
		 0);
	http_responses_set_date(&R, FIXED_TIME + 1);
	http_format_date(FIXED_TIME + 1, d2);
	for (k = 0; k < BLITZ_RESP_KINDS; k++)
		T_CHECK(!memcmp(R.bytes[k] + R.date_off[k], d2,
				BLITZ_DATE_LEN));
	T_CHECK(R.body == body);
	T_EQ_INT(body[0], 'b');
	T_EQ_INT(body[sizeof(body) - 1], 'b');
}

/* The limits: 16 MiB is fine, a byte more is refused with a message; a
 * content type too long for the header template is refused. */
static void test_resp_body_too_big(void)
{
	static char ctype[BLITZ_RESP_MAX];
	char err[256] = "";
	uint8_t *body = calloc(1, (size_t)BLITZ_BODY_MAX + 1);
	struct iovec iov[2] = {0};

	if (!body) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(http_responses_build(&R, body, BLITZ_BODY_MAX, NULL,
				      FIXED_TIME, err, sizeof(err)),
		 0);
	T_CHECK(!R.body_inline);
	T_EQ_INT(http_response_iov(&R, BLITZ_RESP_GET_KA, iov), 2);
	T_EQ_INT(iov[1].iov_len, BLITZ_BODY_MAX);
	T_CHECK(memmem(R.bytes[BLITZ_RESP_GET_KA], R.hdr_len[BLITZ_RESP_GET_KA],
		       "Content-Length: 16777216\r\n", 26) != NULL);
	T_EQ_INT(http_responses_build(&R, body, (size_t)BLITZ_BODY_MAX + 1,
				      NULL, FIXED_TIME, err, sizeof(err)),
		 -EMSGSIZE);
	T_CHECK(strstr(err, "16777217") != NULL);
	free(body);

	memset(ctype, 'a', sizeof(ctype) - 1);
	err[0] = 0;
	T_EQ_INT(http_responses_build(&R, "x", 1, ctype, FIXED_TIME, err,
				      sizeof(err)),
		 -EMSGSIZE);
	T_CHECK(strlen(err) > 10);
	/* A failed build leaves nothing an engine could send by mistake. */
	T_EQ_INT(R.len[BLITZ_RESP_GET_KA], 0);
	T_CHECK(R.body == NULL);
}

static void test_resp_content_type_crlf(void)
{
	char err[128] = "";

	T_EQ_INT(http_responses_build(&R, "x", 1, "text/plain\r\nX-Evil: 1",
				      FIXED_TIME, err, sizeof(err)),
		 -EINVAL);
	T_CHECK(err[0] != 0);
	T_EQ_INT(http_responses_build(&R, "x", 1, "a\x7f", FIXED_TIME, err,
				      sizeof(err)),
		 -EINVAL);
	T_EQ_INT(http_responses_build(&R, "x", 1, "a\tb", FIXED_TIME, err,
				      sizeof(err)),
		 -EINVAL);
}

static void test_format_date(void)
{
	char d[BLITZ_DATE_LEN + 1] = {0};
	static const struct {
		time_t t;
		const char *s;
	} cases[] = {
		{0, "Thu, 01 Jan 1970 00:00:00 GMT"},
		{FIXED_TIME, FIXED_DATE},
		{951782400, "Tue, 29 Feb 2000 00:00:00 GMT"},
		{4133980799, "Fri, 31 Dec 2100 23:59:59 GMT"},
		{1798761599, "Thu, 31 Dec 2026 23:59:59 GMT"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		http_format_date(cases[i].t, d);
		T_CHECK_MSG(!strcmp(d, cases[i].s), "%lld: %s, want %s",
			    (long long)cases[i].t, d, cases[i].s);
	}
}

/* Against libc's gmtime_r + strftime for a spread of seconds. */
static void test_format_date_vs_libc(void)
{
	char d[BLITZ_DATE_LEN + 1] = {0}, want[64] = "";
	long long t;
	int same = 1;

	for (t = 0; same && t < 4102444800LL; t += 86400 * 7 + 3607) {
		time_t tt = (time_t)t;
		struct tm tm;

		gmtime_r(&tt, &tm);
		strftime(want, sizeof(want), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		http_format_date(tt, d);
		same = !strcmp(d, want);
	}
	T_CHECK_MSG(same, "%lld: %s, want %s", t, d, want);
}

static void test_set_date_changes_only_date(void)
{
	static struct http_responses before;
	time_t t2 = FIXED_TIME + 86400 * 400 + 3661;
	char d2[BLITZ_DATE_LEN];
	int k;

	build_default();
	before = R;
	http_responses_set_date(&R, t2);
	http_format_date(t2, d2);
	T_EQ_INT(R.date_now, t2);
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		size_t off = R.date_off[k];

		T_EQ_INT(R.len[k], before.len[k]);
		T_CHECK(!memcmp(R.bytes[k], before.bytes[k], off));
		T_CHECK(!memcmp(R.bytes[k] + off, d2, BLITZ_DATE_LEN));
		T_CHECK(!memcmp(R.bytes[k] + off + BLITZ_DATE_LEN,
				before.bytes[k] + off + BLITZ_DATE_LEN,
				BLITZ_RESP_MAX - off - BLITZ_DATE_LEN));
	}
	/* Back again: byte-identical to the original build. */
	http_responses_set_date(&R, FIXED_TIME);
	T_CHECK(!memcmp(&R, &before, sizeof(R)));
}

/* The slow reference: big-endian words, 32-bit accumulate, fold. */
static uint16_t csum_ref(const uint8_t *b, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		s += (i % 2 == 0) ? (uint32_t)b[i] << 8 : b[i];
		s = (s & 0xffff) + (s >> 16);
	}
	return (uint16_t)s;
}

static void test_csum16(void)
{
	/* RFC 1071 section 3's example: the sum is 0xddf2. */
	static const uint8_t rfc[] = {0x00, 0x01, 0xf2, 0x03,
				      0xf4, 0xf5, 0xf6, 0xf7};
	uint8_t buf[1501];
	uint16_t c;
	size_t n, i;

	c = http_csum16(rfc, sizeof(rfc));
	T_EQ_INT(ntohs(c), 0xddf2);
	/* Network byte order: stored as-is, reads 0xdd 0xf2. */
	T_CHECK(((uint8_t *)&c)[0] == 0xdd && ((uint8_t *)&c)[1] == 0xf2);
	T_EQ_INT(http_csum16(rfc, 0), 0);
	T_EQ_INT(ntohs(http_csum16(rfc, 1)), 0x0000);
	T_EQ_INT(ntohs(http_csum16(rfc + 2, 1)), 0xf200);

	srand(7);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (n = 0; n <= sizeof(buf); n += (n < 64 ? 1 : 97))
		T_CHECK_MSG(ntohs(http_csum16(buf, n)) == csum_ref(buf, n),
			    "len %zu", n);
	memset(buf, 0xff, sizeof(buf));
	T_EQ_INT(ntohs(http_csum16(buf, sizeof(buf))),
		 csum_ref(buf, sizeof(buf)));
}

static void test_meta_checksum(void)
{
	struct blitz_resp_meta meta[BLITZ_RESP_KINDS];
	uint8_t tmp[BLITZ_RESP_MAX];
	int k;

	build_default();
	http_responses_set_date(&R, FIXED_TIME + 12345);
	memset(meta, 0xaa, sizeof(meta));
	http_responses_meta(&R, meta);
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		uint32_t s;

		T_EQ_INT(meta[k].len, R.len[k]);
		T_EQ_INT(meta[k].date_off, R.date_off[k]);
		T_EQ_INT(meta[k].gen, meta[0].gen);
		memcpy(tmp, R.bytes[k], R.len[k]);
		memset(tmp + R.date_off[k], 0, BLITZ_DATE_LEN);
		T_EQ_INT(meta[k].csum_nodate, http_csum16(tmp, R.len[k]));
		/* Adding the Date's own sum at its offset gives the whole. */
		s = ntohs(meta[k].csum_nodate);
		memset(tmp, 0, sizeof(tmp));
		memcpy(tmp + R.date_off[k], R.bytes[k] + R.date_off[k],
		       BLITZ_DATE_LEN);
		s += ntohs(http_csum16(tmp, R.len[k]));
		s = (s & 0xffff) + (s >> 16);
		T_EQ_INT(s, ntohs(http_csum16(R.bytes[k], R.len[k])));
	}
}

/* Each call's meta has a generation of its own (the XDP program rebuilds
 * its rendered copies when it changes), the same for every kind. */
static void test_meta_generation(void)
{
	struct blitz_resp_meta a[BLITZ_RESP_KINDS], b[BLITZ_RESP_KINDS];
	int k;

	build_default();
	http_responses_meta(&R, a);
	http_responses_meta(&R, b);
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		T_EQ_INT(a[k].gen, a[0].gen);
		T_EQ_INT(b[k].gen, b[0].gen);
		T_CHECK(a[k].gen != b[k].gen);
		T_EQ_INT(a[k].csum_nodate, b[k].csum_nodate);
	}
}

/* An odd-length body puts the bytes after the Date at odd offsets. */
static void test_meta_checksum_odd_body(void)
{
	struct blitz_resp_meta meta[BLITZ_RESP_KINDS];
	uint8_t tmp[BLITZ_RESP_MAX];
	char err[128];
	int k;

	T_EQ_INT(http_responses_build(&R, "abc", 3, "x/y", FIXED_TIME, err,
				      sizeof(err)),
		 0);
	http_responses_meta(&R, meta);
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		memcpy(tmp, R.bytes[k], R.len[k]);
		memset(tmp + R.date_off[k], 0, BLITZ_DATE_LEN);
		T_EQ_INT(ntohs(meta[k].csum_nodate), csum_ref(tmp, R.len[k]));
	}
}

/* Every request kind maps onto a response that starts as the contract
 * says: the parser's resp indexes the builder's table. */
static void test_parse_to_response(void)
{
	struct http_request req;

	build_default();
	parse("HEAD / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &req);
	T_CHECK(!memcmp(R.bytes[req.resp] + R.len[req.resp] - 50,
			"Connection: keep-alive\r\nKeep-Alive: timeout=60\r\n"
			"\r\n",
			50));
	parse("PUT / HTTP/1.1\r\nHost: h\r\n\r\n", &req);
	T_CHECK(!memcmp(R.bytes[req.resp], "HTTP/1.1 405 ", 13));
}

/* Keep-Alive: timeout= (issue 10): in every keep-alive response and in
 * no closing one, and never longer than cookie v2 keeps a connection
 * valid (docs/cookie-v2.md: at least EPOCH - 2 * SKEW). */
static void test_resp_keep_alive_timeout(void)
{
	const char *want = "\r\nKeep-Alive: timeout=60\r\n";
	int k;

	build_default();
	T_EQ_INT(BLITZ_KEEPALIVE_TIMEOUT, BLITZ_CK2_KEEPALIVE_S);
	T_CHECK((uint64_t)BLITZ_KEEPALIVE_TIMEOUT * 1000000000ULL <
		BLITZ_CK2_EPOCH_NS - 2 * BLITZ_CK2_SKEW_NS);
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		int ka = k == BLITZ_RESP_GET_KA || k == BLITZ_RESP_GET_KA10 ||
			 k == BLITZ_RESP_HEAD_KA || k == BLITZ_RESP_HEAD_KA10;
		const void *at =
			memmem(R.bytes[k], R.hdr_len[k], want, strlen(want));

		T_CHECK_MSG(ka == (at != NULL), "kind %d: Keep-Alive %s", k,
			    at ? "present" : "missing");
		T_CHECK_MSG(ka == !memmem(R.bytes[k], R.hdr_len[k],
					  "Connection: close", 17),
			    "kind %d", k);
	}
}

int main(void)
{
	T_RUN(test_get_http11);
	T_RUN(test_head_http11);
	T_RUN(test_no_headers);
	T_RUN(test_host_missing_11);
	T_RUN(test_host_duplicate);
	T_RUN(test_host_ok);
	T_RUN(test_host_pipelined);
	T_RUN(test_http10_no_keepalive);
	T_RUN(test_http10_keepalive);
	T_RUN(test_http10_keepalive_and_close);
	T_RUN(test_connection_close);
	T_RUN(test_connection_list_keepalive);
	T_RUN(test_pipelined_three);
	T_RUN(test_post_405);
	T_RUN(test_bad_request_line);
	T_RUN(test_bad_request_line_early);
	T_RUN(test_bad_nul_in_target);
	T_RUN(test_non_ascii_target_400);
	T_RUN(test_version_505);
	T_RUN(test_version_trailing_garbage_400);
	T_RUN(test_header_without_colon);
	T_RUN(test_space_before_colon);
	T_RUN(test_obs_fold);
	T_RUN(test_control_in_value);
	T_RUN(test_bare_lf_400);
	T_RUN(test_obs_text_in_value_ok);
	T_RUN(test_non_tchar_in_name_400);
	T_RUN(test_at_limit_ok);
	T_RUN(test_over_limit_431);
	T_RUN(test_over_limit_no_end_431);
	T_RUN(test_long_request_line_431);
	T_RUN(test_incremental_byte_by_byte);
	T_RUN(test_content_length);
	T_RUN(test_content_length_bad);
	T_RUN(test_chunked_header);
	T_RUN(test_chunked_header_bad);
	T_RUN(test_chunked_skip_whole);
	T_RUN(test_chunked_skip_every_split);
	T_RUN(test_chunked_skip_byte_by_byte);
	T_RUN(test_chunked_skip_malformed);
	T_RUN(test_chunked_skip_overflow);
	T_RUN(test_resp_get_ka);
	T_RUN(test_resp_get_ka10);
	T_RUN(test_resp_get_close);
	T_RUN(test_resp_head_ka);
	T_RUN(test_resp_head_ka10);
	T_RUN(test_resp_head_close);
	T_RUN(test_resp_400);
	T_RUN(test_resp_405);
	T_RUN(test_resp_431);
	T_RUN(test_resp_505);
	T_RUN(test_resp_date_line_third);
	T_RUN(test_resp_content_type_and_body);
	T_RUN(test_resp_empty_body);
	T_RUN(test_resp_keep_alive_timeout);
	T_RUN(test_resp_small_is_inline);
	T_RUN(test_resp_body_inline_limit);
	T_RUN(test_resp_large_bodies);
	T_RUN(test_resp_large_set_date);
	T_RUN(test_resp_body_too_big);
	T_RUN(test_resp_content_type_crlf);
	T_RUN(test_format_date);
	T_RUN(test_format_date_vs_libc);
	T_RUN(test_set_date_changes_only_date);
	T_RUN(test_csum16);
	T_RUN(test_meta_checksum);
	T_RUN(test_meta_checksum_odd_body);
	T_RUN(test_meta_generation);
	T_RUN(test_parse_to_response);
	T_EXIT();
}
