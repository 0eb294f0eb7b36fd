// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_engine.c - the kernel-path engine (see epoll_engine.h for the
 * shape): listeners, per-thread epoll loops, connections, timeouts,
 * graceful shutdown and counters.
 *
 * Owns: kernel sockets of the service port and their lifetime. Must never
 * allocate or make syscalls beyond recv/send/epoll_wait per request, nor
 * format a response itself: bytes come from struct http_responses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "epoll_engine.h"
#include "http.h"
#include "http_conn.h"
#include "log.h"

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

/* Process-wide so several threads hitting the cap together log once. */
static _Atomic int64_t cap_logged_ms = -CAP_LOG_EVERY_MS;

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static time_t wall_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return ts.tv_sec;
}

/* One line per interval over the whole process, whoever asks. */
static bool rate_limit_ok(_Atomic int64_t *last, int64_t now, int every)
{
	int64_t prev = atomic_load(last);

	if (now - prev < every)
		return false;
	return atomic_compare_exchange_strong(last, &prev, now);
}

/* ---------------------------------------------------------------------- */
/* Timer lists and the pending list                                        */
/* ---------------------------------------------------------------------- */

static void tl_unlink(struct worker *w, struct conn *c)
{
	struct tlist *l;

	if (c->tlist == TL_NONE)
		return;
	l = &w->tl[c->tlist];
	if (c->tprev)
		c->tprev->tnext = c->tnext;
	else
		l->head = c->tnext;
	if (c->tnext)
		c->tnext->tprev = c->tprev;
	else
		l->tail = c->tprev;
	c->tprev = c->tnext = NULL;
	c->tlist = TL_NONE;
}

/* (Re)arm c on list `which`, deadline = now + that list's timeout. */
static void tl_arm(struct worker *w, struct conn *c, int which)
{
	struct tlist *l = &w->tl[which];

	tl_unlink(w, c);
	c->deadline_ms = w->now_ms + l->timeout_ms;
	c->tlist = (uint8_t)which;
	c->tprev = l->tail;
	c->tnext = NULL;
	if (l->tail)
		l->tail->tnext = c;
	else
		l->head = c;
	l->tail = c;
}

static void pending_push(struct worker *w, struct conn *c)
{
	if (c->on_pending)
		return;
	c->on_pending = true;
	c->pnext = w->pending;
	w->pending = c;
}

/* ---------------------------------------------------------------------- */
/* Connections                                                             */
/* ---------------------------------------------------------------------- */

static uint32_t conn_idx(const struct worker *w, const struct conn *c)
{
	return (uint32_t)(c - w->conns);
}

static bool conn_get_buf(struct worker *w, struct conn *c)
{
	if (c->buf)
		return true;
	/* Cannot run dry: there are as many buffers as connection slots. */
	if (!w->n_buf_free)
		return false;
	c->buf = &w->bufs[w->buf_free[--w->n_buf_free]];
	return true;
}

static void conn_put_buf(struct worker *w, struct conn *c)
{
	if (!c->buf)
		return;
	w->buf_free[w->n_buf_free++] = (uint32_t)(c->buf - w->bufs);
	c->buf = NULL;
	c->in_len = c->out_off = c->out_len = c->out_body = 0;
}

/* Bytes queued and not yet sent (headers, inline answers, body). */
static bool conn_out_pending(const struct conn *c)
{
	return c->out_off < c->out_len + c->out_body;
}

static void conn_close(struct worker *w, struct conn *c)
{
	tl_unlink(w, c);
	conn_put_buf(w, c);
	close(c->fd); /* also takes it out of the epoll set */
	c->fd = -1;
	c->state = CONN_FREE;
	/* on_pending stays as it is: the pending walk skips free slots,
	 * and clearing it here would let the slot be linked twice. */
	w->conn_free[w->n_conn_free++] = conn_idx(w, c);
	w->n_open--;
	w->st.closed++;
}

static struct conn *conn_alloc(struct worker *w, int fd)
{
	struct conn *c;
	uint32_t i;
	bool pending;

	if (w->n_conn_free) {
		i = w->conn_free[--w->n_conn_free];
	} else {
		if (w->hwm >= w->cap)
			return NULL;
		i = w->hwm++;
	}
	c = &w->conns[i];
	pending = c->on_pending;
	memset(c, 0, sizeof(*c));
	c->on_pending = pending;
	c->fd = fd;
	c->state = CONN_OPEN;
	w->n_open++;
	return c;
}

