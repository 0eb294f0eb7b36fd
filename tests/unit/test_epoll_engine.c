// SPDX-License-Identifier: GPL-2.0
/*
 * test_epoll_engine.c - the epoll engine in this process, on loopback
 * (127.0.0.1, a port the kernel picks): exact response bytes, pipelining,
 * split requests, bodies, error rows of the contract, lingering close
 * without RST, timeouts, the connection cap, graceful stop, no fd leak.
 *
 * Owns nothing but its sockets; never touches an address but 127.0.0.1.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "epoll_engine.h"
#include "http.h"
#include "testlib.h"

static struct blitz_service svc;
static struct http_responses ref; /* what the engine must send */
static struct epoll_engine *eng;
static uint16_t port;

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

static void nap_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int start(int max_conns, int idle_ms, int header_ms)
{
	struct epoll_engine_opts o = {
		.svc = &svc,
		.resp = &ref, /* as serve builds them, once */
		.threads = 1,
		.max_conns = max_conns,
		.idle_timeout_ms = idle_ms,
		.header_timeout_ms = header_ms,
		.drain_ms = 500,
	};
	int ret = epoll_engine_start(&o, &eng);

	if (!ret)
		port = epoll_engine_port(eng);
	return ret;
}

static void stop(struct epoll_engine_stats *st)
{
	epoll_engine_request_stop(eng);
	epoll_engine_join(eng, st);
	eng = NULL;
}

/* Connect to the engine on loopback with one socket option set first
 * (before connect: SO_RCVBUF sizes the window the handshake offers). */
