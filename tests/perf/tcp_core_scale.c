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
#include "tcp_perf_frames.h"

#define LAG 1200 /* the pure ACK 1200 requests (20 ms) after its GET */
static uint8_t fr[32][2048];
static uint32_t cseq[NC];
int main(int argc, char **argv)
{
	struct tcp_core *c = perf_core(131072);
	uint64_t now = 1000000000ull;
	struct tcp_frame tf[32];
	int R = argc > 1 ? atoi(argv[1]) : 1;
	for (int i = 0; i < NC; i++) {
		perf_handshake(c, fr[0], i, &cseq[i], now, now + 10000);
		now += 10000;
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
