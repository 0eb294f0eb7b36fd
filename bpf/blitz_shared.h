/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_shared.h - the wire structs the BPF programs share with userspace.
 *
 * Owns: the layout of every map value the CLI reads or writes (config,
 * response templates, counters). Compiled both by clang -target bpf (after
 * vmlinux.h) and by the userspace C compiler, so it uses only __u8..__u64
 * and must never include libc or kernel headers other than linux/types.h.
 */
#ifndef BLITZ_SHARED_H
#define BLITZ_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define BLITZ_MAX_ADDRS 8
#define BLITZ_MAX_MACS 4 /* the interface's own and up to 3 --mac */
/* One response template; the xdp engine only answers when it fits one MSS. */
#define BLITZ_RESP_MAX 2048
#define BLITZ_DATE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */
#define BLITZ_PIN_ROOT "/sys/fs/bpf/blitz"

/*
 * The responses every engine sends, prebuilt in userspace by
 * http_responses_build() (service.c builds them once); every kind is also
 * in the xdp engine's "responses" map. KA10 is the keep-alive answer to an
 * HTTP/1.0 request that asked for keep-alive: it carries "Connection:
 * keep-alive". From BLITZ_RESP_400 on: the error answers, after which the
 * connection closes (FIN).
 */
enum blitz_resp_kind {
	BLITZ_RESP_GET_KA = 0,
	BLITZ_RESP_GET_KA10,
	BLITZ_RESP_GET_CLOSE,
	BLITZ_RESP_HEAD_KA,
	BLITZ_RESP_HEAD_KA10,
	BLITZ_RESP_HEAD_CLOSE,
	BLITZ_RESP_OK_KINDS, /* the 200 kinds are the ones above */
	BLITZ_RESP_400 = BLITZ_RESP_OK_KINDS,
	BLITZ_RESP_405,
	BLITZ_RESP_431,
	BLITZ_RESP_505,
	BLITZ_RESP_KINDS, /* all of them, in the BPF map too */
};

/* The idle time a keep-alive connection is kept, in seconds: advertised
 * as "Keep-Alive: timeout=" in every keep-alive response. Cookie v2's
 * validity (docs/cookie-v2.md, at least 64.4 s) must not be shorter. */
#define BLITZ_KEEPALIVE_TIMEOUT 60

/* Value of the "responses" array map: one entry per xdp response kind. */
struct blitz_resp {
	__u8 bytes[BLITZ_RESP_MAX];
};

struct blitz_resp_meta {
	__u16 len;	/* bytes of the whole response */
	__u16 date_off; /* offset of the 29 Date bytes inside it */
	/*
	 * 16-bit ones' complement sum (folded, not inverted) of the response
	 * with the 29 Date bytes taken as zero, as if it started at an even
	 * offset. The XDP program adds the Date's own sum at run time.
	 */
	__u16 csum_nodate;
	/* Which http_responses_meta() call wrote it (a new number each
	 * call): the XDP program's per-CPU copies rendered with the Date
	 * (blitz_xdp_answer.h, rendered()) are rebuilt when any field here
	 * changes, so templates are written with their meta. */
	__u16 gen;
};
/* rendered() in blitz_xdp_answer.h compares the whole meta as one u64. */
_Static_assert(sizeof(struct blitz_resp_meta) == 8,
	       "blitz_resp_meta is compared as one 64-bit word");

/*
 * config.flags. NO_SACK, NO_WSCALE: net.ipv4.tcp_sack / tcp_window_scaling
 * was 0 in the interface's network namespace when blitz was loaded (or
 * reloaded): the xdp engine's SYN-ACK then leaves SACK-permitted / window
 * scaling out as the kernel's would, so that the cookie, the windows and
 * a hand-off (bpf_sk_assign_tcp_reqsk() refuses sack_ok / wscale_ok while
 * the sysctl is 0) carry only what the kernel agrees to. 0: both offered.
 */
#define BLITZ_CFG_NO_SACK (1U << 0)
#define BLITZ_CFG_NO_WSCALE (1U << 1)
/*
 * CSUM_PARTIAL: the interface's driver can deliver frames a local stack
 * sent with only the pseudo-header sum in the TCP checksum field
 * (CHECKSUM_PARTIAL: veth and its kin, nic_driver_csum_partial()), so the
 * programs accept that form beside a full checksum that verifies. Never
 * set on a NIC driver. Decided at load from the driver's name.
 */
#define BLITZ_CFG_CSUM_PARTIAL (1U << 2)

enum blitz_engine_mode {
	BLITZ_MODE_XDP = 0,   /* answer in the driver (XDP_TX) */
	BLITZ_MODE_AFXDP = 1, /* redirect service traffic to the XSKMAP */
};

/* Value of the single-entry "config" array map. Network byte order where
 * the field name ends in _be. */