/*
 * Append one prebuilt answer to the output: its bytes[] piece is copied
 * (it carries this second's Date); a large body is not: it is sent from
 * the shared bytes behind the output (out_body). Room was checked, and no
 * body is queued yet (conn_parse stops behind one).
 */
static void conn_emit(struct worker *w, struct conn *c, int kind)
{
	struct iovec iov[2];
	int n = http_response_iov(&w->resp, kind, iov);

	memcpy(c->buf->out + c->out_len, iov[0].iov_base, iov[0].iov_len);
	c->out_len += (uint32_t)iov[0].iov_len;
	if (n == 2)
		c->out_body = (uint32_t)iov[1].iov_len;
	w->st.requests++;
	w->st.resp[kind]++;
	c->progress = true;
}

/*
 * How many more answers surely fit the output: none behind a large body
 * (it goes out behind the output, so nothing may follow it), one at a
 * time when the body is not inline (a GET answer then queues one).
 */
static unsigned int conn_out_room(const struct worker *w, const struct conn *c)
{
	unsigned int room;

	if (c->out_body || c->out_len + BLITZ_RESP_MAX > CONN_OUT_CAP)
		return 0;
	room = (CONN_OUT_CAP - c->out_len) / BLITZ_RESP_MAX;
	return w->resp.body_inline ? room : 1;
}

/*
 * Answer every complete request in the input, in order (the request loop
 * is http_conn's). Stops at an incomplete request, at a closing answer
 * (the rest of the input is dropped), or when the next answer might not
 * fit the output (need_parse stays set; the caller sends, then parses
 * again).
 */
static void conn_parse(struct worker *w, struct conn *c)
{
	uint8_t kind[CONN_OUT_CAP / BLITZ_RESP_MAX];
	uint8_t *in = c->buf->in;
	size_t off = 0, len = c->in_len;
	unsigned int flags = w->draining ? HTTP_CONN_DRAIN : 0;

	c->need_parse = false;
	while (off < len) {
		struct http_conn_out out = {kind, 0, conn_out_room(w, c)};

		if (!out.room) {
			c->need_parse = true;
			break;
		}
		off += http_conn_consume(&c->http, in + off, len - off, &out,
					 flags);
		for (unsigned int i = 0; i < out.n; i++)
			conn_emit(w, c, kind[i]);
		if (http_conn_closing(&c->http)) {
			c->state = CONN_CLOSING;
			break;
		}
		if (out.n < out.room)
			break; /* an incomplete request, or all consumed */
	}
	if (off && off < len)
		memmove(in, in + off, len - off);
	c->in_len = (uint32_t)(len - off);
}

/*
 * Send the output stream from out_off: the copied bytes, then the shared
 * body if one is queued, in one sendmsg. A short write keeps out_off
 * anywhere in either piece.
 * 1: all sent; 0: the socket is full (EPOLLOUT will come); -1: closed.
 */
static int conn_flush(struct worker *w, struct conn *c)
{
	uint32_t total = c->out_len + c->out_body;
	struct iovec iov[2];
	struct msghdr msg = {.msg_iov = iov};
	ssize_t n;

	while (c->out_off < total) {
		msg.msg_iovlen = 0;
		if (c->out_off < c->out_len) {
			iov[0].iov_base = c->buf->out + c->out_off;
			iov[0].iov_len = c->out_len - c->out_off;
			msg.msg_iovlen = 1;
		}
		if (c->out_body) {
			uint32_t boff = c->out_off > c->out_len
						? c->out_off - c->out_len
						: 0;

			iov[msg.msg_iovlen].iov_base =
				(void *)(w->resp.body + boff);
			iov[msg.msg_iovlen].iov_len = c->out_body - boff;
			msg.msg_iovlen++;
		}
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->out_off += (uint32_t)n;
			w->st.tx_bytes += (uint64_t)n;
			if (c->out_off < total)
				return 0; /* short write: the socket is full */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		w->st.conn_errors++;
		conn_close(w, c);
		return -1;
	}
	c->out_off = c->out_len = c->out_body = 0;
	return 1;
}

