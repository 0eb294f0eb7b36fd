// SPDX-License-Identifier: GPL-2.0
/*
 * bench_gen.c - the load generator of `blitz bench` (see bench_gen.h):
 * AF_XDP socket setup, a minimal TCP client, HTTP/1.1 response checking
 * and the latency histogram.
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
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench_gen.h"
#include "bench_gen.skel.h"
#include "log.h"
#include "wire.h"
#include "xsk.h"

#define TX_FRAMES 1024 /* and the tx and completion ring sizes */
/* UMEM frames: 3072 RX frames beside the TX ones, so a burst of responses
 * does not find the fill ring empty while the loop is descheduled. UMEM is
 * pinned memory: if that is refused, 1024 RX frames are tried. */
#define UMEM_FRAMES_BIG 4096
#define UMEM_FRAMES_SMALL 2048
#define BATCH 64
#define HDR_MAX 2048 /* a response header longer than this is an error */
/* Header buffers (for headers split across segments) are a pool taken at
 * start: every connection up to HDR_POOL_ALL, a quarter beyond. */
#define HDR_POOL_ALL 4096
#define NO_BUF UINT32_MAX
#define HC_MAX 512 /* the header cache holds sections up to this long */
#define RTO_INIT_NS (200 * 1000000ULL) /* the kernel's minimum RTO */
#define RTO_MAX_NS (2000 * 1000000ULL)
#define MAX_TRIES 7
/* Every connection's timer is looked at once per TIMER_SCAN_NS, or per
 * TIMER_SCAN_PER_CONN_NS x connections when that is longer (20 ms at
 * 100,000): a slice of them per loop iteration, so the scan costs the
 * same at any count and never stalls the loop. */
#define TIMER_SCAN_NS (2 * 1000000ULL)
#define TIMER_SCAN_PER_CONN_NS 200ULL
#define TIMER_TICK_NS 100000ULL /* how often a slice is looked at */
/* Free TX frames a new connection's SYN leaves for the data of the
 * established ones: opening 100,000 connections must not starve them. */
#define OPEN_TX_RESERVE 128
/* Outstanding at once: batches and handshakes. A server's replies land in
 * the client interface's RX ring while the generator may be descheduled:
 * veth's holds 256 frames (a NIC's usually more), and what overflows it is
 * lost (then retransmitted 200 ms later). 192 + 32 fit it. */
#define MAX_OUT 192
#define MAX_SYN 32
/* A connection that has its response but waits for its turn (no room, or
 * open loop: not due yet) owes the server an ACK: its next batch carries
 * it, or a pure ACK after this long (far below a kernel server's 200 ms
 * minimum RTO; the kernel's own delayed ACK waits 40 ms). An ACK per
 * response would double the frames both ways (the xdp engine drops them),
 * and overflow veth's 256-frame ring beyond 192 connections. Within a
 * batch's responses every second segment is ACKed. */
#define DELACK_NS (20 * 1000000ULL)
#define RAMP_MAX_NS (10 * 1000000000ULL)
#define RAMP_IDLE_NS (500 * 1000000ULL)
#define OUR_MSS 1460  /* IPv4 on a 1500-byte link */
#define OUR_MSS6 1440 /* IPv6 */
#define OUR_WINDOW 65535
#define NO_CONN UINT32_MAX

enum conn_state {
	C_IDLE, /* no connection: (re)connect at `deadline` */
	C_SYN_SENT,
	C_EST,
};

enum resp_state { R_HDR, R_BODY };

struct conn {
	uint8_t state;
	uint8_t rstate;
	uint8_t tries;
	uint8_t closing;    /* the server said Connection: close */
	uint8_t bad;	    /* the response being read has a bad status */
	uint8_t on_stack;   /* in the idle stack / ready queue (maybe stale) */
	uint8_t unsent;	    /* the batch found no TX frame: send it again */
	uint8_t ts_ok;	    /* timestamps agreed in the handshake */
	uint8_t ack_owed;   /* data in, not ACKed: the next batch or a timer */
	uint32_t ts_recent; /* the server's last TSval, our TSecr */
	uint16_t hlen;	    /* bytes of a split header kept in buffer hbuf */
	uint32_t slot;	    /* source port and address: see slot_port() */
	uint32_t hbuf;	    /* header pool buffer, NO_BUF: none */
	uint32_t iss, snd_una, snd_nxt, rcv_nxt;
	uint32_t batch_seq; /* first byte of the outstanding batch */
	uint32_t pending;   /* responses still due for the batch */
	uint32_t body_left;
	uint64_t t_sent;   /* first transmission (open loop: when it was due) */
	uint64_t deadline; /* retransmit, connect or give up at */
	uint64_t rto;
};

