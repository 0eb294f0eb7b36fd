/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_core_int.h - what the files of the TCP core share (tcp_core.h is
 * its contract with the engines; nothing outside userspace/net/tcp_*.c
 * includes this header).
 *
 * Owns: the core's limits, the connection and core structs, the small
 * helpers every file inlines (sequence arithmetic, the tuple's hash and
 * lookup), and the functions one file of the core calls in another:
 *
 *   tcp_core.c       setup and teardown, the responses' copy, counters
 *   tcp_table.c      the connection table, reassembly buffers, sizing,
 *                    the consistency check
 *   tcp_handshake.c  SYN cookies: SYN-ACKs and opening on the cookie's ACK
 *   tcp_input.c      frames in: parsing, RFC 5961 checks, ACK processing,
 *                    NewReno, reassembly and the request loop
 *   tcp_output.c     frames out: headers, data segments, ACKs and RSTs
 *   tcp_sack.c       the SACK scoreboard, RACK-TLP loss detection and the
 *                    RFC 6675 recovery
 *   tcp_timers.c     the timer wheel, RTO, tail-loss probes, idle and
 *                    header deadlines
 *
 * Helpers that a hot path calls from more than one file are static inline
 * here: they cost no call (tests/perf/tcp_core_cost.c counts it). Must
 * never be included by an engine or a test (they use tcp_core.h).
 */
#ifndef TCP_CORE_INT_H
#define TCP_CORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../bpf/blitz_siphash.h"
#include "csum.h"
#include "http.h"
#include "http_conn.h"
#include "tcp_core.h"
#include "wire.h"

#define RXBUF_SIZE                                                 \
	HTTP_MAX_HEADER	 /* a full buffer makes the parser say 431 \
			  */
#define WHEEL_SLOTS 4096 /* 1 ms each: a revolution of ~4 s */
/* Deadlines further out (idle timeouts: 60 s) wait in a coarse wheel of
 * 1024 ms slots (a revolution of ~262 s) and move to the fine one once,
 * 3-4 s before they are due: a connection's timer is touched once per
 * deadline, never once per fine revolution (at a million connections
 * that was 244,000 touches a second). */
#define L1_MS 1024
#define L1_SLOTS 256
/* SYN cookie periods are of the wall clock (CLOCK_REALTIME), so hosts
 * sharing a key agree on them whatever their monotonic clock's origin. A
 * cookie is good in its period and the next. Hosts of a fleet may differ
 * by up to COOKIE_SKEW_MS (docs/cookie-v2.md's skew, 2^31 ns): in the last
 * COOKIE_SKEW_MS of a period the next one's cookies (from a host ahead of
 * us) are taken too. */
#define COOKIE_PERIOD_MS 64000
#define COOKIE_SACK_OK 0x80 /* bit of the cookie's info byte */
#define COOKIE_SKEW_MS 2148
#define OUR_WINDOW 65535
#define FIN_WAIT_MS 5000 /* our FIN acked, theirs not yet: bounded wait */
#define NIL 0xffffffffu
/* RFC 5961 challenge ACKs and ACKs to out-of-window segments: at most one
 * per connection per 500 ms, as Linux >= 6.0 (tcp_invalid_ratelimit per
 * socket). Never a budget shared by connections: a global count is the
 * CVE-2016-5696 side channel (an off-path attacker counting the challenge
 * ACKs it did not get learns whether its guess hit another connection). */
#define OOW_RATELIMIT_MS 500
/* RFC 8985 7.2: the probe timeout adds the worst-case delayed ACK when one
 * segment is in flight (the peer may hold its ACK that long), 2 ms else. */
#define TLP_WC_DELACK_MS 200
#define TLP_EXTRA_MS 2
#define TLP_NO_RTT_MS 1000 /* PTO without an RTT sample (7.2) */
/* An SRTT this long: the peer delays its ACKs (20-40 ms), where one that
 * ACKs at once answers within a fraction of a millisecond on a LAN. */
#define LATE_ACK_US 1000
/* SACK (RFC 2018) and RACK (RFC 8985) state is bounded per connection:
 * SB_RANGES SACKed ranges above SND.UNA (more: the highest is forgotten,
 * which costs at most a needless resend), and XMIT_RECS send-time records
 * tiling [SND.UNA, SND.MAX) (more: the two oldest merge, keeping the older
 * time, which can only make RACK find a loss sooner). */
