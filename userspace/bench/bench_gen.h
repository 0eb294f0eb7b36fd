/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_gen.h - the load generator behind `blitz bench`: an HTTP/1.1
 * client that speaks TCP itself over one AF_XDP socket, so the client
 * kernel's TCP stack is not what limits a benchmark.
 *
 * Background. bench_run() replaces the XDP program of the client interface
 * with bpf/bench_gen.bpf.c, which redirects the server's segments to the
 * generator's source ports [port_lo, port_hi] (IPv4 or IPv6) into the
 * AF_XDP socket of queue `queue`; every other frame (ARP and neighbour
 * discovery included) still reaches the kernel.
 * The program that was attached before is put back on return.
 *
 *   UMEM: frames of BENCH_FRAME_SIZE bytes (8 MiB, or 4 MiB if that is
 *   refused); the first 3072 (1024) live in the fill/RX rings (owned by
 *   the kernel until received), the last 1024 are the TX pool (a free stack
 * owned by the generator, given to the kernel on TX and taken back from the
 * completion ring).
 *
 * Each of `conns` connections does a real three-way handshake from its own
 * source port (and address: n_src consecutive addresses multiply the
 * ports, for more than ~32k connections), then sends `pipeline` GET requests in
 * one segment and waits for all the responses, checking each one: status 200
 * and Content-Length framing. Lost segments are retransmitted on a timer with
 * exponential backoff; a server that closes (FIN) or resets a connection gets a
 * new one on the next free source port.
 *
 * Three load shapes:
 *   closed loop (default)  a connection sends its next batch as soon as the
 *                          last one is answered: the peak;
 *   open loop (rate)       batches are due at fixed times (rate requests/s
 *                          over all connections) and go out on the next
 *                          idle connection; latency runs from when a batch
 *                          was due, not when it went out, so a server that
 *                          stalls is charged for the requests it delayed
 *                          (the coordinated-omission correction of wrk2);
 *   close_each             one request per connection with "Connection:
 *                          close", a new handshake for the next (dperf's
 *                          connections-per-second shape).
 *
 * Threads (threads = N > 1): thread i binds an AF_XDP socket to RX queue
 * queue + i, owns 1/N of the connections, of the source ports and of the
 * rate, and runs on the i-th CPU the process may use. A reply is only seen
 * by the thread whose queue it lands on: on a NIC that is RSS's choice, on
 * veth the queue of the CPU that sent it (veth_select_rxq: smp_processor_id
 * % queues). Pin the server veth's NAPI of RX queue i to a CPU c with
 * c % N == i and the xdp engine's replies come back to the thread that
 * sent the request; replies that land elsewhere are counted (misrouted) and
 * dropped, their connections retransmit.
 *
 * Many connections: the first handshakes are made in order, at most 32
 * at once (plus the window while opening, before the run's clock starts);
 * at most `window` (default 192) batches are outstanding at once (closed
 * loop: the other established connections wait in a queue, in order, so
 * with -n conns each sends one request; open loop: due batches wait), so
 * what the server sends back always fits the RX ring (veth's: 256 frames)
 * and the UMEM. Header buffers for responses split across segments come
 * from a pool sized at start. Nothing walks the connections per packet:
 * timers are scanned a slice at a time, delayed ACKs wait in a FIFO.
 *
 * Contract: bench_run() makes syscalls only for setup, to kick TX
 * (sendto) and to wake RX when the ring asks; it allocates nothing after
 * setup. It runs on the calling thread until the duration passes,
 * max_requests responses are counted, or *stop becomes non-zero.
 */
#ifndef BLITZ_BENCH_GEN_H
#define BLITZ_BENCH_GEN_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>

#define BENCH_FRAME_SIZE 2048
/* Connections: at most half the source (address, port) slots, so a slot
 * comes back only after its old 4-tuple had time to leave the server's
 * TIME_WAIT; one address gives at most ~32k, n_src addresses n_src times
 * that. Every table is sized for `conns` at start. */
#define BENCH_MAX_CONNS 1000000
#define BENCH_MAX_SRC 64      /* source addresses */
#define BENCH_MAX_SERIES 3600 /* per-second samples kept */
#define BENCH_MAX_THREADS 64  /* and RX queues */
#define BENCH_MAX_BATCH 1400  /* bytes of pipelined requests per segment */

struct bench_params {
	const char *ifname;   /* the client interface */
	uint32_t queue;	      /* its RX queue the (first) socket binds to */
	uint32_t threads;     /* 0/1: one; N: one thread + socket per queue */
	int v6;		      /* IPv6 target */
	uint8_t src_addr[16]; /* network order; IPv4: the first 4 bytes */
	uint32_t n_src;	      /* 0/1: src_addr; N: src_addr + 0..N-1 */
	uint8_t dst_addr[16];
	const char *host; /* Host header value ("ip:port", "[ip6]:port") */
	uint8_t src_mac[6], dst_mac[6]; /* dst: the next hop's */
	uint16_t dst_port;		/* host order */
	uint16_t port_lo, port_hi; /* source ports, host order, inclusive */
	uint32_t conns;
	uint32_t duration_s;
	uint64_t max_requests; /* 0: no limit */
	uint32_t pipeline;     /* requests per segment, >= 1 */
	uint64_t rate;	       /* open loop: requests/s; 0: closed loop */
	int close_each;	       /* Connection: close, one request each */
	/* Batches outstanding at once (the handshakes of the ramp add 32);
	 * 0: 192, what veth's 256-frame ring holds while a NAPI thread waits
	 * for its CPU. More opens and answers a million connections sooner. */
	uint32_t window;
	/* The most seconds to open the connections before the run; 0: 10 s,
	 * or RAMP_PER_CONN_NS per connection when that is longer. */
	uint32_t ramp_max_s;
	const char *path; /* request target */
	FILE *progress;	  /* one line per second; NULL: none */
	volatile sig_atomic_t *stop;
};

/* Log-linear latency histogram in ns, HdrHistogram's layout: exact below
 * 256 ns, then 128 buckets per power of two (under 0.8% resolution) up to
 * 2^64 ns; 59 kB. */
#define BENCH_HIST_SUB_BITS 7
#define BENCH_HIST_SUB (1u << BENCH_HIST_SUB_BITS)
#define BENCH_HIST_BUCKETS \
	(2 * BENCH_HIST_SUB + (63 - BENCH_HIST_SUB_BITS) * BENCH_HIST_SUB)

struct bench_hist {
	uint64_t count[BENCH_HIST_BUCKETS];
	uint64_t n, sum_ns, max_ns;
};

void bench_hist_add(struct bench_hist *h, uint64_t ns);
/* The value (ns) below which a fraction q (0..1) of the samples lie. */
uint64_t bench_hist_percentile(const struct bench_hist *h, double q);

/* One second of a run. */
struct bench_sample {
	uint64_t responses, errors, retransmits, connects;
	uint64_t lat_sum_ns, lat_n, lat_max_ns;
};

struct bench_result {
	uint64_t responses;   /* complete responses, good or not */
	uint64_t ok;	      /* 200 with correct framing */
	uint64_t err_status;  /* a status other than 200 */
	uint64_t err_parse;   /* bad status line, no Content-Length, ... */
	uint64_t err_reset;   /* RST with requests outstanding */
	uint64_t err_closed;  /* FIN with requests outstanding */
	uint64_t err_timeout; /* retransmissions exhausted */
	uint64_t err_connect; /* handshake refused or timed out */
	uint64_t connects;    /* handshakes completed */
	uint64_t retransmits; /* syn_retransmits + data_retransmits */
	uint64_t syn_retransmits;
	uint64_t data_retransmits; /* requests (or ACKs) sent again */
	uint64_t rst_rx;	   /* RSTs received on a live connection */
	uint64_t rst_tx;	   /* RSTs we sent (stray segments, give-ups) */
	uint64_t timeouts;	   /* connections given up after MAX_TRIES */
	uint64_t tx_no_frame;	   /* sends that found no free TX frame */
	uint64_t late_max_ns; /* open loop: the most a batch went out late */
	uint64_t misrouted;   /* replies on another thread's queue (dropped) */
	uint64_t hdr_pool_empty;   /* split headers with no buffer (reset) */
	uint64_t hdr_cache_hits;   /* headers framed by the last one's bytes */
	uint64_t peak_established; /* connections established at once */
	uint64_t conns_answered;   /* connections that got a 200 (each once) */
	uint32_t threads;
	uint64_t bytes_rx; /* TCP payload received */
	double elapsed_s;
	double ramp_s;	      /* opening the connections, before elapsed_s */
	uint64_t busy_ns;     /* loop iterations that received or sent */
	const char *xsk_mode; /* "zero-copy" or "copy" */
	const char *xdp_mode; /* "native" or "skb" */
	struct bench_hist hist;
	uint32_t n_series;
	struct bench_sample series[BENCH_MAX_SERIES];
};

static inline uint64_t bench_errors(const struct bench_result *r)
{
	return r->err_status + r->err_parse + r->err_reset + r->err_closed +
	       r->err_timeout + r->err_connect;
}

/* 0, or a negative errno with one line printed saying what failed. */
int bench_run(const struct bench_params *p, struct bench_result *r);

#endif /* BLITZ_BENCH_GEN_H */