struct gen {
	const struct bench_params *p;
	struct bench_result *r;
	/* AF_XDP */
	struct blitz_xsk x;
	/* XDP attachment */
	struct bench_gen_bpf *skel;
	int ifindex;
	uint32_t xdp_flags;
	int old_prog_fd; /* what was attached before, -1: nothing */
	bool attached;
	/* TCP */
	struct conn *conns;
	/* Slot s = port offset * n_src + address index: source port port_lo +
	 * s / n_src from address src[s % n_src]. slot_conn[s]: its conn. */
	uint32_t *slot_conn;
	uint32_t n_ports, n_src, n_slots;
	uint32_t next_slot; /* the next slot to try */
	uint8_t src[BENCH_MAX_SRC][16];
	uint32_t n_est;	    /* established connections, and the most at once */
	uint32_t timer_pos; /* the timer scan's next connection */
	uint64_t timer_last, timer_period;
	/* header buffers: HDR_MAX bytes each, a free stack of indexes */
	char *hdr_pool;
	uint32_t *hdr_free;
	uint32_t n_hdr_free;
	uint32_t seed;
	uint16_t ip_id;
	/* The last header section parsed whole from one segment, and what
	 * parse_header made of it: a server repeats the same bytes, so a
	 * response that starts with them is framed by one memcmp. */
	char hc[HC_MAX];
	uint32_t hc_len; /* 0: empty */
	uint32_t hc_body;
	uint8_t hc_closing;
	int8_t hc_rc;
	/* requests */
	char batch[BENCH_MAX_BATCH];
	uint32_t req_len, batch_len;
	bool running;
	uint64_t inflight; /* responses due on all connections */
	uint64_t now;
	uint16_t all_port_lo,
		all_port_hi; /* of all threads, for the XDP prog */
	/* Connections ready for a batch, validated on pop: open loop, a
	 * stack; closed loop, a queue (from idle_head) of those waiting for
	 * room. */
	uint32_t *idle;
	uint32_t n_idle, idle_head;
	/* Waiting for the server: connections with a batch outstanding
	 * (out) and in SYN_SENT (n_syn). At most max_out and max_syn, so
	 * that what the server sends back always fits the RX frames and
	 * what goes out the TX frames: with 100,000 connections the rest
	 * take turns (a queue) instead of being dropped in a burst. */
	uint32_t out, max_out, n_syn, max_syn;
	uint32_t open_next;   /* connections not yet opened once: from here */
	bool ramping;	      /* opening them, before the run's clock starts */
	uint64_t last_est_ns; /* when one was last established */
	/* open loop */
	uint64_t next_due, interval_ns;
	/* the second being sampled */
	struct bench_sample cur;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- histogram ---- */

#define HIST_EXACT (2 * BENCH_HIST_SUB) /* values below are their bucket */

static unsigned int hist_bucket(uint64_t v)
{
	unsigned int k;

	if (v < HIST_EXACT)
		return (unsigned int)v;
	k = 63 - __builtin_clzll(v); /* > BENCH_HIST_SUB_BITS */
	return HIST_EXACT + (k - BENCH_HIST_SUB_BITS - 1) * BENCH_HIST_SUB +
	       (unsigned int)((v >> (k - BENCH_HIST_SUB_BITS)) &
			      (BENCH_HIST_SUB - 1));
}

/* The middle of bucket b. */
static uint64_t hist_value(unsigned int b)
{
	unsigned int k, sub;
	uint64_t lo;

	if (b < HIST_EXACT)
		return b;
	k = (b - HIST_EXACT) / BENCH_HIST_SUB + BENCH_HIST_SUB_BITS + 1;
	sub = (b - HIST_EXACT) % BENCH_HIST_SUB;
	lo = (uint64_t)(BENCH_HIST_SUB + sub) << (k - BENCH_HIST_SUB_BITS);
	return lo + ((1ULL << (k - BENCH_HIST_SUB_BITS)) >> 1);
}

void bench_hist_add(struct bench_hist *h, uint64_t ns)
{
	h->count[hist_bucket(ns)]++;
	h->n++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

uint64_t bench_hist_percentile(const struct bench_hist *h, double q)
{
	uint64_t want, seen = 0;
	unsigned int b;

	if (!h->n)
		return 0;
	want = (uint64_t)(q * (double)h->n);
	if (want >= h->n)
		want = h->n - 1;
	for (b = 0; b < BENCH_HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen > want) {
			uint64_t v = hist_value(b);

			return v > h->max_ns ? h->max_ns : v;
		}
	}
	return h->max_ns;
}

/* ---- checksums ---- */

/* ---- TX ---- */

/* Publish what was queued and kick the kernel: in copy mode every TX needs
 * a sendto, which moves at most a small batch per call. */
static void flush_tx(struct gen *g)
{
	blitz_xsk_complete(&g->x);
	blitz_xsk_kick_tx(&g->x, 64);
	blitz_xsk_complete(&g->x);
}

static inline uint16_t slot_port(const struct gen *g, uint32_t slot)
{
	return (uint16_t)(g->p->port_lo + slot / g->n_src);
}

/* Queue one segment from slot's address and port to the server. 0, or -1
 * when no TX frame or ring slot is free right now (the caller's timer
 * retries). */
static int send_seg(struct gen *g, const struct conn *c, uint32_t slot,
		    uint32_t seq, uint32_t ack, uint8_t flags, const void *data,
		    uint32_t len, bool syn_opts)
{
	const struct bench_params *p = g->p;
	struct wire_seg sg = {
		.src_mac = p->src_mac,
		.dst_mac = p->dst_mac,
		.v6 = p->v6,
		.saddr = g->src[slot % g->n_src],
		.daddr = p->dst_addr,
		.sport_be = htons(slot_port(g, slot)),
		.dport_be = htons(p->dst_port),
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.win = OUR_WINDOW,
		.ip_id = g->ip_id++,
	};
	bool ts = syn_opts || (c && c->ts_ok);
	uint32_t optlen = (syn_opts ? 4 : 0) + (ts ? 12 : 0), l4, flen;
	uint8_t *frame, *o;
	uint64_t addr;

	if (!blitz_xsk_tx_alloc(&g->x, &addr)) {
		flush_tx(g);
		if (!blitz_xsk_tx_alloc(&g->x, &addr)) {
			g->r->tx_no_frame++;
			return -1;
		}
	}
	frame = blitz_xsk_data(&g->x, addr);
	l4 = wire_write_tcp_hdrs(frame, &sg, optlen, len);
	o = frame + l4 + WIRE_TCP_HLEN;
	if (syn_opts)
		o += wire_opt_mss(o, p->v6 ? OUR_MSS6 : OUR_MSS);
	/* Timestamps (RFC 7323) on every segment once agreed: a stateless
	 * server (the xdp engine) checks its MAC in our TSecr. TSval is a
	 * millisecond clock. */
	if (ts)
		wire_opt_timestamps(o, (uint32_t)(g->now / 1000000),
				    c ? c->ts_recent : 0);
	if (len)
		memcpy(frame + l4 + WIRE_TCP_HLEN + optlen, data, len);
	/* Full checksum: the receiving kernel verifies frames that arrive
	 * without offload metadata. */
	wire_tcp_csum(frame, p->v6, l4, WIRE_TCP_HLEN + optlen + len);
	flen = l4 + WIRE_TCP_HLEN + optlen + len;
	return blitz_xsk_tx_queue(&g->x, &addr, &flen, 1) == 1 ? 0 : -1;
}

#define F_FIN TCPHDR_FIN
#define F_SYN TCPHDR_SYN
#define F_RST TCPHDR_RST
#define F_PSH TCPHDR_PSH
#define F_ACK TCPHDR_ACK

static inline bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool seq_after(uint32_t a, uint32_t b)
{
	return seq_before(b, a);
}

/* ---- connections ---- */

static uint32_t next_rand(struct gen *g)
{
	g->seed ^= g->seed << 13;
	g->seed ^= g->seed >> 17;
	g->seed ^= g->seed << 5;
	return g->seed;
}

/* Give c's header buffer back to the pool, if it holds one. */
static inline void hdr_put(struct gen *g, struct conn *c)
{
	if (c->hbuf != NO_BUF) {
		g->hdr_free[g->n_hdr_free++] = c->hbuf;
		c->hbuf = NO_BUF;
	}
}

static void conn_release(struct gen *g, struct conn *c, uint64_t reconnect_at)
{
	if (c->state != C_IDLE)
		g->slot_conn[c->slot] = NO_CONN;
	if (c->state == C_EST)
		g->n_est--;
	if (c->state == C_SYN_SENT)
		g->n_syn--;
	else if (c->state == C_EST && c->pending)
		g->out--;
	hdr_put(g, c);
	g->inflight -= c->pending;
	c->state = C_IDLE;
	c->pending = 0;
	c->ack_owed = 0;
	c->deadline = reconnect_at;
}

/* Whether to send another batch: running, and -n not yet covered by what
 * is answered or on its way (the last batch may overshoot it). */
static bool want_more(const struct gen *g)
{
	const struct bench_params *p = g->p;

	return g->running && (!p->max_requests ||
			      g->r->responses + g->inflight < p->max_requests);
}

/* Whether one more connection may wait for the server (see max_out). */
static inline bool room(const struct gen *g)
{
	return g->out < g->max_out;
}

/* Open connection c on the next free slot (source address and port).
 * Slots are taken round robin over all of them so that a 4-tuple comes
 * back as late as possible (the server may hold it in TIME_WAIT). With
 * fewer than OPEN_TX_RESERVE TX frames free the SYN waits for the next
 * scan (c stays idle and due), which paces the opening of many
 * connections to what the link takes. */
static void conn_open(struct gen *g, struct conn *c)
{
	uint32_t i, slot = 0;

	if (g->x.n_tx_free < OPEN_TX_RESERVE) {
		flush_tx(g);
		if (g->x.n_tx_free < OPEN_TX_RESERVE)
			return;
	}
	for (i = 0; i < g->n_slots; i++) {
		slot = g->next_slot;
		g->next_slot =
			g->next_slot + 1 == g->n_slots ? 0 : g->next_slot + 1;
		if (g->slot_conn[slot] == NO_CONN)
			break;
	}
	if (i == g->n_slots) { /* cannot happen: n_slots >= 2 * conns */
		c->deadline = g->now + RTO_INIT_NS;
		return;
	}
	c->slot = slot;
	g->slot_conn[slot] = (uint32_t)(c - g->conns);
	/* Clock-driven ISN, like the kernel's: a reused 4-tuple starts above
	 * the old one, which lets the server recycle its TIME_WAIT. */
	c->iss = (uint32_t)(g->now >> 4) + (next_rand(g) & 0xffff);
	c->snd_una = c->iss;
	c->snd_nxt = c->iss + 1;
	c->state = C_SYN_SENT;
	g->n_syn++;
	c->ts_ok = 0;
	c->ack_owed = 0;
	c->ts_recent = 0;
	c->rstate = R_HDR;
	c->hlen = 0;
	c->closing = 0;
	c->pending = 0;
	c->tries = 0;
	c->rto = RTO_INIT_NS;
	c->deadline = g->now + c->rto;
	send_seg(g, c, c->slot, c->iss, 0, F_SYN, NULL, 0, true);
}

/* Open the connections never opened yet, in order, while SYNs may go. */
static void open_first(struct gen *g)
{
	while (g->open_next < g->p->conns && g->n_syn < g->max_syn &&
	       want_more(g)) {
		struct conn *c = &g->conns[g->open_next];

		conn_open(g, c);
		if (c->state != C_SYN_SENT)
			return; /* no TX frame to spare: next iteration */
		g->open_next++;
	}
}

/* Send the next batch of pipelined requests; it also ACKs what came in.
 * Its latency runs from t_start: now, or when it was due (open loop). */
static void conn_send_batch(struct gen *g, struct conn *c, uint64_t t_start)
{
	/* Every response of the last batch came back, so the server had
	 * all of it even if no ACK said so yet. */
	c->snd_una = c->snd_nxt;
	c->batch_seq = c->snd_nxt;
	c->snd_nxt += g->batch_len;
	c->pending = g->p->pipeline;
	g->inflight += c->pending;
	g->out++;
	c->t_sent = t_start;
	c->tries = 0;
	c->rto = RTO_INIT_NS;
	c->deadline = g->now + c->rto;
	c->rstate = R_HDR;
	c->hlen = 0;
	c->unsent = 0;
	c->ack_owed = 0; /* this segment ACKs what came in */
	if (send_seg(g, c, c->slot, c->batch_seq, c->rcv_nxt, F_ACK | F_PSH,
		     g->batch, g->batch_len, false)) {
		c->unsent = 1; /* no TX frame: again soon, not a retransmit */
		c->deadline = g->now + 1000000;
	}
}

/* Closed loop: c may send its next batch. Now, when there is room and no
 * one queued before it; else at the back of the ready queue. True when
 * sent. */
static bool closed_send(struct gen *g, struct conn *c)
{
	if (!want_more(g)) {
		c->deadline = UINT64_MAX;
		return false;
	}
	if (!g->n_idle && room(g) && !g->ramping) {
		conn_send_batch(g, c, g->now);
		return true;
	}
	c->deadline = UINT64_MAX;
	if (!c->on_stack) {
		c->on_stack = 1;
		g->idle[(g->idle_head + g->n_idle++) % g->p->conns] =
			(uint32_t)(c - g->conns);
	}
	return false;
}

/* Closed loop: the queued connections, in order, while there is room. */
static void dispatch_ready(struct gen *g)
{
	while (g->n_idle && room(g) && want_more(g)) {
		struct conn *c = &g->conns[g->idle[g->idle_head]];

		g->idle_head =
			g->idle_head + 1 == g->p->conns ? 0 : g->idle_head + 1;
		g->n_idle--;
		c->on_stack = 0;
		if (c->state != C_EST || c->pending || c->closing)
			continue; /* stale: it was closed since */
		conn_send_batch(g, c, g->now);
	}
}

/* c is established with nothing outstanding: closed loop, send the next
 * batch (or queue for room); open loop, wait on the idle stack for the
 * next due time. */
static void conn_ready(struct gen *g, struct conn *c)
{
	if (!g->p->rate) {
		closed_send(g, c);
		return;
	}
	c->deadline = UINT64_MAX;
	if (!c->on_stack) {
		c->on_stack = 1;
		g->idle[g->n_idle++] = (uint32_t)(c - g->conns);
	}
}

/* Open loop: every batch that is due goes out on an idle connection,
 * stamped with the time it was due. Due batches with no idle connection
 * wait (their latency grows: the coordinated-omission correction). */
static void dispatch_due(struct gen *g)
{
	while (g->next_due <= g->now && g->n_idle && want_more(g) && room(g)) {
		struct conn *c = &g->conns[g->idle[--g->n_idle]];

		c->on_stack = 0;
		if (c->state != C_EST || c->pending || c->closing)
			continue; /* stale: it was closed since */
		if (g->now - g->next_due > g->r->late_max_ns)
			g->r->late_max_ns = g->now - g->next_due;
		conn_send_batch(g, c, g->next_due);
		g->next_due += g->interval_ns;
	}
}

static void conn_ack(struct gen *g, struct conn *c)
{
	c->ack_owed = 0;
	send_seg(g, c, c->slot, c->snd_nxt, c->rcv_nxt, F_ACK, NULL, 0, false);
}

static void conn_reset(struct gen *g, struct conn *c)
{
	send_seg(g, c, c->slot, c->snd_nxt, c->rcv_nxt, F_RST | F_ACK, NULL, 0,
		 false);
	g->r->rst_tx++;
	conn_release(g, c, g->now);
}

/* ---- HTTP response checking ---- */

static bool header_is(const char *line, size_t len, const char *name,
		      const char **val, size_t *vlen)
{
	size_t n = strlen(name);

	if (len <= n || strncasecmp(line, name, n) || line[n] != ':')
		return false;
	line += n + 1;
	len -= n + 1;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	*val = line;
	*vlen = len;
	return true;
}

/* Parse one complete header section (ending in CRLF CRLF). -1: malformed. */
static int parse_header(struct gen *g, struct conn *c, const char *h,
			size_t len)
{
	const char *end = h + len, *line, *nl, *v;
	bool have_len = false, http10;
	unsigned long cl = 0;
	size_t vlen;
	int status;

	if (len < 12 || memcmp(h, "HTTP/1.", 7) ||
	    (h[7] != '0' && h[7] != '1') || h[8] != ' ')
		return -1;
	http10 = h[7] == '0';
	if (h[9] < '1' || h[9] > '5' || h[10] < '0' || h[10] > '9' ||
	    h[11] < '0' || h[11] > '9')
		return -1;
	status = (h[9] - '0') * 100 + (h[10] - '0') * 10 + (h[11] - '0');
	c->closing = http10;
	line = memchr(h, '\n', len);
	while (line && ++line < end) {
		size_t ll;

		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			break;
		ll = (size_t)(nl - line);
		if (ll && line[ll - 1] == '\r')
			ll--;
		if (header_is(line, ll, "content-length", &v, &vlen)) {
			char *e;
			char num[24];

			if (!vlen || vlen >= sizeof(num))
				return -1;
			memcpy(num, v, vlen);
			num[vlen] = 0;
			cl = strtoul(num, &e, 10);
			if (*e)
				return -1;
			have_len = true;
		} else if (header_is(line, ll, "connection", &v, &vlen)) {
			if (vlen == 5 && !strncasecmp(v, "close", 5))
				c->closing = 1;
			else if (vlen == 10 &&
				 !strncasecmp(v, "keep-alive", 10))
				c->closing = 0;
		} else if (header_is(line, ll, "transfer-encoding", &v,
				     &vlen)) {
			return -1; /* a hello server has no reason to chunk */
		}
		line = nl;
	}
	if (!have_len)
		return -1;
	if (status != 200)
		g->r->err_status++;
	c->body_left = (uint32_t)cl;
	return status == 200 ? 0 : 1;
}

static void response_done(struct gen *g, struct conn *c, bool good)
{
	uint64_t lat = g->now - c->t_sent;

	g->r->responses++;
	if (good)
		g->r->ok++;
	bench_hist_add(&g->r->hist, lat);
	g->cur.lat_sum_ns += lat;
	g->cur.lat_n++;
	if (lat > g->cur.lat_max_ns)
		g->cur.lat_max_ns = lat;
	c->pending--;
	g->inflight--;
	if (!c->pending)
		g->out--;
	c->rstate = R_HDR;
	c->hlen = 0;
}

/* Feed in-order payload to the response parser. -1: the stream can no
 * longer be framed (the caller resets the connection). */
static int consume(struct gen *g, struct conn *c, const char *d, uint32_t len)
{
	static const char eoh[] = "\r\n\r\n";

	while (len) {
		if (!c->pending) { /* bytes nobody asked for */
			g->r->err_parse++;
			return -1;
		}
		if (c->rstate == R_HDR) {
			const char *e;
			uint32_t take;
			int rc;

			if (!c->hlen) {
				/* The same bytes as the last header: its first
				 * CRLF CRLF is where the cached one ends, and
				 * the parse is the same. */
				if (g->hc_len && len >= g->hc_len &&
				    !memcmp(d, g->hc, g->hc_len)) {
					take = g->hc_len;
					rc = g->hc_rc;
					c->closing = g->hc_closing;
					c->body_left = g->hc_body;
					if (rc == 1)
						g->r->err_status++;
					g->r->hdr_cache_hits++;
					goto parsed;
				}
				e = memmem(d, len, eoh, 4);
				if (e) {
					take = (uint32_t)(e + 4 - d);
					rc = parse_header(g, c, d, take);
					if (rc >= 0 && take <= HC_MAX) {
						memcpy(g->hc, d, take);
						g->hc_len = take;
						g->hc_rc = (int8_t)rc;
						g->hc_closing = c->closing;
						g->hc_body = c->body_left;
					}
					goto parsed;
				}
			}
			/* Split header: collect it, then look again. */
			{
				uint32_t old = c->hlen, from;
				char *hb;

				if (c->hbuf == NO_BUF) {
					if (!g->n_hdr_free) {
						g->r->hdr_pool_empty++;
						g->r->err_parse++;
						return -1;
					}
					c->hbuf = g->hdr_free[--g->n_hdr_free];
				}
				hb = g->hdr_pool + (size_t)c->hbuf * HDR_MAX;
				take = len;
				if (old + take > HDR_MAX)
					take = HDR_MAX - old;
				memcpy(hb + old, d, take);
				c->hlen = (uint16_t)(old + take);
				from = old > 3 ? old - 3 : 0;
				e = memmem(hb + from, c->hlen - from, eoh, 4);
				if (!e) {
					if (c->hlen >= HDR_MAX)
						return -1;
					return 0; /* all of len taken */
				}
				take = (uint32_t)(e + 4 - hb) - old;
				rc = parse_header(g, c, hb,
						  (size_t)(e + 4 - hb));
				hdr_put(g, c);
			}
		parsed:
			if (rc < 0) {
				g->r->err_parse++;
				return -1;
			}
			d += take;
			len -= take;
			c->rstate = R_BODY;
			c->hlen = 0;
			c->bad = rc == 1;
			if (!c->body_left)
				response_done(g, c, !c->bad);
			continue;
		}
		/* R_BODY */
		{
			uint32_t take = len < c->body_left ? len : c->body_left;

			d += take;
			len -= take;
			c->body_left -= take;
			if (!c->body_left)
				response_done(g, c, !c->bad);
		}
	}
	return 0;
}

/* ---- RX ---- */

static void reply_rst(struct gen *g, uint32_t slot, const struct tcphdr *t,
		      uint32_t plen)
{
	uint8_t fl = wire_tcp_flags(t);
	uint32_t seglen = plen + !!(fl & F_SYN) + !!(fl & F_FIN);

	if (fl & F_RST)
		return;
	if (fl & F_ACK)
		send_seg(g, NULL, slot, ntohl(t->ack_seq), 0, F_RST, NULL, 0,
			 false);
	else
		send_seg(g, NULL, slot, 0, ntohl(t->seq) + seglen,
			 F_RST | F_ACK, NULL, 0, false);
}

static void handle_syn_sent(struct gen *g, struct conn *c,
			    const struct tcphdr *t, uint8_t fl)
{
	uint32_t ack = ntohl(t->ack_seq);

	if ((fl & F_ACK) && ack != c->iss + 1) {
		/* e.g. a challenge ACK from a TIME_WAIT 4-tuple: reset it
		 * and try again right away. */
		if (!(fl & F_RST))
			send_seg(g, c, c->slot, ack, 0, F_RST, NULL, 0, false);
		c->deadline = g->now;
		c->state = C_IDLE;
		g->n_syn--;
		g->slot_conn[c->slot] = NO_CONN;
		return;
	}
	if (fl & F_RST) {
		g->r->rst_rx++;
		if (fl & F_ACK) { /* refused */
			g->r->err_connect++;
			conn_release(g, c, g->now + RTO_INIT_NS / 4);
		}
		return;
	}
	if ((fl & (F_SYN | F_ACK)) != (F_SYN | F_ACK))
		return;
	c->rcv_nxt = ntohl(t->seq) + 1;
	c->snd_una = ack;
	c->state = C_EST;
	g->n_syn--;
	g->last_est_ns = g->now;
	if (++g->n_est > g->r->peak_established)
		g->r->peak_established = g->n_est;
	g->r->connects++;
	g->cur.connects++;
	if (!g->p->rate && closed_send(g, c))
		return;
	conn_ack(g, c);
	if (g->p->rate)
		conn_ready(g, c);
}

static void handle_est(struct gen *g, struct conn *c, const struct tcphdr *t,
		       uint8_t fl, const char *data, uint32_t plen)
{
	uint32_t seq = ntohl(t->seq), ack = ntohl(t->ack_seq);
	bool sent = false, fin = fl & F_FIN, acked_data = false;

	if (fl & F_RST) {
		g->r->rst_rx++;
		if (c->pending)
			g->r->err_reset++;
		conn_release(g, c, g->now);
		return;
	}
	if (fl & F_SYN) { /* our ACK of the SYN-ACK was lost: ACK again */
		conn_ack(g, c);
		return;
	}
	if ((fl & F_ACK) && seq_after(ack, c->snd_una) &&
	    !seq_after(ack, c->snd_nxt))
		c->snd_una = ack;
	if (plen || fin) {
		if (seq_after(seq, c->rcv_nxt) ||
		    !seq_after(seq + plen + fin, c->rcv_nxt)) {
			/* Out of order, or all old: drop and re-ACK. */
			conn_ack(g, c);
			return;
		}
		if (plen) {
			uint32_t skip = c->rcv_nxt - seq;

			if (skip < plen) {
				g->r->bytes_rx += plen - skip;
				c->rcv_nxt += plen - skip;
				if (consume(g, c, data + skip, plen - skip)) {
					conn_reset(g, c);
					return;
				}
				acked_data = true;
			}
		}
		if (fin) {
			c->rcv_nxt++;
			/* Requests behind a "Connection: close" answer are
			 * the server's right to drop, not errors. */
			if (c->pending && !c->closing)
				g->r->err_closed++;
			/* ACK their FIN with ours; the slot reconnects on
			 * another port, so a late segment of this one gets a
			 * RST from reply_rst(). */
			send_seg(g, c, c->slot, c->snd_nxt, c->rcv_nxt,
				 F_FIN | F_ACK, NULL, 0, false);
			conn_release(g, c, g->now);
			/* Connections per second: the next one right away. */
			if (g->p->close_each && want_more(g) &&
			    g->n_syn < g->max_syn)
				conn_open(g, c);
			return;
		}
	}
	if (!c->pending && (c->closing || g->p->close_each))
		c->deadline = g->now + RTO_MAX_NS; /* wait for their FIN */
	if (!c->pending && !c->closing && !g->p->close_each) {
		if (!g->p->rate)
			sent = closed_send(g, c);
		else
			conn_ready(g, c);
	}
	if (acked_data && !sent) {
		if (!c->pending && c->on_stack && want_more(g)) {
			/* Queued for its turn: its batch will ACK. */
			c->ack_owed = 1;
			c->deadline = g->now + DELACK_NS;
		} else if (c->pending && !c->ack_owed) {
			/* Part of the batch's responses: every second segment
			 * is ACKed (RFC 9293 3.8.6.3), the rest of the batch
			 * or the next one ACKs this one. */
			c->ack_owed = 1;
		} else {
			conn_ack(g, c);
		}
	}
}

/* The index of our source address a frame is sent to, or n_src when it
 * is none of them. They are consecutive: src[0] + i. */
static uint32_t src_index(const struct gen *g, const struct wire_pkt *pk)
{
	const uint8_t *d;
	uint32_t a, b;

	if (g->p->v6) {
		if (!pk->ip6)
			return g->n_src;
		d = (const uint8_t *)&pk->ip6->daddr;
		if (memcmp(d, g->src[0], 12))
			return g->n_src;
		memcpy(&a, d + 12, 4);
		memcpy(&b, g->src[0] + 12, 4);
	} else {
		if (!pk->ip4)
			return g->n_src;
		a = pk->ip4->daddr;
		memcpy(&b, g->src[0], 4);
	}
	a = ntohl(a) - ntohl(b);
	return a < g->n_src ? a : g->n_src;
}

static void handle_frame(struct gen *g, const uint8_t *f, uint32_t len)
{
	struct wire_pkt pk;
	uint32_t port_off, ci, si, slot;
	uint16_t dport;

	if (wire_parse(f, len, &pk) != WIRE_TCP)
		return;
	dport = ntohs(pk.tcp->dest);
	port_off = (uint32_t)(dport - g->p->port_lo);
	if (port_off >= g->n_ports) {
		/* The XDP program redirects only the generator's ports: this
		 * is another thread's reply, landed on our queue. */
		g->r->misrouted++;
		return;
	}
	si = g->n_src == 1 ? 0 : src_index(g, &pk);
	if (si >= g->n_src)
		return; /* to a port of ours on another address: not ours */
	slot = port_off * g->n_src + si;
	ci = g->slot_conn[slot];
	if (ci == NO_CONN) {
		reply_rst(g, slot, pk.tcp, pk.payload_len);
		return;
	}
	if (wire_tcp_hlen(pk.tcp) > WIRE_TCP_HLEN) {
		struct wire_tcp_opts o;
		struct conn *c = &g->conns[ci];

		wire_tcp_opts_parse(pk.tcp, &o);
		if (o.has_ts) {
			if (c->state == C_SYN_SENT &&
			    (wire_tcp_flags(pk.tcp) & F_SYN))
				c->ts_ok = 1;
			c->ts_recent = o.tsval;
		}
	}
	if (g->conns[ci].state == C_SYN_SENT)
		handle_syn_sent(g, &g->conns[ci], pk.tcp,
				wire_tcp_flags(pk.tcp));
	else
		handle_est(g, &g->conns[ci], pk.tcp, wire_tcp_flags(pk.tcp),
			   (const char *)pk.payload, pk.payload_len);
}

/* Receive a batch; the number of frames. */
static uint32_t poll_rx(struct gen *g)
{
	struct xdp_desc d[BATCH];
	uint32_t n, i;

	n = blitz_xsk_rx_burst(&g->x, d, BATCH);
	if (!n) {
		blitz_xsk_kick_rx(&g->x);
		return 0;
	}
	/* Latencies end when the batch is seen, not a loop later. */
	g->now = now_ns();
	for (i = 0; i < n; i++)
		handle_frame(g, blitz_xsk_data(&g->x, d[i].addr), d[i].len);
	blitz_xsk_refill(&g->x, d, n);
	return n;
}

/* ---- timers ---- */

/* Look at the timers of the connections whose turn it is: as many as the
 * time since the last call is of timer_period, so each is seen once a
 * period. */
static void run_timers(struct gen *g)
{
	uint64_t dt = g->now - g->timer_last;
	uint32_t n = g->p->conns, k;

	if (dt < g->timer_period)
		n = (uint32_t)((uint64_t)n * dt / g->timer_period);
	if (!n)
		return;
	g->timer_last = g->now;
	for (k = 0; k < n; k++) {
		struct conn *c = &g->conns[g->timer_pos];

		g->timer_pos =
			g->timer_pos + 1 == g->p->conns ? 0 : g->timer_pos + 1;

		if (g->now < c->deadline)
			continue;
		switch (c->state) {
		case C_IDLE:
			if (want_more(g)) {
				if (g->n_syn < g->max_syn) /* else next scan */
					conn_open(g, c);
			} else if (g->running) /* -n covered: look again later
						*/
				c->deadline = g->now + RTO_INIT_NS / 20;
			else
				c->deadline = UINT64_MAX;
			break;
		case C_SYN_SENT:
			if (++c->tries >= MAX_TRIES) {
				g->r->err_connect++;
				g->r->timeouts++;
				conn_release(g, c, g->now);
				break;
			}
			g->r->retransmits++;
			g->r->syn_retransmits++;
			g->cur.retransmits++;
			c->rto = c->rto * 2 > RTO_MAX_NS ? RTO_MAX_NS
							 : c->rto * 2;
			c->deadline = g->now + c->rto;
			send_seg(g, c, c->slot, c->iss, 0, F_SYN, NULL, 0,
				 true);
			break;
		case C_EST:
			if (!c->pending && c->ack_owed) {
				/* Still waiting for its turn: ACK now. */
				c->ack_owed = 0;
				conn_ack(g, c);
				c->deadline = UINT64_MAX;
				break;
			}
			if (!c->pending) {
				if (c->closing || g->p->close_each)
					conn_reset(g, c); /* no FIN came */
				else
					conn_ready(g, c);
				break;
			}
			if (c->unsent) {
				c->unsent = 0;
				c->deadline = g->now + c->rto;
				if (send_seg(g, c, c->slot, c->batch_seq,
					     c->rcv_nxt, F_ACK | F_PSH,
					     g->batch, g->batch_len, false)) {
					c->unsent = 1;
					c->deadline = g->now + 1000000;
				}
				break;
			}
			if (++c->tries >= MAX_TRIES) {
				g->r->err_timeout += c->pending;
				g->r->timeouts++;
				conn_reset(g, c);
				break;
			}
			g->r->retransmits++;
			g->r->data_retransmits++;
			g->cur.retransmits++;
			c->rto = c->rto * 2 > RTO_MAX_NS ? RTO_MAX_NS
							 : c->rto * 2;
			c->deadline = g->now + c->rto;
			if (c->snd_una != c->snd_nxt) {
				uint32_t off = c->snd_una - c->batch_seq;

				if (off < g->batch_len)
					send_seg(g, c, c->slot, c->snd_una,
						 c->rcv_nxt, F_ACK | F_PSH,
						 g->batch + off,
						 g->batch_len - off, false);
			} else {
				conn_ack(g, c);
			}
			break;
		}
	}
}

/* ---- setup and teardown ---- */

static int attach_prog(struct gen *g)
{
	const struct bench_params *p = g->p;
	uint32_t old_id = 0;
	int err, fd;

	g->old_prog_fd = -1;
	g->skel = bench_gen_bpf__open();
	if (!g->skel) {
		pr_warn("cannot open the bench XDP program: %s\n",
			strerror(errno));
		return -errno;
	}
	g->skel->rodata->target_v6 = (__u8)p->v6;
	memcpy((void *)&g->skel->rodata->target_ip_be, p->dst_addr, 4);
	memcpy((void *)g->skel->rodata->target_ip6, p->dst_addr, 16);
	g->skel->rodata->target_port_be = htons(p->dst_port);
	/* Every thread's ports: each thread has a slice of them. */
	g->skel->rodata->port_lo = g->all_port_lo;
	g->skel->rodata->port_hi = g->all_port_hi;
	err = bench_gen_bpf__load(g->skel);
	if (err) {
		pr_warn("cannot load the bench XDP program: %s\n",
			strerror(-err));
		return err;
	}
	fd = bpf_program__fd(g->skel->progs.bench_gen_rx);
	/* veth drops redirected and XDP_TX'd frames unless the receiving
	 * side runs a native program, so native first; whatever program was
	 * there (the testbed's xdp_pass) is put back afterwards. */
	g->xdp_flags = XDP_FLAGS_DRV_MODE;
	if (!bpf_xdp_query_id(g->ifindex, XDP_FLAGS_DRV_MODE, &old_id) &&
	    old_id) {
		g->old_prog_fd = bpf_prog_get_fd_by_id(old_id);
		if (g->old_prog_fd < 0) {
			err = -errno;
			pr_warn("cannot take a handle on XDP program %u of %s "
				"to restore it later: %s\n",
				old_id, p->ifname, strerror(errno));
			return err;
		}
	}
	err = bpf_xdp_attach(g->ifindex, fd, g->xdp_flags, NULL);
	if (err && g->old_prog_fd < 0) {
		g->xdp_flags = XDP_FLAGS_SKB_MODE;
		err = bpf_xdp_attach(g->ifindex, fd, g->xdp_flags, NULL);
	}
	if (err) {
		pr_warn("cannot attach the bench XDP program to %s: %s\n",
			p->ifname, strerror(-err));
		return err;
	}
	g->attached = true;
	g->r->xdp_mode = g->xdp_flags == XDP_FLAGS_DRV_MODE ? "native" : "skb";
	return 0;
}

static void detach_prog(struct gen *g)
{
	if (g->attached) {
		int err;

		if (g->old_prog_fd >= 0)
			err = bpf_xdp_attach(g->ifindex, g->old_prog_fd,
					     g->xdp_flags, NULL);
		else
			err = bpf_xdp_detach(g->ifindex, g->xdp_flags, NULL);
		if (err)
			pr_warn("could not restore the XDP program of %s: %s "
				"(check with `ip link show %s`)\n",
				g->p->ifname, strerror(-err), g->p->ifname);
		g->attached = false;
	}
	if (g->old_prog_fd >= 0)
		close(g->old_prog_fd);
	bench_gen_bpf__destroy(g->skel);
}

static int setup_xsk(struct gen *g)
{
	struct blitz_xsk_cfg xc = {
		.ifname = g->p->ifname,
		.queue = g->p->queue,
		.frames = UMEM_FRAMES_BIG,
		.min_frames = UMEM_FRAMES_SMALL,
		.tx_frames = TX_FRAMES,
		.frame_size = BENCH_FRAME_SIZE,
		.xdp_flags = g->xdp_flags,
	};
	int err;

	err = blitz_xsk_open(&g->x, &xc);
	if (err)
		return err;
	g->r->xsk_mode = blitz_xsk_mode(&g->x);
	/* RX: 3/4 of the frames for replies to batches and SYNs (a batch's
	 * replies may take two frames: a third of them); TX: the batches
	 * and SYNs leave OPEN_TX_RESERVE frames for ACKs and RSTs. */
	g->max_syn = MAX_SYN;
	g->max_out = g->x.n_rx / 3;
	if (g->max_out > g->x.n_tx - OPEN_TX_RESERVE * 2 - g->max_syn)
		g->max_out = g->x.n_tx - OPEN_TX_RESERVE * 2 - g->max_syn;
	if (g->max_out > MAX_OUT)
		g->max_out = MAX_OUT;
	err = xsk_socket__update_xskmap(g->x.xsk,
					bpf_map__fd(g->skel->maps.xsks));
	if (err) {
		pr_warn("cannot put the AF_XDP socket in the XSKMAP: %s\n",
			strerror(-err));
		return err;
	}
	return 0;
}

static void teardown_xsk(struct gen *g)
{
	blitz_xsk_log_stats(&g->x, "bench");
	blitz_xsk_close(&g->x);
}

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
	uint32_t i, est = 0;

