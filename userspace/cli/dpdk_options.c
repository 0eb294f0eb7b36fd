// SPDX-License-Identifier: GPL-2.0
/*
 * dpdk_options.c - blitz-dpdk's option table (dpdk_options.h).
 */
#include "dpdk_options.h"
#include "tcp_core.h"

static const struct opt_spec dpdk_opts[] = {
	{DPDK_OPT_TAP, "tap", "IFNAME",
	 "exception path: create TAP IFNAME (same MAC as the port; give it the "
	 "service addresses) for all other traffic",
	 0, 0},
	{DPDK_OPT_TAKEOVER, "takeover", "IFNAME",
	 "af_packet/af_xdp: move IFNAME's addresses and routes to the TAP "
	 "while running (serve them unless -a), back at exit",
	 0, 0},
	{DPDK_OPT_TABLE, "table", "N",
	 "connections per queue (default %d), at most " TCP_CORE_CONN_BYTES_STR
	 " bytes of memory a connection, allocated at start",
	 TCP_CORE_DEFAULT_TABLE, 0},
	{DPDK_OPT_IDLE, "idle-timeout", "SEC",
	 "close a keep-alive connection idle this long (default 60)", 0, 0},
	{DPDK_OPT_LEARN, "learn", "arp|all",
	 "neighbours from ARP only, or also from IP packets (default)", 0, 0},
	{DPDK_OPT_BUSY_POLL, "busy-poll", NULL,
	 "spin when idle, even on a port whose frames come through kernel "
	 "sockets (af_packet, af_xdp: by default an lcore then sleeps in "
	 "poll() "
	 "after %d us without work)",
	 DPDK_IDLE_SPIN_US, 0},
	{DPDK_OPT_STATS, "stats", "SECONDS",
	 "print counters every SECONDS (and on SIGUSR1)", 0, 0},
	{0},
};

const struct cmd_spec dpdk_cmd_spec = {
	.name = "blitz-dpdk",
	.prog = "blitz-dpdk [EAL args] --",
	.summary = "the dpdk engine's own binary",
	.about =
		"The TCP core on a DPDK port, with ARP, ICMP and a TAP "
		"exception path; `blitz serve <ifname> --engine dpdk` runs it. "
		"At least one service address (-a or --takeover).",
	.notes = "One lcore per queue: -l 0-1 serves 2 queues (af_packet: add "
		 "qpairs=2 to its --vdev). Testbed: --no-huge -m 512 --no-pci "
		 "--no-shconf --vdev=net_af_packet0,iface=VETH,qdisc_bypass=1 "
		 "-- --takeover VETH --tap TAP. Many connections: add "
		 "framecnt=4096 to the af_packet --vdev (its 512-frame rings "
		 "overflow while the lcore sleeps; `blitz serve` does).",
	.groups = {options_service, dpdk_opts, options_common},
};
