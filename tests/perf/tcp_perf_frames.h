/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_perf_frames.h - the client side of the TCP core's measurement
 * programs (tcp_core_cost.c, tcp_core_scale.c): the frames they feed the
 * core and the I/O ops that take its replies. Connection i is
 * 10.0.0.(2 + i / 50000):(10000 + i % 50000) -> 10.0.0.1:8080; the
 * includer defines NC (connections) first. Must never touch a network.
 */
#ifndef TCP_PERF_FRAMES_H
#define TCP_PERF_FRAMES_H
#include <string.h>
#include "csum.h"
#include "http.h"
#include "tcp_core.h"

static uint8_t txb[128][2048];
static uint32_t txn;

static uint32_t fa(void *c, struct tcp_frame *f, uint32_t n)
{
	(void)c;
	for (uint32_t i = 0; i < n; i++) {
		f[i].data = txb[txn++ % 128];
		f[i].cap = 2048;
	}
	return n;
}
static uint32_t srvseq[NC]; /* next server seq per connection */
static void fs(void *c, struct tcp_frame *f, uint32_t n)
{
	(void)c;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *d = f[i].data;
		uint8_t *th = d + 34;
		int port = (th[2] << 8 | th[3]) - 10000 + (d[33] - 2) * 50000;
		if (port < 0 || port >= NC)
			continue;
		uint32_t seq = (uint32_t)th[4] << 24 | th[5] << 16 |
			       th[6] << 8 | th[7];
		uint32_t tl = (d[16] << 8 | d[17]) - 20 - (th[12] >> 4) * 4;
		if (th[13] & 2)
			seq++;
		srvseq[port] = seq + tl;
	}
}
static const struct tcp_io_ops ops = {fa, fs, NULL};
static int syn_sack; /* third argument "sack": SYNs offer SACK */
static uint32_t mk(uint8_t *f, int port, uint8_t flags, uint32_t seq,
		   uint32_t ack, const void *data, uint32_t len)
{
	static const uint8_t sack_perm[4] = {1, 1, 4, 2};
	if (flags == 2 && syn_sack) {
		data = sack_perm;
		len = 4;
	}
	uint8_t *ip = f + 14, *th = f + 34;
	memset(f, 0, 54);
	f[12] = 8;
	ip[0] = 0x45;
	uint32_t tl = 20 + len;
	ip[2] = (20 + tl) >> 8;
	ip[3] = (uint8_t)(20 + tl);
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 10;
	ip[15] = (uint8_t)(2 + port / 50000);
	ip[16] = 10;
	ip[19] = 1;
	th[0] = (10000 + port % 50000) >> 8;
	th[1] = (uint8_t)(10000 + port % 50000);
	th[2] = 0x1f;
	th[3] = 0x90;
	th[4] = seq >> 24;
	th[5] = seq >> 16;
	th[6] = seq >> 8;
	th[7] = seq;
	th[8] = ack >> 24;
	th[9] = ack >> 16;
	th[10] = ack >> 8;
	th[11] = ack;
	th[12] = flags == 2 && syn_sack ? 0x60 : 0x50;
	th[13] = flags;
	th[14] = 0xff;
	th[15] = 0xff;
	memcpy(th + 20, data, len);
	/* Correct sums: the core drops a segment whose sums do not verify. */
	uint16_t s = csum_finish(csum_add(0, ip, 20));
	ip[10] = s >> 8;
	ip[11] = (uint8_t)s;
	s = csum_finish(
		csum_add(csum_add(IPPROTO_TCP + tl, ip + 12, 8), th, tl));
	th[16] = s >> 8;
	th[17] = (uint8_t)s;
	return 54 + len;
}

static const char GET[] = "GET / HTTP/1.1\r\nHost: bench\r\n\r\n";

/* A core answering "Hello World!" on port 8080, its table table_size. */
static struct tcp_core *perf_core(uint32_t table_size)
{
	static struct http_responses hr;
	struct tcp_core_params p = {.port = 8080,
				    .resp = &hr,
				    .table_size = table_size,
				    .secret = {1, 2},
				    .ops = &ops};

	http_responses_build(&hr, "Hello World!", 12, NULL, 0, NULL, 0);
	return tcp_core_new(&p);
}

/* Connection i's handshake, in frame buffer fr: its SYN at syn_at, its
 * ACK of the SYN-ACK at ack_at; *cseq is its next sequence number. */
static void perf_handshake(struct tcp_core *c, uint8_t *fr, int i,
			   uint32_t *cseq, uint64_t syn_at, uint64_t ack_at)
{
	struct tcp_frame tf;

	*cseq = 1000 + (uint32_t)i;
	tf = (struct tcp_frame){fr, mk(fr, i, 2, *cseq, 0, "", 0), 2048, 0};
	tcp_core_rx_burst(c, &tf, 1, syn_at);
	++*cseq;
	tf = (struct tcp_frame){fr, mk(fr, i, 0x10, *cseq, srvseq[i], "", 0),
				2048, 0};
	tcp_core_rx_burst(c, &tf, 1, ack_at);
}

#endif /* TCP_PERF_FRAMES_H */