/* 1: got bytes or EOF or nothing yet; -1: closed on error. */
static int conn_read(struct worker *w, struct conn *c)
{
	size_t space;
	ssize_t n;

	if (!conn_get_buf(w, c)) {
		conn_close(w, c);
		return -1;
	}
	space = CONN_IN_CAP - c->in_len;
	if (!space) {
		/* Cannot happen: the parser answers 431 below this. */
		c->rd_ready = false;
		return 1;
	}
	for (;;) {
		n = recv(c->fd, c->buf->in + c->in_len, space, MSG_DONTWAIT);
		if (n > 0) {
			c->in_len += (uint32_t)n;
			c->need_parse = true;
			/* Short read: drained; the next arrival is a new
			 * edge, so no recv() just to see EAGAIN. Unless a
			 * FIN is queued: its edge was already consumed. */
			if ((size_t)n < space && !c->rdhup)
				c->rd_ready = false;
			return 1;
		}
		if (n == 0) {
			c->peer_eof = true;
			c->rd_ready = false;
			return 1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			c->rd_ready = false;
			return 1;
		}
		w->st.conn_errors++;
		conn_close(w, c);
		return -1;
	}
}

/* After a closing answer went out: FIN, then discard until the peer's. */
static void conn_start_linger(struct worker *w, struct conn *c)
{
	c->state = CONN_LINGER;
	conn_put_buf(w, c);
	if (c->peer_eof || shutdown(c->fd, SHUT_WR) < 0) {
		conn_close(w, c);
		return;
	}
	c->rd_ready = true; /* unread request bytes may be waiting */
	tl_arm(w, c, TL_LINGER);
}

static void conn_linger_read(struct worker *w, struct conn *c)
{
	int rounds;
	ssize_t n;

	for (rounds = 0; c->rd_ready; rounds++) {
		if (rounds == DRIVE_ROUNDS) {
			pending_push(w, c);
			return;
		}
		n = recv(c->fd, w->scratch, sizeof(w->scratch), MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			c->rd_ready = false;
			return;
		}
		conn_close(w, c); /* the peer's FIN (or an error): done */
		return;
	}
}

/* Put c on the timer its state calls for; give the buffer back when idle. */
static void conn_settle(struct worker *w, struct conn *c)
{
	if (conn_out_pending(c)) {
		tl_arm(w, c, TL_IDLE); /* stalled output: idle timeout */
	} else if (c->in_len) {
		/* A header section in progress: its clock starts at its
		 * first byte, i.e. when no request was answered since. */
		if (c->tlist != TL_HEADER || c->progress)
			tl_arm(w, c, TL_HEADER);
	} else {
		conn_put_buf(w, c);
		if (w->draining && !http_conn_in_body(&c->http)) {
			conn_close(w, c);
			return;
		}
		tl_arm(w, c, TL_IDLE);
	}
	c->progress = false;
}

/*
 * Move c as far as it can go: send what is queued, answer what is
 * buffered, read more while the kernel has more. Bounded, so a client
 * that keeps sending cannot hold the thread; it resumes from the pending
 * list (edge-triggered: no new event would come for it).
 */
static void conn_drive(struct worker *w, struct conn *c)
{
	int rounds = 0, r;

	if (c->state == CONN_LINGER) {
		conn_linger_read(w, c);
		return;
	}
	for (;;) {
		if (conn_out_pending(c)) {
			r = conn_flush(w, c);
			if (r < 0)
				return;
			if (r == 0)
				break; /* EPOLLOUT resumes us */
		}
		if (c->state == CONN_CLOSING) {
			conn_start_linger(w, c);
			if (c->state == CONN_LINGER)
				conn_linger_read(w, c);
			return;
		}
		if (c->need_parse && c->in_len) {
			conn_parse(w, c);
			if (c->out_len)
				continue;
		}
		if (c->peer_eof) {
			/* Nothing left to answer; a partial request dies. */
			conn_close(w, c);
			return;
		}
		if (!c->rd_ready)
			break;
		if (++rounds > DRIVE_ROUNDS) {
			pending_push(w, c);
			break;
		}
		if (conn_read(w, c) < 0)
			return;
	}
	conn_settle(w, c);
}

static void conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	if (c->state == CONN_FREE)
		return; /* closed earlier in this batch */
	/* Errors and hang-ups are left for recv()/send() to report: a
	 * stale event for a reused slot then costs an EAGAIN, not a close. */
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		c->rd_ready = true;
	if (events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		c->rdhup = true;
	conn_drive(w, c);
}

/* ---------------------------------------------------------------------- */
/* Accepting                                                               */
/* ---------------------------------------------------------------------- */

static void listeners_arm(struct worker *w, bool on)
{
	struct epoll_event ev = {0};
	int i;

	if (w->accepting == on)
		return;
	for (i = 0; i < w->n_listen; i++) {
		ev.events = on ? EPOLLIN : 0;
		ev.data.u64 = TAG_LISTEN | (uint64_t)i;
		epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->listen_fd[i], &ev);
	}
	w->accepting = on;
}

