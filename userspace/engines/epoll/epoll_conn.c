// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_conn.c - one connection of the epoll engine (epoll_int.h): buffers,
 * reading, the request loop (http_conn.c), sending, lingering close, and
 * the timer and pending lists that drive it.
 *
 * Owns: a connection from accept to close. Must never block, allocate or
 * make syscalls beyond recv/send/epoll_ctl per request.
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

#include "epoll_int.h"
#include "http.h"
#include "http_conn.h"
#include "log.h"

/* One line per interval over the whole process, whoever asks. */
bool ep_rate_limit_ok(_Atomic int64_t *last, int64_t now, int every)
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
void ep_tl_arm(struct worker *w, struct conn *c, int which)
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

void ep_conn_close(struct worker *w, struct conn *c)
{
	tl_unlink(w, c);
	conn_put_buf(w, c);
	close(c->fd); /* also takes it out of the epoll set */
	c->fd = -1;
	c->state = CONN_FREE;
	/* on_pending stays as it is: the pending walk skips free slots,
	 * and clearing it here would let the slot be linked twice. */
	w->conn_free[w->n_conn_free++] = ep_conn_idx(w, c);
	w->n_open--;
	w->st.closed++;
}

struct conn *ep_conn_alloc(struct worker *w, int fd)
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
		ep_conn_close(w, c);
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
		ep_conn_close(w, c);
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
		ep_conn_close(w, c);
		return -1;
	}
}

/* After a closing answer went out: FIN, then discard until the peer's. */
static void conn_start_linger(struct worker *w, struct conn *c)
{
	c->state = CONN_LINGER;
	conn_put_buf(w, c);
	if (c->peer_eof || shutdown(c->fd, SHUT_WR) < 0) {
		ep_conn_close(w, c);
		return;
	}
	c->rd_ready = true; /* unread request bytes may be waiting */
	ep_tl_arm(w, c, TL_LINGER);
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
		ep_conn_close(w, c); /* the peer's FIN (or an error): done */
		return;
	}
}

/* Put c on the timer its state calls for; give the buffer back when idle. */
static void conn_settle(struct worker *w, struct conn *c)
{
	if (ep_conn_out_pending(c)) {
		ep_tl_arm(w, c, TL_IDLE); /* stalled output: idle timeout */
	} else if (c->in_len) {
		/* A header section in progress: its clock starts at its
		 * first byte, i.e. when no request was answered since. */
		if (c->tlist != TL_HEADER || c->progress)
			ep_tl_arm(w, c, TL_HEADER);
	} else {
		conn_put_buf(w, c);
		if (w->draining && !http_conn_in_body(&c->http)) {
			ep_conn_close(w, c);
			return;
		}
		ep_tl_arm(w, c, TL_IDLE);
	}
	c->progress = false;
}

/*
 * Move c as far as it can go: send what is queued, answer what is
 * buffered, read more while the kernel has more. Bounded, so a client
 * that keeps sending cannot hold the thread; it resumes from the pending
 * list (edge-triggered: no new event would come for it).
 */
void ep_conn_drive(struct worker *w, struct conn *c)
{
	int rounds = 0, r;

	if (c->state == CONN_LINGER) {
		conn_linger_read(w, c);
		return;
	}
	for (;;) {
		if (ep_conn_out_pending(c)) {
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
			ep_conn_close(w, c);
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

void ep_conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	if (c->state == CONN_FREE)
		return; /* closed earlier in this batch */
	/* Errors and hang-ups are left for recv()/send() to report: a
	 * stale event for a reused slot then costs an EAGAIN, not a close. */
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		c->rd_ready = true;
	if (events & (EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		c->rdhup = true;
	ep_conn_drive(w, c);
}
