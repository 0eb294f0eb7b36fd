/* SPDX-License-Identifier: GPL-2.0 */
/*
 * counters_xdp.h - the BPF programs' counters of one interface, and whose
 * they are.
 *
 * The XDP and TC programs count into one pinned per-CPU map per interface
 * (BLITZ_COUNTERS), whose one entry holds a struct blitz_counters per CPU. What
 * it holds belongs to the engine the program serves: the xdp engine when it
 * answers (mode xdp); the afxdp engine when it redirects (mode afxdp: then it
 * counts rx_frames, service_segments, redirect, pass_* and drop_martian, and
 * every answer is the afxdp engine's TCP cores', in the counter registry,
 * counters.h). The afxdp engine never writes this map, so every event is
 * counted once, under one engine, and under one name in every engine.
 *
 * `blitz stats IF` with --json or -i shows the interface in the map's
 * vocabulary: the map plus, in afxdp mode, what the afxdp engine's cores
 * counted under the names the program leaves to them (requests,
 * http_errors, synack, replies, tx_bytes, finack, drop_bad_cookie,
 * drop_rst).
 *
 * Owns: reading the map (summed over CPUs), the program's mode, that
 * interface view. Must never write a counter.
 */
#ifndef BLITZ_COUNTERS_XDP_H
#define BLITZ_COUNTERS_XDP_H

#include <stdbool.h>
#include <stdint.h>

#include "../bpf/blitz_shared.h"

/* The map fd has this build's layout (one entry: a struct
 * blitz_counters per CPU): 0, -EPROTO when it has another (an older
 * blitz's map had an entry per counter), or -errno. */
int counters_xdp_layout(int fd);

/* The per-CPU map fd's counters summed over the possible CPUs into
 * tot[BLITZ_CNT_MAX]. 0, or -errno: -EPROTO for a map of another layout,
 * which is never read. */
int counters_xdp_read(int fd, uint64_t tot[BLITZ_CNT_MAX]);

/* The counters map pinned for ifname (BLITZ_PIN_COUNTERS): an fd, or
 * -ENOENT when nothing is pinned, -EPROTO when only an older blitz's
 * map is (another layout), -EINVAL for a bad name, or -errno. */
int counters_xdp_open(const char *ifname);

/* What counters_xdp_read()'s or _open()'s error means, for a message. */
const char *counters_xdp_strerror(int err);

/* Counter k's name (BLITZ_COUNTERS: "requests") and help text; "" when
 * k is out of range. */
const char *counters_xdp_name(unsigned int k);
const char *counters_xdp_help(unsigned int k);

/* The program pinned for ifname redirects to the afxdp engine (its
 * config says mode afxdp); false when it answers, or nothing is pinned. */
bool counters_xdp_is_afxdp(const char *ifname);

/* Counter k is one the program leaves to the afxdp engine's TCP cores in
 * afxdp mode (it never counts it then). */
bool counters_xdp_afxdp_key(unsigned int k);

/* Counter k is one the afxdp engine's TCP cores count in afxdp mode under
 * the same name: the keys above, service_segments and retransmits (the program
 * counts it too, before it redirects). Prometheus leaves the program's out. */
bool counters_xdp_core_counts(unsigned int k);

/* Add to tot what the afxdp engines on ifname counted (the registry's
 * areas) under the keys of counters_xdp_afxdp_key(). */
void counters_xdp_add_afxdp(const char *ifname, uint64_t tot[BLITZ_CNT_MAX]);

#endif /* BLITZ_COUNTERS_XDP_H */