static void cap_reached(struct worker *w)
{
	struct epoll_engine *e = w->e;

	w->st.cap_pauses++;
	listeners_arm(w, false);
	if (rate_limit_ok(&cap_logged_ms, w->now_ms, CAP_LOG_EVERY_MS))
		pr_warn("connection cap reached: %ld open connections "
			"(--max-conns, %u per thread): not accepting new ones "
			"until some close (said once per %d s)\n",
			e->max_conns, w->cap, CAP_LOG_EVERY_MS / 1000);
}

static void accept_batch(struct worker *w, int li)
{
	static _Atomic int64_t emfile_logged_ms = -CAP_LOG_EVERY_MS;
	struct epoll_event ev;
	struct conn *c;
	int i, fd, one = 1;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		if (w->n_open >= w->cap) {
			cap_reached(w);
			return;
		}
		fd = accept4(w->listen_fd[li], NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			w->st.accept_errors++;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				/* Out of fds or memory: back off a tick
				 * rather than spin on a ready listener. */
				if (rate_limit_ok(&emfile_logged_ms, w->now_ms,
						  CAP_LOG_EVERY_MS))
					pr_warn("accept: %s: not accepting "
						"for a moment (raise ulimit "
						"-n or lower --max-conns)\n",
						strerror(errno));
				listeners_arm(w, false);
				w->accept_retry_ms =
					w->now_ms + ACCEPT_RETRY_MS;
			}
			return;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = conn_alloc(w, fd);
		if (!c) {
			close(fd);
			return;
		}
		ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
		ev.data.u64 = conn_idx(w, c);
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			w->st.accept_errors++;
			w->st.accepted++; /* balances the close count */
			conn_close(w, c);
			continue;
		}
		w->st.accepted++;
		tl_arm(w, c, TL_IDLE);
	}
}

/* ---------------------------------------------------------------------- */
/* The loop                                                                */
/* ---------------------------------------------------------------------- */

static void expire_timers(struct worker *w)
{
	struct conn *c;
	int l;

	for (l = TL_IDLE; l < TL_COUNT; l++) {
		while ((c = w->tl[l].head) && c->deadline_ms <= w->now_ms) {
			if (l == TL_IDLE)
				w->st.idle_timeouts++;
			else if (l == TL_HEADER)
				w->st.header_timeouts++;
			conn_close(w, c);
		}
	}
}

static void run_pending(struct worker *w)
{
	struct conn *c = w->pending, *next;

	w->pending = NULL;
	for (; c; c = next) {
		next = c->pnext;
		c->on_pending = false;
		c->pnext = NULL;
		if (c->state != CONN_FREE)
			conn_drive(w, c);
	}
}

static void begin_drain(struct worker *w)
{
	struct conn *c;
	uint32_t i;
	int l;

	w->draining = true;
	w->drain_deadline_ms = w->now_ms + w->e->drain_ms;
	/* Stop accepting: what waits in our accept queue is reset. */
	for (l = 0; l < w->n_listen; l++) {
		close(w->listen_fd[l]);
		w->listen_fd[l] = -1;
	}
	w->n_listen = 0;
	/* Idle keep-alive connections have nothing in flight: close now. */
	for (i = 0; i < w->hwm; i++) {
		c = &w->conns[i];
		if (c->state == CONN_OPEN && !c->in_len &&
		    !conn_out_pending(c) && !http_conn_in_body(&c->http))
			conn_close(w, c);
	}
}

static void close_all(struct worker *w)
{
	uint32_t i;
	int l;

	for (i = 0; i < w->hwm; i++)
		if (w->conns[i].state != CONN_FREE)
			conn_close(w, &w->conns[i]);
	for (l = 0; l < w->n_listen; l++)
		close(w->listen_fd[l]);
	w->n_listen = 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_engine *e = w->e;
	struct epoll_event evs[MAX_EVENTS];
	uint64_t tag;
	int n, i;

	char name[16];

	snprintf(name, sizeof(name), "blitz-epoll/%d", w->id);
	pthread_setname_np(pthread_self(), name);
	w->now_ms = mono_ms();
	for (;;) {
		if (!w->draining && atomic_load(&e->stop))
			begin_drain(w);
		if (w->draining &&
		    (!w->n_open || w->now_ms >= w->drain_deadline_ms))
			break;
		n = epoll_wait(w->epfd, evs, MAX_EVENTS,
			       w->pending ? 0 : LOOP_TICK_MS);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->err = -errno;
			pr_warn("epoll_wait: %s\n", strerror(errno));
			atomic_store(&e->failed, 1);
			break;
		}
		/* Timers and Date from the clock once per wake-up; both
		 * clocks are read through the vDSO, not a syscall. */
		w->now_ms = mono_ms();
		http_responses_set_date(&w->resp, wall_sec());
		for (i = 0; i < n; i++) {
			tag = evs[i].data.u64;
			if (tag & TAG_LISTEN) {
				if (w->accepting && !w->draining)
					accept_batch(w, (int)(tag & 0xff));
			} else if (tag & TAG_WAKE) {
				uint64_t v;

				if (read(w->wakefd, &v, sizeof(v)) < 0)
					v = 0; /* already reset: fine */
			} else {
				conn_event(w, &w->conns[tag], evs[i].events);
			}
		}
		if (w->pending)
			run_pending(w);
		expire_timers(w);
		if (!w->accepting && !w->draining && w->n_open < w->cap &&
		    w->now_ms >= w->accept_retry_ms)
			listeners_arm(w, true);
	}
	close_all(w);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Setup                                                                   */
