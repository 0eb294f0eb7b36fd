/* SPDX-License-Identifier: GPL-2.0 */
/*
 * engine.h - the dpdk engine: blitz's poll-mode TCP loop on a DPDK port.
 *
 *   blitz-dpdk [EAL args] -- [-p port] [-a addr]... [--body TEXT |
 *              --body-file FILE] [--content-type TYPE] [--tap IFNAME]
 *              [--takeover IFNAME] (all options: main.c)
 *
 * Background. DPDK takes the NIC away from the kernel: every frame the
 * port receives reaches this process and nothing else, and nothing leaves
 * the port unless this process sends it. So the engine must do the little
 * a host needs to stay reachable (ARP, ICMP echo) and hand everything else
 * to the kernel through a TAP interface, the "exception path":
 *
 *   port rx_burst -> classify (lcore.c)
 *     +- TCP to a service address:port  -> TCP core (tcp_glue.c) --+
 *     +- ARP request for a service addr -> ARP reply (arp.c) -------+
 *     +- ICMP echo to a service address -> echo reply (icmp.c) -----+
 *     +- ICMPv6 echo, NS for a service  -> reply, NA (icmp6.c) -----+
 *     +- anything else -> TAP tx_burst -> kernel (exception.c)      |
 *          (ARP replies are learnt here and passed on too)          |
 *   TAP rx_burst (the kernel's own frames) -------------------------+
 *                                                   -> port tx_burst
 *
 * Addressing (the choice, and why). The TAP interface carries the SAME
 * MAC as the port (set here when it is created) and the SAME IP addresses
 * as the service (--takeover moves them there; with a NIC bound to a DPDK
 * driver the operator adds them: `ip addr add <addr/len> dev <tap>`).
 * The kernel then answers, on the service addresses, everything blitz does
 * not (other TCP ports, UDP, router discovery, ICMP errors), with
 * frames whose source MAC and IP are already right for the wire. blitz
 * keeps for itself: TCP to the service port, ARP requests and IPv6
 * neighbour solicitations for the service addresses (so there is exactly
 * one answer) and ICMP/ICMPv6 echo.
 *
 * Neighbours. No static entries on either side: the table (arp.c) learns
 * from ARP requests and replies and from the source MAC of every IP packet
 * received; a reply to an address with no entry sends an ARP request and
 * drops the frame (TCP retransmits). Learning from IP packets also means
 * a peer behind a router is answered through the MAC it came from.
 *
 * Running on a veth with the af_packet PMD (the testbed). af_packet does
 * not take the interface from the kernel: the kernel sees every frame too,
 * and its addresses on the TAP are local addresses for the whole netns.
 * So the veth carries no address and no IPv6 (disable_ipv6=1), and
 * rp_filter=1 plus arp_ignore=8 on it (`--takeover IFNAME` does all this,
 * moving its addresses and routes to the TAP, and undoes it at exit):
 * the kernel drops IP arriving there (the route back to the sender goes
 * through the TAP) and answers no ARP there, so exactly one stack,
 * blitz's, answers on the veth. Where the kernel has TCX (Linux >= 6.6),
 * a drop-all program on the veth's ingress (kernel_drop.c) stops the
 * kernel's copy sooner, before IP (packet sockets get theirs before the
 * ingress hook): the route checks and TCP early demux cost the server's
 * CPU a cache miss a frame at many connections. The client's veth must
 * not send TSO/GSO super-frames: a wire never carries them and af_packet
 * truncates them to its 2 KB frames. So on a veth taken over, blitz-dpdk
 * attaches a pass-all XDP program (veth_mss.c), which makes the kernel
 * segment on the peer to the MSS: a client with its default offloads
 * works. A real NIC's PMD is asked for no LRO and no RX scatter, and a
 * chained mbuf is dropped and counted (drop_chained), never half-parsed.
 * af_packet may also show this process its own transmitted frames:
 * frames whose source MAC is ours are dropped.
 *
 * Threads. One lcore per RX/TX queue pair of the port (and of the TAP);
 * nothing is shared on the packet path except the neighbour table, which
 * is read lock-free (a seqlock per entry) and written only on a change.
 * An lcore spins; on a port behind kernel sockets (af_packet, af_xdp) it
 * sleeps in poll() after IDLE_SPIN_US without work, or at once when it spent
 * IDLE_SPIN_PCT of its recent time spinning, woken by the next frame or
 * timer (idle.c: a spinning lcore on a shared CPU waits for its turn).
 *
 * Must never: block with work pending, allocate or make a syscall per
 * packet on an lcore (the TAP's tx/rx burst are the kernel's syscalls,
 * paid only on the exception path); send a frame whose destination MAC it
 * does not know.
 */