	smp->responses = r->responses - *last_resp;
	smp->errors = bench_errors(r) - *last_err;
	if (r->n_series < BENCH_MAX_SERIES)
		r->series[r->n_series++] = *smp;
	if (g->p->progress) {
		for (i = 0; i < g->p->conns; i++)
			est += g->conns[i].state == C_EST;
		fprintf(g->p->progress,
			"[%3.0fs] %10.0f req/s  mean %8.1f us  conns %u/%u  "
			"errors %llu  retransmits %llu\n",
			(double)(g->now - t0) / 1e9,
			(double)smp->responses / dt,
			smp->lat_n ? (double)smp->lat_sum_ns /
					     (double)smp->lat_n / 1e3
				   : 0.0,
			est, g->p->conns, (unsigned long long)bench_errors(r),
			(unsigned long long)r->retransmits);
		fflush(g->p->progress);
	}
	memset(smp, 0, sizeof(*smp));
	*last_t = g->now;
	*last_resp = r->responses;
	*last_err = bench_errors(r);
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
	 * none was for RAMP_IDLE_NS after each was tried, or after RAMP_MAX_NS.
	 * Not with --close, where every request has its own connection. */
	for (i = 0; i < p->conns; i++)
		g->conns[i].deadline = UINT64_MAX;
	g->open_next = 0;
	g->ramping = !p->close_each;
	if (g->ramping)
		g->max_syn += g->max_out;
	ramp0 = g->last_est_ns = t0;