/* ---------------------------------------------------------------------- */

static void fmt_sa(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(out, len, "%s:%u", a, ntohs(s->sin_port));
	} else {
		const struct sockaddr_in6 *s = (const void *)ss;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(out, len, "[%s]:%u", a, ntohs(s->sin6_port));
	}
}

/* The addresses to listen on: the configured ones, else the wildcard. */
static int listen_addrs(const struct blitz_service *svc, uint16_t port,
			struct sockaddr_storage *ss, bool *dual)
{
	int n = 0, i;

	*dual = false;
	for (i = 0; i < svc->n_addr4; i++) {
		struct sockaddr_in *s = (void *)&ss[n++];

		memset(s, 0, sizeof(ss[0]));
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		s->sin_addr = svc->addr4[i];
	}
	for (i = 0; i < svc->n_addr6; i++) {
		struct sockaddr_in6 *s = (void *)&ss[n++];

		memset(s, 0, sizeof(ss[0]));
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		s->sin6_addr = svc->addr6[i];
	}
	if (!n) {
		struct sockaddr_in6 *s = (void *)&ss[n++];

		memset(s, 0, sizeof(ss[0]));
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		s->sin6_addr = in6addr_any;
		*dual = true;
	}
	return n;
}

static void wildcard4(struct sockaddr_storage *ss, uint16_t port)
{
	struct sockaddr_in *s = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	s->sin_addr.s_addr = htonl(INADDR_ANY);
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in)
					: sizeof(struct sockaddr_in6);
}

static void say_bind_error(const struct sockaddr_storage *ss, int err)
{
	char a[INET6_ADDRSTRLEN + 16];
	uint16_t port =
		ss->ss_family == AF_INET
			? ntohs(((const struct sockaddr_in *)ss)->sin_port)
			: ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);

	fmt_sa(ss, a, sizeof(a));
	if (err == EADDRINUSE)
		pr_warn("cannot listen on %s: port %u is already in use "
			"(`ss -ltnp 'sport = :%u'` shows by whom)\n",
			a, port, port);
	else if (err == EADDRNOTAVAIL)
		pr_warn("cannot listen on %s: no interface here has that "
			"address (check -a)\n",
			a);
	else if (err == EACCES)
		pr_warn("cannot listen on %s: port %u needs root "
			"(CAP_NET_BIND_SERVICE)\n",
			a, port);
	else
		pr_warn("cannot listen on %s: %s\n", a, strerror(err));
}

/*
 * One listening socket. reuseport: the per-thread listeners; without it,
 * the probe that tells "port in use" apart (SO_REUSEPORT would otherwise
 * quietly share the port with another server started by the same user).
 */
static int open_listener(const struct sockaddr_storage *ss, bool dual,
			 bool reuseport, bool report)
{
	int fd, one = 1, zero = 0, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		err = errno;
		if (report)
			pr_warn("socket: %s\n", strerror(err));
		return -err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		err = errno;
		if (report)
			pr_warn("SO_REUSEPORT: %s\n", strerror(err));
		goto err;
	}
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual ? &zero : &one,
			   sizeof(int));
	if (bind(fd, (const struct sockaddr *)ss, sa_len(ss)) < 0) {
		err = errno;
		if (report)
			say_bind_error(ss, err);
		goto err;
	}
	if (reuseport && listen(fd, 65535) < 0) {
		err = errno;
		if (report)
			pr_warn("listen: %s\n", strerror(err));
		goto err;
	}
	return fd;
err:
	close(fd);
	return -err;
}