struct blitz_config {
	__u16 port_be;
	__u16 mss;     /* the MSS advertised in SYN-ACKs */
	__u32 mode;    /* enum blitz_engine_mode */
	__u32 n_addr4; /* 0 and n_addr6 0: every local address */
	__u32 n_addr6;
	__u32 addr4_be[BLITZ_MAX_ADDRS];
	__u32 addr6_be[BLITZ_MAX_ADDRS][4];
	__u64 secret[2]; /* siphash key for ISNs and timestamp MACs */
	/* CLOCK_REALTIME - CLOCK_TAI in ns at load: unix = tai + this */
	__s64 tai_to_unix_ns;
	__u64 loaded_unix; /* seconds, for status */
	struct blitz_resp_meta resp[BLITZ_RESP_KINDS];
	/* Destination MACs that are this host's (blitz_mac_u64 of each):
	 * [0] the interface's at load, then --mac. 0: any unicast MAC. */
	__u32 n_macs;
	__u32 flags; /* BLITZ_CFG_* */
	__u64 macs[BLITZ_MAX_MACS];
	/* Cookie v2 (docs/cookie-v2.md): the previous key after a rotation,
	 * accepted until prev_accept_unix_ns and answered with RST until
	 * prev_rst_unix_ns (unix time in ns; both 0: no previous key). */
	__u64 secret_prev[2];
	__u64 prev_accept_unix_ns;
	__u64 prev_rst_unix_ns;
	/* Added to the unix time of the cookie clock only (not the Date):
	 * 0 in service; tests place the clock in or across epochs with it. */
	__s64 cookie_clock_adj_ns;
};

/* The six bytes of a MAC as one number (byte i in bits 8i..8i+7). */
static inline __u64 blitz_mac_u64(const __u8 *m)
{
	return (__u64)m[0] | (__u64)m[1] << 8 | (__u64)m[2] << 16 |
	       (__u64)m[3] << 24 | (__u64)m[4] << 32 | (__u64)m[5] << 40;
}

/*
 * Per-CPU counters, one __u64 each, indexed by enum value in the one
 * struct blitz_counters of the "counters" per-CPU array map (key 0). The
 * table gives the name `blitz stats` prints and what it means. PASS_* go
 * to the kernel, DROP_* go nowhere.
 */