#ifndef BLITZ_DPDK_ENGINE_H
#define BLITZ_DPDK_ENGINE_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include "service.h"
#include "http.h"

#define BURST 32
#define TXBUF (4 * BURST) /* frames queued for one tx_burst */
#define RX_DESC 1024
#define TX_DESC 1024
#define MAX_QUEUES 16
#define NEIGH_SLOTS 4096 /* power of two */
#define NEIGH_PROBE 8	 /* linear probing distance */
#define IDLE_SPIN_US 50	 /* empty polls this long, then sleep (idle.c) */
#define IDLE_SPIN_PCT 5	 /* at most this share of recent time spinning */
#define IDLE_SPIN_WINDOW_US 10000 /* "recent": halved past this much */
#define IDLE_MAX_MS 100		  /* a sleep's bound: force_quit is checked */
#define IDLE_MAX_FDS 8

/* Per-lcore counters; summed and printed at exit (and with --stats). */
#define DPDK_COUNTERS(X)                                                  \
	X(rx_frames, "frames received on the port")                       \
	X(tx_frames, "frames sent on the port")                           \
	X(drop_tx_full, "frames tx_burst did not take (freed)")           \
	X(drop_own, "our own transmitted frames seen again (af_packet)")  \
	X(drop_other, "frames for another MAC, runts, bad headers")       \
	X(drop_chained, "multi-segment mbufs dropped (no LRO/scatter)")   \
	X(arp_reply, "ARP requests for a service address answered")       \
	X(arp_request, "ARP requests sent to resolve a peer")             \
	X(drop_no_neigh, "destination MAC unknown")                       \
	X(icmp_echo, "ICMP echo requests answered")                       \
	X(icmp6_echo, "ICMPv6 echo requests answered")                    \
	X(nd_advert, "IPv6 neighbour solicitations answered")             \
	X(core_tx_frames, "frames sent by the TCP core")                  \
	X(to_tap_frames, "frames passed to the kernel through the TAP")   \
	X(from_tap_frames, "frames from the kernel sent on the port")     \
	X(tap_csum_fix, "partial L4 checksums completed for the kernel")  \
	X(drop_no_tap, "not for the service, no --tap: dropped")          \
	X(no_mbuf, "mbuf allocation failures")                            \
	X(busy_polls, "polls that did work")                              \
	X(busy_cycles, "TSC cycles spent in polls that did work")         \
	X(engine_cycles, "of which in blitz's code (classify, TCP core)") \
	X(idle_sleeps, "waits in poll() after a spell without work")      \
	X(idle_woken, "of which ended by a frame, not the timer")

struct dpdk_stats {
#define DPDK_CNT_FIELD(id, help) uint64_t id;
	DPDK_COUNTERS(DPDK_CNT_FIELD)
#undef DPDK_CNT_FIELD
};

/* One neighbour: an IPv4 (::ffff:a.b.c.d) or IPv6 address and its MAC. */
struct neigh_entry {
	uint32_t seq;	/* odd while being written */
	uint32_t state; /* NEIGH_* */
	uint8_t addr[16];
	struct rte_ether_addr mac;
	uint16_t pad;
	uint64_t probe_tsc; /* last ARP request sent for it */
};

enum { NEIGH_FREE = 0, NEIGH_INCOMPLETE, NEIGH_REACHABLE };

struct neigh_table {
	rte_spinlock_t lock; /* writers only */
	struct neigh_entry e[NEIGH_SLOTS];
};

