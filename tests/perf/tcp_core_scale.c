// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_core_scale.c - the TCP core's cost per request at 100,000
 * connections, as blitz bench -c 100000 drives it: each connection's GET
 * in turn (one every 16.7 us, 60,000 a second) and its pure ACK of the
 * response 20 ms (1,200 requests) later, the client's delayed ACK; the
 * timers polled after each burst of 32, so what fires 200 ms on fires.
 * Count instructions and first-level misses per request with callgrind:
 *
 *   cc -O2 $(find userspace -name '*.h' -printf '-I%h\n' | sort -u) \
 *      -Ibpf -Ibuild tests/perf/tcp_core_scale.c build/libblitz.a \
 *      -o /tmp/tcp_core_scale -lxdp -lbpf -lelf -lz -lpthread -lm
 *   valgrind --tool=callgrind --cache-sim=yes \
 *      --toggle-collect=tcp_core_rx_burst \
 *      --toggle-collect=tcp_core_poll_timers /tmp/tcp_core_scale R
 * for R = 1 and 2 (per request = difference / 100,000).
 *
 * Not built by make: a measurement, not a test. Must never touch a network.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "csum.h"
#include "tcp_core.h"
#include "http.h"
#define NC 100000
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
#define LAG 1200 /* the pure ACK 1200 requests (20 ms) after its GET */
static uint8_t fr[32][2048];
static uint32_t cseq[NC];
int main(int argc, char **argv)
{
	static struct http_responses hr;
	http_responses_build(&hr, "Hello World!", 12, NULL, 0, NULL, 0);
	struct tcp_core_params p = {.port = 8080,
				    .resp = &hr,
				    .table_size = 131072,
				    .secret = {1, 2},
				    .ops = &ops};
	struct tcp_core *c = tcp_core_new(&p);
	uint64_t now = 1000000000ull;
	struct tcp_frame tf[32];
	int R = argc > 1 ? atoi(argv[1]) : 1;
	for (int i = 0; i < NC; i++) {
		cseq[i] = 1000 + i;
		tf[0] = (struct tcp_frame){
			fr[0], mk(fr[0], i, 2, cseq[i], 0, "", 0), 2048, 0};
		tcp_core_rx_burst(c, tf, 1, now);
		cseq[i]++;
		now += 10000;
		tf[0] = (struct tcp_frame){
			fr[0], mk(fr[0], i, 0x10, cseq[i], srvseq[i], "", 0),
			2048, 0};
		tcp_core_rx_burst(c, tf, 1, now);
		if (i % 32 == 0)
			tcp_core_poll_timers(c, now);
	}
	printf("active %u\n", tcp_core_active(c));
	for (int r = 0; r < R; r++) {
		for (int i = 0; i < NC + LAG; i += 32) {
			int n = 0;
			for (int j = i; j < i + 32; j++) {
				if (j < NC) {
					tf[n] = (struct tcp_frame){
						fr[n],
						mk(fr[n], j, 0x18, cseq[j],
						   srvseq[j], GET,
						   sizeof(GET) - 1),
						2048, 0};
					cseq[j] += sizeof(GET) - 1;
					n++;
				}
			}
			if (n)
				tcp_core_rx_burst(c, tf, n, now);
			n = 0;
			for (int j = i - LAG; j < i - LAG + 32; j++) {
				if (j >= 0 && j < NC) {
					tf[n] = (struct tcp_frame){
						fr[n],
						mk(fr[n], j, 0x10, cseq[j],
						   srvseq[j], "", 0),
						2048, 0};
					n++;
				}
			}
			if (n)
				tcp_core_rx_burst(c, tf, n, now);
			now += 32 * 16667;
			tcp_core_poll_timers(c, now);
		}
	}
	const struct tcp_core_counters *k = tcp_core_counters(c);
	printf("requests %llu retransmits %llu resets %llu\n",
	       (unsigned long long)k->requests,
	       (unsigned long long)k->retransmits,
	       (unsigned long long)k->connections_reset);
	return 0;
}
