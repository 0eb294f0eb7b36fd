// SPDX-License-Identifier: GPL-2.0
/*
 * registry.c - blitz-dpdk's counters in the counter registry
 * (userspace/counters.h): one area, engine "dpdk", a slot per queue, each
 * the queue's own counters (DPDK_COUNTERS) then its TCP core's
 * (TCP_CORE_COUNTERS), so `blitz stats` and Prometheus show them under
 * serve (or beside a blitz-dpdk run alone).
 *
 * Owns: the area. Each lcore writes its own slot, every 100 ms of its
 * TSC, with plain aligned stores: no lock, no syscall on the lcore.
 * Must never be written by two lcores for one slot.
 */
#include <stdlib.h>
#include <string.h>

#include "dpdk_engine.h"
#include "counters.h"
#include "tcp_core.h"

#define N_DPDK (sizeof(struct dpdk_stats) / sizeof(uint64_t))
#define N_ALL (N_DPDK + TCP_CORE_N_COUNTERS)
#define PUBLISH_PER_SEC 10

static const struct counter_name dpdk_names[] = {
#define DPDK_CNT_ROW(id, help) {#id, help},
	DPDK_COUNTERS(DPDK_CNT_ROW)
#undef DPDK_CNT_ROW
};

static struct counters_area area;
static uint64_t *base; /* [nb_queues][N_ALL]: the area's values at start */

void registry_open(struct engine *eng)
{
	struct counter_name names[N_ALL];
	unsigned int q;

	memcpy(names, dpdk_names, sizeof(dpdk_names));
	memcpy(names + N_DPDK, tcp_core_counter_names,
	       sizeof(tcp_core_counter_names));
	if (counters_create(&area, "dpdk", eng->takeover_if, eng->svc.port,
			    names, N_ALL, eng->nb_queues))
		return;
	base = calloc((size_t)eng->nb_queues * N_ALL, sizeof(uint64_t));
	if (!base) {
		counters_close(&area, true);
		return;
	}
	/* What a killed blitz-dpdk of the same serve had published. */
	for (q = 0; q < eng->nb_queues; q++)
		memcpy(base + (size_t)q * N_ALL, counters_slot(&area, q),
		       N_ALL * sizeof(uint64_t));
}

void registry_publish(struct worker *w, bool now)
{
	const uint64_t *st = (const uint64_t *)&w->st, *b;
	uint64_t *slot;
	unsigned int k;

	if (!base || (!now && w->now_tsc < w->next_publish_tsc))
		return;
	w->next_publish_tsc = w->now_tsc + w->eng->tsc_hz / PUBLISH_PER_SEC;
	b = base + (size_t)w->queue * N_ALL;
	slot = counters_slot(&area, w->queue);
	for (k = 0; k < N_DPDK; k++)
		counters_store(slot, k, b[k] + st[k]);
	if (w->tcp)
		tcp_core_counters_publish(tcp_glue_counters(w), b + N_DPDK,
					  slot + N_DPDK);
}

void registry_close(void)
{
	if (base)
		counters_close(&area, true);
	free(base);
	base = NULL;
}