/* The whole engine: set up by main.c, read-only once lcores run. */
struct engine {
	struct blitz_service svc;
	uint16_t port_id;
	uint16_t tap_port_id;
	bool have_tap;
	const char *tap_ifname;
	uint16_t nb_queues;
	struct rte_ether_addr mac;
	struct rte_mempool *pool;
	uint32_t addr4_be[BLITZ_MAX_ADDRS];
	int n_addr4;
	uint8_t addr6[BLITZ_MAX_ADDRS][16];
	int n_addr6;
	uint16_t port_be; /* the service TCP port */
	uint64_t tsc_hz;
	struct neigh_table *neigh;
	struct http_responses *resp; /* built once from svc (main.c) */
	unsigned int stats_interval; /* seconds; 0: only at exit */
	uint32_t table_size; /* connections per queue; 0: core default */
	uint32_t idle_ms;    /* keep-alive idle timeout; 0: core default */
	/* Learn neighbours from IP packets' source MAC too (default), or
	 * from ARP only (--learn arp: makes the ARP request path testable). */
	bool learn_from_ip;
	const char *takeover_if; /* --takeover: kernel iface of the port */
	/* The port is a kernel device (af_packet, af_xdp) whose driver may
	 * deliver a local stack's partial TCP sum (veth): the cores take it. */
	bool csum_partial_ok;
	/* --busy-poll: spin even when the port's frames come through kernel
	 * sockets that could wake a sleeping lcore (idle.c). */
	bool busy_poll;
	struct worker *workers; /* nb_queues of them */
};

/* main.c: sum every worker's counters and print them (final: with the
 * cost per request). Reads other lcores' counters racily: fine. */
void engine_print_stats(const struct engine *eng, bool final);

struct tcp_core;
struct tcp_core_counters;

/* Set by SIGINT/SIGTERM (main.c); every lcore loop stops on it. */
extern volatile bool force_quit;
/* Set by SIGUSR1: queue 0's lcore prints the counters once. */
extern volatile bool stats_now;

/* lcore.c: the poll loop of one queue, and the frame sinks it offers. */
struct worker {
	struct engine *eng;
	uint16_t queue;
	unsigned int lcore;
	uint16_t n_tx_port, n_tx_tap;
	struct rte_mbuf *tx_port[TXBUF];
	struct rte_mbuf *tx_tap[TXBUF];
	struct tcp_core *tcp; /* this queue's TCP core (tcp_glue.c) */
	uint64_t now_tsc;
	uint64_t now_ns;	   /* CLOCK_MONOTONIC, once per poll */
	uint64_t next_publish_tsc; /* registry.c */
	/* idle.c: what wakes this lcore from an idle sleep; none: it spins. */
	struct pollfd idle_fds[IDLE_MAX_FDS];
	int n_idle_fds;
	int idle_cap_ms;
	struct dpdk_stats st;
} __rte_cache_aligned;

int worker_main(void *arg);
/* Queue a finished frame for the port (flushed at the end of the poll). */
void worker_tx_port(struct worker *w, struct rte_mbuf *m);
/* Queue a frame for the kernel, or drop it when there is no TAP. */
void worker_tx_tap(struct worker *w, struct rte_mbuf *m);
/* Fill the Ethernet header of an IP frame the engine made (src = our MAC,
 * dst = the neighbour of the IP destination) and queue it for the port; a
 * frame for an unknown neighbour is dropped and an ARP request sent. */
void worker_tx_ip(struct worker *w, struct rte_mbuf *m);
void worker_flush(struct worker *w);

/* port.c */
int port_init(struct engine *eng, uint16_t port, uint16_t nb_queues,
	      bool rss_wanted);
int tap_create(struct engine *eng, const char *ifname, uint16_t nb_queues);
void ports_stop(struct engine *eng);
/* Whether port is a kernel device's (af_packet, af_xdp: its iface=
 * devarg) whose driver may deliver a local stack's partial TCP sum. */
bool port_csum_partial(uint16_t port);

