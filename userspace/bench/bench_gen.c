// SPDX-License-Identifier: GPL-2.0
/*
 * bench_gen.c - the load generator of `blitz bench` (see bench_gen.h):
 * setup, the run loop, per-second samples and the threads. The TCP client
 * is bench_tcp.c, the response checker bench_http.c, the XDP program and
 * socket bench_xdp.c, the histogram bench_hist.c (bench_int.h ties them).
 *
 * Owns: the client interface's XDP attachment for the duration of a run
 * (restoring what was there), the UMEM and the per-connection table. Must
 * never send to an address other than the one it was given, never verify
 * incoming checksums (veth delivers locally made frames with partial ones),
 * and never allocate or make per-segment syscalls in the loop.
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "bench_gen.h"
#include "bench_int.h"
#include "free_stack.h"
#include "log.h"

static int build_requests(struct gen *g)
{
	const struct bench_params *p = g->p;
	char req[512];
	int n;
	uint32_t i;

	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n",
		     p->path, p->host,
		     p->close_each ? "Connection: close\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(req) ||
	    (uint64_t)n * p->pipeline > BENCH_MAX_BATCH) {
		pr_warn("%u requests of %d bytes do not fit one %u-byte "
			"segment: use a smaller -P or a shorter --path\n",
			p->pipeline, n, BENCH_MAX_BATCH);
		return -EINVAL;
	}
	g->req_len = (uint32_t)n;
	for (i = 0; i < p->pipeline; i++)
		memcpy(g->batch + i * g->req_len, req, g->req_len);
	g->batch_len = g->req_len * p->pipeline;
	return 0;
}

/* The end of a second: its sample into the series, and the progress
 * line when asked for. */
static void sample_second(struct gen *g, uint64_t t0, uint64_t *last_t,
			  uint64_t *last_resp, uint64_t *last_err)
{
	struct bench_result *r = g->r;
	double dt = (double)(g->now - *last_t) / 1e9;
	struct bench_sample *smp = &g->cur;

	smp->responses = r->responses - *last_resp;
	smp->errors = bench_errors(r) - *last_err;
	if (r->n_series < BENCH_MAX_SERIES)
		r->series[r->n_series++] = *smp;
	if (g->p->progress) {
		fprintf(g->p->progress,
			"[%3.0fs] %10.0f req/s  mean %8.1f us  conns %u/%u  "
			"errors %llu  retransmits %llu\n",
			(double)(g->now - t0) / 1e9,
			(double)smp->responses / dt,
			smp->lat_n ? (double)smp->lat_sum_ns /
					     (double)smp->lat_n / 1e3
				   : 0.0,
			g->n_est, g->p->conns,
			(unsigned long long)bench_errors(r),
			(unsigned long long)r->retransmits);
		fflush(g->p->progress);
	}
	memset(smp, 0, sizeof(*smp));
	*last_t = g->now;
	*last_resp = r->responses;
	*last_err = bench_errors(r);
}

/* Close every connection with a RST so the server frees it now (a kernel
 * server would otherwise keep 100,000 of them): when the TX frames run
 * out, wait for the kernel to send some, for 2 s at most in all. Those
 * that owe the server an ACK (their response came in, their delayed ACK
 * had not gone) or wait for a response first: 100,000 RSTs take longer
 * than the server's 200 ms RTO, which resent those responses (thousands
 * a run at 100,000 connections) when their turn came late. */