#define SB_RANGES 6
#define XMIT_RECS 8
#define SACK_MAX_BLOCKS 4 /* in one segment: 4 x 8 + 2 <= 40 */
#define REO_MULT_MAX 8	  /* RFC 8985 6.2: reo_wnd grows per D-SACK */

/* Addresses and ports of one connection, as we send (l = local). */
struct tcp_tuple {
	uint8_t laddr[16]; /* IPv4: ::ffff:a.b.c.d */
	uint8_t raddr[16];
	uint16_t lport_be, rport_be;
	uint8_t v6;
	uint8_t lmac[6], rmac[6];
};

struct seq_range {
	uint32_t start, end;
};

/* Sequence range [start, end) last sent at ts (microseconds of the core's
 * clock; bit 0 set: it was a retransmission). */
struct xmit_rec {
	uint32_t start, end, ts;
};

/* Packed: 3 bytes, so the queue of 32 spans 96 bytes, not 128. */
struct resp_ent {
	uint8_t kind;
	uint16_t date16; /* low 16 bits of the Date second when queued */
} __attribute__((packed));

/*
 * One connection: 576 bytes, 9 cache lines, aligned to a line (the array
 * is page-aligned). Ordered by heat: at 100,000 connections the table is
 * far out of cache and every segment pays a miss per line it touches, so
 * what a GET and a pure ACK of an established connection read and write
 * (the tuple the lookup compares, sequence numbers and windows, the RTT
 * sample, the timers and their wheel links, the request loop's state)
 * sits in lines 0-5 with the response queue (an ACK reads its head) and
 * the first send record (SACK peers), which tcp_core_rx_burst() prefetches
 * for the whole burst (conn_prefetch); what only loss, SACK or a split
 * request touches comes last.
 */
struct tcp_conn {
	/* line 0 */
	struct tcp_tuple t;
	uint32_t hash;
	/* send side: seq numbers; the stream is the queued responses */
	uint32_t snd_una, snd_nxt;
	/* line 1 */
	uint32_t snd_max;
	uint32_t snd_wnd; /* bytes, scaled */
	uint32_t cwnd;
	uint32_t q_bytes; /* stream bytes from snd_una to the end */
	uint32_t una_off; /* bytes of q[q_head] acknowledged */
	uint32_t fin_seq;
	uint32_t rcv_nxt;
	uint16_t mss;
	uint8_t snd_wscale;
	uint8_t q_head, q_count;
	/* tlp_out: a probe's episode is open (RFC 8985 7.4: TLP.end_seq is
	 * tlp_end), tlp_rtx: that probe was a resend (TLP.is_retrans) */
	uint8_t fin_pending : 1, fin_sent : 1, fin_acked : 1, fin_rcvd : 1,
		in_use : 1, in_recovery : 1, tlp_out : 1, tlp_rtx : 1;
	uint8_t rtt_on : 1, oow_sent : 1, tl1 : 1; /* tl1: coarse wheel */
	/* SACK negotiated (the cookie's bit), RACK knows a delivered
	 * segment, reordering seen, recovery entered on RACK's word */
	uint8_t sack_ok : 1, rack_valid : 1, reord_seen : 1, sack_rec : 1,
		rack_tmr : 1;
	uint8_t nsb, nrec;
	/* reo_mult: up to REO_MULT_MAX; dsack_owed: the next ACK leads with
	 * the D-SACK block [dsack_s, dsack_e) */
	uint8_t reo_mult : 4, dsack_owed : 1;
	uint8_t retries;
	uint8_t dupacks; /* duplicate ACKs in a row (fast retransmit) */
	/* congestion control (RFC 5681 NewReno, RFC 6582), bytes */
	uint32_t ssthresh;
	uint32_t recover;     /* snd_max when the last recovery began */
	uint32_t bytes_acked; /* congestion avoidance: acked since +1 MSS */
	/* send window: the segment that last updated it (RFC 9293) */
	uint32_t snd_wl1, snd_wl2;
	uint32_t max_snd_wnd;
	/* line 2: RTT (RFC 6298, Karn: one timed segment, never a
	 * retransmitted one), microseconds */
	uint32_t rtt_seq, rtt_t0;
	uint32_t srtt_us, rttvar_us;
	/* timers (ms of the core's clock; 0 = unarmed) */
	uint32_t rto_ms, rto_base_ms; /* current (backed off), computed */
	/* tlp_at: the tail-loss probe, or RACK's reordering timer when
	 * rack_tmr (never both, RFC 8985 7.2) */
	uint64_t rto_at, idle_at, tlp_at, hdr_at;
	uint64_t linked_at; /* the time of the wheel slot it sits in */
	/* line 3: receive side */
	uint32_t rxb; /* reassembly buffer index, NIL when none */
	uint32_t rxlen;
	uint32_t tlp_end; /* snd_max after the probe (TLP.end_seq) */
	/* RFC 6675 scoreboard (sorted, disjoint, above snd_una) and RFC
	 * 8985 RACK: the most recently sent delivered segment (its send
	 * time and end) and its RTT, the highest SACKed end (fack) */
	uint32_t sacked; /* bytes in sb[] */
	uint32_t rack_ts, rack_end, rack_rtt_us, min_rtt_us, fack;
	uint32_t last_ts;	/* the latest send time recorded */
	uint64_t persist_since; /* first zero-window probe of this stall */
	/* lines 4-5 (an ACK reads q's head, a request writes its tail) */
	struct http_conn http; /* the request loop's state */
	struct resp_ent q[TCP_CORE_RESP_QUEUE];
	/* rec[0], the clean case's only record, ends line 5 */
	struct xmit_rec rec[XMIT_RECS];
	/* cold */
	struct seq_range sb[SB_RANGES];
	/* One out-of-order range held in the buffer (SACK peers only):
	 * [ooo_seq, +ooo_len) at buffer offset ooo_off; ooo_len 0: none */
	uint32_t ooo_seq, ooo_len, ooo_off;
	uint32_t src_slot; /* per-source count it holds (rxb != NIL) */
	uint32_t lru_prev, lru_next; /* buffer holders, oldest first */
	uint64_t oow_ms;	     /* last challenge / out-of-window ACK */
	/* RFC 2883, SACK peers: the duplicate the next ACK names first
	 * (dsack_owed), and the peer's first sequence number after its SYN:
	 * below it nothing was ever received, so nothing is D-SACKed. */
	uint32_t dsack_s, dsack_e;
	uint32_t irs1;
} __attribute__((aligned(64)));