/* The kernel interface behind an af_packet or af_xdp port (its iface=
 * devarg) into buf; false for any other port. *xdp: it is af_xdp. */
bool port_kernel_ifname(uint16_t port, char *buf, size_t len, bool *xdp);

/* idle.c: find what can wake each lcore (the port's kernel sockets, the
 * TAP's queues) once the ports are started; the number found, 0: the
 * lcores spin. idle_wait: sleep in poll() at most ms (>= 1, capped). */
int idle_setup(struct engine *eng, const char *ifname, bool port_xdp);
void idle_wait(struct worker *w, int ms);

/* arp.c: the neighbour table and ARP. */
struct neigh_table *neigh_create(void);
void neigh_addr4(uint8_t out[16], uint32_t ip_be);
/* Learn addr -> mac; cheap (read-only) when nothing changed. */
void neigh_learn(struct neigh_table *t, const uint8_t addr[16],
		 const struct rte_ether_addr *mac);
/* 1 and *mac filled when known; 0 otherwise. Lock-free. */
int neigh_lookup(struct neigh_table *t, const uint8_t addr[16],
		 struct rte_ether_addr *mac);
/* A frame from src_be to ip_be needs ip_be's MAC and has none: maybe
 * send an ARP request (at most one per address every NEIGH_PROBE_MS). */
void neigh_resolve(struct worker *w, uint32_t ip_be, uint32_t src_be);
/* An ARP frame from the port. Consumes m. */
void arp_input(struct worker *w, struct rte_mbuf *m);
bool engine_has_addr4(const struct engine *eng, uint32_t ip_be);
bool engine_has_addr6(const struct engine *eng, const uint8_t a[16]);

/* icmp.c: answer an ICMPv4 echo request in place. Consumes m. */
void icmp4_input(struct worker *w, struct rte_mbuf *m, uint32_t l3_off);

/* icmp6.c: ICMPv6 echo and neighbour solicitation for a service address,
 * answered in place; other ICMPv6 goes to the kernel. Consumes m. */
void icmp6_input(struct worker *w, struct rte_mbuf *m);

/* exception.c: frames for the kernel; complete partial checksums. */
void exception_to_kernel(struct worker *w, struct rte_mbuf *m);
void exception_from_kernel(struct worker *w, struct rte_mbuf **pkts,
			   uint16_t n);

/* takeover.c: move a kernel interface's addresses and routes to the TAP
 * and back (--takeover). prepare: before setup, fills svc's addresses
 * when it has none; apply: once the TAP exists; restore: at exit. */
int takeover_prepare(const char *ifname, struct blitz_service *svc);
int takeover_apply(const char *tap);
void takeover_restore(void);

/* tcp_glue.c: the TCP core (userspace/tcp_core.h) behind one call per
 * burst: tcp_frame.handle is the mbuf. */
struct tcp_frame;
int tcp_glue_init(struct worker *w);
void tcp_glue_fini(struct worker *w);
/* TCP segments for the service, f[i].handle = the mbuf. Consumes them:
 * what the core hands back goes to the kernel, the rest is freed. */
void tcp_glue_rx(struct worker *w, struct tcp_frame *f, uint32_t n);
/* Timers (retransmissions, idle timeouts); every poll, now_ns set. */
void tcp_glue_poll(struct worker *w);
/* now_ns's clock read mono_ns when CLOCK_REALTIME read unix_ns (once a
 * second: the core's cookie periods follow the wall clock). */
void tcp_glue_set_wallclock(struct worker *w, uint64_t mono_ns,
			    uint64_t unix_ns);
/* This worker's core counters (racy reads are fine: aligned u64s). */
const struct tcp_core_counters *tcp_glue_counters(struct worker *w);

/* registry.c: the counter registry (userspace/counters.h). open: once
 * the workers' cores exist; publish: from the worker's own lcore (every
 * 100 ms, or now); close: after the lcores stopped, the area removed. */
void registry_open(struct engine *eng);
void registry_publish(struct worker *w, bool now);
void registry_close(void);

#endif /* BLITZ_DPDK_ENGINE_H */