#define BLITZ_COUNTERS(X)                                                      \
	X(RX_FRAMES, "rx_frames", "frames seen by the XDP program")            \
	X(SERVICE_SEGMENTS, "service_segments",                                \
	  "segments for the service address:port")                             \
	X(SYNACK, "synack", "SYN-ACKs sent")                                   \
	X(REQUESTS, "requests", "HTTP requests answered (XDP or TC)")          \
	X(HTTP_ERRORS, "http_errors",                                          \
	  "requests answered 400, 405 or 505, then FIN")                       \
	X(REPLIES, "replies", "reply frames sent (XDP_TX)")                    \
	X(TX_BYTES, "tx_bytes", "bytes of reply frames sent")                  \
	X(FINACK, "finack", "FIN-ACKs sent for a client FIN")                  \
	X(REDIRECT, "redirect", "segments redirected to AF_XDP sockets")       \
	X(PASS_HOST, "pass_host", "not for the service: passed untouched")     \
	X(PASS_NOT_LOCAL, "pass_not_local",                                    \
	  "service port, destination not local (FIB): forwarded untouched")    \
	X(PASS_OTHER_MAC, "pass_other_mac",                                    \
	  "service port, frame to a MAC not ours: untouched")                  \
	X(DROP_MARTIAN, "drop_martian",                                        \
	  "martian source (loopback, multicast, our own address...)")          \
	X(PASS_MALFORMED, "pass_malformed", "truncated or bad headers")        \
	X(BAD_CSUM, "bad_csum",                                                \
	  "TCP or ICMP checksum does not verify: not answered, handed off or " \
	  "believed (TCP dropped, ICMP left to the kernel)")                   \
	X(PASS_IP_OPTIONS, "pass_ip_options", "IPv4 options or IPv6 ext hdrs") \
	X(PASS_FRAGMENT, "pass_fragment", "IP fragments")                      \
	X(PASS_VLAN, "pass_vlan",                                              \
	  "VLAN-tagged (802.1Q/802.1ad): untouched; load on the VLAN device")  \
	X(PASS_PARTIAL, "pass_partial", "request not complete in segment")     \
	X(PASS_NOT_TRIVIAL, "pass_not_trivial",                                \
	  "method, body, header or target the fast path does not answer")      \
	X(PASS_TOO_BIG, "pass_too_big", "replies do not fit one segment")      \
	X(PASS_ZERO_WINDOW, "pass_zero_window", "peer window too small")       \
	X(PASS_KERNEL_OWNS, "pass_kernel_owns",                                \
	  "connection already handed to the kernel")                           \
	X(PASS_NO_XSK, "pass_no_xsk", "afxdp mode, no socket on the queue")    \
	X(PASS_NO_ROOM, "pass_no_room", "frame could not grow to the reply")   \
	X(DROP_BAD_COOKIE, "drop_bad_cookie",                                  \
	  "TSecr not our MAC (or no ACK flag): spoofed or stale")              \
	X(DROP_NO_TS, "drop_no_ts",                                            \
	  "no timestamps, neither completing the handshake nor at a point of " \
	  "a flow entry")                                                      \
	X(DROP_PURE_ACK, "drop_pure_ack", "pure ACKs and last ACK of close")   \
	X(DROP_RST, "drop_rst", "RST segments")                                \
	X(RST_EXPIRED, "rst_expired",                                          \
	  "RSTs to a cookie of an expired epoch or a retired key")             \
	X(HANDOFF, "handoff", "segments handed to a kernel socket (TC)")       \
	X(HANDOFF_FAIL, "handoff_fail", "hand-offs the kernel refused")        \
	X(ANSWERED_STATELESS, "answered_stateless",                            \
	  "requests answered from the cookie alone (no per-flow state)")       \
	X(ANSWERED_FROM_FLOW, "answered_from_flow",                            \
	  "requests answered from per-flow state (sent before our reply "      \
	  "came)")                                                             \
	X(ACK_AFTER_FIN, "ack_after_fin",                                      \
	  "ACKs (no data) to a client FIN or data after our FIN")              \
	X(DROP_AFTER_FIN, "drop_after_fin",                                    \
	  "data after our FIN sent before the client had it: dropped")         \
	X(FLOW_NEW, "flow_new", "per-flow state entries made")                 \
	X(FLOW_EVICT, "flow_evict", "live per-flow entries evicted (LRU)")     \
	X(FLOW_SRC_CAP, "flow_src_cap",                                        \
	  "per-flow entries refused: the source is at its cap")                \
	X(ICMP_PMTU, "icmp_pmtu",                                              \
	  "ICMP frag-needed/too-big for a reply of ours: client MSS lowered")  \
	X(ICMP_PMTU_BAD, "icmp_pmtu_unverified",                               \
	  "ICMP frag-needed/too-big quoting no reply of ours: ignored")        \
	X(TC_REQUESTS, "tc_requests",                                          \
	  "of the requests, answered by TC in multi-segment replies")          \
	X(TC_SEGMENTS, "tc_segments", "reply segments TC sent")                \
	X(TC_PARTIAL, "tc_partial",                                            \
	  "batches TC answered in part (window, burst, limits): rest unacked") \
	X(TC_GSO, "tc_gso", "GRO-merged segments TC answered")                 \
	X(TC_NO_WINDOW, "tc_no_window",                                        \
	  "batches TC held back: not one reply fits the peer window")          \
	X(TC_FAIL, "tc_fail", "multi-segment replies TC could not finish")     \
	X(KSOCK_SKIP, "ksock_skip",                                            \
	  "socket lookups skipped: no kernel socket holds the tuple (filter)") \
	X(HANDOFF_FROM_FLOW, "handoff_from_flow",                              \
	  "of the hand-offs: no timestamps, proved by a flow entry")           \
	X(RST_NO_LISTENER, "rst_no_listener",                                  \
	  "RSTs to proved segments without timestamps XDP cannot answer, "     \
	  "no kernel listener")                                                \
	X(PASS_FLOW_FULL, "pass_flow_full",                                    \
	  "no timestamps, source at its flow-entry cap: to a kernel listener " \
	  "from the first request")                                            \
	X(PASS_BURST, "pass_burst",                                            \
	  "segments of a flow with a TC burst in flight passed to TC")         \
	X(RETRANSMITS, "retransmits",                                          \
	  "segments sent again (TC burst segments the client lacked)")         \
	X(TC_WITHHELD_ACK, "tc_withheld_ack",                                  \
	  "ACKs of a burst's last request, once the client had the burst")     \
	X(TC_BURST_SEEN, "tc_burst_seen",                                      \
	  "segments matching a burst record that needed nothing sent")         \
	X(DROP_OFF_POINT, "drop_off_point",                                    \
	  "TSecr verified at a point off our track: sent before our reply "    \
	  "came, its MAC matched by chance")

enum blitz_counter {
#define BLITZ_CNT_ENUM(id, name, help) BLITZ_CNT_##id,
	BLITZ_COUNTERS(BLITZ_CNT_ENUM)
#undef BLITZ_CNT_ENUM
		BLITZ_CNT_MAX,
};

/*
 * The value of the "counters" map's only entry (key 0): one CPU's every
 * counter in one block, so a program run looks the map up once and keeps
 * the pointer. An older layout had one entry per counter (max_entries
 * BLITZ_CNT_MAX, value 8 bytes): readers tell them apart by value size.
 */
struct blitz_counters {
	__u64 v[BLITZ_CNT_MAX];
};

#endif /* BLITZ_SHARED_H */
