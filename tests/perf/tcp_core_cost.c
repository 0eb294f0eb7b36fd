// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_core_cost.c - the TCP core's cost per request, without a NIC: 256
 * keep-alive connections, each round one GET segment and one ACK of the
 * response per connection, in bursts of 32 through the fake frame
 * interface. Prints ns per request (frame building included); for a figure
 * that does not depend on the machine's load, count instructions:
 *
 *   cc -O2 $(find userspace -name '*.h' -printf '-I%h\n' | sort -u) \
 *      -Ibpf -Ibuild tests/perf/tcp_core_cost.c build/libblitz.a \
 *      -o /tmp/tcp_core_cost -lxdp -lbpf -lelf -lz -lpthread -lm
 *   valgrind --tool=callgrind /tmp/tcp_core_cost 100 1
 *   valgrind --tool=callgrind /tmp/tcp_core_cost 300 1
 * (instructions per request = difference of the totals / (200 * 256)).
 * The core's own share: add --toggle-collect=tcp_core_rx_burst
 * --toggle-collect=tcp_core_poll_timers (frame building left out). A
 * third argument "sack" makes the SYNs offer SACK, as Linux clients do.
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
#define NC 256
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
		int port = (th[2] << 8 | th[3]) - 10000;
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
	ip[15] = 2;
	ip[16] = 10;
	ip[19] = 1;
	th[0] = (10000 + port) >> 8;
	th[1] = (uint8_t)(10000 + port);
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
int main(int argc, char **argv)
{
	static struct http_responses hr;
	syn_sack = argc > 3 && !strcmp(argv[3], "sack");
	http_responses_build(&hr, "Hello World!", 12, NULL, 0, NULL, 0);
	struct tcp_core_params p = {.port = 8080,
				    .resp = &hr,
				    .table_size = 1024,
				    .secret = {1, 2},
				    .ops = &ops};
	struct tcp_core *c = tcp_core_new(&p);
	uint64_t now = 1000000000ull;
	static uint8_t fr[NC][2048];
	struct tcp_frame tf[NC];
	uint32_t cseq[NC];
	for (int i = 0; i < NC; i++) {
		cseq[i] = 1000 + i;
		tf[0] = (struct tcp_frame){
			fr[0], mk(fr[0], i, 2, cseq[i], 0, "", 0), 2048, 0};
		tcp_core_rx_burst(c, tf, 1, now);
		cseq[i]++;
		tf[0] = (struct tcp_frame){
			fr[0], mk(fr[0], i, 0x10, cseq[i], srvseq[i], "", 0),
			2048, 0};
		tcp_core_rx_burst(c, tf, 1, now);
	}
	printf("active %u\n", tcp_core_active(c));
	double res[7];
	int R = argc > 1 ? atoi(argv[1]) : 2000;
	int RUNS = argc > 2 ? atoi(argv[2]) : 7;
	for (int run = 0; run < RUNS; run++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int r = 0; r < R; r++) {
			for (int i = 0; i < NC; i++) {
				tf[i] = (struct tcp_frame){
					fr[i],
					mk(fr[i], i, 0x18, cseq[i], srvseq[i],
					   GET, sizeof(GET) - 1),
					2048, 0};
				cseq[i] += sizeof(GET) - 1;
			}
			for (int i = 0; i < NC; i += 32)
				tcp_core_rx_burst(c, tf + i, 32, now);
			for (int i = 0; i < NC; i++) {
				tf[i] = (struct tcp_frame){fr[i],
							   mk(fr[i], i, 0x10,
							      cseq[i],
							      srvseq[i], "", 0),
							   2048, 0};
			}
			for (int i = 0; i < NC; i += 32)
				tcp_core_rx_burst(c, tf + i, 32, now);
			now += 100000;
			tcp_core_poll_timers(c, now);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		res[run] = ((b.tv_sec - a.tv_sec) * 1e9 +
			    (b.tv_nsec - a.tv_nsec)) /
			   ((double)R * NC);
	}
	for (int i = 0; i < RUNS; i++)
		for (int j = i + 1; j < RUNS; j++)
			if (res[j] < res[i]) {
				double t = res[i];
				res[i] = res[j];
				res[j] = t;
			}
	const struct tcp_core_counters *k = tcp_core_counters(c);
	printf("requests %llu resets %llu ; ns/request (incl. building frames) "
	       "median %.1f min %.1f\n",
	       (unsigned long long)k->requests,
	       (unsigned long long)k->connections_reset, res[RUNS / 2], res[0]);
	return 0;
}
