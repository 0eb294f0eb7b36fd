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
#include "tcp_perf_frames.h"
int main(int argc, char **argv)
{
	syn_sack = argc > 3 && !strcmp(argv[3], "sack");
	struct tcp_core *c = perf_core(1024);
	uint64_t now = 1000000000ull;
	static uint8_t fr[NC][2048];
	struct tcp_frame tf[NC];
	uint32_t cseq[NC];
	for (int i = 0; i < NC; i++)
		perf_handshake(c, fr[0], i, &cseq[i], now, now);
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