/* A connection's links in its wheel slot's list (NIL-terminated), kept
 * apart in a dense array (tcp_core.tl, by connection index): linking and
 * unlinking write the neighbours' 8 bytes there, not a cache line of two
 * other connections each, and the wheel's walk reads the next index
 * without touching the connection. */
struct tlink {
	uint32_t prev, next;
};

/* conn_prefetch() fetches lines 0-5: what a segment of an established
 * connection touches, the whole response queue (an ACK reads its head, a
 * request writes its tail, anywhere in it as q_head turns) and the first
 * send record included. */
_Static_assert(sizeof(struct tcp_conn) == 9 * 64 &&
		       offsetof(struct tcp_conn, rec[1]) <= 6 * 64,
	       "struct tcp_conn: 9 cache lines, the hot ones first");

/* When a SYN-ACK left (tcp_core.synack): its ISN (the cookie, which
 * names the tuple and the SYN) and send time in microseconds; bit 1 set
 * in any kept time, bit 0 when the same SYN-ACK went twice (Karn: no
 * sample). */
struct synack_rec {
	uint32_t isn, ts;
};

struct tbl_slot {
	uint32_t hash;
	uint32_t idx; /* conn index + 1; 0 = empty */
};

/* Kind k on the wire: resp.bytes[k][0..head_len) then, for a body too
 * large to be inline, body[0..body_len) (http_response_iov's pieces). */
struct resp_piece {
	uint32_t head_len, body_len, date_off;
};

struct tcp_core {
	struct tcp_core_params p;
	struct tcp_core_counters cnt;
	uint64_t key[2];

	struct tcp_conn *conns;
	uint32_t nconns, active;
	uint32_t *free_stack;
	uint32_t nfree;
	struct tbl_slot *slots;
	uint32_t mask;
	struct tlink *tl; /* [nconns]: the wheel lists' links */

	uint8_t *rxbufs;
	uint32_t *rxfree;
	uint32_t nrxfree, nrxbufs;
	/* Connections holding a buffer, oldest first: when the pool is
	 * empty the oldest is reset so a new request is never refused by
	 * the ones that sit on a partial header. */
	uint32_t lru_head, lru_tail;
	/* Buffers held per source address (keyed hash, so an attacker
	 * cannot aim collisions at a victim), and the share of one. */
	uint16_t *src_cnt;
	uint32_t src_mask, src_cap;

