/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metrics.h - `serve --metrics [ADDR:]PORT`: a small thread that answers
 * GET /metrics with the Prometheus text of this serve's engines
 * (prometheus.h). Bound to 127.0.0.1 unless ADDR says otherwise; one
 * request per connection, answered and closed; never on the hot path.
 *
 * Owns: its listening socket and thread. Must never block serve: a slow
 * scraper gets a 1 s timeout.
 */
#ifndef BLITZ_METRICS_H
#define BLITZ_METRICS_H

#include <sys/types.h>

struct metrics_server;

/* Bind spec ("9100", "127.0.0.1:9100", "[::1]:9100", "0.0.0.0:9100") and
 * start the thread serving ifname's xdp counters (NULL: none) and the
 * registry's engines of owner. 0, or -1 with one line printed. */
int metrics_start(const char *spec, const char *ifname, pid_t owner,
		  struct metrics_server **out);
void metrics_stop(struct metrics_server *m);
/* Is spec a bind spec metrics_start() takes? 0, or -1 with one line
 * printed: serve checks it with its other options, before it attaches. */
int metrics_spec_check(const char *spec);

#endif /* BLITZ_METRICS_H */