static void close_all(struct gen *g)
{
	const struct bench_params *p = g->p;
	uint64_t end;
	uint32_t i, pass;

	bool late = false;

	end = now_ns() + 2000000000ULL;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < p->conns; i++) {
			struct conn *c = &g->conns[i];
			uint32_t seq =
				c->state == C_EST ? c->snd_nxt : c->iss + 1;
			bool first = c->state == C_EST &&
				     (c->ack_owed || c->pending);

			if (c->state == C_IDLE || first != (pass == 0))
				continue;
			/* Past the 2 s, the rest are left to the server's
			 * timers (a million failed sends would each cost a
			 * kick). */
			while (!late &&
			       bg_send_seg(g, c, c->slot, seq, c->rcv_nxt,
					   F_RST | F_ACK, NULL, 0, false)) {
				late = now_ns() >= end;
				bg_flush_tx(g);
				usleep(50);
			}
			bg_conn_release(g, c, UINT64_MAX);
		}
	}
	/* Let the kernel send them before the socket goes. */
	for (i = 0; i < 1000 && g->x.n_tx_free < g->x.n_tx; i++) {
		bg_flush_tx(g);
		if (g->x.n_tx_free < g->x.n_tx)
			usleep(100);
	}
}

static void run_loop(struct gen *g)
{
	const struct bench_params *p = g->p;
	uint64_t t0, end, next_timer, next_sample, last_t, last_resp = 0,
							   last_err = 0, ramp0;
	uint32_t i;

	g->now = t0 = now_ns();
	end = t0 + (uint64_t)p->duration_s * 1000000000ULL;
	next_timer = t0;
	g->timer_last = t0;
	g->timer_period = (uint64_t)p->conns * TIMER_SCAN_PER_CONN_NS;
	if (g->timer_period < TIMER_SCAN_NS)
		g->timer_period = TIMER_SCAN_NS;
	next_sample = t0 + 1000000000ULL;
	last_t = t0;
	g->running = true;
	if (p->rate) {
		g->next_due = t0;
		g->interval_ns =
			(uint64_t)p->pipeline * 1000000000ULL / p->rate;
		if (!g->interval_ns)
			g->interval_ns = 1;
	}
	/* The first handshakes are made in order (open_next), as fast as
	 * max_syn and the TX frames allow; the timers see a connection only
	 * once it was opened. Before the run proper, a ramp opens them all
	 * (the SYNs may then take the batches' share too) and sends nothing
	 * else: the run's clock starts when every connection is established,
	 * none was for RAMP_IDLE_NS after each was tried, or after ramp_max_ns.
	 * Not with --close, where every request has its own connection. */
	for (i = 0; i < p->conns; i++)
		g->conns[i].deadline = UINT64_MAX;
	g->open_next = 0;
	g->ramping = !p->close_each;
	if (g->ramping)
		g->max_syn += g->max_out;
	ramp0 = g->last_est_ns = t0;
	g->ramp_max_ns = (uint64_t)p->conns * RAMP_PER_CONN_NS;
	if (g->ramp_max_ns < RAMP_MAX_NS)
		g->ramp_max_ns = RAMP_MAX_NS;
	if (p->ramp_max_s)
		g->ramp_max_ns = p->ramp_max_s * 1000000000ULL;

	while (g->running) {
		uint64_t t_iter = g->now;
		uint32_t n_rx = bg_poll_rx(g);
		bool work;

		g->now = now_ns();
		if (g->ramping &&
		    (g->n_est == p->conns || g->now - ramp0 >= g->ramp_max_ns ||
		     (g->open_next == p->conns &&
		      g->now - g->last_est_ns >= RAMP_IDLE_NS) ||
		     (p->stop && *p->stop))) {
			/* The run starts now. */
			g->ramping = false;
			g->max_syn -= g->max_out;
			g->r->ramp_s = (double)(g->now - ramp0) / 1e9;
			t0 = last_t = g->now;
			end = t0 + (uint64_t)p->duration_s * 1000000000ULL;
			next_sample = t0 + 1000000000ULL;
			g->next_due = t0;
			g->r->busy_ns = 0;
		}
		if (g->ramping && g->now >= next_sample) {
			if (p->progress)
				fprintf(p->progress,
					"[ramp] %u/%u connections "
					"established\n",
					g->n_est, p->conns);
			next_sample += 1000000000ULL;
		}
		if (g->dl_n)
			bg_delack_due(g);
		if (g->now >= next_timer) {
			bg_run_timers(g);
			next_timer = g->now + TIMER_TICK_NS;
		}
		if (g->open_next < p->conns)
			bg_open_first(g);
		if (g->ramping)
			; /* no requests yet */
		else if (p->rate)
			bg_dispatch_due(g);
		else if (g->n_idle)
			bg_dispatch_ready(g);
		work = n_rx || g->x.tx_unkicked;
		bg_flush_tx(g);
		/* Busy time: iterations that received or sent, the TX kick
		 * included (in copy mode the kernel transmits inside it).
		 * Near 100% means the generator, not the server, is the
		 * limit. */
		if (work) {
			g->now = now_ns();
			g->r->busy_ns += g->now - t_iter;
		}
		if (!g->ramping && g->now >= next_sample) {
			sample_second(g, t0, &last_t, &last_resp, &last_err);
			next_sample += 1000000000ULL;
		}
		if (g->ramping)
			continue;
		if (g->now >= end || (p->stop && *p->stop) ||
		    (p->max_requests && g->r->responses >= p->max_requests))
			g->running = false;
	}
	g->r->elapsed_s = (double)(g->now - t0) / 1e9;
	/* The last partial second, when it saw anything. */
	if (g->r->responses > last_resp || g->cur.connects)
		sample_second(g, t0, &last_t, &last_resp, &last_err);

	close_all(g);
}

