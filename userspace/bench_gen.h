/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_gen.h - the load generator behind `blitz bench`: an HTTP/1.1
 * client that speaks TCP itself over one AF_XDP socket, so the client
 * kernel's TCP stack is not what limits a benchmark.
 *
 * Background. bench_run() replaces the XDP program of the client interface
 * with bpf/bench_gen.bpf.c, which redirects the server's segments to the
 * generator's source ports [port_lo, port_hi] into the AF_XDP socket of
 * queue `queue`; every other frame (ARP included) still reaches the kernel.
 * The program that was attached before is put back on return.
 *
 *   UMEM: frames of BENCH_FRAME_SIZE bytes (8 MiB, or 4 MiB if that is
 *   refused); the first 3072 (1024) live in the fill/RX rings (owned by
 *   the kernel until received), the last 1024 are the TX pool (a free stack
 * owned by the generator, given to the kernel on TX and taken back from the
 * completion ring).
 *
 * Each of `conns` connections does a real three-way handshake from its own
 * source port, then sends `pipeline` GET requests in one segment and waits
 * for all the responses (closed loop), checking each one: status 200 and
 * Content-Length framing. Lost segments are retransmitted on a timer with
 * exponential backoff; a server that closes (FIN) or resets a connection
 * gets a new one on the next free source port.
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
#define BENCH_MAX_CONNS 20000
#define BENCH_MAX_BATCH 1400 /* bytes of pipelined requests per segment */

struct bench_params {
	const char *ifname; /* the client interface */
	uint32_t queue;	    /* its RX queue the socket binds to */
	struct in_addr src_ip, dst_ip;
	uint8_t src_mac[6], dst_mac[6];
	uint16_t dst_port;	   /* host order */
	uint16_t port_lo, port_hi; /* source ports, host order, inclusive */
	uint32_t conns;
	uint32_t duration_s;
	uint64_t max_requests; /* 0: no limit */
	uint32_t pipeline;     /* requests per segment, >= 1 */
	const char *path;      /* request target */
	FILE *progress;	       /* one line per second; NULL: none */
	volatile sig_atomic_t *stop;
};

/* Log-linear latency histogram in ns: exact below 64 ns, then 32 buckets
 * per power of two (about 3% resolution). */
#define BENCH_HIST_SUB 32
#define BENCH_HIST_BUCKETS (64 + 58 * BENCH_HIST_SUB)

struct bench_hist {
	uint64_t count[BENCH_HIST_BUCKETS];
	uint64_t n, sum_ns, max_ns;
};

void bench_hist_add(struct bench_hist *h, uint64_t ns);
/* The value (ns) below which a fraction q (0..1) of the samples lie. */
uint64_t bench_hist_percentile(const struct bench_hist *h, double q);

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
	uint64_t retransmits;
	uint64_t bytes_rx; /* TCP payload received */
	double elapsed_s;
	uint64_t busy_ns;     /* loop time spent on received frames */
	const char *xsk_mode; /* "zero-copy" or "copy" */
	const char *xdp_mode; /* "native" or "skb" */
	struct bench_hist hist;
};

static inline uint64_t bench_errors(const struct bench_result *r)
{
	return r->err_status + r->err_parse + r->err_reset + r->err_closed +
	       r->err_timeout + r->err_connect;
}

/* 0, or a negative errno with one line printed saying what failed. */
int bench_run(const struct bench_params *p, struct bench_result *r);

#endif /* BLITZ_BENCH_GEN_H */
