/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dpdk_options.h - the command line of blitz-dpdk after EAL's `--`: one
 * table that its parser (dpdk/main.c), the argv `blitz serve --engine
 * dpdk` builds for it, and the generated usage texts share.
 *
 * Owns: the option names and codes. Must never depend on DPDK: libblitz
 * (which has no DPDK) holds it, so `blitz help` can print it.
 */
#ifndef BLITZ_DPDK_OPTIONS_H
#define BLITZ_DPDK_OPTIONS_H

#include "options.h"

enum {
	DPDK_OPT_TAP = OPT_CMD_BASE,
	DPDK_OPT_TABLE,
	DPDK_OPT_IDLE,
	DPDK_OPT_STATS,
	DPDK_OPT_LEARN,
	DPDK_OPT_TAKEOVER,
	DPDK_OPT_BUSY_POLL,
};

/* An lcore sleeps after this long without work (dpdk/idle.c). */
#define DPDK_IDLE_SPIN_US 50

extern const struct cmd_spec dpdk_cmd_spec;

#endif /* BLITZ_DPDK_OPTIONS_H */