	uint32_t wheel[WHEEL_SLOTS];
	uint32_t wheel1[L1_SLOTS]; /* coarse: deadlines >= WHEEL_SLOTS ms out */
	uint64_t wheel_ms;	   /* last ms processed */
	bool wheel_started;

	struct http_responses resp; /* header bytes; whole when inline */
	struct resp_piece piece[BLITZ_RESP_KINDS];
	uint8_t *body; /* our copy of the body; resp.body points here */
	int64_t mono_to_unix_ns;
	uint64_t date_sec;
	uint16_t mss4, mss6;
	uint8_t mac[6];
	bool have_mac;

	struct in6_addr laddr[2 * BLITZ_MAX_ADDRS];
	int nladdr;

	uint64_t now_ms;  /* the engine's clock */
	uint64_t unix_ms; /* the wall clock: cookie periods */
	uint32_t now_us;  /* low 32 bits: RTT differences only */
	struct tcp_frame txq[TCP_CORE_TX_BATCH];
	uint32_t ntx;
	/* SYN-ACK send times by tuple hash, for the handshake's RTT sample:
	 * a fixed array allocated with the table, overwritten freely (a SYN
	 * flood allocates nothing and at worst costs samples). */
	struct synack_rec *synack;
	uint32_t synack_mask;
};

static inline bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static inline bool seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* __u64: the message type of blitz_siphash_cd() (bpf/blitz_siphash.h). */
static inline void tuple_words(const struct tcp_tuple *t, __u64 w[5])
{
	memcpy(&w[0], t->laddr, 16);
	memcpy(&w[2], t->raddr, 16);
	w[4] = (__u64)t->lport_be << 16 | t->rport_be | (uint64_t)t->v6 << 32;
}

static inline uint32_t tuple_hash(const struct tcp_core *c,
				  const struct tcp_tuple *t)
{
	__u64 w[5];

	tuple_words(t, w);
	return (uint32_t)blitz_siphash_cd(c->key[0], c->key[1], w, 5, 1, 3);
}

static inline bool tuple_eq(const struct tcp_tuple *a,
			    const struct tcp_tuple *b)
{
	return a->lport_be == b->lport_be && a->rport_be == b->rport_be &&
	       a->v6 == b->v6 && !memcmp(a->raddr, b->raddr, 16) &&
	       !memcmp(a->laddr, b->laddr, 16);
}

static inline struct tcp_conn *tbl_lookup(struct tcp_core *c,
					  const struct tcp_tuple *t, uint32_t h)
{
	uint32_t i = h & c->mask;

	for (;;) {
		struct tbl_slot *s = &c->slots[i];

		if (!s->idx)
			return NULL;
		if (s->hash == h && tuple_eq(&c->conns[s->idx - 1].t, t))
			return &c->conns[s->idx - 1];
		i = (i + 1) & c->mask;
	}
}

/* A burst's lookups overlap their misses (as DPDK's rte_hash bulk
 * lookup): first every frame's home slot is fetched, then the connection
 * it names, then the segments are handled. Hints only: a wrong guess (a
 * collision, a slot moved meanwhile) costs nothing but the fetch. */
static inline void slot_prefetch(const struct tcp_core *c, uint32_t h)
{
	__builtin_prefetch(&c->slots[h & c->mask]);
}

static inline void conn_prefetch(const struct tcp_core *c, uint32_t h)
{
	const struct tbl_slot *s = &c->slots[h & c->mask];
	const char *k;

	if (!s->idx)
		return;
	k = (const char *)&c->conns[s->idx - 1];
	__builtin_prefetch(k, 1);
	__builtin_prefetch(k + 64, 1);
	__builtin_prefetch(k + 128, 1);
	__builtin_prefetch(k + 192, 1);
	__builtin_prefetch(k + 256, 1);
	__builtin_prefetch(k + 320, 1);
}

static inline uint32_t conn_idx(const struct tcp_core *c,
				const struct tcp_conn *k)
{
	return (uint32_t)(k - c->conns);
}

/* The list a linked connection sits in. */
static inline uint32_t *timer_head(struct tcp_core *c, const struct tcp_conn *k)
{
	if (k->tl1)
		return &c->wheel1[(k->linked_at / L1_MS) % L1_SLOTS];
	return &c->wheel[k->linked_at % WHEEL_SLOTS];
}