static void gen_free(struct gen *g)
{
	free(g->conns);
	free(g->idle);
	free(g->slot_conn);
	free(g->hdr_pool);
	free(g->hdr_free);
	free(g->delack);
	free(g);
}

/* A generator for p (its own connections and ports), not yet attached. */
static int gen_new(const struct bench_params *p, struct bench_result *r,
		   int ifindex, struct gen **out)
{
	struct gen *g;
	uint32_t i, n_hdr, a;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->p = p;
	g->r = r;
	g->old_prog_fd = -1;
	g->link_fd = -1;
	g->seed = (uint32_t)now_ns() | 1;
	g->n_ports = (uint32_t)(p->port_hi - p->port_lo + 1);
	g->n_src = p->n_src ? p->n_src : 1;
	g->n_slots = g->n_ports * g->n_src;
	/* Source address i: the first + i (IPv6: in its last 32 bits). */
	for (i = 0; i < g->n_src; i++) {
		uint8_t *d = g->src[i];

		memcpy(d, p->src_addr, 16);
		memcpy(&a, p->v6 ? d + 12 : d, 4);
		a = htonl(ntohl(a) + i);
		memcpy(p->v6 ? d + 12 : d, &a, 4);
	}
	g->ifindex = ifindex;
	err = build_requests(g);
	if (err) {
		free(g);
		return err;
	}
	n_hdr = p->conns <= HDR_POOL_ALL
			? p->conns
			: HDR_POOL_ALL + (p->conns - HDR_POOL_ALL) / 4;
	g->conns = calloc(p->conns, sizeof(*g->conns));
	g->idle = calloc(p->conns, sizeof(*g->idle));
	g->slot_conn = malloc(g->n_slots * sizeof(*g->slot_conn));
	g->hdr_pool = malloc((size_t)n_hdr * HDR_MAX);
	g->hdr_free = free_stack_new(n_hdr);
	g->delack = malloc(DELACK_FIFO * sizeof(*g->delack));
	if (!g->conns || !g->idle || !g->slot_conn || !g->hdr_pool ||
	    !g->hdr_free || !g->delack) {
		gen_free(g);
		return -ENOMEM;
	}
	for (i = 0; i < g->n_slots; i++)
		g->slot_conn[i] = NO_CONN;
	for (i = 0; i < p->conns; i++)
		g->conns[i].hbuf = NO_BUF;
	g->n_hdr_free = n_hdr;
	*out = g;
	return 0;
}