static int online_cpus(void)
{
	cpu_set_t set;
	int n;

	/* The CPUs we may run on (taskset), not every CPU of the host. */
	if (!sched_getaffinity(0, sizeof(set), &set)) {
		n = CPU_COUNT(&set);
		if (n > 0)
			return n;
	}
	n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

/* Raise the soft RLIMIT_NOFILE to what max_conns needs; returns the
 * number of connections the limit can hold. */
static long fit_nofile(long want_conns, int threads, bool explicit_cap)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)want_conns + FD_RESERVE + 4 * (rlim_t)threads;
	long fits;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return want_conns;
	if (rl.rlim_cur < need) {
		rlim_t soft = rl.rlim_max < need ? rl.rlim_max : need;

		if (soft > rl.rlim_cur) {
			struct rlimit nr = {.rlim_cur = soft,
					    .rlim_max = rl.rlim_max};

			if (!setrlimit(RLIMIT_NOFILE, &nr))
				rl.rlim_cur = soft;
		}
	}
	if (rl.rlim_cur >= need)
		return want_conns;
	fits = (long)rl.rlim_cur - FD_RESERVE - 4L * threads;
	if (fits < threads)
		fits = threads;
	if (explicit_cap)
		pr_warn("open files limit is %llu (hard %llu): serving at most "
			"%ld connections, not --max-conns %ld (raise `ulimit "
			"-n` first)\n",
			(unsigned long long)rl.rlim_cur,
			(unsigned long long)rl.rlim_max, fits, want_conns);
	else
		pr_debug("open files limit %llu: at most %ld connections\n",
			 (unsigned long long)rl.rlim_cur, fits);
	return fits;
}

static void *reserve(size_t bytes)
{
	/* Reserved, not committed: pages are touched as slots get used,
	 * so a large cap costs address space, not memory. */
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void worker_free(struct worker *w)
{
	int i;

	for (i = 0; i < w->n_listen; i++)
		if (w->listen_fd[i] >= 0)
			close(w->listen_fd[i]);
	w->n_listen = 0;
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->wakefd >= 0)
		close(w->wakefd);
	w->epfd = w->wakefd = -1;
	if (w->conns)
		munmap(w->conns, w->conns_bytes);
	if (w->bufs)
		munmap(w->bufs, w->bufs_bytes);
	free(w->conn_free);
	free(w->buf_free);
	w->conns = NULL;
	w->bufs = NULL;
	w->conn_free = w->buf_free = NULL;
}