static inline void timer_unlink(struct tcp_core *c, struct tcp_conn *k)
{
	struct tlink *l;

	if (!k->linked_at)
		return;
	l = &c->tl[conn_idx(c, k)];
	if (l->prev != NIL)
		c->tl[l->prev].next = l->next;
	else
		*timer_head(c, k) = l->next;
	if (l->next != NIL)
		c->tl[l->next].prev = l->prev;
	l->prev = l->next = NIL;
	k->linked_at = 0;
}

static inline void timer_link(struct tcp_core *c, struct tcp_conn *k,
			      uint64_t at)
{
	uint32_t idx = conn_idx(c, k), *head;
	struct tlink *l = &c->tl[idx];

	if (at <= c->wheel_ms)
		at = c->wheel_ms + 1;
	k->linked_at = at;
	k->tl1 = at - c->wheel_ms >= WHEEL_SLOTS;
	head = timer_head(c, k);
	l->prev = NIL;
	l->next = *head;
	if (l->next != NIL)
		c->tl[l->next].prev = idx;
	*head = idx;
}

/* Make sure the connection fires no later than its earliest deadline;
 * a later deadline just lets it fire early and re-arm (cheap). */
static inline void timer_update(struct tcp_core *c, struct tcp_conn *k)
{
	uint64_t due = k->idle_at;

	if (k->rto_at && k->rto_at < due)
		due = k->rto_at;
	if (k->tlp_at && k->tlp_at < due)
		due = k->tlp_at;
	if (k->hdr_at && k->hdr_at < due)
		due = k->hdr_at;
	if (k->linked_at && k->linked_at <= due)
		return;
	timer_unlink(c, k);
	timer_link(c, k, due);
}

static inline uint32_t resp_len(const struct tcp_core *c, uint8_t kind)
{
	return c->piece[kind].head_len + c->piece[kind].body_len;
}

struct rack_scan_out {
	uint32_t lost;			 /* bytes RACK deems lost, not SACKed */
	uint32_t first_start, first_len; /* the lowest lost piece */
	uint32_t wait_us;		 /* until the next may be (has_wait) */
	bool has_wait;
};

static inline void arm_rto(struct tcp_core *c, struct tcp_conn *k)
{
	if (!k->rto_ms)
		k->rto_ms = c->p.rto_initial_ms;
	k->rto_at = c->now_ms + k->rto_ms;
	timer_update(c, k);
}

struct seg {
	struct tcp_tuple t;
	uint32_t seq, ack;
	uint16_t win;
	uint8_t flags;
	const uint8_t *data;
	uint32_t len;
	/* SYN options */
	uint16_t mss;
	uint8_t wscale; /* 0xff: none */
	bool sack_ok;
	/* SACK blocks (RFC 2018), as received, host order */
	uint8_t nsack;
	struct seq_range sack[SACK_MAX_BLOCKS];
};

/* ssthresh after a loss: max(FlightSize / 2, 2 MSS) (RFC 5681 eq. 4),
 * of the flight given (a tail-loss probe's repair: the flight before the
 * ACK that shows it). */
static inline uint32_t loss_ssthresh_of(const struct tcp_conn *k,
					uint32_t flight)
{
	return flight / 2 > 2u * k->mss ? flight / 2 : 2u * k->mss;
}

/* The same of the flight now. */
static inline uint32_t loss_ssthresh(const struct tcp_conn *k)
{
	return loss_ssthresh_of(k, k->snd_max - k->snd_una);
}

/* RFC 8985 7.2: the probe timeout, or 0 when no probe is due: a probe
 * needs data in flight, an open window, and the open state (not in
 * recovery, not after an RTO until it is repaired; as Linux, whose
 * recovery leans on RACK's timer and the RTO). PTO = 2 * SRTT (+ the
 * worst-case delayed ACK for one segment, 2 ms else), 1 s without an
 * RTT sample; a PTO past the RTO fires at the RTO's time as the probe in
 * its place (Linux's tcp_schedule_loss_probe): one segment, cwnd kept.
 * That only for SACK peers (Linux probes only those): without SACK the
 * probe's ACK cannot show a hole below it, and would delay its RTO. */
static inline __attribute__((always_inline)) void tlp_arm(struct tcp_core *c,
							  struct tcp_conn *k)
{
	uint32_t flight = k->snd_max - k->snd_una, pto = TLP_NO_RTT_MS;

