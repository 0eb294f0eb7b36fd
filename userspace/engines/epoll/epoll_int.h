/* SPDX-License-Identifier: GPL-2.0 */
/*
 * epoll_int.h - inside the epoll engine (epoll_engine.h is its interface):
 * the worker and connection structs and the calls between epoll_engine.c
 * (loops, accepting, setup), epoll_conn.c (a connection) and epoll_sock.c
 * (listening sockets).
 *
 * Owns: the sizes and limits of the engine and its structs. Must never be
 * included outside userspace/engines/epoll.
 */
#ifndef BLITZ_EPOLL_INT_H
#define BLITZ_EPOLL_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>
#include <sys/socket.h>

#include "epoll_engine.h"
#include "http.h"
#include "http_conn.h"

/* Input room: a whole 8 KiB header section plus headroom, so one recv()
 * can take a header and what follows it (pipelined requests). */
#define CONN_IN_CAP (HTTP_MAX_HEADER + 2048)
/* Output room: the answers of one read batch; parsing pauses when the
 * next answer might not fit, and resumes once this has been sent. */
#define CONN_OUT_CAP (16384 - CONN_IN_CAP)

#define LOOP_TICK_MS 250 /* epoll_wait timeout: timers and Date */
#define MAX_EVENTS 256
#define ACCEPT_BATCH 64	       /* accepts per listener wake-up */
#define DRIVE_ROUNDS 8	       /* read/parse/send rounds before yielding */
#define LINGER_MS 2000	       /* read-and-discard after a closing answer */
#define CAP_LOG_EVERY_MS 10000 /* "cap reached" at most this often */
#define ACCEPT_RETRY_MS 100    /* pause after EMFILE and friends */
#define FD_RESERVE 64	       /* fds kept for listeners, epoll, the CLI */
#define MAX_LISTEN (2 * BLITZ_MAX_ADDRS)

/* epoll_event.data.u64 tags: a connection's index, or one of these. */
#define TAG_LISTEN (1ULL << 40)
#define TAG_WAKE (1ULL << 41)

struct conn_buf {
	uint8_t in[CONN_IN_CAP];
	uint8_t out[CONN_OUT_CAP];
};

enum conn_state {
	CONN_FREE = 0,
	CONN_OPEN,    /* reading requests */
	CONN_CLOSING, /* a closing answer is queued: send it, then linger */
	CONN_LINGER,  /* SHUT_WR done: discard input until the peer closes */
};

enum timer_list {
	TL_NONE = 0,
	TL_IDLE,   /* nothing buffered, or output stalled: idle timeout */
	TL_HEADER, /* part of a header section: header timeout */
	TL_LINGER, /* lingering close */
	TL_COUNT,
};

struct conn {
	int fd;
	uint8_t state; /* enum conn_state */
	uint8_t tlist; /* enum timer_list */
	bool rd_ready; /* edge seen and recv has not drained the socket */
	bool peer_eof; /* recv returned 0 */
	bool rdhup;    /* the peer's FIN (or an error) is queued behind data */
	bool need_parse; /* buffered input not yet parsed to the end */
	bool progress;	 /* answered a request since the last settle */
	bool on_pending; /* linked on the worker's pending list */
	uint32_t in_len;
	/* Output stream: out[0..out_len), then out_body bytes of the shared
	 * body when the last answer is a large one (at most one per batch,
	 * always last: parsing pauses behind it). out_off counts sent bytes
	 * across both pieces. */
	uint32_t out_off, out_len, out_body;
	struct http_conn http; /* the request loop's state */
	int64_t deadline_ms;
	struct conn *tprev, *tnext; /* timer list */
	struct conn *pnext;	    /* pending list */
	struct conn_buf *buf;	    /* NULL while idle */
};

struct tlist {
	struct conn *head, *tail;
	int timeout_ms; /* constant per list, so appending keeps it sorted */
};

struct worker {
	struct epoll_engine *e;
	int id;
	int epfd;
	int wakefd; /* eventfd: request_stop wakes the loop at once */
	int n_listen;
	int listen_fd[MAX_LISTEN];
	bool accepting;
	bool draining;
	int64_t drain_deadline_ms;
	int64_t accept_retry_ms; /* after EMFILE: try again at */
	uint32_t cap;		 /* connections this thread may hold */
	uint32_t n_open;
	uint32_t hwm;	     /* slots ever used: conns[0..hwm) */
	struct conn *conns;  /* [cap], reserved, touched as used */
	uint32_t *conn_free; /* LIFO of free slot indices */
	uint32_t n_conn_free;
	struct conn_buf *bufs; /* [cap], reserved, touched as used */
	uint32_t *buf_free;    /* LIFO: the hot buffers are reused first */
	uint32_t n_buf_free;
	size_t conns_bytes, bufs_bytes;
	struct tlist tl[TL_COUNT];
	struct conn *pending; /* to drive again without a new edge */
	int64_t now_ms;
	struct http_responses resp; /* own copy: own Date, no lock */
	uint8_t scratch[4096];	    /* lingering close discards into this */
	struct epoll_engine_stats st;
	pthread_t tid;
	bool started;
	int err;
} __attribute__((aligned(64)));

struct epoll_engine {
	int threads;
	long max_conns; /* after fitting the open files limit */
	uint16_t port;
	struct http_responses resp;
	uint8_t *body; /* our copy of a large body: resp.body, shared r/o */
	int idle_ms, header_ms, drain_ms;
	atomic_int stop;
	atomic_int failed;
	struct worker *w; /* [threads] */
};

static inline int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline time_t wall_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return ts.tv_sec;
}

static inline uint32_t ep_conn_idx(const struct worker *w, const struct conn *c)
{
	return (uint32_t)(c - w->conns);
}

/* Bytes queued and not yet sent (headers, inline answers, body). */
static inline bool ep_conn_out_pending(const struct conn *c)
{
	return c->out_off < c->out_len + c->out_body;
}

/* epoll_conn.c */
bool ep_rate_limit_ok(_Atomic int64_t *last, int64_t now, int every);
void ep_tl_arm(struct worker *w, struct conn *c, int which);
void ep_conn_close(struct worker *w, struct conn *c);
struct conn *ep_conn_alloc(struct worker *w, int fd);
void ep_conn_drive(struct worker *w, struct conn *c);
void ep_conn_event(struct worker *w, struct conn *c, uint32_t events);

/* epoll_sock.c */
int ep_sock_listen_addrs(const struct blitz_service *svc, uint16_t port,
			 struct sockaddr_storage *ss, bool *dual);
void ep_sock_wildcard4(struct sockaddr_storage *ss, uint16_t port);
void ep_sock_set_port(struct sockaddr_storage *ss, uint16_t port);
void ep_sock_say_bind_error(const struct sockaddr_storage *ss, int err);
int ep_sock_open_listener(const struct sockaddr_storage *ss, bool dual,
			  bool reuseport, bool report);

#endif /* BLITZ_EPOLL_INT_H */