static int dial_with(int level, int name, int val)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, level, name, &val, sizeof(val));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int dial(void)
{
	return dial_with(IPPROTO_TCP, TCP_NODELAY, 1);
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A connection with req sent on it, both checked: the fd, or -1. */
static int dial_send(const void *req, size_t len)
{
	int fd = dial();

	T_CHECK(fd >= 0);
	if (fd < 0)
		return -1;
	T_CHECK(!send_all(fd, req, len));
	return fd;
}

/*
 * Read until `want` bytes arrived, EOF, an error or timeout_ms passed.
 * Returns the bytes read; *eof: 1 on EOF, -errno on an error (RST).
 */
static size_t recv_upto(int fd, uint8_t *buf, size_t want, int timeout_ms,
			int *eof)
{
	size_t got = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	*eof = 0;
	while (got < want) {
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		n = recv(fd, buf + got, want - got, 0);
		if (n == 0) {
			*eof = 1;
			break;
		}
		if (n < 0) {
			*eof = -errno;
			break;
		}
		got += (size_t)n;
	}
	return got;
}

/* Compare one response of kind k at p with the reference, Date masked. */
static bool same_response(const uint8_t *p, size_t len, int k)
{
	size_t d = ref.date_off[k];

	if (len < ref.len[k])
		return false;
	return !memcmp(p, ref.bytes[k], d) &&
	       !memcmp(p + d + BLITZ_DATE_LEN,
		       ref.bytes[k] + d + BLITZ_DATE_LEN,
		       ref.len[k] - d - BLITZ_DATE_LEN);
}

static const char GET[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

/* Send @req on @fd and expect exactly @n keep-alive GET answers back, byte
 * for byte (Date excepted), within @ms; @buf holds @n answers. */
static void expect_get_answers(int fd, const char *req, size_t n, uint8_t *buf,
			       int ms)
{
	size_t one = ref.len[BLITZ_RESP_GET_KA], want = n * one, got, i;
	int eof, bad = 0;

	T_CHECK(!send_all(fd, req, strlen(req)));
	got = recv_upto(fd, buf, want, ms, &eof);
	T_EQ_INT(got, want);
	for (i = 0; i < n && got == want; i++)
		bad += !same_response(buf + i * one, one, BLITZ_RESP_GET_KA);
	T_EQ_INT(bad, 0);
}

static void test_get_exact_bytes(void)
{
	uint8_t buf[4096];
	int fd = dial_send(GET, strlen(GET)), eof;
	size_t n;

	if (fd < 0)
		return;
	n = recv_upto(fd, buf, ref.len[BLITZ_RESP_GET_KA], 2000, &eof);
	T_EQ_INT(n, ref.len[BLITZ_RESP_GET_KA]);
	T_CHECK(same_response(buf, n, BLITZ_RESP_GET_KA));
	/* Keep-alive: a second request on the same connection. */
	T_CHECK(!send_all(fd, "HEAD / HTTP/1.1\r\nHost: h\r\n\r\n", 28));
	n = recv_upto(fd, buf, ref.len[BLITZ_RESP_HEAD_KA], 2000, &eof);
	T_CHECK(same_response(buf, n, BLITZ_RESP_HEAD_KA));
	close(fd);
}

/* @n GETs in one send on a fresh connection: @n answers, in order. */
static void pipelined_gets(int n, int ms)
{
	static char req[200 * sizeof(GET)];
	static uint8_t buf[200 * 512];
	int fd = dial(), i;

	T_CHECK(n <= 200 && fd >= 0);
	if (n > 200 || fd < 0)
		return;
	req[0] = 0;
	for (i = 0; i < n; i++)
		strcat(req, GET);
	expect_get_answers(fd, req, (size_t)n, buf, ms);
	close(fd);
}

static void test_pipelined_16(void)
{
	pipelined_gets(16, 2000);
}

/* More answers than one output buffer holds: parsing pauses and resumes. */
static void test_pipelined_200(void)
{
	pipelined_gets(200, 3000);
}

static void test_split_request(void)
{
	uint8_t buf[4096];
	int fd = dial_send("GET / HTTP/1.1\r\nHo", 18), eof;
	size_t n;

	if (fd < 0)
		return;
	n = recv_upto(fd, buf, 1, 200, &eof);
	T_EQ_INT(n, 0); /* nothing answered for half a request */
	T_CHECK(!send_all(fd, "st: x\r\n\r\n", 9));
	n = recv_upto(fd, buf, ref.len[BLITZ_RESP_GET_KA], 2000, &eof);
	T_CHECK(same_response(buf, n, BLITZ_RESP_GET_KA));
	close(fd);
}

/* The answer to `req`, then the server's FIN (not a RST). */
static void expect_close(const char *req, size_t len, int kind)
{
	uint8_t buf[4096];
	int fd = dial_send(req, len), eof;
	size_t n;

	if (fd < 0)
		return;
	n = recv_upto(fd, buf, sizeof(buf), 3000, &eof);
	T_CHECK_MSG(same_response(buf, n, kind), "kind %d, got %zu bytes: %.*s",
		    kind, n, (int)(n < 80 ? n : 80), buf);
	T_EQ_INT(n, ref.len[kind]);
	T_EQ_INT(eof, 1);
	close(fd);
}

static void test_post_body_405_fin(void)
{
	static const char req[] = "POST /x HTTP/1.1\r\nHost: x\r\n"
				  "Content-Length: 11\r\n\r\nhello=world";

	expect_close(req, strlen(req), BLITZ_RESP_405);
}

/* A large unread body behind a 405: lingering close keeps it from a RST. */
static void test_post_big_body_no_rst(void)
{
	static char req[60000];
	int n = snprintf(
		req, sizeof(req),
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 50000\r\n\r\n");

	memset(req + n, 'a', 50000);
	expect_close(req, (size_t)n + 50000, BLITZ_RESP_405);
}

static void test_connection_close(void)
{
	static const char req[] =
		"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
	static const char req10[] = "GET / HTTP/1.0\r\n\r\n";

	expect_close(req, strlen(req), BLITZ_RESP_GET_CLOSE);
	expect_close(req10, strlen(req10), BLITZ_RESP_GET_CLOSE);
}

static void test_headers_5k_ok_9k_431(void)
{
	static char req[12000];
	uint8_t buf[4096];
	int fd, eof, n;
	size_t got;

	n = snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: h\r\nX-Big: ");
	memset(req + n, 'b', 5120);
	strcpy(req + n + 5120, "\r\n\r\n");
	fd = dial();
	T_CHECK(fd >= 0);
	if (fd < 0)
		return;
	T_CHECK(!send_all(fd, req, strlen(req)));
	got = recv_upto(fd, buf, ref.len[BLITZ_RESP_GET_KA], 2000, &eof);
	T_CHECK(same_response(buf, got, BLITZ_RESP_GET_KA));
	close(fd);

	memset(req + n, 'b', 9216);
	strcpy(req + n + 9216, "\r\n\r\n");
	expect_close(req, strlen(req), BLITZ_RESP_431);
}

static void test_http2_preface_505(void)
{
	static const char pri[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

	expect_close(pri, strlen(pri), BLITZ_RESP_505);
}

static void test_malformed_400(void)
{
	static const char bad[] = "GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n";

	expect_close(bad, strlen(bad), BLITZ_RESP_400);
}

static void test_bodies_skipped(void)
{
	static const char req[] =
		"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
		"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
		"chunked\r\n\r\n"
		"5\r\nhello\r\n0\r\n\r\n"
		"GET / HTTP/1.1\r\nHost: h\r\n\r\n";
	uint8_t buf[4096];
	int fd = dial();

	T_CHECK(fd >= 0);
	if (fd < 0)
		return;
	expect_get_answers(fd, req, 3, buf, 2000);
	close(fd);
}

static void test_client_half_close(void)
{
	uint8_t buf[4096];
	int fd = dial_send(GET, strlen(GET)), eof;
	size_t n;

	if (fd < 0)
		return;
	/* Request and FIN together: the answer still comes, then FIN. */
	shutdown(fd, SHUT_WR);
	n = recv_upto(fd, buf, sizeof(buf), 2000, &eof);
	T_CHECK(same_response(buf, n, BLITZ_RESP_GET_KA));
	T_EQ_INT(eof, 1);
	close(fd);
}

static void run_main_suite(void)
{
	T_RUN(test_get_exact_bytes);
	T_RUN(test_pipelined_16);
	T_RUN(test_pipelined_200);
	T_RUN(test_split_request);
	T_RUN(test_post_body_405_fin);
	T_RUN(test_post_big_body_no_rst);
	T_RUN(test_connection_close);
	T_RUN(test_headers_5k_ok_9k_431);
	T_RUN(test_http2_preface_505);
	T_RUN(test_malformed_400);
	T_RUN(test_bodies_skipped);
	T_RUN(test_client_half_close);
}

/* Engine with short timeouts: idle and slow-header connections close. */
static void test_timeouts(void)
{
	uint8_t buf[64];
	int idle, slow, eof;
	struct epoll_engine_stats st;

	if (start(0, 600, 600)) {
		T_CHECK(!"engine start");
		return;
	}
	idle = dial();
	slow = dial();
	T_CHECK(idle >= 0 && slow >= 0);
	T_CHECK(!send_all(slow, "GET / HT", 8));
	recv_upto(idle, buf, sizeof(buf), 3000, &eof);
	T_EQ_INT(eof, 1);
	recv_upto(slow, buf, sizeof(buf), 3000, &eof);
	T_CHECK(eof != 0); /* closed (unread bytes may make it a RST) */
	stop(&st);
	T_EQ_INT(st.idle_timeouts, 1);
	T_EQ_INT(st.header_timeouts, 1);
	close(idle);
	close(slow);
}

/* Cap of 2: the third connection waits in the backlog until one closes. */
static void test_cap(void)
{
	uint8_t buf[1024];
	int a, b, c, eof;
	size_t n;
	struct epoll_engine_stats st;

	if (start(2, 0, 0)) {
		T_CHECK(!"engine start");
		return;
	}
	a = dial();
	b = dial();
	nap_ms(100);
	c = dial(); /* the kernel completes it; blitz does not accept */
	T_CHECK(a >= 0 && b >= 0 && c >= 0);
	T_CHECK(!send_all(c, GET, strlen(GET)));
	n = recv_upto(c, buf, 1, 400, &eof);
	T_EQ_INT(n, 0);
	close(a);
	n = recv_upto(c, buf, ref.len[BLITZ_RESP_GET_KA], 2000, &eof);
	T_CHECK(same_response(buf, n, BLITZ_RESP_GET_KA));
	stop(&st);
	T_CHECK(st.cap_pauses >= 1);
	close(b);
	close(c);
}

/* Stop with a request half sent: it is answered with close once complete
 * within the drain time; idle connections are closed at once. */
static void test_graceful_stop(void)
{
	struct epoll_engine_stats st;
	uint8_t buf[1024];
	int idle, busy, eof;
	size_t n;

	if (start(0, 0, 0)) {
		T_CHECK(!"engine start");
		return;
	}
	idle = dial();
	busy = dial();
	T_CHECK(!send_all(busy, "GET / HTTP/1.1\r\nHost: h\r\n", 25));
	nap_ms(50);
	epoll_engine_request_stop(eng);
	recv_upto(idle, buf, sizeof(buf), 1000, &eof);
	T_EQ_INT(eof, 1);
	T_CHECK(!send_all(busy, "\r\n", 2));
	n = recv_upto(busy, buf, sizeof(buf), 1000, &eof);
	T_CHECK(same_response(buf, n, BLITZ_RESP_GET_CLOSE));
	T_EQ_INT(eof, 1);
	epoll_engine_join(eng, &st);
	eng = NULL;
	T_EQ_INT(st.open, 0);
	close(idle);
	close(busy);
}

static void test_port_in_use(void)
{
	struct epoll_engine *e2;
	struct epoll_engine_opts o = {.svc = &svc, .resp = &ref, .threads = 1};
	uint16_t saved = svc.port;

	if (start(0, 0, 0)) {
		T_CHECK(!"engine start");
		return;
	}
	/* A second engine on the same port is refused, not merged in. */
	svc.port = port;
	T_CHECK(epoll_engine_start(&o, &e2) == -EADDRINUSE);
	svc.port = saved;
	stop(NULL);
}

/* ---- large bodies: headers from the template, body from shared bytes ---- */

static struct http_responses big_ref; /* what the big-body engine sends */

/*
 * got[0..glen) is exactly the responses of kinds[0..nk) of r in order
 * (http_response_iov's pieces joined), Date masked. Says where not.
 */
static bool stream_matches(const uint8_t *got, size_t glen,
			   const struct http_responses *r, const int *kinds,
			   int nk)
{
	size_t off = 0;
	int i, j;

	for (i = 0; i < nk; i++) {
		struct iovec iov[2];
		int n = http_response_iov(r, kinds[i], iov);
		size_t d = r->date_off[kinds[i]];

		for (j = 0; j < n; j++) {
			const uint8_t *e = iov[j].iov_base;
			size_t len = iov[j].iov_len;

			if (off + len > glen) {
				printf("  response %d: stream ends at %zu\n", i,
				       glen);
				return false;
			}
			if (j == 0 ? memcmp(got + off, e, d) ||
					     memcmp(got + off + d +
							    BLITZ_DATE_LEN,
						    e + d + BLITZ_DATE_LEN,
						    len - d - BLITZ_DATE_LEN)
				   : memcmp(got + off, e, len) != 0) {
				printf("  response %d piece %d differs\n", i,
				       j);
				return false;
			}
			off += len;
		}
	}
	if (off != glen)
		printf("  %zu bytes expected, %zu received\n", off, glen);
	return off == glen;
}

/* Dial with a small receive buffer, so the server's sends come back short
 * and it must resume mid-header or mid-body on EPOLLOUT. */
static int dial_small_rcvbuf(void)
{
	return dial_with(SOL_SOCKET, SO_RCVBUF, 4096);
}

static void test_big_get_and_head(void)
{
	static const int get[] = {BLITZ_RESP_GET_KA};
	static const int head[] = {BLITZ_RESP_HEAD_KA};
	size_t want = http_response_len(&big_ref, BLITZ_RESP_GET_KA), n;
	uint8_t *buf = malloc(want + 4096);
	int fd = dial(), eof;

	T_CHECK(fd >= 0 && buf);
	if (fd < 0 || !buf)
		goto out;
	T_CHECK(!big_ref.body_inline);
	T_CHECK(!send_all(fd, GET, strlen(GET)));
	n = recv_upto(fd, buf, want, 3000, &eof);
	T_CHECK(stream_matches(buf, n, &big_ref, get, 1));
	/* Keep-alive; HEAD: the same Content-Length, no body. */
	T_CHECK(!send_all(fd, "HEAD / HTTP/1.1\r\nHost: h\r\n\r\n", 28));
	want = http_response_len(&big_ref, BLITZ_RESP_HEAD_KA);
	n = recv_upto(fd, buf, want + 1, 500, &eof);
	T_CHECK(stream_matches(buf, n, &big_ref, head, 1));
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* Pipelined GET, HEAD, GET, then GET with close, into a slow reader: the
 * server's writes come back short anywhere in the headers and bodies, and
 * every byte must still arrive in order, then EOF. */
static void test_big_pipelined_slow_reader(void)
{
	static const char reqs[] =
		"GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
		"HEAD /2 HTTP/1.1\r\nHost: h\r\n\r\n"
		"GET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
		"GET /4 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
	static const int kinds[] = {BLITZ_RESP_GET_KA, BLITZ_RESP_HEAD_KA,
				    BLITZ_RESP_GET_KA, BLITZ_RESP_GET_CLOSE};
	size_t want = 0, n;
	uint8_t *buf;
	int fd = dial_small_rcvbuf(), eof, i;

	for (i = 0; i < 4; i++)
		want += http_response_len(&big_ref, kinds[i]);
	buf = malloc(want + 4096);
	T_CHECK(fd >= 0 && buf);
	if (fd < 0 || !buf)
		goto out;
	T_CHECK(!send_all(fd, reqs, strlen(reqs)));
	nap_ms(100); /* let the server fill the socket and get EAGAIN */
	n = recv_upto(fd, buf, want + 4096, 5000, &eof);
	T_CHECK(stream_matches(buf, n, &big_ref, kinds, 4));
	T_EQ_INT(eof, 1);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* An engine serving a body of blen bytes; the caller's buffer is wiped
 * after start (the engine keeps its own copy). */
static void run_big_suite(size_t blen)
{
	static struct http_responses bresp; /* from bsvc's own buffer */
	struct blitz_service bsvc;
	struct epoll_engine_opts o = {
		.svc = &bsvc, .resp = &bresp, .threads = 1};
	struct epoll_engine_stats st;
	uint8_t *keep = malloc(blen);
	size_t i;

	service_init(&bsvc);
	bsvc.port = 0;
	bsvc.n_addr4 = 1;
	bsvc.addr4[0].s_addr = htonl(INADDR_LOOPBACK);
	bsvc.body = malloc(blen);
	bsvc.body_len = blen;
	if (!bsvc.body || !keep) {
		printf("FAIL big_suite_%zu: out of memory\n", blen);
		t_failed_total++;
		goto out;
	}
	for (i = 0; i < blen; i++)
		keep[i] = (uint8_t)(i * 2654435761u >> 24);
	memcpy(bsvc.body, keep, blen);
	if (service_responses(&bsvc, &bresp) || epoll_engine_start(&o, &eng) ||
	    http_responses_build(&big_ref, keep, blen, bsvc.content_type,
				 time(NULL), NULL, 0)) {
		printf("FAIL big_suite_%zu: engine start\n", blen);
		t_failed_total++;
		goto out;
	}
	port = epoll_engine_port(eng);
	memset(bsvc.body, 'X', blen);
	printf("# body of %zu bytes\n", blen);
	T_RUN(test_big_get_and_head);
	T_RUN(test_big_pipelined_slow_reader);
	stop(&st);
	t_begin();
	T_EQ_INT(st.resp[BLITZ_RESP_GET_KA], 3);
	T_EQ_INT(st.resp[BLITZ_RESP_GET_CLOSE], 1);
	T_EQ_INT(st.tx_bytes,
		 3 * http_response_len(&big_ref, BLITZ_RESP_GET_KA) +
			 2 * http_response_len(&big_ref, BLITZ_RESP_HEAD_KA) +
			 http_response_len(&big_ref, BLITZ_RESP_GET_CLOSE));
	T_CHECK(st.accepted == st.closed);
	t_verdict("test_big_counters");
out:
	service_free(&bsvc);
	free(keep);
}

int main(void)
{
	struct epoll_engine_stats st;
	int fds0, fds1;

	service_init(&svc);
	svc.port = 0; /* the kernel picks; the engine keeps it */
	svc.n_addr4 = 1;
	svc.addr4[0].s_addr = htonl(INADDR_LOOPBACK);
	if (service_finish(&svc) ||
	    http_responses_build(&ref, svc.body, svc.body_len, svc.content_type,
				 time(NULL), NULL, 0)) {
		printf("FAIL setup: service options\n");
		return 1;
	}
	fds0 = count_fds();
	if (start(0, 0, 0)) {
		printf("FAIL engine_start: cannot start on 127.0.0.1\n");
		return 1;
	}
	run_main_suite();
	stop(&st);
	fds1 = count_fds();
	t_begin();
	T_EQ_INT(fds1, fds0);
	T_CHECK(st.resp[BLITZ_RESP_GET_KA] >= 16 + 200);
	T_CHECK(st.resp[BLITZ_RESP_405] == 2);
	T_CHECK(st.accepted == st.closed);
	t_verdict("test_no_fd_leak_and_counters");
	T_RUN(test_timeouts);
	T_RUN(test_cap);
	T_RUN(test_graceful_stop);
	T_RUN(test_port_in_use);
	run_big_suite(65536);
	run_big_suite(1u << 20);
	service_free(&svc);
	T_EXIT();
}
