/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log.h - the one logging layer of the CLI and the engines. Messages are
 * written for the user: say what failed and what to try. libbpf's and
 * libxdp's own chatter is routed here and shown only with -v.
 */
#ifndef BLITZ_LOG_H
#define BLITZ_LOG_H

enum blitz_log_level { LOG_WARN = 0, LOG_INFO = 1, LOG_DEBUG = 2 };

extern int blitz_log_level; /* LOG_INFO by default; -v raises it */

void blitz_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Route libbpf and libxdp messages through blitz_log at LOG_DEBUG. */
void blitz_log_quiet_libs(void);

#define pr_warn(...) blitz_log(LOG_WARN, __VA_ARGS__)
#define pr_info(...) blitz_log(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) blitz_log(LOG_DEBUG, __VA_ARGS__)

#endif /* BLITZ_LOG_H */
