// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_engine.c - the kernel-path engine (see epoll_engine.h for the
 * shape): per-thread epoll loops, accepting, timeouts, graceful shutdown,
 * setup and counters. A connection is epoll_conn.c's, the listening
 * sockets epoll_sock.c's (epoll_int.h ties them).
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
#include "free_stack.h"
#include "epoll_int.h"
#include "http.h"
#include "http_conn.h"
#include "log.h"

/* Process-wide so several threads hitting the cap together log once. */
static _Atomic int64_t cap_logged_ms = -CAP_LOG_EVERY_MS;

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
	if (ep_rate_limit_ok(&cap_logged_ms, w->now_ms, CAP_LOG_EVERY_MS))
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
				if (ep_rate_limit_ok(&emfile_logged_ms,
						     w->now_ms,
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
		c = ep_conn_alloc(w, fd);
		if (!c) {
			close(fd);
			return;
		}
		ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
		ev.data.u64 = ep_conn_idx(w, c);
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			w->st.accept_errors++;
			w->st.accepted++; /* balances the close count */
			ep_conn_close(w, c);
			continue;
		}
		w->st.accepted++;
		ep_tl_arm(w, c, TL_IDLE);
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
			ep_conn_close(w, c);
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
			ep_conn_drive(w, c);
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
		    !ep_conn_out_pending(c) && !http_conn_in_body(&c->http))
			ep_conn_close(w, c);
	}
}

static void close_all(struct worker *w)
{
	uint32_t i;
	int l;

	for (i = 0; i < w->hwm; i++)
		if (w->conns[i].state != CONN_FREE)
			ep_conn_close(w, &w->conns[i]);
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
				ep_conn_event(w, &w->conns[tag], evs[i].events);
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
	w->buf_free = free_stack_new(cap);
	if (!w->conns || !w->bufs || !w->conn_free || !w->buf_free) {
		pr_warn("cannot reserve memory for %u connections per thread: "
			"lower --max-conns\n",
			cap);
		return -ENOMEM;
	}
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

	n = ep_sock_listen_addrs(svc, svc->port, ss, &dual);
	for (a = 0; a < n; a++) {
		fd = ep_sock_open_listener(&ss[a], dual, false, false);
		if (fd == -EAFNOSUPPORT && dual) {
			ep_sock_wildcard4(&ss[a], svc->port);
			dual = false;
			fd = ep_sock_open_listener(&ss[a], false, false, false);
		}
		if (fd < 0) {
			ep_sock_say_bind_error(&ss[a], -fd);
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
		ep_sock_set_port(&ss[a], e->port);
	}
	for (t = 0; t < e->threads; t++) {
		for (a = 0; a < n; a++) {
			int err;

			fd = ep_sock_open_listener(&ss[a], dual, true, true);
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
