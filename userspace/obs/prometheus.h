/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prometheus.h - every engine's counters in the Prometheus text format
 * (version 0.0.4): the xdp engine's from its pinned per-CPU map (summed
 * over CPUs), the userspace engines' from the counter registry
 * (counters.h). One metric family per kind of count, named
 * blitz_<what>_total, with the labels interface, engine and, for the
 * counts of one cause (passed, dropped), reason:
 *
 *   # HELP blitz_requests_total HTTP requests answered
 *   # TYPE blitz_requests_total counter
 *   blitz_requests_total{interface="eth0",engine="xdp"} 1234
 *   blitz_passed_total{interface="eth0",engine="xdp",reason="host"} 56
 *
 * Each event has one name in every engine (the X-macro tables of the
 * BPF programs, the TCP core, epoll and dpdk use the same name for the
 * same event), and is counted under one engine: the XDP program's map is
 * the xdp engine's when the program answers; when it redirects to the
 * afxdp engine its counters go out as engine="afxdp"
 * (blitz_rx_frames_total, blitz_redirect_total, blitz_passed_total
 * {reason=...}) beside the TCP cores' (blitz_requests_total,
 * blitz_service_segments_total, ...), the program's rows for what the
 * cores count left out. So summing a family over the engine label counts
 * every request once.
 *
 * `blitz stats --prometheus` prints it, `serve --metrics` serves it.
 * Owns: the names and the grouping (a family's samples together, its
 * HELP and TYPE once). Must never write a counter.
 */
#ifndef BLITZ_PROMETHEUS_H
#define BLITZ_PROMETHEUS_H

#include <stdio.h>
#include <sys/types.h>

/* The xdp engine on ifname (its pins) when ifname is not NULL (every
 * pinned interface when xdp_all), and the registry's engines on ifname
 * (every one when NULL) whose owner is owner (any when 0). Returns how
 * many samples were written. */
int prometheus_write(FILE *f, const char *ifname, int xdp_all, pid_t owner);

#endif /* BLITZ_PROMETHEUS_H */