static int worker_init(struct epoll_engine *e, struct worker *w, int id,
		       uint32_t cap)
{
	struct epoll_event ev = {0};
	uint32_t i;

	w->e = e;
	w->id = id;
	w->cap = cap;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->epfd < 0 || w->wakefd < 0) {
		pr_warn("epoll/eventfd: %s\n", strerror(errno));
		return -errno;
	}
	w->conns_bytes = (size_t)cap * sizeof(struct conn);
	w->bufs_bytes = (size_t)cap * sizeof(struct conn_buf);
	w->conns = reserve(w->conns_bytes);
	w->bufs = reserve(w->bufs_bytes);
	w->conn_free = malloc((size_t)cap * sizeof(uint32_t));
	w->buf_free = malloc((size_t)cap * sizeof(uint32_t));
	if (!w->conns || !w->bufs || !w->conn_free || !w->buf_free) {
		pr_warn("cannot reserve memory for %u connections per thread: "
			"lower --max-conns\n",
			cap);
		return -ENOMEM;
	}
	/* Highest index first, so slot 0's buffer is handed out first. */
	for (i = 0; i < cap; i++)
		w->buf_free[i] = cap - 1 - i;
	w->n_buf_free = cap;
	w->tl[TL_IDLE].timeout_ms = e->idle_ms;
	w->tl[TL_HEADER].timeout_ms = e->header_ms;
	w->tl[TL_LINGER].timeout_ms = LINGER_MS;
	w->resp = e->resp;
	ev.events = EPOLLIN;
	ev.data.u64 = TAG_WAKE;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wakefd, &ev) < 0) {
		pr_warn("epoll_ctl: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static int worker_add_listener(struct worker *w, int fd)
{
	struct epoll_event ev = {0};

	ev.events = EPOLLIN;
	ev.data.u64 = TAG_LISTEN | (uint64_t)w->n_listen;
	w->listen_fd[w->n_listen++] = fd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		pr_warn("epoll_ctl: %s\n", strerror(errno));
		return -errno;
	}
	w->accepting = true;
	return 0;
}

/*
 * Probe each address without SO_REUSEPORT (a port held by anyone else is
 * refused), then bind one reuseport listener per thread per address. The
 * dual-stack wildcard falls back to IPv4 alone when IPv6 is off.
 */
static int open_listeners(struct epoll_engine *e,
			  const struct blitz_service *svc)
{
	struct sockaddr_storage ss[MAX_LISTEN];
	bool dual;
	int n, a, t, fd;

	n = listen_addrs(svc, svc->port, ss, &dual);
	for (a = 0; a < n; a++) {
		fd = open_listener(&ss[a], dual, false, false);
		if (fd == -EAFNOSUPPORT && dual) {
			wildcard4(&ss[a], svc->port);
			dual = false;
			fd = open_listener(&ss[a], false, false, false);
		}
		if (fd < 0) {
			say_bind_error(&ss[a], -fd);
			return fd;
		}
		if (!svc->port && !a) {
			/* Port 0 (tests): keep the port the kernel chose. */
			struct sockaddr_storage got;
			socklen_t gl = sizeof(got);

			getsockname(fd, (struct sockaddr *)&got, &gl);
			e->port = ntohs(
				got.ss_family == AF_INET
					? ((struct sockaddr_in *)&got)->sin_port
					: ((struct sockaddr_in6 *)&got)
						  ->sin6_port);
		}
		close(fd);
		set_port(&ss[a], e->port);
	}
	for (t = 0; t < e->threads; t++) {
		for (a = 0; a < n; a++) {
			int err;

			fd = open_listener(&ss[a], dual, true, true);
			if (fd < 0)
				return fd;
			err = worker_add_listener(&e->w[t], fd);
			if (err)
				return err;
		}
	}
	return 0;
}

static void engine_free(struct epoll_engine *e)
{
	int t;

	if (!e)
		return;
	for (t = 0; t < e->threads; t++)
		worker_free(&e->w[t]);
	free(e->w);
	free(e->body);
	free(e);
}

int epoll_engine_start(const struct epoll_engine_opts *o,
		       struct epoll_engine **out)
{
	const struct blitz_service *svc = o->svc;
	struct epoll_engine *e;
	sigset_t block, old;
	long max_conns;
	uint32_t per;
	int t, ret;

	*out = NULL;
	if (!svc || !o->resp) {
		pr_warn("epoll: no service or no responses to send\n");
		return -EINVAL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		pr_warn("out of memory\n");
		return -ENOMEM;
	}
	e->threads = o->threads > 0 ? o->threads : online_cpus();
	e->port = svc->port;
	e->idle_ms = o->idle_timeout_ms > 0 ? o->idle_timeout_ms
					    : EPOLL_DEFAULT_IDLE_MS;
	e->header_ms = o->header_timeout_ms > 0 ? o->header_timeout_ms
						: EPOLL_DEFAULT_HEADER_MS;
	e->drain_ms = o->drain_ms > 0 ? o->drain_ms : EPOLL_DEFAULT_DRAIN_MS;
	/* Our own copy, so the body every worker sends from cannot change
	 * or go away under them, whatever the caller does with its own. */
	e->resp = *o->resp;
	if (!e->resp.body_inline && e->resp.body_len) {
		e->body = malloc(e->resp.body_len);
		if (!e->body) {
			pr_warn("out of memory\n");
			free(e);
			return -ENOMEM;
		}
		memcpy(e->body, o->resp->body, e->resp.body_len);
		e->resp.body = e->body;
	}
	http_responses_set_date(&e->resp, wall_sec());
	max_conns = o->max_conns > 0 ? o->max_conns : EPOLL_DEFAULT_MAX_CONNS;
	max_conns = fit_nofile(max_conns, e->threads, o->max_conns > 0);
	if (max_conns < e->threads)
		max_conns = e->threads;
	e->max_conns = max_conns;
	per = (uint32_t)((max_conns + e->threads - 1) / e->threads);

	e->w = aligned_alloc(64, (size_t)e->threads * sizeof(*e->w));
	if (!e->w) {
		pr_warn("out of memory\n");
		free(e);
		return -ENOMEM;
	}
	memset(e->w, 0, (size_t)e->threads * sizeof(*e->w));
	for (t = 0; t < e->threads; t++)
		e->w[t].epfd = e->w[t].wakefd = -1;
	for (t = 0; t < e->threads; t++) {
		ret = worker_init(e, &e->w[t], t, per);
		if (ret)
			goto err;
	}
	ret = open_listeners(e, svc);
	if (ret)
		goto err;

	/* Workers never take the signals the caller handles. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (t = 0; t < e->threads; t++) {
		ret = -pthread_create(&e->w[t].tid, NULL, worker_main,
				      &e->w[t]);
		if (ret) {
			pr_warn("pthread_create: %s\n", strerror(-ret));
			break;
		}
		e->w[t].started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		epoll_engine_request_stop(e);
		for (t = 0; t < e->threads; t++)
			if (e->w[t].started)
				pthread_join(e->w[t].tid, NULL);
		goto err;
	}
	pr_debug("epoll: %d threads, %u connections each, port %u\n",
		 e->threads, per, e->port);
	*out = e;
	return 0;
err:
	engine_free(e);
	return ret;
}

uint16_t epoll_engine_port(const struct epoll_engine *e)
{
	return e->port;
}

int epoll_engine_threads(const struct epoll_engine *e)
{
	return e->threads;
}

long epoll_engine_max_conns(const struct epoll_engine *e)
{
	return e->max_conns;
}

bool epoll_engine_failed(const struct epoll_engine *e)
{
	return atomic_load(&((struct epoll_engine *)e)->failed) != 0;
}

void epoll_engine_request_stop(struct epoll_engine *e)
{
	uint64_t one = 1;
	int t;

	atomic_store(&e->stop, 1);
	for (t = 0; t < e->threads; t++)
		if (e->w[t].wakefd >= 0 &&
		    write(e->w[t].wakefd, &one, sizeof(one)) < 0)
			continue; /* the loop still sees stop within a tick */
}

void epoll_engine_stats(const struct epoll_engine *e,
			struct epoll_engine_stats *st)
{
	const uint64_t *src;
	uint64_t *dst = (uint64_t *)st;
	size_t i, n = sizeof(*st) / sizeof(uint64_t);
	int t;

	memset(st, 0, sizeof(*st));
	for (t = 0; t < e->threads; t++) {
		src = (const uint64_t *)&e->w[t].st;
		for (i = 0; i < n; i++)
			dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	}
	st->open = st->accepted - st->closed;
}

void epoll_engine_stats_print(FILE *f, const struct epoll_engine_stats *st)
{
	fprintf(f,
		"epoll: %llu connections (%llu open), %llu requests "
		"(200: %llu, 400: %llu, 405: %llu, 431: %llu, 505: %llu), "
		"%llu bytes sent; closed on idle %llu, slow header %llu, "
		"reset/error %llu; cap reached %llu times\n",
		(unsigned long long)st->accepted, (unsigned long long)st->open,
		(unsigned long long)st->requests,
		(unsigned long long)(st->resp[BLITZ_RESP_GET_KA] +
				     st->resp[BLITZ_RESP_GET_KA10] +
				     st->resp[BLITZ_RESP_GET_CLOSE] +
				     st->resp[BLITZ_RESP_HEAD_KA] +
				     st->resp[BLITZ_RESP_HEAD_KA10] +
				     st->resp[BLITZ_RESP_HEAD_CLOSE]),
		(unsigned long long)st->resp[BLITZ_RESP_400],
		(unsigned long long)st->resp[BLITZ_RESP_405],
		(unsigned long long)st->resp[BLITZ_RESP_431],
		(unsigned long long)st->resp[BLITZ_RESP_505],
		(unsigned long long)st->tx_bytes,
		(unsigned long long)st->idle_timeouts,
		(unsigned long long)st->header_timeouts,
		(unsigned long long)st->conn_errors,
		(unsigned long long)st->cap_pauses);
}

int epoll_engine_join(struct epoll_engine *e, struct epoll_engine_stats *st)
{
	int t, ret = 0;

	for (t = 0; t < e->threads; t++) {
		if (e->w[t].started)
			pthread_join(e->w[t].tid, NULL);
		if (e->w[t].err && !ret)
			ret = e->w[t].err;
	}
	if (st)
		epoll_engine_stats(e, st);
	engine_free(e);
	return ret;
}

int epoll_engine_run(const struct epoll_engine_opts *o,
		     volatile sig_atomic_t *stop)
{
	struct epoll_engine_stats st;
	struct epoll_engine *e;
	struct timespec nap = {.tv_nsec = 50 * 1000 * 1000};
	int ret;

	ret = epoll_engine_start(o, &e);
	if (ret)
		return ret;
	while (!*stop && !atomic_load(&e->failed))
		nanosleep(&nap, NULL); /* a signal cuts the nap short */
	epoll_engine_request_stop(e);
	ret = epoll_engine_join(e, &st);
	epoll_engine_stats_print(stdout, &st);
	return ret;
}