/* Add one thread's result into the total. */
static void result_add(struct bench_result *t, const struct bench_result *r)
{
	uint32_t i;

	t->responses += r->responses;
	t->ok += r->ok;
	t->err_status += r->err_status;
	t->err_parse += r->err_parse;
	t->err_reset += r->err_reset;
	t->err_closed += r->err_closed;
	t->err_timeout += r->err_timeout;
	t->err_connect += r->err_connect;
	t->connects += r->connects;
	t->retransmits += r->retransmits;
	t->syn_retransmits += r->syn_retransmits;
	t->data_retransmits += r->data_retransmits;
	t->rst_rx += r->rst_rx;
	t->rst_tx += r->rst_tx;
	t->timeouts += r->timeouts;
	t->tx_no_frame += r->tx_no_frame;
	t->misrouted += r->misrouted;
	t->hdr_pool_empty += r->hdr_pool_empty;
	t->hdr_cache_hits += r->hdr_cache_hits;
	t->peak_established += r->peak_established;
	t->conns_answered += r->conns_answered;
	t->bytes_rx += r->bytes_rx;
	t->busy_ns += r->busy_ns;
	if (r->late_max_ns > t->late_max_ns)
		t->late_max_ns = r->late_max_ns;
	if (r->elapsed_s > t->elapsed_s)
		t->elapsed_s = r->elapsed_s;
	if (r->ramp_s > t->ramp_s)
		t->ramp_s = r->ramp_s;
	for (i = 0; i < BENCH_HIST_BUCKETS; i++)
		t->hist.count[i] += r->hist.count[i];
	t->hist.n += r->hist.n;
	t->hist.sum_ns += r->hist.sum_ns;
	if (r->hist.max_ns > t->hist.max_ns)
		t->hist.max_ns = r->hist.max_ns;
	for (i = 0; i < r->n_series; i++) {
		struct bench_sample *d = &t->series[i];
		const struct bench_sample *s = &r->series[i];

		d->responses += s->responses;
		d->errors += s->errors;
		d->retransmits += s->retransmits;
		d->connects += s->connects;
		d->lat_sum_ns += s->lat_sum_ns;
		d->lat_n += s->lat_n;
		if (s->lat_max_ns > d->lat_max_ns)
			d->lat_max_ns = s->lat_max_ns;
	}
	if (r->n_series > t->n_series)
		t->n_series = r->n_series;
	if (!t->xsk_mode)
		t->xsk_mode = r->xsk_mode;
}

struct gen_thread {
	struct gen *g;
	int cpu;
	pthread_t th;
};

static void *gen_thread_main(void *arg)
{
	struct gen_thread *t = arg;

	if (t->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	run_loop(t->g);
	return NULL;
}

/* The i-th CPU (wrapping) the process may run on, -1 if none. */
static int nth_allowed_cpu(uint32_t i)
{
	cpu_set_t set;
	int cpu, n, k = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	n = CPU_COUNT(&set);
	if (!n)
		return -1;
	i %= (uint32_t)n;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set) && (uint32_t)k++ == i)
			return cpu;
	return -1;
}

/* Thread i of nt: queue + i, its share of connections, ports, rate and
 * requests. */
static void thread_params(const struct bench_params *p, uint32_t nt, uint32_t i,
			  struct bench_params *tp)
{
	uint32_t span = (uint32_t)(p->port_hi - p->port_lo + 1) / nt;

	*tp = *p;
	tp->queue = p->queue + i;
	tp->conns = p->conns / nt + (i < p->conns % nt);
	tp->port_lo = (uint16_t)(p->port_lo + i * span);
	tp->port_hi = (uint16_t)(tp->port_lo + span - 1);
	tp->rate = p->rate / nt + (i < p->rate % nt);
	if (p->rate && !tp->rate)
		tp->rate = 1;
	tp->max_requests = p->max_requests ? p->max_requests / nt +
						     (i < p->max_requests % nt)
					   : 0;
	if (p->max_requests && !tp->max_requests)
		tp->max_requests = 1;
	if (i)
		tp->progress = NULL; /* thread 0 speaks for all */
}