	while (g->running) {
		uint64_t t_iter = g->now;
		uint32_t n_rx = poll_rx(g);
		bool work;

		g->now = now_ns();
		if (g->ramping &&
		    (g->n_est == p->conns || g->now - ramp0 >= RAMP_MAX_NS ||
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
		if (g->now >= next_timer) {
			run_timers(g);
			next_timer = g->now + TIMER_TICK_NS;
		}
		if (g->open_next < p->conns)
			open_first(g);
		if (g->ramping)
			; /* no requests yet */
		else if (p->rate)
			dispatch_due(g);
		else if (g->n_idle)
			dispatch_ready(g);
		work = n_rx || g->x.tx_unkicked;
		flush_tx(g);
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

	/* Close every connection with a RST so the server frees it now (a
	 * kernel server would otherwise keep 100,000 of them): when the TX
	 * frames run out, wait for the kernel to send some, for 2 s at most
	 * in all. */
	end = now_ns() + 2000000000ULL;
	for (i = 0; i < p->conns; i++) {
		struct conn *c = &g->conns[i];
		uint32_t seq = c->state == C_EST ? c->snd_nxt : c->iss + 1;

		if (c->state == C_IDLE)
			continue;
		while (send_seg(g, c, c->slot, seq, c->rcv_nxt, F_RST | F_ACK,
				NULL, 0, false) &&
		       now_ns() < end) {
			flush_tx(g);
			usleep(50);
		}
		conn_release(g, c, UINT64_MAX);
	}
	/* Let the kernel send them before the socket goes. */
	for (i = 0; i < 1000 && g->x.n_tx_free < g->x.n_tx; i++) {
		flush_tx(g);
		if (g->x.n_tx_free < g->x.n_tx)
			usleep(100);
	}
}

static void gen_free(struct gen *g)
{
	free(g->conns);
	free(g->idle);
	free(g->slot_conn);
	free(g->hdr_pool);
	free(g->hdr_free);
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
	g->hdr_free = malloc(n_hdr * sizeof(*g->hdr_free));
	if (!g->conns || !g->idle || !g->slot_conn || !g->hdr_pool ||
	    !g->hdr_free) {
		gen_free(g);
		return -ENOMEM;
	}
	for (i = 0; i < g->n_slots; i++)
		g->slot_conn[i] = NO_CONN;
	for (i = 0; i < p->conns; i++)
		g->conns[i].hbuf = NO_BUF;
	for (i = 0; i < n_hdr; i++)
		g->hdr_free[i] = n_hdr - 1 - i;
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

int bench_run(const struct bench_params *p, struct bench_result *r)
{
	uint32_t nt = p->threads > 1 ? p->threads : 1, span, i;
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
	/* Thread i: queue + i, its share of connections, ports and rate. */
	span = (uint32_t)(p->port_hi - p->port_lo + 1) / nt;
	for (i = 0; i < nt; i++) {
		tp[i] = *p;
		tp[i].queue = p->queue + i;
		tp[i].conns = p->conns / nt + (i < p->conns % nt);
		tp[i].port_lo = (uint16_t)(p->port_lo + i * span);
		tp[i].port_hi = (uint16_t)(tp[i].port_lo + span - 1);
		tp[i].rate = p->rate / nt + (i < p->rate % nt);
		if (p->rate && !tp[i].rate)
			tp[i].rate = 1;
		tp[i].max_requests =
			p->max_requests ? p->max_requests / nt +
						  (i < p->max_requests % nt)
					: 0;
		if (p->max_requests && !tp[i].max_requests)
			tp[i].max_requests = 1;
		if (i)
			tp[i].progress = NULL; /* thread 0 speaks for all */
		err = gen_new(&tp[i], &tr[i], ifindex, &th[i].g);
		if (err)
			goto out;
		th[i].cpu = nt > 1 ? nth_allowed_cpu(i) : -1;
	}
	g0 = th[0].g;
	g0->all_port_lo = p->port_lo;
	g0->all_port_hi = p->port_hi;
	/* One XDP program for all: it redirects to XSKMAP[rx queue]. */
	err = attach_prog(g0);
	if (err)
		goto out_prog;
	for (i = 0; i < nt; i++) {
		th[i].g->skel = g0->skel;
		th[i].g->xdp_flags = g0->xdp_flags;
		err = setup_xsk(th[i].g);
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
		teardown_xsk(th[i].g);
out_prog:
	detach_prog(g0);
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
