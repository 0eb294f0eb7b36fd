/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_core.h - the userspace TCP core behind the afxdp and dpdk engines.
 *
 * Owns: Ethernet + IPv4/IPv6 + TCP for the service address:port, the
 * connection table, SYN cookies, request reassembly, sending the prebuilt
 * response bytes (http.h) in MSS-sized segments within the peer's window,
 * retransmission, close and reset. It is given frames; it never touches a
 * NIC, a socket or a ring, and never makes a syscall or allocates after
 * tcp_core_new(). One core per queue (per poll thread): a core is not
 * thread-safe and shares nothing with other cores.
 *
 * Background
 * ----------
 * The engine owns the frames and their memory (AF_XDP: UMEM frames; DPDK:
 * mbufs; unit tests: plain arrays). It hands the core a burst of received
 * frames and a small vtable through which the core asks for empty TX
 * frames, writes a whole Ethernet frame into each, and gives them back to
 * be sent:
 *
 *   engine RX ring ──▶ tcp_core_rx_burst(frames[n]) ──▶ engine recycles all n
 *                           │   ▲
 *            ops->tx_alloc  │   │ empty TX frames (data, cap)
 *                           ▼   │
 *                      core writes Ethernet+IP+TCP+payload
 *                           │
 *            ops->tx_send   ▼  (once per burst, or when its batch is full)
 *                      engine TX ring
 *
 * Zero-copy: the core copies the response bytes straight from the prebuilt
 * responses (and the body) into the TX frame; there is no per-connection
 * send buffer. A connection keeps only a queue of which responses it owes
 * and how far the peer acknowledged them; a retransmission rebuilds the
 * segment from the same prebuilt bytes.
 *
 * What the core does NOT do: ARP, ICMP, IP fragments, IPv4 options or
 * IPv6 extension headers (such frames for the service are counted and
 * dropped), VLAN tags, anything not addressed to the service. Frames that
 * are not TCP to the service are handed back to the engine (see
 * tcp_core_rx_burst), which answers ARP/ICMP or passes them on.
 *
 * Checksums: every frame sent carries full, correct IPv4 and TCP
 * checksums. Every frame received for the service is verified before
 * anything acts on it (IPv4 header, TCP over IPv4 and IPv6: summed once,
 * or the NIC's verdict in tcp_frame.rx_csum); a bad one is dropped and
 * counted (bad_csum), never answered, acked or allowed to change state.
 * The pseudo-header-only form of a local stack's frame over veth is
 * accepted only with csum_partial_ok.
 *
 * TCP as the core speaks it
 * -------------------------
 * - SYN: answered with a SYN-ACK whose ISN is a SYN cookie (24-bit keyed MAC
 *   of the 4-tuple, a 64-second time counter and the low 8 bits; the low 8
 *   bits carry the peer's MSS index, window scale and SACK-permitted). No
 *   state is kept, so a SYN flood allocates nothing. Options sent: MSS,
 *   SACK-permitted when the SYN offered it, and window scale (shift 0) when
 *   the SYN offered it, so the peer's scaled window is honoured. No
 *   timestamps.
 * - The ACK completing the handshake is validated against the cookie (this
 *   or the previous time counter); then a connection is allocated. A full
 *   table: that ACK is answered with RST and counted (table_full). An ACK
 *   that does not validate is dropped and counted (bad_cookie). A first
 *   ACK that carries the request is handled in the same step.
 * - Data: in order only. Complete requests are parsed straight out of the
 *   frame by the request loop every engine shares (http_conn.h: bodies,
 *   chunked, the close rules); a partial request is copied into a
 * per-connection 8 KiB buffer taken lazily from a preallocated pool and
 * returned when the request completes. Out-of-order or duplicate segments
 * inside the receive window are answered with an ACK of what we have (a dup
 * ACK); a SACK peer's out-of-order segment is held in that buffer (one
 * range, within its 8 KiB, only from a free buffer) and SACKed until the
 * hole is filled, other peers' are dropped. A SACK peer's bytes that
 * come twice (at or below RCV.NXT, or over the range held) are named in
 * a D-SACK block leading the next ACK (RFC 2883, as Linux's
 * tcp_dsack_set): once, only bytes really received, from the peer's
 * first one on; below RCV.NXT outside the window only with an acceptable
 * ACK, in the rate-limited ACK. No timestamps: two blocks of the four
 * that fit.
 * - Bounded reassembly: a partial request must complete its headers within
 *   header_ms (10 s, as the epoll engine), bare ACKs or not, else RST. One
 *   source address holds at most rx_bufs_per_src buffers (a keyed hash of
 *   the address counts them; more: that connection is reset, counted
 *   rx_src_cap). When the pool is empty the connection that has held its
 *   buffer longest is reset to free one (rx_evicted): clients sitting on
 *   partial headers cannot stop a new request from being answered.
 * - RFC 5961 (docs/tcp-core.md): a RST resets only at exactly RCV.NXT;
 *   elsewhere in the window it gets a challenge ACK. Any SYN on a
 *   connection gets a challenge ACK, never a reset. An ACK of bytes never
 *   sent, or older than SND.UNA - MAX.SND.WND, drops the segment with a
 *   challenge ACK. Segments wholly outside the receive window get an ACK.
 *   All of those ACKs: at most one per 500 ms per connection (Linux >= 6.0
 *   tcp_invalid_ratelimit), never a global budget (CVE-2016-5696).
 *   The send window is taken only from newer segments (SND.WL1/WL2, as
 *   Linux's tcp_may_update_window).
 * - Responses are queued (up to TCP_CORE_RESP_QUEUE per connection; more
 *   pipelined requests wait, unparsed, until the queue drains) and sent
 *   within min(peer window, cwnd, TCP_CORE_MAX_INFLIGHT) in MSS segments.
 * - Congestion control: NewReno (RFC 5681, RFC 6582), not CUBIC. IW10
 *   (RFC 6928), slow start (cwnd += bytes acknowledged, as Linux counts)
 *   up to ssthresh, then one MSS per window acknowledged. Without SACK: the
 *   third duplicate ACK resends the segment at snd_una, ssthresh =
 *   FlightSize / 2, cwnd = ssthresh + 3 MSS, inflated per further
 *   duplicate; partial ACKs resend the next hole; the full ACK deflates cwnd
 *   to ssthresh.
 * - With SACK (RFC 2018, 6675, 8985): a scoreboard of SACKed ranges (6 per
 *   connection) and send-time records (8, tiling the unacknowledged bytes)
 *   feed RACK: a byte is lost once a segment sent after it was delivered
 *   and RACK.rtt + the reordering window (min RTT / 4, 0 in recovery or
 *   with 3 MSS SACKed, widened per D-SACK) have passed; else the RACK
 *   timer waits for it. A loss starts one recovery per window (ssthresh =
 *   cwnd = FlightSize / 2); lost bytes are resent, then new data, while
 *   pipe (in flight, neither SACKed nor lost) is under cwnd. A D-SACK
 *   (RFC 2883: a first block below the cumulative ACK or inside the second)
 *   is counted, never taken for a hole (one naming a probe's resend does
 *   not widen the window). Blocks beyond SND.MAX are ignored.
 * - Retransmission: the RTO is RFC 6298's from RTT samples (one timed
 *   segment at a time, never a retransmitted one), at least rto_initial_ms
 *   (200 ms, as Linux's TCP_RTO_MIN), doubled per timeout up to
 *   rto_max_ms. On the RTO: ssthresh = FlightSize / 2, cwnd = 1 MSS (the
 *   loss window), and sending restarts from the oldest unacknowledged byte
 *   (go-back-N, stepping over SACKed ranges; forgotten after a second RTO,
 *   as the peer may have dropped them); after max_retries the connection
 *   is reset (RST) and freed.
 * - Tail-loss probe (RFC 8985 7, TLP): with data in flight, not in
 *   recovery and no RACK timer armed, a probe after PTO = 2 * SRTT + 2 ms
 *   (+ 200 ms, the worst delayed ACK, when one segment is in flight), 1 s
 *   without an RTT sample; a PTO past the RTO fires at the RTO's time in
 *   its place for a SACK peer (as Linux; without SACK the RTO comes
 *   first, no probe): one new segment if the peer's window has room,
 *   else the last MSS sent again; then the RTO is re-armed. The probe
 *   opens an episode (RFC 8985 7.4, Linux's tlp_high_seq): no other
 *   probe until it ends. An ACK reaching its end decides: a new-data
 *   probe hid nothing; a resend D-SACKed, or answered by a bare duplicate
 *   ACK, was needless (tlp_spurious); an ACK beyond its end with neither
 *   means the probe repaired a loss: ssthresh = max(FlightSize / 2,
 *   2 MSS), cwnd no more (tlp_recoveries), no recovery entered. Any other
 *   ACK of exactly its end leaves it open; a recovery or the RTO ends it
 *   too. The first RTT sample is the handshake's (SYN-ACK to its ACK;
 *   none when the SYN-ACK went twice, Karn).
 *   A zero window is probed by the RTO timer (one byte), for at most
 *   persist_max_ms (30 s) while answered, then RST.
 * - Close: an error response or `Connection: close` -> our FIN after the
 *   response. The peer's FIN -> ACK, then our FIN once the responses owed
 *   are sent (we never keep a half-open connection). The connection is
 *   freed as soon as both FINs are through (theirs received, ours
 *   acknowledged): no TIME_WAIT. The peer does the active close in the
 *   common case and keeps TIME_WAIT itself; when we close first, we wait
 *   for their FIN at most FIN_WAIT_MS (5 s) after ours is acknowledged,
 *   then free it, and a late retransmitted FIN for a freed tuple fails the
 *   cookie check and gets a RST, which the peer, already closed, ignores.
 *   Simultaneous close (FINs crossing) is handled.
 * - RST received in any state at exactly RCV.NXT frees the connection (in
 *   the window elsewhere: a challenge ACK, above). A non-SYN segment for an
 *   unknown tuple whose ACK is not a valid cookie is counted
 *   (drop_bad_cookie) and answered with a RST (seq = its ACK), so a peer
 *   whose connection we dropped learns it at once; RSTs get nothing.
 * - A keep-alive connection idle for idle_ms is closed with our FIN (a
 *   peer that then never sends its own FIN is dropped with a RST after
 *   FIN_WAIT_MS, 5 s).
 * - Date: the response Date is the second of now_ns mapped to wall-clock
 *   (offset sampled in tcp_core_new); updated at most once per second.
 */
#ifndef BLITZ_TCP_CORE_H
#define BLITZ_TCP_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <netinet/in.h>

#include "../bpf/blitz_shared.h"
#include "counters.h"

struct http_responses;

#define TCP_CORE_DEFAULT_TABLE 65536 /* connections per core (per queue) */
/* Memory one connection of the table costs at most, with its share of the
 * hash slots and the reassembly pool (tcp_core_table_bytes() / n, checked
 * by test_tcp_core): what --max-conns' help states. */
#define TCP_CORE_CONN_BYTES 768
#define TCP_CORE_CONN_BYTES_STR "768"
#define TCP_CORE_RESP_QUEUE 32 /* responses owed per connection */
#define TCP_CORE_TX_BATCH 64   /* TX frames handed to ops->tx_send at once */
#define TCP_CORE_MAX_INFLIGHT (256u * 1024) /* bytes in flight cap */

/*
 * One frame: a whole Ethernet frame at data[0..len).
 * RX: filled by the engine; the core only reads it, and only during
 *   tcp_core_rx_burst().
 * TX: the engine's tx_alloc gives data with cap writable bytes (at least
 *   the MSS plus 74 bytes of headers: ask for 2048-byte frames); the core
 *   sets len and passes it back through tx_send or tx_release.
 * handle: the engine's own (a UMEM address, an mbuf pointer); the core
 *   carries it and never interprets it.
 */
struct tcp_frame {
	uint8_t *data;
	uint32_t len;
	uint32_t cap;
	uint64_t handle;
	/* RX: what the NIC verified (TCP_RX_CSUM_*); 0: nothing, the core
	 * sums the frame itself. */
	uint8_t rx_csum;
};

/* A NIC's checksum verdicts (DPDK's RTE_MBUF_F_RX_*_CKSUM_*): GOOD skips
 * the core's own sum, BAD drops the frame (counted bad_csum). */
#define TCP_RX_CSUM_IP_GOOD 0x1 /* IPv4 header verified */
#define TCP_RX_CSUM_L4_GOOD 0x2 /* TCP checksum verified */
#define TCP_RX_CSUM_BAD 0x4	/* either one failed */

/*
 * The engine's side of TX. All three are called only from inside
 * tcp_core_rx_burst() / tcp_core_poll_timers() / tcp_core_flush(), on the
 * core's thread. They must not block; they should not make syscalls
 * (kick the NIC after the core's call returns, or in tx_send once).
 */
struct tcp_io_ops {
	/* Give up to n empty TX frames into f[0..n) (data, cap, handle set).
	 * Returns how many were given: 0 when out of frames, in which case
	 * the core skips the send and relies on retransmission (counted as
	 * tx_no_buf). */
	uint32_t (*tx_alloc)(void *ctx, struct tcp_frame *f, uint32_t n);
	/* Send f[0..n); ownership passes back to the engine. */
	void (*tx_send)(void *ctx, struct tcp_frame *f, uint32_t n);
	/* Return f[0..n) unsent (allocated but not used). May be NULL if
	 * the engine never needs it back (the core then sends nothing
	 * empty: it only allocates a frame right before filling it). */
	void (*tx_release)(void *ctx, struct tcp_frame *f, uint32_t n);
};

struct tcp_core_params {
	/* Service: destination port (host order) and addresses. n_addr4 ==
	 * n_addr6 == 0 accepts any destination address (the XDP program in
	 * front already filtered). Pointers are read during tcp_core_new
	 * only. */
	uint16_t port;
	int n_addr4, n_addr6;
	const struct in_addr *addr4;
	const struct in6_addr *addr6;

	/* Our MAC. All zero: learned from the destination MAC of the first
	 * service frame (replies always go back to the frame's source MAC,
	 * which each connection remembers). */
	uint8_t mac[6];

	/* What to answer: the prebuilt responses (service_responses(), the
	 * same bytes every engine sends), copied at init with the body they
	 * reference (any size up to 16 MiB), so the caller may free them. */
	const struct http_responses *resp;

	/* Connections in the table; 0: TCP_CORE_DEFAULT_TABLE. */
	uint32_t table_size;
	/* 8 KiB reassembly buffers for requests split across segments;
	 * 0: table_size / 64, at least 64. */
	uint32_t rx_bufs;
	/* Our MSS (the SYN-ACK advertises it; segments never exceed it nor
	 * the peer's); 0: 1460 (IPv4), 1440 (IPv6). Capped so a segment
	 * fits a frame of frame_cap bytes. */
	uint16_t mss;
	uint32_t frame_cap; /* TX frame size; 0: 2048 */

	/* Timers, in milliseconds; 0 picks the default in brackets. */
	uint32_t rto_initial_ms; /* [200] */
	uint32_t rto_max_ms;	 /* [3000] */
	uint32_t max_retries;	 /* [6] then RST and free */
	uint32_t idle_ms;	 /* keep-alive idle timeout [60000] */
	uint32_t header_ms;	 /* partial request: first byte to end of
				  * headers, then RST [10000] */
	uint32_t persist_max_ms; /* zero window probed this long [30000] */
	/* Reassembly buffers one source address may hold; 0: rx_bufs / 8,
	 * at least 4. */
	uint32_t rx_bufs_per_src;

	/* Key of the SYN cookies and the table hash. All zero: random
	 * (getrandom at init). */
	uint64_t secret[2];
	/* Added to every ISN we choose (tests use it to start near 2^32);
	 * 0 in production. */
	uint32_t isn_offset;

	/* Frames may carry a TCP checksum of the pseudo-header alone
	 * (CHECKSUM_PARTIAL, as a local stack sends them over veth): accept
	 * that form too. Only for devices that deliver it (nic_info.h's
	 * nic_csum_partial), never a NIC driver. */
	bool csum_partial_ok;

	/* The engine's TX side. */
	const struct tcp_io_ops *ops;
	void *ops_ctx;
};

/*
 * Counters of one core, monotonic, read by the engine (racy reads from
 * another thread are fine: each is a naturally aligned u64). The first
 * block has the meaning of the BLITZ_COUNTERS of the same name (the ones
 * that share a name are added into `blitz stats IF`'s view of an afxdp
 * interface, counters_xdp.h).
 */
#define TCP_CORE_COUNTERS(X)                                               \
	X(core_rx_frames, "frames given to the TCP core")                  \
	X(service_segments, "TCP segments for the service")                \
	X(synack, "SYN-ACKs sent")                                         \
	X(requests, "HTTP requests answered (responses queued)")           \
	X(replies, "reply segments sent (first transmission)")             \
	X(tx_bytes, "bytes of frames sent")                                \
	X(finack, "FINs sent")                                             \
	X(drop_bad_cookie, "handshake ACKs that fail the cookie check")    \
	X(drop_rst, "RST segments received")                               \
	X(drop_malformed, "truncated or bad headers, options, fragments")  \
	X(bad_csum, "IPv4 header or TCP checksum wrong: dropped")          \
	X(not_mine, "frames handed back: not TCP to the service")          \
	X(connections_opened, "connections established")                   \
	X(connections_closed, "connections closed (any reason)")           \
	X(connections_finished, "of those, closed by FIN both ways")       \
	X(connections_reset, "of those, freed by RST (sent or received)")  \
	X(table_full, "handshakes refused: table full (RST)")              \
	X(rst_sent, "RSTs sent")                                           \
	X(ooo, "out-of-order or duplicate segments (dup ACK sent)")        \
	X(retransmits, "segments retransmitted")                           \
	X(fast_retransmits, "of which on the third duplicate ACK")         \
	X(rto_giveup, "connections reset after max_retries")               \
	X(idle_timeouts, "keep-alive connections timed out")               \
	X(rx_buf_empty, "reassembly buffer pool empty (connection reset)") \
	X(tx_no_buf, "sends skipped: engine had no TX frame")              \
	X(http_errors, "requests answered 400/405/431/505")                \
	X(acks, "pure ACKs sent")                                          \
	X(challenge_acks, "RFC 5961 challenge ACKs sent (RST, SYN, ACK)")  \
	X(ratelimited, "challenge/out-of-window ACKs not sent (500 ms)")   \
	X(ack_unacceptable, "segments dropped: ACK unsent or too old")     \
	X(tlp_probes, "RFC 8985 tail-loss probes sent")                    \
	X(tlp_recoveries, "TLP episodes whose probe repaired a loss")      \
	X(tlp_spurious, "TLP resends shown needless (D-SACK, dup ACK)")    \
	X(header_timeouts, "partial requests reset at header deadline")    \
	X(rx_src_cap, "partial requests refused: source over its share")   \
	X(rx_evicted, "partial requests reset to free a buffer (oldest)")  \
	X(persist_giveup, "zero-window peers reset after persist_max_ms")  \
	X(sack_recoveries, "loss recoveries started by RACK on SACKs")     \
	X(rack_retransmits, "segments resent as RACK found them lost")     \
	X(dsacks, "D-SACK blocks received (a duplicate, not a hole)")      \
	X(dsacks_sent, "ACKs sent with a D-SACK block (data came twice)")  \
	X(sack_acks, "ACKs sent with a SACK block (data held ahead)")      \
	X(rto_timeouts, "retransmission timeouts (zero-window probes not)")

struct tcp_core_counters {
#define TCP_CORE_CNT_FIELD(name, help) uint64_t name;
	TCP_CORE_COUNTERS(TCP_CORE_CNT_FIELD)
#undef TCP_CORE_CNT_FIELD
};

#define TCP_CORE_CNT_ONE(name, help) +1
enum { TCP_CORE_N_COUNTERS = 0 TCP_CORE_COUNTERS(TCP_CORE_CNT_ONE) };
#undef TCP_CORE_CNT_ONE

/* The counters as rows of the counter registry (counters.h), in the
 * order of struct tcp_core_counters: an engine that publishes a core
 * puts these in its area (after rows of its own, if any). */
extern const struct counter_name tcp_core_counter_names[TCP_CORE_N_COUNTERS];

/* Store base[k] + c's k-th counter into slot[k] for every k (one aligned
 * store each: a reader of the area sees no torn value). base may be
 * NULL. From any thread: c's counters are read racily, which is fine. */
void tcp_core_counters_publish(const struct tcp_core_counters *c,
			       const uint64_t *base, uint64_t *slot);

struct tcp_core; /* opaque */

/*
 * Make a core: allocates everything it will ever use (table, connection
 * array, reassembly pool, its copy of the responses and their body).
 * Returns NULL on failure with errno set and one pr_warn line saying what
 * failed (ENOMEM, EINVAL for bad params or no responses, EMSGSIZE for a
 * body over 16 MiB).
 * Syscalls: malloc/mmap, getrandom, clock_gettime. Not on a hot path.
 */
struct tcp_core *tcp_core_new(const struct tcp_core_params *p);

/* Free everything tcp_core_new allocated (NULL is fine). Sends nothing. */
void tcp_core_free(struct tcp_core *c);

/*
 * Handle frames[0..n) received at now_ns (CLOCK_MONOTONIC nanoseconds, or
 * any monotonic clock the engine uses consistently; tests drive it).
 * Replies are written through ops and sent before return.
 * The frames that are not TCP for the service (ARP, ICMP, other ports, ...)
 * are moved to the front of frames[] and their count is returned, so the
 * engine can deal with them; the order of the rest is unspecified.
 * The core keeps no pointer into any RX frame after it returns: the engine
 * recycles all n frames. Never allocates, never makes a syscall.
 */
uint32_t tcp_core_rx_burst(struct tcp_core *c, struct tcp_frame *frames,
			   uint32_t n, uint64_t now_ns);

/*
 * Run the timers due at now_ns (retransmissions, idle timeouts) and send
 * what they produce. Cheap when nothing is due (a timer wheel with 1 ms
 * slots, and 1024 ms ones for deadlines over 4 s out: a connection is
 * touched once per deadline, never per tick); call it every poll
 * iteration, or at least every few ms.
 */
void tcp_core_poll_timers(struct tcp_core *c, uint64_t now_ns);

/* Milliseconds until the next timer may fire (capped at 1000), so an
 * engine that sleeps in poll() knows how long it may sleep. */
int tcp_core_next_timer_ms(const struct tcp_core *c, uint64_t now_ns);

/*
 * Tie the engine's clock to the wall clock: the engine's clock read mono_ns
 * when CLOCK_REALTIME read unix_ns. SYN cookie periods and Date follow the
 * wall clock so given, so hosts sharing a key (a fleet, whose wall clocks
 * agree within 2 s) agree on the cookie period whatever their monotonic
 * clock's origin. tcp_core_new ties CLOCK_MONOTONIC once; an engine calls
 * this again now and then (once a second) to follow a stepped wall clock,
 * never per packet. Tests give each core its own origin.
 */
void tcp_core_set_wallclock(struct tcp_core *c, uint64_t mono_ns,
			    uint64_t unix_ns);

/* The core's counters (a pointer into the core; stays valid until free). */
const struct tcp_core_counters *tcp_core_counters(const struct tcp_core *c);

/*
 * The bytes tcp_core_new allocates for a table of n connections with the
 * default reassembly pool (connections, hash slots, free list, n / 64
 * buffers of 8 KiB, per-source counts): what --max-conns costs. The
 * responses' copy (a few KiB and the body) comes on top, once per core.
 */
size_t tcp_core_table_bytes(uint32_t n);

/* Connections currently in the table (tests: no state after a SYN flood;
 * no leak after close). */
uint32_t tcp_core_active(const struct tcp_core *c);

/*
 * Check the table's invariants (every occupied slot reachable from its
 * home by linear probing, counts match, free list sane). Returns 0 or a
 * negative line number of the failed check. O(table): tests and fuzzing
 * only.
 */
int tcp_core_check(const struct tcp_core *c);

#endif /* BLITZ_TCP_CORE_H */