int bench_run(const struct bench_params *p, struct bench_result *r)
{
	uint32_t nt = p->threads > 1 ? p->threads : 1, i;
	struct bench_params *tp = NULL;
	struct bench_result *tr = NULL;
	struct gen_thread *th = NULL;
	struct gen *g0 = NULL;
	int err, ifindex;

	memset(r, 0, sizeof(*r));
	r->threads = nt;
	if (!p->conns || p->conns > BENCH_MAX_CONNS || !p->pipeline ||
	    (p->close_each && p->pipeline != 1) || p->port_hi < p->port_lo ||
	    p->n_src > BENCH_MAX_SRC ||
	    (uint32_t)(p->port_hi - p->port_lo + 1) *
			    (p->n_src ? p->n_src : 1) <
		    2 * p->conns ||
	    nt > BENCH_MAX_THREADS || p->conns < nt) {
		pr_warn("bad bench parameters: 1..%u connections (at least one "
			"per thread, 1..%u threads), at least twice as many "
			"source ports x addresses (1..%u), pipeline 1 with "
			"close\n",
			BENCH_MAX_CONNS, BENCH_MAX_THREADS, BENCH_MAX_SRC);
		return -EINVAL;
	}
	ifindex = (int)if_nametoindex(p->ifname);
	if (!ifindex) {
		pr_warn("no interface '%s' here\n", p->ifname);
		return -ENODEV;
	}
	tp = calloc(nt, sizeof(*tp));
	tr = nt > 1 ? calloc(nt, sizeof(*tr)) : r;
	th = calloc(nt, sizeof(*th));
	if (!tp || !tr || !th) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nt; i++) {
		thread_params(p, nt, i, &tp[i]);
		err = gen_new(&tp[i], &tr[i], ifindex, &th[i].g);
		if (err)
			goto out;
		th[i].cpu = nt > 1 ? nth_allowed_cpu(i) : -1;
	}
	g0 = th[0].g;
	g0->all_port_lo = p->port_lo;
	g0->all_port_hi = p->port_hi;
	/* One XDP program for all: it redirects to XSKMAP[rx queue]. */
	err = bg_xdp_attach(g0);
	if (err)
		goto out_prog;
	for (i = 0; i < nt; i++) {
		th[i].g->skel = g0->skel;
		th[i].g->xdp_flags = g0->xdp_flags;
		err = bg_xsk_setup(th[i].g);
		if (err) {
			if (nt > 1)
				pr_warn("-q %u -t %u needs RX queues %u..%u on "
					"%s: "
					"see `ethtool -l %s`\n",
					p->queue, nt, p->queue,
					p->queue + nt - 1, p->ifname,
					p->ifname);
			goto out_xsk;
		}
	}
	if (nt == 1) {
		run_loop(g0);
	} else {
		for (i = 0; i < nt; i++) {
			err = -pthread_create(&th[i].th, NULL, gen_thread_main,
					      &th[i]);
			if (err) {
				pr_warn("pthread_create: %s\n", strerror(-err));
				if (p->stop)
					*p->stop = 1;
				break;
			}
		}
		while (i--)
			pthread_join(th[i].th, NULL);
	}
out_xsk:
	for (i = 0; i < nt; i++)
		bg_xsk_teardown(th[i].g);
out_prog:
	bg_xdp_detach(g0);
	for (i = 1; i < nt; i++)
		th[i].g->skel = NULL;
out:
	if (nt > 1 && tr) {
		for (i = 0; i < nt; i++)
			result_add(r, &tr[i]);
		r->busy_ns /= nt; /* the mean thread's */
		r->xdp_mode = tr[0].xdp_mode;
		r->threads = nt;
	}
	if (th)
		for (i = 0; i < nt; i++)
			if (th[i].g)
				gen_free(th[i].g);
	free(th);
	if (nt > 1)
		free(tr);
	free(tp);
	return err;
}
