/* SPDX-License-Identifier: GPL-2.0 */
/*
 * counters.h - the counter registry of the userspace engines: one shared
 * memory area per running engine, a file under COUNTERS_DIR that the
 * engine maps and writes with plain stores, and `blitz stats` (or serve's
 * /metrics) maps read-only. The xdp engine's counters are the BPF maps
 * (pinned under BLITZ_PIN_ROOT); together they are every engine's.
 *
 *   file: struct counters_hdr | n × struct counters_def | slots × n u64
 *
 * A counter is a row of the table: its name ("requests"), what it means,
 * and a reason when it is one cause of a family ("pass_host": family
 * "passed", reason "host"). Values are per slot (a thread, a queue, or
 * one publisher): the writer of a slot is the only one, so no atomics
 * beyond aligned 64-bit stores; a reader sums the slots.
 *
 * Owns: the file format, its creation (0644, replaced atomically), and
 * the liveness check (the writer's pid and start time). Must never make a
 * syscall on the write path: counters_slot() is a pointer, nothing more.
 */
#ifndef BLITZ_COUNTERS_H
#define BLITZ_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define COUNTERS_DIR "/run/blitz"
#define COUNTERS_MAGIC "BLITZCN1"
#define COUNTERS_NAME_LEN 32
#define COUNTERS_HELP_LEN 80
#define COUNTERS_MAX 96

struct counters_def {
	char name[COUNTERS_NAME_LEN];	/* "requests", "pass_host" */
	char family[COUNTERS_NAME_LEN]; /* "requests", "passed" */
	char reason[COUNTERS_NAME_LEN]; /* "", "host" */
	char help[COUNTERS_HELP_LEN];
};

struct counters_hdr {
	char magic[8];
	uint32_t n_counters, n_slots;
	char engine[16];
	char ifname[16]; /* "": every interface */
	int64_t pid;	 /* the serve that owns the engine */
	uint64_t starttime, netns;
	uint32_t port;
	uint32_t pad;
};

struct counters_area {
	struct counters_hdr *hdr;
	struct counters_def *defs;
	uint64_t *values; /* [n_slots][n_counters] */
	size_t size;
	char path[128];
};

/* One counter as an engine names it, before it is in an area. */
struct counter_name {
	const char *name, *help;
};

/*
 * Create the area of an engine of the serve pid owner on ifname (NULL:
 * every interface) with the counters names[0..n) (family and reason are
 * derived: "pass_X" -> passed/X, "drop_X" -> dropped/X) and n_slots
 * slots, all zero, or the values of the area it replaces when that has
 * the same counters and slots (a child engine that serve restarted: its
 * totals never go back; the writer reads them as its base). The file is
 * counters-<owner pid>-<engine>; the owner is the serve: this process,
 * or for a child engine (afxdp, blitz-dpdk) its parent when that is
 * `blitz`. 0, or -errno with one line printed.
 */
int counters_create(struct counters_area *a, const char *engine,
		    const char *ifname, unsigned int port,
		    const struct counter_name *names, unsigned int n,
		    unsigned int n_slots);
/* Slot i's values, indexed like names[]: written by one writer only. */
static inline uint64_t *counters_slot(const struct counters_area *a,
				      unsigned int i)
{
	return a->values + (size_t)i * a->hdr->n_counters;
}
/* Store v into slot's counter k, as one aligned 64-bit store. */
static inline void counters_store(uint64_t *slot, unsigned int k, uint64_t v)
{
	__atomic_store_n(&slot[k], v, __ATOMIC_RELAXED);
}
/* Unmap; remove the file too when remove (a clean exit). */
void counters_close(struct counters_area *a, bool remove);

/* Reading: every area in COUNTERS_DIR whose owner is alive in this
 * network namespace, mapped read-only; fn returns non-zero to stop. */
int counters_each(int (*fn)(const struct counters_area *a, void *ctx),
		  void *ctx);
/* The sum over slots of counter k. */
uint64_t counters_sum(const struct counters_area *a, unsigned int k);
/* Remove the areas of serves that are gone (like serve_state's sweep). */
void counters_sweep(void);

#endif /* BLITZ_COUNTERS_H */