	if (k->rack_tmr)
		return;
	k->tlp_at = 0;
	if (!flight || k->tlp_out || k->in_recovery ||
	    seq_lt(k->snd_una, k->recover) || !k->snd_wnd || !k->rto_at)
		return;
	if (k->srtt_us)
		pto = (2 * k->srtt_us + 999) / 1000 +
		      (flight <= k->mss ? TLP_WC_DELACK_MS : TLP_EXTRA_MS);
	if (c->now_ms + pto < k->rto_at)
		k->tlp_at = c->now_ms + pto;
	else if (k->sack_ok)
		k->tlp_at = k->rto_at;
}

/* A D-SACK block [a, b) that names the tail-loss probe's resend: it ends
 * where the probe did (TLP.end_seq) and spans no more than the probe, one
 * MSS and the FIN (Linux's FLAG_DSACK_TLP): original and probe both
 * arrived, nothing was lost. */
static inline bool dsack_of_probe(const struct tcp_conn *k, uint32_t a,
				  uint32_t b)
{
	return k->tlp_out && k->tlp_rtx && b == k->tlp_end && seq_lt(a, b) &&
	       b - a <= k->mss + 1u;
}

/* tcp_table.c */
struct tcp_conn *conn_alloc(struct tcp_core *c, const struct tcp_tuple *t,
			    uint32_t h);
void rxbuf_put(struct tcp_core *c, struct tcp_conn *k);
void conn_free(struct tcp_core *c, struct tcp_conn *k);
bool rxbuf_get(struct tcp_core *c, struct tcp_conn *k);
void conn_reset(struct tcp_core *c, struct tcp_conn *k, bool send);
uint32_t table_slots(uint32_t n);
uint32_t default_rx_bufs(uint32_t n);
uint32_t src_slots(uint32_t nrx);

/* tcp_handshake.c */
void handle_unknown(struct tcp_core *c, const struct seg *s, uint32_t h);

/* tcp_input.c */
void conn_handle(struct tcp_core *c, struct tcp_conn *k, const struct seg *s);
void rtt_update(struct tcp_core *c, struct tcp_conn *k, uint32_t r);
void update_date(struct tcp_core *c, uint64_t now_ns);

/* tcp_output.c */
void tx_flush(struct tcp_core *c);
void send_ctl(struct tcp_core *c, const struct tcp_tuple *t, uint32_t seq,
	      uint32_t ack, uint8_t flags, const uint8_t *opts,
	      uint32_t optlen);
void send_rst(struct tcp_core *c, const struct tcp_tuple *t, uint32_t seq,
	      uint32_t ack, bool with_ack);
void send_ack(struct tcp_core *c, struct tcp_conn *k);
void send_ack_limited(struct tcp_core *c, struct tcp_conn *k, bool challenge);
void send_data(struct tcp_core *c, struct tcp_conn *k, uint32_t seq, uint32_t n,
	       bool fin);
int conn_output(struct tcp_core *c, struct tcp_conn *k, bool probe);
void resend_una(struct tcp_core *c, struct tcp_conn *k);

/* tcp_sack.c */
void rec_mark_slow(struct tcp_core *c, struct tcp_conn *k, uint32_t s,
		   uint32_t e);

/* [s, e) leaves now (SACK peers): its send time recorded for RACK. The
 * clean case, new data after all is acknowledged, later than the last
 * send, is the first record; the rest is rec_mark_slow's. */
static inline void rec_mark(struct tcp_core *c, struct tcp_conn *k, uint32_t s,
			    uint32_t e)
{
	uint32_t ts = c->now_us & ~1u;

	if (!k->nrec && s == k->snd_max && (int32_t)(ts - k->last_ts) > 0) {
		k->rec[0] = (struct xmit_rec){s, e, ts};
		k->nrec = 1;
		k->last_ts = ts;
		return;
	}
	rec_mark_slow(c, k, s, e);
}
void rec_sb_trim(struct tcp_conn *k, uint32_t ack);
void rack_scan(struct tcp_core *c, const struct tcp_conn *k,
	       struct rack_scan_out *o);
uint32_t sack_pipe(const struct tcp_conn *k, const struct rack_scan_out *o);
uint32_t sb_skip(struct tcp_conn *k);
void sack_ack_in(struct tcp_core *c, struct tcp_conn *k, const struct seg *s);
void rack_step(struct tcp_core *c, struct tcp_conn *k);
int sack_check(const struct tcp_conn *k);

#endif /* TCP_CORE_INT_H */
