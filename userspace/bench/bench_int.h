/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_int.h - inside the load generator (bench_gen.h is its interface):
 * the connection table and the generator's state shared by bench_gen.c
 * (setup, run loop), bench_tcp.c (TCP client), bench_http.c (response
 * checker) and bench_xdp.c (XDP program and AF_XDP socket).
 *
 * Owns: the sizes and timers of the generator and its two structs. Must
 * never be included outside userspace/bench.
 */
#ifndef BLITZ_BENCH_INT_H
#define BLITZ_BENCH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <linux/tcp.h>

#include "bench_gen.h"
#include "wire.h"
#include "xsk.h"

struct bench_gen_bpf;

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
/* Those ACKs wait in a FIFO (their due times only grow), not for the
 * timer scan, which passes a connection only every 200 ms at a million:
 * later than the server's 200 ms RTO, which then resends the response. A
 * full FIFO leaves them to the scan. */
#define DELACK_FIFO 65536
#define RAMP_MAX_NS (10 * 1000000000ULL)
/* A million connections take longer to open than 10 s: the ramp may last
 * this long per connection when that is more. */
#define RAMP_PER_CONN_NS 100000ULL
#define RAMP_IDLE_NS (500 * 1000000ULL)
#define OUR_MSS 1460  /* IPv4 on a 1500-byte link */
#define OUR_MSS6 1440 /* IPv6 */
#define OUR_WINDOW 65535
#define NO_CONN UINT32_MAX

#define F_FIN TCPHDR_FIN
#define F_SYN TCPHDR_SYN
#define F_RST TCPHDR_RST
#define F_PSH TCPHDR_PSH
#define F_ACK TCPHDR_ACK

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
	uint8_t answered;   /* a 200 came on it (counted in conns_answered) */
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
	int link_fd;	 /* the run's bpf_link when nothing was, else -1 */
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
	uint64_t ramp_max_ns; /* the longest the ramp may take */
	uint64_t last_est_ns; /* when one was last established */
	/* delayed ACKs owed by queued connections, oldest first */
	struct {
		uint32_t conn;
		uint64_t due;
	} * delack;
	uint32_t dl_head, dl_n;
	/* open loop */
	uint64_t next_due, interval_ns;
	/* the second being sampled */
	struct bench_sample cur;
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* bench_tcp.c */
void bg_conn_release(struct gen *g, struct conn *c, uint64_t reconnect_at);
void bg_delack_due(struct gen *g);
void bg_dispatch_due(struct gen *g);
void bg_dispatch_ready(struct gen *g);
void bg_flush_tx(struct gen *g);
void bg_hdr_put(struct gen *g, struct conn *c);
void bg_open_first(struct gen *g);
uint32_t bg_poll_rx(struct gen *g);
void bg_run_timers(struct gen *g);
int bg_send_seg(struct gen *g, const struct conn *c, uint32_t slot,
		uint32_t seq, uint32_t ack, uint8_t flags, const void *data,
		uint32_t len, bool syn_opts);

/* bench_http.c */
int bg_consume(struct gen *g, struct conn *c, const char *d, uint32_t len);

/* bench_xdp.c */
int bg_xdp_attach(struct gen *g);
void bg_xdp_detach(struct gen *g);
int bg_xsk_setup(struct gen *g);
void bg_xsk_teardown(struct gen *g);

#endif /* BLITZ_BENCH_INT_H */
