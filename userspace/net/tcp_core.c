// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_core.c - the userspace TCP core (see tcp_core.h for the contract).
 *
 * Owns: the connection table (open addressing, linear probing,
 * backward-shift delete), SYN cookies, the per-connection response queue,
 * retransmission and the timer wheel, and writing whole frames with
 * correct checksums. Must never allocate or make a syscall after
 * tcp_core_new(), never keep a pointer into an RX frame past
 * tcp_core_rx_burst(), and never copy response bytes anywhere but into a
 * TX frame.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include "../bpf/blitz_siphash.h"
#include "csum.h"
#include "http.h"
#include "http_conn.h"
#include "log.h"
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
/* SACK (RFC 2018) and RACK (RFC 8985) state is bounded per connection:
 * SB_RANGES SACKed ranges above SND.UNA (more: the highest is forgotten,
 * which costs at most a needless resend), and XMIT_RECS send-time records
 * tiling [SND.UNA, SND.MAX) (more: the two oldest merge, keeping the older
 * time, which can only make RACK find a loss sooner). */
#define SB_RANGES 6
#define XMIT_RECS 8
#define SACK_MAX_BLOCKS 4 /* in one segment: 4 x 8 + 2 <= 40 */
#define REO_MULT_MAX 8	  /* RFC 8985 6.2: reo_wnd grows per D-SACK */

/* Peer MSS values a cookie can encode (3 bits): the largest <= theirs. */
static const uint16_t cookie_mss[8] = {536,  1220, 1300, 1360,
				       1400, 1440, 1460, 8960};

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

struct resp_ent {
	uint8_t kind;
	uint16_t date16; /* low 16 bits of the Date second when queued */
};

struct tcp_conn {
	struct tcp_tuple t;
	uint32_t hash;
	/* send side: seq numbers; the stream is the queued responses */
	uint32_t snd_una, snd_nxt, snd_max;
	uint32_t snd_wnd; /* bytes, scaled */
	uint32_t cwnd;
	uint32_t q_bytes; /* stream bytes from snd_una to the end */
	uint32_t una_off; /* bytes of q[q_head] acknowledged */
	uint32_t fin_seq;
	uint32_t rcv_nxt;
	uint16_t mss;
	uint8_t snd_wscale;
	uint8_t q_head, q_count;
	uint8_t fin_pending : 1, fin_sent : 1, fin_acked : 1, fin_rcvd : 1,
		in_use : 1, in_recovery : 1, tlp_out : 1;
	uint8_t rtt_on : 1, oow_sent : 1, tl1 : 1; /* tl1: coarse wheel */
	/* SACK negotiated (the cookie's bit), RACK knows a delivered
	 * segment, reordering seen, recovery entered on RACK's word */
	uint8_t sack_ok : 1, rack_valid : 1, reord_seen : 1, sack_rec : 1,
		rack_tmr : 1;
	uint8_t nsb, nrec, reo_mult;
	uint8_t retries;
	uint8_t dupacks; /* duplicate ACKs in a row (fast retransmit) */
	/* congestion control (RFC 5681 NewReno, RFC 6582), bytes */
	uint32_t ssthresh;
	uint32_t recover;     /* snd_max when the last recovery began */
	uint32_t bytes_acked; /* congestion avoidance: acked since +1 MSS */
	/* send window: the segment that last updated it (RFC 9293) */
	uint32_t snd_wl1, snd_wl2;
	uint32_t max_snd_wnd;
	/* RTT (RFC 6298, Karn: one timed segment, never a retransmitted
	 * one), microseconds */
	uint32_t rtt_seq, rtt_t0;
	uint32_t srtt_us, rttvar_us;
	uint32_t tlp_end; /* snd_max after the last tail-loss probe */
	/* RFC 6675 scoreboard (sorted, disjoint, above snd_una) and RFC
	 * 8985 RACK: the most recently sent delivered segment (its send
	 * time and end) and its RTT, the highest SACKed end (fack) */
	uint32_t sacked; /* bytes in sb[] */
	uint32_t rack_ts, rack_end, rack_rtt_us, min_rtt_us, fack;
	uint32_t last_ts; /* the latest send time recorded */
	struct seq_range sb[SB_RANGES];
	struct xmit_rec rec[XMIT_RECS];
	struct resp_ent q[TCP_CORE_RESP_QUEUE];
	/* receive side */
	uint32_t rxb; /* reassembly buffer index, NIL when none */
	uint32_t rxlen;
	/* One out-of-order range held in the buffer (SACK peers only):
	 * [ooo_seq, +ooo_len) at buffer offset ooo_off; ooo_len 0: none */
	uint32_t ooo_seq, ooo_len, ooo_off;
	uint32_t src_slot; /* per-source count it holds (rxb != NIL) */
	uint32_t lru_prev, lru_next; /* buffer holders, oldest first */
	struct http_conn http;	     /* the request loop's state */
	/* timers (ms of the core's clock; 0 = unarmed) */
	uint32_t rto_ms, rto_base_ms; /* current (backed off), computed */
	/* tlp_at: the tail-loss probe, or RACK's reordering timer when
	 * rack_tmr (never both, RFC 8985 7.2) */
	uint64_t rto_at, idle_at, tlp_at, hdr_at;
	uint64_t persist_since; /* first zero-window probe of this stall */
	uint64_t oow_ms;	/* last challenge / out-of-window ACK */
	uint64_t linked_at;	/* the time of the wheel slot it sits in */
	uint32_t tprev, tnext;	/* wheel list, NIL-terminated */
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
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

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
static void tuple_words(const struct tcp_tuple *t, __u64 w[5])
{
	memcpy(&w[0], t->laddr, 16);
	memcpy(&w[2], t->raddr, 16);
	w[4] = (__u64)t->lport_be << 16 | t->rport_be | (uint64_t)t->v6 << 32;
}

static uint32_t tuple_hash(const struct tcp_core *c, const struct tcp_tuple *t)
{
	__u64 w[5];

	tuple_words(t, w);
	return (uint32_t)blitz_siphash_cd(c->key[0], c->key[1], w, 5, 1, 3);
}

static bool tuple_eq(const struct tcp_tuple *a, const struct tcp_tuple *b)
{
	return a->lport_be == b->lport_be && a->rport_be == b->rport_be &&
	       a->v6 == b->v6 && !memcmp(a->raddr, b->raddr, 16) &&
	       !memcmp(a->laddr, b->laddr, 16);
}

/* ------------------------------------------------------------------ */
/* SYN cookies                                                         */
/* ------------------------------------------------------------------ */

static uint32_t cookie_mac(const struct tcp_core *c, const struct tcp_tuple *t,
			   uint32_t peer_isn, uint64_t period, uint8_t info)
{
	__u64 w[7];

	tuple_words(t, w);
	w[5] = (__u64)peer_isn << 32 | info;
	w[6] = period;
	return (uint32_t)(blitz_siphash(c->key[0], c->key[1], w, 7) >> 40);
}

static uint32_t cookie_make(const struct tcp_core *c, const struct tcp_tuple *t,
			    uint32_t peer_isn, uint8_t info)
{
	uint64_t period = c->unix_ms / COOKIE_PERIOD_MS;

	return ((cookie_mac(c, t, peer_isn, period, info) << 8) | info) +
	       c->p.isn_offset;
}

/* true and *info when ack-1 is a cookie made with our key for this tuple
 * and the peer ISN seq-1, in this period or the previous one (or, in the
 * last COOKIE_SKEW_MS of this one, the next: a host whose clock is ahead). */
static bool cookie_check(const struct tcp_core *c, const struct tcp_tuple *t,
			 uint32_t seq, uint32_t ack, uint8_t *info)
{
	uint32_t isn = ack - 1 - c->p.isn_offset;
	uint64_t period = c->unix_ms / COOKIE_PERIOD_MS;
	bool near_next = c->unix_ms % COOKIE_PERIOD_MS >=
			 COOKIE_PERIOD_MS - COOKIE_SKEW_MS;
	uint8_t inf = (uint8_t)isn;
	uint32_t mac = isn >> 8;

	if (cookie_mac(c, t, seq - 1, period, inf) == mac ||
	    (period && cookie_mac(c, t, seq - 1, period - 1, inf) == mac) ||
	    (near_next && cookie_mac(c, t, seq - 1, period + 1, inf) == mac)) {
		*info = inf;
		return true;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Table                                                               */
/* ------------------------------------------------------------------ */

static struct tcp_conn *tbl_lookup(struct tcp_core *c,
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

static void tbl_insert(struct tcp_core *c, uint32_t h, uint32_t idx)
{
	uint32_t i = h & c->mask;

	while (c->slots[i].idx)
		i = (i + 1) & c->mask;
	c->slots[i].hash = h;
	c->slots[i].idx = idx + 1;
}

/* Backward-shift delete: no tombstones, so probes stay short. */
static void tbl_delete(struct tcp_core *c, uint32_t h, uint32_t idx)
{
	uint32_t i = h & c->mask, j;

	while (c->slots[i].idx != idx + 1)
		i = (i + 1) & c->mask;
	j = i;
	for (;;) {
		uint32_t home;

		j = (j + 1) & c->mask;
		if (!c->slots[j].idx)
			break;
		home = c->slots[j].hash & c->mask;
		/* Move j back to i unless its home lies cyclically in (i, j].
		 */
		if (i <= j ? (home <= i || home > j)
			   : (home <= i && home > j)) {
			c->slots[i] = c->slots[j];
			i = j;
		}
	}
	c->slots[i].idx = 0;
	c->slots[i].hash = 0;
}

/* ------------------------------------------------------------------ */
/* Timer wheel                                                         */
/* ------------------------------------------------------------------ */

static uint32_t conn_idx(const struct tcp_core *c, const struct tcp_conn *k)
{
	return (uint32_t)(k - c->conns);
}

/* The list a linked connection sits in. */
static uint32_t *timer_head(struct tcp_core *c, const struct tcp_conn *k)
{
	if (k->tl1)
		return &c->wheel1[(k->linked_at / L1_MS) % L1_SLOTS];
	return &c->wheel[k->linked_at % WHEEL_SLOTS];
}

static void timer_unlink(struct tcp_core *c, struct tcp_conn *k)
{
	if (!k->linked_at)
		return;
	if (k->tprev != NIL)
		c->conns[k->tprev].tnext = k->tnext;
	else
		*timer_head(c, k) = k->tnext;
	if (k->tnext != NIL)
		c->conns[k->tnext].tprev = k->tprev;
	k->tprev = k->tnext = NIL;
	k->linked_at = 0;
}

static void timer_link(struct tcp_core *c, struct tcp_conn *k, uint64_t at)
{
	uint32_t idx = conn_idx(c, k), *head;

	if (at <= c->wheel_ms)
		at = c->wheel_ms + 1;
	k->linked_at = at;
	k->tl1 = at - c->wheel_ms >= WHEEL_SLOTS;
	head = timer_head(c, k);
	k->tprev = NIL;
	k->tnext = *head;
	if (k->tnext != NIL)
		c->conns[k->tnext].tprev = idx;
	*head = idx;
}

/* Move the coarse slot's connections on: those due within the fine
 * wheel's reach into it, the ones a coarse revolution later back. */
static void timer_cascade(struct tcp_core *c, uint32_t slot)
{
	uint32_t idx = c->wheel1[slot];

	c->wheel1[slot] = NIL;
	while (idx != NIL) {
		struct tcp_conn *k = &c->conns[idx];
		uint32_t next = k->tnext;
		uint64_t at = k->linked_at;

		k->tprev = k->tnext = NIL;
		k->linked_at = 0;
		timer_link(c, k, at);
		idx = next;
	}
}

/* Make sure the connection fires no later than its earliest deadline;
 * a later deadline just lets it fire early and re-arm (cheap). */
static void timer_update(struct tcp_core *c, struct tcp_conn *k)
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

/* ------------------------------------------------------------------ */
/* Connections                                                         */
/* ------------------------------------------------------------------ */

static struct tcp_conn *conn_alloc(struct tcp_core *c,
				   const struct tcp_tuple *t, uint32_t h)
{
	struct tcp_conn *k;
	uint32_t idx;

	if (!c->nfree)
		return NULL;
	idx = c->free_stack[--c->nfree];
	k = &c->conns[idx];
	memset(k, 0, sizeof(*k));
	k->t = *t;
	k->hash = h;
	k->rxb = NIL;
	k->lru_prev = k->lru_next = NIL;
	k->tprev = k->tnext = NIL;
	k->in_use = 1;
	tbl_insert(c, h, idx);
	c->active++;
	return k;
}

static void lru_unlink(struct tcp_core *c, struct tcp_conn *k)
{
	if (k->lru_prev != NIL)
		c->conns[k->lru_prev].lru_next = k->lru_next;
	else
		c->lru_head = k->lru_next;
	if (k->lru_next != NIL)
		c->conns[k->lru_next].lru_prev = k->lru_prev;
	else
		c->lru_tail = k->lru_prev;
	k->lru_prev = k->lru_next = NIL;
}

static void rxbuf_put(struct tcp_core *c, struct tcp_conn *k)
{
	if (k->rxb == NIL)
		return;
	c->rxfree[c->nrxfree++] = k->rxb;
	c->src_cnt[k->src_slot]--;
	lru_unlink(c, k);
	k->rxb = NIL;
	k->rxlen = 0;
	k->ooo_len = 0;
	k->hdr_at = 0;
}

static void conn_free(struct tcp_core *c, struct tcp_conn *k)
{
	uint32_t idx = conn_idx(c, k);

	c->cnt.connections_closed++;
	timer_unlink(c, k);
	rxbuf_put(c, k);
	tbl_delete(c, k->hash, idx);
	k->in_use = 0;
	c->free_stack[c->nfree++] = idx;
	c->active--;
}

static uint32_t resp_len(const struct tcp_core *c, uint8_t kind)
{
	return c->piece[kind].head_len + c->piece[kind].body_len;
}

/* ------------------------------------------------------------------ */
/* Frames out                                                          */
/* ------------------------------------------------------------------ */

static void tx_flush(struct tcp_core *c)
{
	if (!c->ntx)
		return;
	c->p.ops->tx_send(c->p.ops_ctx, c->txq, c->ntx);
	c->ntx = 0;
}

static struct tcp_frame *tx_get(struct tcp_core *c)
{
	struct tcp_frame *f;

	if (c->ntx == TCP_CORE_TX_BATCH)
		tx_flush(c);
	f = &c->txq[c->ntx];
	if (c->p.ops->tx_alloc(c->p.ops_ctx, f, 1) != 1) {
		c->cnt.tx_no_buf++;
		return NULL;
	}
	return f;
}

static void tx_put(struct tcp_core *c, struct tcp_frame *f)
{
	c->cnt.tx_bytes += f->len;
	c->ntx++;
}

/*
 * Write Ethernet, IP and TCP headers for a segment with optlen bytes of
 * options and paylen bytes of payload (already at the right place or
 * written after). Returns the offset of the TCP header.
 */
static uint32_t write_hdrs(struct tcp_core *c, uint8_t *d,
			   const struct tcp_tuple *t, uint32_t seq,
			   uint32_t ack, uint8_t flags, uint16_t win,
			   uint32_t optlen, uint32_t paylen)
{
	const struct wire_seg s = {
		.src_mac = c->have_mac ? c->mac : t->lmac,
		.dst_mac = t->rmac,
		.v6 = t->v6,
		.saddr = t->v6 ? t->laddr : t->laddr + 12,
		.daddr = t->v6 ? t->raddr : t->raddr + 12,
		.sport_be = t->lport_be,
		.dport_be = t->rport_be,
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.win = win,
	};

	return wire_write_tcp_hdrs(d, &s, optlen, paylen);
}

/* Fill the TCP checksum once header, options and payload are written.
 * Not inlined into its callers: there GCC does not vectorize the sum's
 * loop (+100 instructions a request, tests/perf/tcp_core_cost.c). */
static __attribute__((noinline)) void
tcp_csum(uint8_t *d, const struct tcp_tuple *t, uint32_t off, uint32_t tcplen)
{
	wire_tcp_csum(d, t->v6, off, tcplen);
}

/* A segment without payload (ACK, RST, FIN, SYN-ACK with options). */
static void send_ctl(struct tcp_core *c, const struct tcp_tuple *t,
		     uint32_t seq, uint32_t ack, uint8_t flags,
		     const uint8_t *opts, uint32_t optlen)
{
	struct tcp_frame *f = tx_get(c);
	uint32_t off;

	if (!f)
		return;
	off = write_hdrs(c, f->data, t, seq, ack, flags,
			 flags & TCPHDR_RST ? 0 : OUR_WINDOW, optlen, 0);
	if (optlen)
		memcpy(f->data + off + WIRE_TCP_HLEN, opts, optlen);
	tcp_csum(f->data, t, off, WIRE_TCP_HLEN + optlen);
	f->len = off + WIRE_TCP_HLEN + optlen;
	tx_put(c, f);
}

static void send_rst(struct tcp_core *c, const struct tcp_tuple *t,
		     uint32_t seq, uint32_t ack, bool with_ack)
{
	send_ctl(c, t, seq, ack, TCPHDR_RST | (with_ack ? TCPHDR_ACK : 0), NULL,
		 0);
	c->cnt.rst_sent++;
}

static void send_ack(struct tcp_core *c, struct tcp_conn *k)
{
	uint8_t o[12];
	uint32_t ol = 0;

	if (k->ooo_len) {
		/* RFC 2018: the out-of-order range we hold (the only one). */
		o[0] = o[1] = TCPOPT_NOP;
		o[2] = TCPOPT_SACK;
		o[3] = 10;
		wire_put32(o + 4, k->ooo_seq);
		wire_put32(o + 8, k->ooo_seq + k->ooo_len);
		ol = 12;
		c->cnt.sack_acks++;
	}
	send_ctl(c, &k->t, k->snd_nxt, k->rcv_nxt, TCPHDR_ACK, o, ol);
	c->cnt.acks++;
}

/* An ACK answering a segment we do not accept (RFC 5961 challenge ACK,
 * or an out-of-window segment): at most one per OOW_RATELIMIT_MS on this
 * connection, whatever happens on the others. */
static void send_ack_limited(struct tcp_core *c, struct tcp_conn *k,
			     bool challenge)
{
	if (k->oow_sent && c->now_ms - k->oow_ms < OOW_RATELIMIT_MS) {
		c->cnt.ratelimited++;
		return;
	}
	k->oow_sent = 1;
	k->oow_ms = c->now_ms;
	if (challenge)
		c->cnt.challenge_acks++;
	send_ack(c, k);
}

/* Copy stream bytes [off, off+n) of the queued responses (off counted
 * from the first unacknowledged byte) into dst; the Date each response
 * was queued with is restored so a retransmission repeats its bytes. */
static void copy_stream(struct tcp_core *c, const struct tcp_conn *k,
			uint32_t off, uint32_t n, uint8_t *dst)
{
	uint32_t qi = k->q_head;

	off += k->una_off;
	while (n) {
		const struct resp_ent *e = &k->q[qi % TCP_CORE_RESP_QUEUE];
		const struct resp_piece *pc = &c->piece[e->kind];
		uint32_t len = pc->head_len + pc->body_len, take;

		if (off >= len) {
			off -= len;
			qi++;
			continue;
		}
		take = min_u32(n, len - off);
		if (off < pc->head_len) {
			uint32_t h = min_u32(take, pc->head_len - off);
			uint32_t ds = pc->date_off, de = ds + BLITZ_DATE_LEN;

			memcpy(dst, c->resp.bytes[e->kind] + off, h);
			if (e->date16 != (uint16_t)c->date_sec && off < de &&
			    off + h > ds) {
				char date[BLITZ_DATE_LEN];
				uint64_t sec =
					c->date_sec -
					(uint16_t)((uint16_t)c->date_sec -
						   e->date16);
				uint32_t a = off > ds ? off : ds;
				uint32_t b = off + h < de ? off + h : de;

				http_format_date((time_t)sec, date);
				memcpy(dst + (a - off), date + (a - ds), b - a);
			}
			if (take > h)
				memcpy(dst + h, c->body, take - h);
		} else {
			memcpy(dst, c->body + (off - pc->head_len), take);
		}
		dst += take;
		n -= take;
		off = 0;
		qi++;
	}
}

/* ------------------------------------------------------------------ */
/* SACK scoreboard and RACK (RFC 2018, RFC 6675, RFC 8985)             */
/* ------------------------------------------------------------------ */

static inline bool ts_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* RFC 8985 RACK_sent_after(t1, seq1, t2, seq2). */
static inline bool sent_after(uint32_t t1, uint32_t e1, uint32_t t2,
			      uint32_t e2)
{
	return ts_after(t1, t2) || (t1 == t2 && seq_gt(e1, e2));
}

static inline uint32_t rec_ts(const struct xmit_rec *r)
{
	return r->ts & ~1u;
}

static inline bool rec_rtx(const struct xmit_rec *r)
{
	return r->ts & 1u;
}

/* Full: merge the neighbours sent closest in time, keeping the older
 * time (RACK may then find a loss in the pair sooner, never later). */
static void rec_merge_closest(struct tcp_conn *k)
{
	uint32_t best = UINT32_MAX, i, bi = 0, rtx;

	for (i = 0; i + 1 < k->nrec; i++) {
		uint32_t d = rec_ts(&k->rec[i]) - rec_ts(&k->rec[i + 1]);

		if ((int32_t)d < 0)
			d = 0u - d;
		if (d < best) {
			best = d;
			bi = i;
		}
	}
	rtx = (k->rec[bi].ts | k->rec[bi + 1].ts) & 1u;
	if (ts_after(rec_ts(&k->rec[bi]), rec_ts(&k->rec[bi + 1])))
		k->rec[bi].ts = rec_ts(&k->rec[bi + 1]);
	k->rec[bi].ts = rec_ts(&k->rec[bi]) | rtx;
	k->rec[bi].end = k->rec[bi + 1].end;
	memmove(&k->rec[bi + 1], &k->rec[bi + 2],
		(k->nrec - bi - 2) * sizeof(k->rec[0]));
	k->nrec--;
}

static inline void rec_push(struct tcp_conn *k, const struct xmit_rec *r)
{
	if (k->nrec) {
		struct xmit_rec *l = &k->rec[k->nrec - 1];

		if (l->ts == r->ts && l->end == r->start) {
			l->end = r->end;
			return;
		}
	}
	if (k->nrec == XMIT_RECS)
		rec_merge_closest(k);
	k->rec[k->nrec++] = *r;
}

/* [s, e) leaves now: new data extends the records, a resend overwrites
 * the part of them it covers (so the records keep tiling SND.UNA to
 * SND.MAX, each byte with the time it was last sent). */
static void rec_mark(struct tcp_core *c, struct tcp_conn *k, uint32_t s,
		     uint32_t e)
{
	struct xmit_rec tmp[XMIT_RECS + 2], nr = {s, e, c->now_us & ~1u};
	uint32_t i, n = 0;
	bool ins = false;

	/* Send times strictly ordered per connection: a resend is later
	 * than all sent before it even within one microsecond (RACK tells
	 * segments sent at the same time apart by sequence, which a resend
	 * would get wrong). */
	if (!ts_after(nr.ts, k->last_ts))
		nr.ts = k->last_ts;
	if (!seq_lt(s, k->snd_max)) {
		k->last_ts = nr.ts;
		rec_push(k, &nr);
		return;
	}
	if (nr.ts == k->last_ts && k->nrec)
		nr.ts += 2;
	k->last_ts = nr.ts;
	nr.ts |= 1u;
	for (i = 0; i < k->nrec; i++) {
		struct xmit_rec r = k->rec[i];

		if (seq_le(r.end, s)) {
			tmp[n++] = r;
			continue;
		}
		if (seq_lt(r.start, s))
			tmp[n++] = (struct xmit_rec){r.start, s, r.ts};
		if (!ins) {
			tmp[n++] = nr;
			ins = true;
		}
		if (seq_gt(r.end, e))
			tmp[n++] = (struct xmit_rec){
				seq_gt(r.start, e) ? r.start : e, r.end, r.ts};
	}
	if (!ins)
		tmp[n++] = nr;
	k->nrec = 0;
	for (i = 0; i < n; i++)
		rec_push(k, &tmp[i]);
}

/* Forget what the cumulative ACK covers. */
static void rec_sb_trim(struct tcp_conn *k, uint32_t ack)
{
	uint32_t i = 0;

	while (i < k->nrec && seq_le(k->rec[i].end, ack))
		i++;
	if (i == k->nrec) {
		k->nrec = 0;
	} else if (i) {
		memmove(k->rec, k->rec + i, (k->nrec - i) * sizeof(k->rec[0]));
		k->nrec = (uint8_t)(k->nrec - i);
	}
	if (k->nrec && seq_lt(k->rec[0].start, ack))
		k->rec[0].start = ack;
	if (!k->nsb)
		return;
	i = 0;
	while (i < k->nsb && seq_le(k->sb[i].end, ack))
		i++;
	if (i) {
		memmove(k->sb, k->sb + i, (k->nsb - i) * sizeof(k->sb[0]));
		k->nsb = (uint8_t)(k->nsb - i);
	}
	if (k->nsb && seq_lt(k->sb[0].start, ack))
		k->sb[0].start = ack;
	k->sacked = 0;
	for (i = 0; i < k->nsb; i++)
		k->sacked += k->sb[i].end - k->sb[i].start;
}

/* Add [s, e) to the scoreboard, merging; past SB_RANGES the highest
 * range is forgotten (its bytes may be sent again, nothing worse). */
static void sb_insert(struct tcp_conn *k, uint32_t s, uint32_t e)
{
	struct seq_range tmp[SB_RANGES + 1];
	uint32_t i, n = 0;
	bool ins = false;

	for (i = 0; i < k->nsb; i++) {
		struct seq_range r = k->sb[i];

		if (seq_lt(r.end, s)) {
			tmp[n++] = r;
		} else if (seq_gt(r.start, e)) {
			if (!ins) {
				tmp[n++] = (struct seq_range){s, e};
				ins = true;
			}
			tmp[n++] = r;
		} else {
			if (seq_lt(r.start, s))
				s = r.start;
			if (seq_gt(r.end, e))
				e = r.end;
		}
	}
	if (!ins)
		tmp[n++] = (struct seq_range){s, e};
	if (n > SB_RANGES)
		n = SB_RANGES;
	memcpy(k->sb, tmp, n * sizeof(tmp[0]));
	k->nsb = (uint8_t)n;
	k->sacked = 0;
	for (i = 0; i < n; i++)
		k->sacked += k->sb[i].end - k->sb[i].start;
}

/* RFC 8985 6.2 steps 1-3 for the bytes [s, e) just delivered (ACKed or
 * SACKed for the first time): RACK follows the most recently sent of
 * them, and one never resent below the highest SACKed byte shows
 * reordering. A resend delivered sooner than the minimum RTT may be the
 * original's ACK: it does not count (step 2). */
static void rack_delivered(struct tcp_core *c, struct tcp_conn *k, uint32_t s,
			   uint32_t e)
{
	uint32_t i;

	for (i = 0; i < k->nrec; i++) {
		const struct xmit_rec *r = &k->rec[i];
		uint32_t ts = rec_ts(r), end, rtt;

		if (seq_le(r->end, s))
			continue;
		if (!seq_lt(r->start, e))
			break;
		end = seq_lt(r->end, e) ? r->end : e;
		rtt = ts_after(ts, c->now_us) ? 0 : c->now_us - ts;
		if (rec_rtx(r)) {
			if (rtt < k->min_rtt_us)
				continue;
		} else {
			if (!k->min_rtt_us || rtt < k->min_rtt_us)
				k->min_rtt_us = rtt ? rtt : 1;
			if (seq_lt(end, k->fack))
				k->reord_seen = 1;
		}
		if (!k->rack_valid ||
		    sent_after(ts, end, k->rack_ts, k->rack_end)) {
			k->rack_ts = ts;
			k->rack_end = end;
			k->rack_rtt_us = rtt;
			k->rack_valid = 1;
		}
	}
}

/* The parts of [s, e) the scoreboard does not hold, to rack_delivered. */
static void deliver_new(struct tcp_core *c, struct tcp_conn *k, uint32_t s,
			uint32_t e)
{
	uint32_t i;

	for (i = 0; i < k->nsb && seq_lt(s, e); i++) {
		const struct seq_range *g = &k->sb[i];

		if (seq_le(g->end, s))
			continue;
		if (!seq_lt(g->start, e))
			break;
		if (seq_lt(s, g->start))
			rack_delivered(c, k, s, g->start);
		s = g->end;
	}
	if (seq_lt(s, e))
		rack_delivered(c, k, s, e);
}

/* RFC 8985 6.2 step 4: the reordering window, microseconds. */
static uint32_t rack_reo_wnd(const struct tcp_conn *k)
{
	uint32_t w;

	if (!k->reord_seen && (k->in_recovery || k->sacked >= 3u * k->mss))
		return 0;
	w = k->reo_mult * (k->min_rtt_us / 4);
	return w < k->srtt_us ? w : k->srtt_us;
}

struct rack_scan_out {
	uint32_t lost;			 /* bytes RACK deems lost, not SACKed */
	uint32_t first_start, first_len; /* the lowest lost piece */
	uint32_t wait_us;		 /* until the next may be (has_wait) */
	bool has_wait;
};

static void rack_piece(struct rack_scan_out *o, uint32_t a, uint32_t b,
		       int32_t left)
{
	if (left <= 0) {
		o->lost += b - a;
		if (!o->first_len) {
			o->first_start = a;
			o->first_len = b - a;
		}
	} else if (!o->has_wait || (uint32_t)left < o->wait_us) {
		o->wait_us = (uint32_t)left;
		o->has_wait = true;
	}
}

/*
 * RFC 8985 6.2 step 5: a byte neither ACKed nor SACKed is lost when it
 * was sent before the segment RACK follows and RACK.rtt + reo_wnd have
 * passed since it was sent; for the others, how long until they would
 * be. Walks the records and the scoreboard (both bounded and sorted).
 */
static void rack_scan(struct tcp_core *c, const struct tcp_conn *k,
		      struct rack_scan_out *o)
{
	uint32_t reo = rack_reo_wnd(k), i, j;

	memset(o, 0, sizeof(*o));
	if (!k->rack_valid)
		return;
	for (i = 0; i < k->nrec; i++) {
		const struct xmit_rec *r = &k->rec[i];
		uint32_t ts = rec_ts(r), a = r->start, b = r->end;
		int32_t left;

		if (ts_after(ts, k->rack_ts))
			continue;
		if (ts == k->rack_ts) {
			if (!seq_lt(a, k->rack_end))
				continue;
			if (seq_gt(b, k->rack_end))
				b = k->rack_end;
		}
		left = (int32_t)(ts + k->rack_rtt_us + reo - c->now_us);
		for (j = 0; j < k->nsb && seq_lt(a, b); j++) {
			const struct seq_range *g = &k->sb[j];

			if (seq_le(g->end, a))
				continue;
			if (!seq_lt(g->start, b))
				break;
			if (seq_lt(a, g->start))
				rack_piece(o, a, g->start, left);
			a = g->end;
		}
		if (seq_lt(a, b))
			rack_piece(o, a, b, left);
	}
}

/* RFC 6675 pipe: in flight, neither SACKed nor deemed lost. */
static uint32_t sack_pipe(const struct tcp_conn *k,
			  const struct rack_scan_out *o)
{
	uint32_t flight = k->snd_max - k->snd_una;
	uint32_t out = k->sacked + o->lost;

	return flight > out ? flight - out : 0;
}

static void send_data(struct tcp_core *c, struct tcp_conn *k, uint32_t seq,
		      uint32_t n, bool fin)
{
	struct tcp_frame *f = tx_get(c);
	uint32_t off;
	uint8_t flags =
		TCPHDR_ACK | (n ? TCPHDR_PSH : 0) | (fin ? TCPHDR_FIN : 0);

	/* Recorded even without a frame: it counts as sent (and lost). */
	if (k->sack_ok)
		rec_mark(c, k, seq, seq + n + fin);
	if (!f)
		return;
	off = write_hdrs(c, f->data, &k->t, seq, k->rcv_nxt, flags, OUR_WINDOW,
			 0, n);
	if (n)
		copy_stream(c, k, seq - k->snd_una, n,
			    f->data + off + WIRE_TCP_HLEN);
	tcp_csum(f->data, &k->t, off, WIRE_TCP_HLEN + n);
	f->len = off + WIRE_TCP_HLEN + n;
	tx_put(c, f);
	if (fin)
		c->cnt.finack++;
}

static void arm_rto(struct tcp_core *c, struct tcp_conn *k)
{
	if (!k->rto_ms)
		k->rto_ms = c->p.rto_initial_ms;
	k->rto_at = c->now_ms + k->rto_ms;
	timer_update(c, k);
}

/* Going back after an RTO: step snd_nxt over what the peer SACKed, and
 * return how much may go before the next SACKed range. */
static uint32_t sb_skip(struct tcp_conn *k)
{
	uint32_t i;

	for (i = 0; i < k->nsb; i++) {
		const struct seq_range *g = &k->sb[i];

		if (seq_le(g->end, k->snd_nxt))
			continue;
		if (seq_le(g->start, k->snd_nxt)) {
			k->snd_nxt = g->end;
			continue;
		}
		return g->start - k->snd_nxt;
	}
	return UINT32_MAX;
}

/*
 * Send what the window allows: data from snd_nxt, our FIN after the last
 * response when closing. probe: send at least one byte (or the FIN) even
 * into a closed window (zero-window probe and RTO retransmission).
 * Returns the segments sent.
 */
static int conn_output(struct tcp_core *c, struct tcp_conn *k, bool probe)
{
	uint32_t cwnd = k->cwnd;
	int sent = 0;

	if (k->fin_acked)
		return 0;
	/* With SACK information, RFC 6675: new data while pipe (what is
	 * still in flight: neither SACKed nor lost) is under cwnd; as a
	 * window from SND.UNA that is cwnd + SACKed + lost. */
	if (__builtin_expect(k->sack_ok && (k->nsb || k->in_recovery), 0) &&
	    !seq_lt(k->snd_nxt, k->snd_max)) {
		struct rack_scan_out o;
		uint32_t pipe;

		rack_scan(c, k, &o);
		pipe = sack_pipe(k, &o);
		cwnd = (k->snd_max - k->snd_una) +
		       (cwnd > pipe ? cwnd - pipe : 0);
	}
	for (;;) {
		uint32_t end = k->snd_una + k->q_bytes;
		uint32_t wnd = min_u32(min_u32(k->snd_wnd, cwnd),
				       TCP_CORE_MAX_INFLIGHT);
		uint32_t limit = k->snd_una + wnd, cap = UINT32_MAX;
		bool fin, forced = false;
		uint32_t n, avail, room;

		if (__builtin_expect(k->nsb, 0) &&
		    seq_lt(k->snd_nxt, k->snd_max))
			cap = sb_skip(k);
		if (seq_lt(k->snd_nxt, end)) {
			avail = min_u32(end - k->snd_nxt, cap);
			room = seq_lt(k->snd_nxt, limit) ? limit - k->snd_nxt
							 : 0;
			forced = !room && probe && !sent;
			if (forced)
				room = 1;
			n = min_u32(min_u32(k->mss, avail), room);
			if (!n)
				break;
			fin = k->fin_pending && n == avail;
		} else if (k->fin_pending && k->snd_nxt == end &&
			   (!k->fin_sent || probe)) {
			n = 0;
			fin = true;
		} else {
			break;
		}
		send_data(c, k, k->snd_nxt, n, fin);
		if (fin) {
			k->fin_sent = 1;
			k->fin_seq = end;
		}
		if (seq_gt(k->snd_nxt + n + fin, k->snd_max)) {
			if (n && !seq_lt(k->snd_nxt, k->snd_max))
				c->cnt.replies++;
			k->snd_max = k->snd_nxt + n + fin;
			if (!k->rtt_on && !forced) {
				k->rtt_on = 1;
				k->rtt_seq = k->snd_max;
				k->rtt_t0 = c->now_us;
			}
		} else {
			c->cnt.retransmits++;
			k->rtt_on = 0; /* Karn: no sample across a resend */
		}
		/* A zero-window probe does not advance snd_nxt: the peer
		 * may well drop it, and the byte goes again when the window
		 * opens (an ACK of it is still accepted: snd_max covers it). */
		if (!forced)
			k->snd_nxt += n + fin;
		sent++;
		if (forced)
			break;
		if (fin)
			break;
	}
	/* Something unacknowledged, or data held back by a closed window:
	 * the RTO timer retransmits or probes. */
	if (k->snd_una != k->snd_max ||
	    seq_lt(k->snd_nxt, k->snd_una + k->q_bytes)) {
		if (!k->rto_at)
			arm_rto(c, k);
	}
	return sent;
}

/* ------------------------------------------------------------------ */
/* Requests in                                                         */
/* ------------------------------------------------------------------ */

static void enqueue_resp(struct tcp_core *c, struct tcp_conn *k, int kind)
{
	struct resp_ent *e =
		&k->q[(k->q_head + k->q_count) % TCP_CORE_RESP_QUEUE];

	e->kind = (uint8_t)kind;
	e->date16 = (uint16_t)c->date_sec;
	k->q_count++;
	k->q_bytes += resp_len(c, (uint8_t)kind);
	c->cnt.requests++;
	if (kind >= BLITZ_RESP_OK_KINDS)
		c->cnt.http_errors++;
}

/* Whether the connection takes no more requests (closing either way). */
static bool conn_closing(const struct tcp_conn *k)
{
	return k->fin_pending || k->fin_rcvd;
}

/*
 * Answer the requests at buf[0..len) into the response queue (the request
 * loop is http_conn's): stops at an incomplete request or a full queue.
 * Returns the bytes consumed; everything when the connection is closing
 * (the rest is discarded).
 */
static uint32_t parse_requests(struct tcp_core *c, struct tcp_conn *k,
			       const uint8_t *buf, uint32_t len)
{
	uint8_t kind[TCP_CORE_RESP_QUEUE];
	struct http_conn_out out = {kind, 0, TCP_CORE_RESP_QUEUE - k->q_count};
	uint32_t n;

	if (k->fin_pending)
		return len;
	n = (uint32_t)http_conn_consume(&k->http, buf, len, &out, 0);
	for (unsigned int i = 0; i < out.n; i++)
		enqueue_resp(c, k, kind[i]);
	if (http_conn_closing(&k->http))
		k->fin_pending = 1;
	return n;
}

static uint8_t *rxbuf_of(struct tcp_core *c, const struct tcp_conn *k)
{
	return c->rxbufs + (size_t)k->rxb * RXBUF_SIZE;
}

/* Parse what the reassembly buffer holds; give the buffer back when
 * emptied. */
static void parse_buffered(struct tcp_core *c, struct tcp_conn *k)
{
	uint8_t *b;
	uint32_t n;

	if (k->rxb == NIL)
		return;
	b = rxbuf_of(c, k);
	n = parse_requests(c, k, b, k->rxlen);
	if (n >= k->rxlen && !k->ooo_len) {
		rxbuf_put(c, k);
		return;
	}
	if (n) {
		/* The out-of-order range held behind moves with the rest. */
		uint32_t used = k->rxlen;

		if (k->ooo_len && k->ooo_off + k->ooo_len > used)
			used = k->ooo_off + k->ooo_len;
		memmove(b, b + n, used - n);
		k->rxlen -= n;
		k->ooo_off -= n;
		/* A request was answered; what is left starts the next one,
		 * whose header deadline runs from now. */
		k->hdr_at = c->now_ms + c->p.header_ms;
	}
}

static void conn_reset(struct tcp_core *c, struct tcp_conn *k, bool send);

static uint32_t src_slot(const struct tcp_core *c, const struct tcp_tuple *t)
{
	__u64 w[2];

	memcpy(w, t->raddr, 16);
	return (uint32_t)blitz_siphash_cd(c->key[1], c->key[0], w, 2, 1, 3) &
	       c->src_mask;
}

/*
 * A reassembly buffer for a partial request, or false (the connection is
 * then reset). A source already holding its share (src_cap) gets none;
 * when the pool is empty, the connection that has held its buffer longest
 * is reset to free one: a few thousand clients sitting on partial headers
 * can delay a new request by at most the time it takes them to send
 * pool-size new partial requests, never stop it.
 */
static bool rxbuf_get(struct tcp_core *c, struct tcp_conn *k)
{
	uint32_t slot = src_slot(c, &k->t), idx = conn_idx(c, k);

	if (c->src_cnt[slot] >= c->src_cap) {
		c->cnt.rx_src_cap++;
		return false;
	}
	if (!c->nrxfree) {
		if (c->lru_head == NIL) {
			c->cnt.rx_buf_empty++;
			return false;
		}
		c->cnt.rx_evicted++;
		conn_reset(c, &c->conns[c->lru_head], true);
	}
	k->rxb = c->rxfree[--c->nrxfree];
	k->rxlen = 0;
	k->src_slot = slot;
	c->src_cnt[slot]++;
	k->lru_next = NIL;
	k->lru_prev = c->lru_tail;
	if (c->lru_tail != NIL)
		c->conns[c->lru_tail].lru_next = idx;
	else
		c->lru_head = idx;
	c->lru_tail = idx;
	k->hdr_at = c->now_ms + c->p.header_ms;
	timer_update(c, k);
	return true;
}

/*
 * Take in-order payload. Returns the bytes accepted (the rest is left for
 * the peer to retransmit: our buffer was full), or -1 when a partial
 * request needs a buffer and the pool is empty.
 */
static long conn_consume(struct tcp_core *c, struct tcp_conn *k,
			 const uint8_t *data, uint32_t len)
{
	uint32_t n = 0, take;

	if (k->rxb == NIL) {
		n = parse_requests(c, k, data, len);
		if (n == len)
			return len;
		if (!rxbuf_get(c, k))
			return -1;
	}
	take = min_u32(len - n, RXBUF_SIZE - k->rxlen);
	memcpy(rxbuf_of(c, k) + k->rxlen, data + n, take);
	k->rxlen += take;
	if (k->ooo_len && k->rxlen >= k->ooo_off) {
		/* The hole is filled: what was held joins the stream. */
		uint32_t end = k->ooo_off + k->ooo_len;

		if (end > k->rxlen) {
			take += end - k->rxlen;
			k->rxlen = end;
		}
		k->ooo_len = 0;
	}
	parse_buffered(c, k);
	/* Closing: whatever did not fit is discarded, not refused. */
	if (conn_closing(k))
		return n + take > len ? n + take : len;
	return n + take;
}

/*
 * Hold an out-of-order segment of a SACK peer (it is then SACKed) in the
 * reassembly buffer, at its distance from RCV.NXT after the bytes held:
 * one range per connection, within the buffer's 8 KiB, and a buffer only
 * if one is free (never one taken from another connection). Otherwise
 * it is dropped as without SACK; the peer sends it again.
 */
static void ooo_hold(struct tcp_core *c, struct tcp_conn *k, uint32_t seq,
		     const uint8_t *data, uint32_t len)
{
	uint32_t off, s = seq, e = seq + len;

	if (conn_closing(k) || !len)
		return;
	if (k->ooo_len) {
		uint32_t oe = k->ooo_seq + k->ooo_len;

		if (seq_gt(s, oe) || seq_lt(e, k->ooo_seq))
			return; /* a second range: not kept */
		if (seq_gt(s, k->ooo_seq))
			s = k->ooo_seq;
		if (seq_lt(e, oe))
			e = oe;
	}
	off = k->rxlen + (s - k->rcv_nxt);
	if (off + (e - s) > RXBUF_SIZE)
		return;
	if (k->rxb == NIL && (!c->nrxfree || !rxbuf_get(c, k)))
		return;
	memcpy(rxbuf_of(c, k) + k->rxlen + (seq - k->rcv_nxt), data, len);
	k->ooo_seq = s;
	k->ooo_len = e - s;
	k->ooo_off = off;
}

/* ------------------------------------------------------------------ */
/* Segments in                                                         */
/* ------------------------------------------------------------------ */

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

static void conn_reset(struct tcp_core *c, struct tcp_conn *k, bool send)
{
	if (send)
		send_rst(c, &k->t, k->snd_nxt, k->rcv_nxt, true);
	c->cnt.connections_reset++;
	conn_free(c, k);
}

static void answer_syn(struct tcp_core *c, const struct seg *s)
{
	uint8_t opts[12], info, mi = 0;
	uint32_t optlen, isn, i;
	uint16_t our_mss = s->t.v6 ? c->mss6 : c->mss4;

	for (i = 0; i < 8; i++)
		if (cookie_mss[i] <= s->mss)
			mi = (uint8_t)i;
	/* The cookie's low byte: MSS index (3 bits), window scale (4 bits,
	 * 15: none), SACK-permitted (bit 7), so the handshake's ACK brings
	 * back all the SYN said. */
	info = (uint8_t)(mi | (s->wscale == 0xff ? 15 : s->wscale) << 3 |
			 (s->sack_ok ? COOKIE_SACK_OK : 0));
	isn = cookie_make(c, &s->t, s->seq, info);
	optlen = wire_opt_mss(opts, our_mss);
	if (s->sack_ok)
		optlen += wire_opt_sack_perm(opts + optlen);
	/* Shift 0: we need no big receive window, but offering the option
	 * enables the peer's scaling. */
	if (s->wscale != 0xff)
		optlen += wire_opt_wscale(opts + optlen, 0);
	send_ctl(c, &s->t, isn, s->seq + 1, TCPHDR_SYN | TCPHDR_ACK, opts,
		 optlen);
	c->cnt.synack++;
}

static void conn_handle(struct tcp_core *c, struct tcp_conn *k,
			const struct seg *s);

/* A segment for a tuple we hold no connection for. */
static void handle_unknown(struct tcp_core *c, const struct seg *s, uint32_t h)
{
	struct tcp_conn *k;
	uint8_t info;
	uint16_t mss;

	if (s->flags & TCPHDR_RST)
		return;
	if ((s->flags & (TCPHDR_SYN | TCPHDR_ACK)) == TCPHDR_SYN) {
		answer_syn(c, s);
		return;
	}
	if (!(s->flags & TCPHDR_ACK) || (s->flags & TCPHDR_SYN))
		return;
	if (!cookie_check(c, &s->t, s->seq, s->ack, &info)) {
		c->cnt.drop_bad_cookie++;
		send_rst(c, &s->t, s->ack, 0, false);
		return;
	}
	k = conn_alloc(c, &s->t, h);
	if (!k) {
		c->cnt.table_full++;
		send_rst(c, &s->t, s->ack, 0, false);
		return;
	}
	c->cnt.connections_opened++;
	k->snd_una = k->snd_nxt = k->snd_max = s->ack;
	k->rcv_nxt = s->seq;
	mss = cookie_mss[info & 7];
	k->mss = min_u32(mss, s->t.v6 ? c->mss6 : c->mss4);
	k->snd_wscale =
		((info >> 3) & 15) == 15 ? 0 : (uint8_t)((info >> 3) & 15);
	k->sack_ok = !!(info & COOKIE_SACK_OK);
	k->reo_mult = 1;
	if (k->snd_wscale > 14)
		k->snd_wscale = 14;
	/* RFC 6928: IW = min(10 MSS, max(2 MSS, 14600)); ssthresh
	 * arbitrarily high until the first loss (RFC 5681 3.1). */
	k->cwnd = min_u32(10u * k->mss,
			  2u * k->mss > 14600 ? 2u * k->mss : 14600);
	k->ssthresh = 0x7fffffffu;
	k->recover = s->ack - 1;
	k->fack = s->ack;
	k->snd_wl1 = s->seq - 1; /* so this very segment sets the window */
	k->snd_wl2 = s->ack;
	k->max_snd_wnd = (uint32_t)s->win << k->snd_wscale;
	k->rto_ms = k->rto_base_ms = c->p.rto_initial_ms;
	k->idle_at = c->now_ms + c->p.idle_ms;
	timer_update(c, k);
	conn_handle(c, k, s);
}

/* Free the connection once both FINs are through. */
static bool conn_maybe_done(struct tcp_core *c, struct tcp_conn *k)
{
	if (k->fin_acked && k->fin_rcvd) {
		c->cnt.connections_finished++;
		conn_free(c, k);
		return true;
	}
	return false;
}

static void conn_ack(struct tcp_core *c, struct tcp_conn *k, uint32_t ack)
{
	uint32_t bytes = ack - k->snd_una;

	if (k->fin_sent && ack == k->fin_seq + 1) {
		k->fin_acked = 1;
		bytes--;
	}
	k->q_bytes -= bytes;
	while (bytes) {
		const struct resp_ent *e = &k->q[k->q_head];
		uint32_t rem = resp_len(c, e->kind) - k->una_off;

		if (bytes >= rem) {
			bytes -= rem;
			k->una_off = 0;
			k->q_head = (uint8_t)((k->q_head + 1) %
					      TCP_CORE_RESP_QUEUE);
			k->q_count--;
		} else {
			k->una_off += bytes;
			bytes = 0;
		}
	}
	/* Zero-length responses (none today) still leave the queue. */
	while (k->q_count && k->una_off == 0 &&
	       resp_len(c, k->q[k->q_head].kind) == 0) {
		k->q_head = (uint8_t)((k->q_head + 1) % TCP_CORE_RESP_QUEUE);
		k->q_count--;
	}
	if (k->sack_ok)
		rec_sb_trim(k, ack);
	k->snd_una = ack;
	if (seq_lt(k->snd_nxt, k->snd_una))
		k->snd_nxt = k->snd_una;
	k->retries = 0;
	k->rto_ms = k->rto_base_ms;
	k->rto_at = 0;
	k->tlp_at = 0;
	if (k->tlp_out && !seq_lt(ack, k->tlp_end))
		k->tlp_out = 0;
}

/* RFC 6298 2.2/2.3 on one sample r (us); the RTO has rto_initial_ms as
 * its floor (200 ms, as Linux's TCP_RTO_MIN) and rto_max_ms as cap. */
static void rtt_update(struct tcp_core *c, struct tcp_conn *k, uint32_t r)
{
	uint32_t rto;

	if (!r)
		r = 1;
	if (!k->min_rtt_us || r < k->min_rtt_us)
		k->min_rtt_us = r; /* RACK's reordering window */
	if (!k->srtt_us) {
		k->srtt_us = r;
		k->rttvar_us = r / 2;
	} else {
		uint32_t d = k->srtt_us > r ? k->srtt_us - r : r - k->srtt_us;

		k->rttvar_us = k->rttvar_us - k->rttvar_us / 4 + d / 4;
		k->srtt_us = k->srtt_us - k->srtt_us / 8 + r / 8;
	}
	rto = (k->srtt_us +
	       (k->rttvar_us * 4 > 1000 ? k->rttvar_us * 4 : 1000) + 999) /
	      1000;
	if (rto < c->p.rto_initial_ms)
		rto = c->p.rto_initial_ms;
	if (rto > c->p.rto_max_ms)
		rto = c->p.rto_max_ms;
	k->rto_base_ms = k->rto_ms = rto;
}

/* ssthresh after a loss: max(FlightSize / 2, 2 MSS) (RFC 5681 eq. 4). */
static uint32_t loss_ssthresh(const struct tcp_conn *k)
{
	uint32_t flight = k->snd_max - k->snd_una;

	return flight / 2 > 2u * k->mss ? flight / 2 : 2u * k->mss;
}

/*
 * Congestion control on an ACK of `acked` new bytes (snd_una already
 * advanced): NewReno (RFC 5681, RFC 6582). In recovery, a partial ACK
 * resends the next hole and deflates the window; the full ACK ends it
 * with cwnd = min(ssthresh, FlightSize + MSS). Otherwise slow start
 * below ssthresh (cwnd += bytes acknowledged, as Linux), and congestion
 * avoidance above: one MSS per cwnd of bytes acknowledged.
 */
static void cc_on_ack(struct tcp_core *c, struct tcp_conn *k, uint32_t acked);

/* Resend one segment from snd_una (data, or the FIN alone); the send
 * state (snd_nxt, cwnd) is left as it is: one loss, one segment. */
static void resend_una(struct tcp_core *c, struct tcp_conn *k)
{
	/* Only bytes sent before: past snd_max the peer's window may be
	 * closed, and an ACK of them would be taken for one of data never
	 * sent. */
	uint32_t sent = k->snd_max - k->snd_una - (k->fin_sent ? 1 : 0);
	uint32_t n = min_u32(min_u32(k->q_bytes, k->mss), sent);
	bool fin = k->fin_sent && n == k->q_bytes;

	send_data(c, k, k->snd_una, n, fin);
	c->cnt.retransmits++;
	k->rtt_on = 0;
}

static void cc_on_ack(struct tcp_core *c, struct tcp_conn *k, uint32_t acked)
{
	if (k->in_recovery) {
		if (!seq_lt(k->snd_una, k->recover)) {
			uint32_t flight = k->snd_max - k->snd_una;

			k->in_recovery = 0;
			k->sack_rec = 0;
			k->cwnd = min_u32(k->ssthresh,
					  (flight > k->mss ? flight : k->mss) +
						  k->mss);
			k->bytes_acked = 0;
			return;
		}
		/* With SACK, RACK finds the holes and pipe paces the
		 * sending (RFC 6675): cwnd stays at ssthresh. */
		if (k->sack_rec)
			return;
		/* Partial ACK: the next hole is lost too. */
		if (k->snd_una != k->snd_max)
			resend_una(c, k);
		k->cwnd = k->cwnd > acked ? k->cwnd - acked : 0;
		if (acked >= k->mss)
			k->cwnd += k->mss;
		if (k->cwnd < k->mss)
			k->cwnd = k->mss;
		return;
	}
	if (k->cwnd < k->ssthresh) {
		/* Every byte acknowledged, as Linux counts (packets acked),
		 * not RFC 3465's L = 2 MSS: a GRO'd client ACKs ten segments
		 * at once, and L would hold such a flow to 2 MSS per RTT. No
		 * more than ssthresh by slow start; the rest in avoidance. */
		uint32_t room = k->ssthresh - k->cwnd;

		k->cwnd += min_u32(acked, room);
		if (acked > room)
			k->bytes_acked += acked - room;
	} else {
		k->bytes_acked += acked;
		if (k->bytes_acked >= k->cwnd) {
			k->bytes_acked -= k->cwnd;
			k->cwnd += k->mss;
		}
	}
	if (k->cwnd > TCP_CORE_MAX_INFLIGHT)
		k->cwnd = TCP_CORE_MAX_INFLIGHT;
}

/* RFC 8985 7.2: the probe timeout, or 0 when no probe is due: a probe
 * needs an RTT estimate, data in flight, an open window, and the open
 * state (not in recovery, not after an RTO until it is repaired). */
static inline __attribute__((always_inline)) void tlp_arm(struct tcp_core *c,
							  struct tcp_conn *k)
{
	uint32_t flight = k->snd_max - k->snd_una, pto;

	if (k->rack_tmr)
		return;
	k->tlp_at = 0;
	if (!k->srtt_us || !flight || k->tlp_out || k->in_recovery ||
	    seq_lt(k->snd_una, k->recover) || !k->snd_wnd || !k->rto_at)
		return;
	pto = (2 * k->srtt_us + 999) / 1000 +
	      (flight <= k->mss ? TLP_WC_DELACK_MS : TLP_EXTRA_MS);
	if (c->now_ms + pto >= k->rto_at)
		return; /* the RTO comes first: no probe */
	k->tlp_at = c->now_ms + pto;
}

/*
 * The probe: one new segment when the peer's window has room for it,
 * else the last segment sent again (RFC 8985 7.3); then the RTO is armed
 * from now, and no other probe goes until an ACK covers this one.
 */
static void tlp_send(struct tcp_core *c, struct tcp_conn *k)
{
	uint32_t end = k->snd_una + k->q_bytes;
	uint32_t wedge = k->snd_una + k->snd_wnd;

	if (k->snd_nxt == k->snd_max && seq_lt(k->snd_nxt, end) &&
	    seq_lt(k->snd_nxt, wedge)) {
		uint32_t n = min_u32(min_u32(k->mss, end - k->snd_nxt),
				     wedge - k->snd_nxt);
		bool fin = k->fin_pending && n == end - k->snd_nxt;

		send_data(c, k, k->snd_nxt, n, fin);
		if (fin) {
			k->fin_sent = 1;
			k->fin_seq = end;
		}
		k->snd_nxt += n + fin;
		k->snd_max = k->snd_nxt;
		c->cnt.replies++;
	} else {
		uint32_t sent = k->snd_max - k->snd_una - (k->fin_sent ? 1 : 0);
		uint32_t n = min_u32(k->mss, sent);
		bool fin = k->fin_sent;

		if (!n && !fin)
			return;
		send_data(c, k, k->snd_una + sent - n, n, fin);
		c->cnt.retransmits++;
		k->rtt_on = 0;
	}
	c->cnt.tlp_probes++;
	k->tlp_out = 1;
	k->tlp_end = k->snd_max;
	k->rto_at = c->now_ms + k->rto_ms;
}

/*
 * The SACK blocks of an acceptable ACK. RFC 2883: a first block below
 * the cumulative ACK, or inside the second block, reports a duplicate
 * (D-SACK), not a hole; it widens RACK's reordering window (RFC 8985
 * 6.2 step 4). Blocks beyond SND.MAX are ignored; the rest are clipped
 * to the cumulative ACK.
 */
static void sack_on_ack(struct tcp_core *c, struct tcp_conn *k,
			const struct seg *s)
{
	uint32_t i, fack, lo = seq_gt(s->ack, k->snd_una) ? s->ack : k->snd_una;

	if (seq_lt(k->fack, lo))
		k->fack = lo;
	fack = k->fack;

	for (i = 0; i < s->nsack; i++) {
		uint32_t a = s->sack[i].start, b = s->sack[i].end;

		if (i == 0 && (seq_lt(a, s->ack) ||
			       (s->nsack > 1 && !seq_lt(a, s->sack[1].start) &&
				!seq_gt(b, s->sack[1].end)))) {
			c->cnt.dsacks++;
			k->reord_seen = 1;
			if (k->reo_mult < REO_MULT_MAX)
				k->reo_mult++;
			continue;
		}
		if (seq_lt(a, lo))
			a = lo;
		if (!seq_lt(a, b) || seq_gt(b, k->snd_max))
			continue;
		deliver_new(c, k, a, b);
		sb_insert(k, a, b);
		if (seq_gt(b, fack))
			fack = b;
	}
	k->fack = fack;
}

/* Resend the lost piece at seq (at most one MSS of it, with the FIN when
 * it holds the FIN's number). */
static void rack_resend(struct tcp_core *c, struct tcp_conn *k, uint32_t seq,
			uint32_t len)
{
	uint32_t stream_end = k->snd_una + k->q_bytes;
	uint32_t n = seq_lt(seq, stream_end)
			     ? min_u32(min_u32(len, k->mss), stream_end - seq)
			     : 0;
	bool fin = k->fin_sent && seq + n == k->fin_seq &&
		   seq_lt(k->fin_seq, seq + len);

	if (!n && !fin)
		return;
	send_data(c, k, seq, n, fin);
	c->cnt.retransmits++;
	c->cnt.rack_retransmits++;
	k->rtt_on = 0;
}

/*
 * RACK-TLP loss detection and RFC 6675 recovery, after an ACK or when
 * the reordering timer fires: what RACK deems lost starts a recovery
 * (ssthresh = cwnd = FlightSize / 2, once per window: not again before
 * SND.UNA passes the recovery point) and is resent while pipe is under
 * cwnd, the first at once; what may yet be lost arms the reordering
 * timer. Nothing to do without SACK information or in the go-back-N of
 * an RTO.
 */
static void rack_step(struct tcp_core *c, struct tcp_conn *k)
{
	struct rack_scan_out o;
	bool first = false;
	int budget = 64;

	if (k->rack_tmr) {
		k->rack_tmr = 0;
		k->tlp_at = 0;
	}
	if ((!k->nsb && !k->sack_rec) || !k->rack_valid ||
	    seq_lt(k->snd_nxt, k->snd_max) || k->snd_una == k->snd_max)
		return;
	rack_scan(c, k, &o);
	if (o.lost && !k->in_recovery) {
		if (!seq_lt(k->snd_una, k->recover)) {
			k->ssthresh = loss_ssthresh(k);
			k->cwnd = k->ssthresh;
			c->cnt.sack_recoveries++;
		}
		k->recover = k->snd_max;
		k->in_recovery = 1;
		k->sack_rec = 1;
		k->tlp_at = 0;
		k->bytes_acked = 0;
		first = true;
	}
	while (k->in_recovery && o.lost && budget--) {
		if (!first && sack_pipe(k, &o) >= k->cwnd)
			break;
		first = false;
		rack_resend(c, k, o.first_start, o.first_len);
		rack_scan(c, k, &o);
	}
	if (o.has_wait) {
		k->rack_tmr = 1;
		k->tlp_at = c->now_ms + (o.wait_us + 999) / 1000;
		timer_update(c, k);
	}
}

static void conn_handle(struct tcp_core *c, struct tcp_conn *k,
			const struct seg *s)
{
	const uint8_t *data = s->data;
	uint32_t len = s->len, seq = s->seq;
	bool fin = s->flags & TCPHDR_FIN, need_ack = false;

	uint32_t una0 = k->snd_una, wnd = (uint32_t)s->win << k->snd_wscale;

	if (s->flags & TCPHDR_RST) {
		/* RFC 5961 3.2: only a RST at exactly RCV.NXT resets (or at
		 * the FIN we took, as Linux's tcp_reset_check); one elsewhere
		 * in the window gets a challenge ACK, so a blind attacker
		 * must guess the exact number, and the real peer, whose RST
		 * it was, answers with one at the ACK's number. */
		if (seq == k->rcv_nxt ||
		    (k->fin_rcvd && seq == k->rcv_nxt - 1)) {
			c->cnt.drop_rst++;
			conn_reset(c, k, false);
		} else if (seq_gt(seq, k->rcv_nxt) &&
			   seq_lt(seq, k->rcv_nxt + OUR_WINDOW)) {
			send_ack_limited(c, k, true);
		}
		return;
	}
	if (s->flags & TCPHDR_SYN) {
		/* RFC 5961 4.2: a SYN, wherever it falls, on a synchronized
		 * connection never resets it: a challenge ACK. A peer that
		 * really restarted answers it with a RST at RCV.NXT and its
		 * next SYN finds the tuple free. */
		send_ack_limited(c, k, true);
		return;
	}
	if (!(s->flags & TCPHDR_ACK))
		return;
	if (seq_lt(seq + len + fin, k->rcv_nxt) ||
	    seq_gt(seq, k->rcv_nxt + OUR_WINDOW)) {
		/* Wholly outside the receive window (RFC 9293 3.10.7.4):
		 * an ACK of where we are, rate-limited; nothing else. */
		send_ack_limited(c, k, false);
		return;
	}
	if (seq_gt(s->ack, k->snd_max) ||
	    seq_lt(s->ack, k->snd_una - k->max_snd_wnd)) {
		/* RFC 5961 5.2: acknowledges what we never sent, or older
		 * than any window: dropped, data and all; at most a
		 * rate-limited ACK tells the peer where we are. */
		c->cnt.ack_unacceptable++;
		send_ack_limited(c, k, true);
		return;
	}
	if (k->sack_ok) {
		/* What the cumulative ACK delivers first: it was sent before
		 * what the blocks report. */
		if (seq_gt(s->ack, k->snd_una))
			deliver_new(c, k, k->snd_una, s->ack);
		if (s->nsack)
			sack_on_ack(c, k, s);
		if (seq_gt(s->ack, k->fack))
			k->fack = s->ack;
	}
	if (seq_gt(s->ack, k->snd_una)) {
		uint32_t acked = s->ack - k->snd_una;

		if (k->rtt_on && !seq_lt(s->ack, k->rtt_seq)) {
			k->rtt_on = 0;
			rtt_update(c, k, c->now_us - k->rtt_t0);
		}
		conn_ack(c, k, s->ack);
		cc_on_ack(c, k, acked);
		k->dupacks = 0;
	} else if (s->ack == k->snd_una && !len && !fin &&
		   k->snd_una != k->snd_max && wnd == k->snd_wnd) {
		/* Duplicate ACKs: the third starts NewReno fast recovery
		 * (the segment at snd_una was lost: resend it now, not at
		 * the RTO); each later one inflates cwnd by one MSS, for
		 * the segment that left the network. */
		++k->dupacks;
		if (k->in_recovery) {
			if (!k->sack_rec)
				k->cwnd += k->mss;
		} else if (k->dupacks == 3 && seq_gt(s->ack, k->recover) &&
			   !(k->sack_ok && k->nsb)) {
			/* (With SACK blocks, RACK decides below.) */
			k->ssthresh = loss_ssthresh(k);
			k->recover = k->snd_max;
			k->in_recovery = 1;
			k->tlp_at = 0;
			resend_una(c, k);
			c->cnt.fast_retransmits++;
			k->cwnd = k->ssthresh + 3u * k->mss;
			k->bytes_acked = 0;
		}
	}
	k->idle_at = c->now_ms + (k->fin_acked ? FIN_WAIT_MS : c->p.idle_ms);
	/* The send window, only from a segment newer than the one that set
	 * it last (RFC 9293 3.10.7.4, SND.WL1/WL2), as Linux's
	 * tcp_may_update_window reads "newer": an ACK of new data, a later
	 * sequence number, or the same one opening (or closing) the window.
	 * An old ACK (below SND.UNA) never updates it: a reordered older
	 * segment does not undo a newer one. */
	if (!seq_lt(s->ack, una0) &&
	    (seq_gt(s->ack, una0) || seq_lt(k->snd_wl1, seq) ||
	     (k->snd_wl1 == seq && (wnd > k->snd_wnd || !wnd)))) {
		k->snd_wnd = wnd;
		k->snd_wl1 = seq;
		k->snd_wl2 = s->ack;
		if (wnd > k->max_snd_wnd)
			k->max_snd_wnd = wnd;
		if (wnd)
			k->persist_since = 0;
	}
	/* An answer to a zero-window probe: the peer is alive, and a closed
	 * window is probed while the probes are answered (RFC 1122
	 * 4.2.2.17), up to persist_max_ms; only unanswered RTOs count
	 * towards max_retries. */
	if (!k->snd_wnd)
		k->retries = 0;

	if (len || fin) {
		if (seq != k->rcv_nxt) {
			uint32_t d = k->rcv_nxt - seq;

			if (seq_lt(seq, k->rcv_nxt) &&
			    seq_gt(seq + len + fin, k->rcv_nxt)) {
				/* Overlaps what we have: keep the new part. */
				if (d >= len) {
					data += len;
					len = 0;
				} else {
					data += d;
					len -= d;
				}
			} else {
				c->cnt.ooo++;
				if (k->sack_ok && seq_gt(seq, k->rcv_nxt) &&
				    !k->fin_rcvd)
					ooo_hold(c, k, seq, data, len);
				need_ack = true;
				len = 0;
				fin = false;
			}
		}
		if (len) {
			long acc = 0;

			if (!k->fin_rcvd)
				acc = conn_consume(c, k, data, len);
			else
				acc = len;
			if (acc < 0) {
				conn_reset(c, k, true);
				return;
			}
			k->rcv_nxt += (uint32_t)acc;
			if ((uint32_t)acc < len)
				fin = false;
			need_ack = true;
		}
		if (fin && !k->fin_rcvd) {
			k->rcv_nxt++;
			k->fin_rcvd = 1;
			k->fin_pending = 1;
			need_ack = true;
		}
	}
	if (k->sack_ok && (k->nsb || k->sack_rec || k->rack_tmr))
		rack_step(c, k);
	/* The queue may have room again: answer requests still buffered. */
	if (k->rxb != NIL && k->q_count < TCP_CORE_RESP_QUEUE &&
	    !k->fin_pending)
		parse_buffered(c, k);
	if (conn_output(c, k, false))
		need_ack = false;
	if (need_ack)
		send_ack(c, k);
	if (conn_maybe_done(c, k))
		return;
	if (k->snd_una == k->snd_max &&
	    !seq_lt(k->snd_nxt, k->snd_una + k->q_bytes))
		k->rto_at = 0;
	tlp_arm(c, k);
	timer_update(c, k);
}

/* The SACK blocks of a non-SYN segment's options (RFC 2018 3); other
 * options are skipped, a malformed one ends the walk (what came before
 * counts, as Linux). */
static void parse_sack_blocks(const struct tcphdr *th, uint32_t doff,
			      struct seg *s)
{
	const uint8_t *op = (const uint8_t *)th + WIRE_TCP_HLEN;
	const uint8_t *end = (const uint8_t *)th + doff;

	while (op < end) {
		uint8_t kind = op[0], olen;

		if (kind == TCPOPT_EOL)
			return;
		if (kind == TCPOPT_NOP) {
			op++;
			continue;
		}
		if (op + 2 > end || op[1] < 2 || op + op[1] > end)
			return;
		olen = op[1];
		if (kind == TCPOPT_SACK && olen >= 10 && (olen - 2) % 8 == 0) {
			uint32_t i, nb = (olen - 2u) / 8;

			for (i = 0; i < nb && s->nsack < SACK_MAX_BLOCKS; i++) {
				s->sack[s->nsack].start =
					wire_get32(op + 2 + 8 * i);
				s->sack[s->nsack].end =
					wire_get32(op + 6 + 8 * i);
				s->nsack++;
			}
		}
		op += olen;
	}
}

/* Parse one frame into s. 0: TCP for the service; 1: not ours;
 * -1: ours but malformed; -2: ours but a checksum fails. Reads the headers
 * through the kernel's structs (wire.h) but in its own order: the port is
 * checked before anything is copied, as most frames that are not ours fail
 * there. */
static int parse_frame(struct tcp_core *c, const struct tcp_frame *f,
		       struct seg *s)
{
	const uint8_t *d = f->data;
	const struct ethhdr *eth = (const void *)f->data;
	const struct tcphdr *th;
	uint32_t len = f->len, l3, tcplen, doff, i;
	uint64_t ph;

	if (len < ETH_HLEN + WIRE_IP4_HLEN)
		return 1;
	memset(&s->t, 0, sizeof(s->t));
	memcpy(s->t.lmac, eth->h_dest, ETH_ALEN);
	memcpy(s->t.rmac, eth->h_source, ETH_ALEN);
	if (eth->h_proto == htons(ETH_P_IP)) {
		const struct iphdr *ip = (const void *)(d + ETH_HLEN);
		uint32_t tot;

		if (ip->version != 4 || ip->protocol != IPPROTO_TCP)
			return 1;
		if (len < ETH_HLEN + WIRE_IP4_HLEN + WIRE_TCP_HLEN)
			return 1;
		th = (const void *)((const uint8_t *)ip + ip->ihl * 4u);
		if (ip->ihl < 5 || (const uint8_t *)th + 4 > d + len)
			return 1;
		if (wire_get16(&th->dest) != c->p.port)
			return 1;
		s->t.laddr[10] = s->t.laddr[11] = 0xff;
		s->t.raddr[10] = s->t.raddr[11] = 0xff;
		memcpy(s->t.laddr + 12, &ip->daddr, 4);
		memcpy(s->t.raddr + 12, &ip->saddr, 4);
		if (ip->ihl != 5)
			return -1; /* options */
		/* The addresses' sum serves the header's check and the
		 * pseudo-header's. */
		ph = wire_ph_ip4(ip);
		if (!(f->rx_csum & TCP_RX_CSUM_IP_GOOD) &&
		    ((f->rx_csum & TCP_RX_CSUM_BAD) ||
		     csum_ne_fold(csum_ne_add(ph, ip, 12)) != 0xffff))
			return -2;
		if (wire_get16(&ip->frag_off) & (WIRE_IP_MF | WIRE_IP_OFFMASK))
			return -1; /* a fragment */
		tot = wire_get16(&ip->tot_len);
		if (tot < WIRE_IP4_HLEN + WIRE_TCP_HLEN || tot > len - ETH_HLEN)
			return -1;
		l3 = ETH_HLEN + WIRE_IP4_HLEN;
		tcplen = tot - WIRE_IP4_HLEN;
	} else if (eth->h_proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip = (const void *)(d + ETH_HLEN);
		uint32_t plen;

		if (len < ETH_HLEN + WIRE_IP6_HLEN + WIRE_TCP_HLEN)
			return 1;
		if (ip->version != 6 || ip->nexthdr != IPPROTO_TCP)
			return 1;
		th = (const void *)(ip + 1);
		if (wire_get16(&th->dest) != c->p.port)
			return 1;
		s->t.v6 = 1;
		ph = wire_ph_ip6(ip);
		memcpy(s->t.laddr, &ip->daddr, 16);
		memcpy(s->t.raddr, &ip->saddr, 16);
		plen = wire_get16(&ip->payload_len);
		if (plen < WIRE_TCP_HLEN ||
		    plen > len - ETH_HLEN - WIRE_IP6_HLEN)
			return -1;
		l3 = ETH_HLEN + WIRE_IP6_HLEN;
		tcplen = plen;
	} else {
		return 1;
	}
	if (c->nladdr) {
		for (i = 0; i < (uint32_t)c->nladdr; i++)
			if (!memcmp(&c->laddr[i], s->t.laddr, 16))
				break;
		if (i == (uint32_t)c->nladdr)
			return 1;
	}
	th = (const void *)(d + l3);
	doff = wire_tcp_hlen(th);
	if (doff < WIRE_TCP_HLEN || doff > tcplen)
		return -1;
	/* Before anything reads the segment's fields: a corrupted one is
	 * never answered, acked or allowed to change a connection. */
	if (!(f->rx_csum & TCP_RX_CSUM_L4_GOOD) &&
	    ((f->rx_csum & TCP_RX_CSUM_BAD) ||
	     !wire_tcp_csum_ok(ph, th, tcplen, c->p.csum_partial_ok)))
		return -2;
	memcpy(&s->t.rport_be, &th->source, 2);
	memcpy(&s->t.lport_be, &th->dest, 2);
	s->seq = wire_get32(&th->seq);
	s->ack = wire_get32(&th->ack_seq);
	s->flags = wire_tcp_flags(th);
	s->win = wire_get16(&th->window);
	s->data = (const uint8_t *)th + doff;
	s->len = tcplen - doff;
	s->mss = 536;
	s->wscale = 0xff;
	s->nsack = 0;
	if (s->flags & TCPHDR_SYN) {
		struct wire_tcp_opts o;

		/* What precedes a malformed option counts, as Linux. */
		wire_tcp_opts_parse(th, &o);
		if (o.has_mss)
			s->mss = o.mss;
		if (o.has_wscale)
			s->wscale = o.wscale;
		s->sack_ok = o.sack_ok;
	} else if (doff > WIRE_TCP_HLEN) {
		parse_sack_blocks(th, doff, s);
	}
	return 0;
}

static void update_date(struct tcp_core *c, uint64_t now_ns)
{
	uint64_t unix_ns = (uint64_t)((int64_t)now_ns + c->mono_to_unix_ns);
	uint64_t sec = unix_ns / 1000000000ull;

	c->unix_ms = unix_ns / 1000000ull;
	c->now_ms = now_ns / 1000000ull;
	c->now_us = (uint32_t)(now_ns / 1000ull);
	if (!c->wheel_started) {
		/* The wheel starts at the engine's clock, whatever it is. */
		c->wheel_ms = c->now_ms;
		c->wheel_started = true;
	}
	if (sec == c->date_sec)
		return;
	c->date_sec = sec;
	http_responses_set_date(&c->resp, (time_t)sec);
}

static void handle_segment(struct tcp_core *c, const struct seg *s)
{
	uint32_t h = tuple_hash(c, &s->t);
	struct tcp_conn *k = tbl_lookup(c, &s->t, h);

	if (!k) {
		handle_unknown(c, s, h);
		return;
	}
	conn_handle(c, k, s);
}

uint32_t tcp_core_rx_burst(struct tcp_core *c, struct tcp_frame *frames,
			   uint32_t n, uint64_t now_ns)
{
	uint32_t i, nm = 0;

	update_date(c, now_ns);
	for (i = 0; i < n; i++) {
		struct seg s;
		int r;

		c->cnt.core_rx_frames++;
		r = parse_frame(c, &frames[i], &s);
		if (r > 0) {
			struct tcp_frame tmp = frames[nm];

			frames[nm] = frames[i];
			frames[i] = tmp;
			nm++;
			c->cnt.not_mine++;
			continue;
		}
		c->cnt.service_segments++;
		if (r == -2) {
			c->cnt.bad_csum++;
			continue;
		}
		if (r < 0) {
			c->cnt.drop_malformed++;
			continue;
		}
		handle_segment(c, &s);
	}
	tx_flush(c);
	return nm;
}

/* ------------------------------------------------------------------ */
/* Timers                                                              */
/* ------------------------------------------------------------------ */

static void conn_timer(struct tcp_core *c, struct tcp_conn *k)
{
	if (k->hdr_at && k->hdr_at <= c->now_ms) {
		/* A partial request past its header deadline: as the epoll
		 * engine closes such a socket (with unread data: a RST). */
		c->cnt.header_timeouts++;
		conn_reset(c, k, true);
		return;
	}
	if (k->rto_at && k->rto_at <= c->now_ms) {
		bool persist = !k->snd_wnd;

		if (persist && !k->persist_since)
			k->persist_since = c->now_ms;
		if (persist &&
		    c->now_ms - k->persist_since >= c->p.persist_max_ms) {
			/* A peer that keeps its window shut (and our
			 * response in memory) for longer is let go. */
			c->cnt.persist_giveup++;
			conn_reset(c, k, true);
			return;
		}
		if (++k->retries > c->p.max_retries) {
			c->cnt.rto_giveup++;
			conn_reset(c, k, true);
			return;
		}
		k->sack_rec = 0;
		k->rack_tmr = 0;
		if (k->retries >= 2) {
			/* Twice unanswered: the peer may have dropped what
			 * it SACKed (RFC 2018 allows it): send it all. */
			k->nsb = 0;
			k->sacked = 0;
		}
		if (!persist) {
			/* RFC 5681 3.1: ssthresh from the flight (kept on
			 * a repeated timeout of the same data), cwnd = the
			 * loss window, one MSS; RFC 6582: recover = what was
			 * sent, so its duplicate ACKs start no recovery. */
			if (k->retries == 1)
				k->ssthresh = loss_ssthresh(k);
			k->cwnd = k->mss;
			k->bytes_acked = 0;
			k->in_recovery = 0;
			k->recover = k->snd_max;
		}
		k->rto_ms = min_u32(k->rto_ms * 2, c->p.rto_max_ms);
		k->rto_at = 0;
		k->tlp_at = 0;
		k->tlp_out = 0;
		k->rtt_on = 0;
		k->snd_nxt = k->snd_una;
		conn_output(c, k, true);
		if (!k->rto_at)
			arm_rto(c, k);
	}
	if (k->tlp_at && k->tlp_at <= c->now_ms && k->rack_tmr) {
		rack_step(c, k);
		conn_output(c, k, false);
		tlp_arm(c, k);
	} else if (k->tlp_at && k->tlp_at <= c->now_ms) {
		k->tlp_at = 0;
		tlp_send(c, k);
	}
	if (k->idle_at <= c->now_ms && !k->rto_at) {
		if (!k->fin_pending) {
			/* Idle keep-alive: close gracefully (FIN), as a kernel
			 * server would; a peer that never answers is reset by
			 * the RTO, one that never sends its FIN below. */
			c->cnt.idle_timeouts++;
			k->fin_pending = 1;
			conn_output(c, k, false);
			k->idle_at = c->now_ms + FIN_WAIT_MS;
			timer_update(c, k);
			return;
		}
		conn_reset(c, k, true);
		return;
	}
	if (k->idle_at <= c->now_ms)
		k->idle_at = c->now_ms + c->p.idle_ms;
	timer_update(c, k);
}

void tcp_core_poll_timers(struct tcp_core *c, uint64_t now_ns)
{
	uint64_t t, end;

	update_date(c, now_ns);
	end = c->now_ms;
	if (end > c->wheel_ms + WHEEL_SLOTS) {
		/* Not polled for a while: skip to one fine revolution before
		 * now (every fine slot is still visited once), and cascade
		 * the coarse slots whose turn was skipped. */
		uint64_t from = c->wheel_ms / L1_MS + 1, p;

		c->wheel_ms = end - WHEEL_SLOTS;
		for (p = from; p <= c->wheel_ms / L1_MS && p < from + L1_SLOTS;
		     p++)
			timer_cascade(c, (uint32_t)((p + 3) % L1_SLOTS));
	}
	for (t = c->wheel_ms + 1; t <= end; t++) {
		uint32_t slot = (uint32_t)(t % WHEEL_SLOTS);
		uint32_t idx;

		c->wheel_ms = t;
		/* A coarse slot holds deadlines of one 1024 ms period: 3
		 * periods ahead they come within the fine wheel's reach. */
		if (t % L1_MS == 0)
			timer_cascade(c,
				      (uint32_t)((t / L1_MS + 3) % L1_SLOTS));
		idx = c->wheel[slot];
		/* Detach the slot, then fire or re-link each entry: an entry
		 * re-armed into this same slot is not seen twice. */
		c->wheel[slot] = NIL;
		while (idx != NIL) {
			struct tcp_conn *k = &c->conns[idx];
			uint32_t next = k->tnext;

			k->tprev = k->tnext = NIL;
			if (k->linked_at > end) {
				/* A later revolution: put it back. */
				uint64_t at = k->linked_at;

				k->linked_at = 0;
				timer_link(c, k, at);
			} else {
				k->linked_at = 0;
				conn_timer(c, k);
			}
			idx = next;
		}
	}
	tx_flush(c);
}

int tcp_core_next_timer_ms(const struct tcp_core *c, uint64_t now_ns)
{
	uint64_t now = now_ns / 1000000ull, t;

	if (!c->active)
		return 1000;
	for (t = now + 1; t <= now + 1000; t++)
		if (c->wheel[t % WHEEL_SLOTS] != NIL)
			return (int)(t - now);
	return 1000;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

/*
 * Our copy of the prebuilt responses (service_responses()): whole
 * responses when the body is inline, else the header section of each kind
 * followed by our own copy of the body (http_response_iov), so a
 * retransmission can rebuild any segment from the same bytes whatever the
 * caller does with its buffers.
 */
static int copy_responses(struct tcp_core *c, const struct http_responses *r)
{
	int k;

	c->resp = *r;
	if (!r->body_inline && r->body_len) {
		c->body = malloc(r->body_len);
		if (!c->body)
			return -ENOMEM;
		memcpy(c->body, r->body, r->body_len);
		c->resp.body = c->body;
	}
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		struct iovec iov[2];
		int n = http_response_iov(&c->resp, k, iov);

		c->piece[k].head_len = (uint32_t)iov[0].iov_len;
		c->piece[k].body_len = n == 2 ? (uint32_t)iov[1].iov_len : 0;
		c->piece[k].date_off = c->resp.date_off[k];
	}
	return 0;
}

static uint32_t table_slots(uint32_t n);
static uint32_t default_rx_bufs(uint32_t n);
static uint32_t src_slots(uint32_t nrx);

struct tcp_core *tcp_core_new(const struct tcp_core_params *p)
{
	struct tcp_core *c;
	struct timespec rt, mono;
	uint32_t n, slots, i;
	int err = ENOMEM, ret;

	if (!p || !p->ops || !p->ops->tx_alloc || !p->ops->tx_send ||
	    !p->port) {
		pr_warn("tcp core: missing port or TX operations\n");
		errno = EINVAL;
		return NULL;
	}
	if (!p->resp) {
		pr_warn("tcp core: no responses to send\n");
		errno = EINVAL;
		return NULL;
	}
	if (p->resp->body_len > BLITZ_BODY_MAX ||
	    (!p->resp->body_inline && p->resp->body_len && !p->resp->body)) {
		pr_warn("tcp core: body of %zu bytes: at most %u bytes\n",
			p->resp->body_len, BLITZ_BODY_MAX);
		errno = EMSGSIZE;
		return NULL;
	}
	if (p->n_addr4 < 0 || p->n_addr6 < 0 || p->n_addr4 > BLITZ_MAX_ADDRS ||
	    p->n_addr6 > BLITZ_MAX_ADDRS) {
		pr_warn("tcp core: bad address count\n");
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto fail;
	c->p = *p;
	c->p.resp = NULL; /* read during tcp_core_new only */
	if (!c->p.table_size)
		c->p.table_size = TCP_CORE_DEFAULT_TABLE;
	if (!c->p.rx_bufs)
		c->p.rx_bufs = default_rx_bufs(c->p.table_size);
	if (!c->p.frame_cap)
		c->p.frame_cap = 2048;
	if (!c->p.rto_initial_ms)
		c->p.rto_initial_ms = 200;
	if (!c->p.rto_max_ms)
		c->p.rto_max_ms = 3000;
	if (!c->p.max_retries)
		c->p.max_retries = 6;
	if (!c->p.idle_ms)
		c->p.idle_ms = 60000;
	if (!c->p.header_ms)
		c->p.header_ms = 10000;
	if (!c->p.persist_max_ms)
		c->p.persist_max_ms = 30000;
	if (c->p.frame_cap < 256) {
		pr_warn("tcp core: frame_cap %u too small\n", c->p.frame_cap);
		err = EINVAL;
		goto fail;
	}
	c->mss4 = (uint16_t)min_u32(p->mss ? p->mss : 1460,
				    c->p.frame_cap - ETH_HLEN - WIRE_IP4_HLEN -
					    WIRE_TCP_HLEN);
	c->mss6 = (uint16_t)min_u32(p->mss ? p->mss : 1440,
				    c->p.frame_cap - ETH_HLEN - WIRE_IP6_HLEN -
					    WIRE_TCP_HLEN);
	c->have_mac = memcmp(p->mac, "\0\0\0\0\0\0", 6) != 0;
	memcpy(c->mac, p->mac, 6);
	for (i = 0; i < (uint32_t)p->n_addr4; i++) {
		uint8_t *a = c->laddr[c->nladdr++].s6_addr;

		memset(a, 0, 16);
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &p->addr4[i], 4);
	}
	for (i = 0; i < (uint32_t)p->n_addr6; i++)
		c->laddr[c->nladdr++] = p->addr6[i];

	if (p->secret[0] || p->secret[1]) {
		c->key[0] = p->secret[0];
		c->key[1] = p->secret[1];
	} else if (getrandom(c->key, sizeof(c->key), 0) !=
		   (ssize_t)sizeof(c->key)) {
		err = errno;
		pr_warn("tcp core: getrandom: %s\n", strerror(err));
		goto fail;
	}

	n = c->p.table_size;
	slots = table_slots(n);
	c->mask = slots - 1;
	c->nconns = n;
	c->conns = calloc(n, sizeof(*c->conns));
	c->free_stack = calloc(n, sizeof(*c->free_stack));
	c->slots = calloc(slots, sizeof(*c->slots));
	c->nrxbufs = c->p.rx_bufs;
	c->rxbufs = malloc((size_t)c->nrxbufs * RXBUF_SIZE);
	c->rxfree = calloc(c->nrxbufs, sizeof(*c->rxfree));
	slots = src_slots(c->nrxbufs);
	c->src_mask = slots - 1;
	c->src_cnt = calloc(slots, sizeof(*c->src_cnt));
	c->src_cap = c->p.rx_bufs_per_src
			     ? c->p.rx_bufs_per_src
			     : (c->nrxbufs / 8 > 4 ? c->nrxbufs / 8 : 4);
	c->lru_head = c->lru_tail = NIL;
	if (!c->conns || !c->free_stack || !c->slots || !c->rxbufs ||
	    !c->rxfree || !c->src_cnt) {
		pr_warn("tcp core: cannot allocate a table of %u "
			"connections\n",
			n);
		goto fail;
	}
	for (i = 0; i < n; i++)
		c->free_stack[i] = n - 1 - i;
	c->nfree = n;
	for (i = 0; i < c->nrxbufs; i++)
		c->rxfree[i] = c->nrxbufs - 1 - i;
	c->nrxfree = c->nrxbufs;
	for (i = 0; i < WHEEL_SLOTS; i++)
		c->wheel[i] = NIL;
	for (i = 0; i < L1_SLOTS; i++)
		c->wheel1[i] = NIL;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	c->mono_to_unix_ns = ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000ll +
			     (rt.tv_nsec - mono.tv_nsec);
	ret = copy_responses(c, p->resp);
	if (ret) {
		err = -ret;
		pr_warn("tcp core: cannot copy the responses: %s\n",
			strerror(err));
		goto fail;
	}
	http_responses_set_date(&c->resp, rt.tv_sec);
	c->date_sec = (uint64_t)rt.tv_sec;
	return c;
fail:
	tcp_core_free(c);
	errno = err;
	return NULL;
}

void tcp_core_free(struct tcp_core *c)
{
	if (!c)
		return;
	free(c->conns);
	free(c->free_stack);
	free(c->slots);
	free(c->rxbufs);
	free(c->rxfree);
	free(c->src_cnt);
	free(c->body);
	free(c);
}

void tcp_core_set_wallclock(struct tcp_core *c, uint64_t mono_ns,
			    uint64_t unix_ns)
{
	c->mono_to_unix_ns = (int64_t)(unix_ns - mono_ns);
}

const struct tcp_core_counters *tcp_core_counters(const struct tcp_core *c)
{
	return &c->cnt;
}

const struct counter_name tcp_core_counter_names[TCP_CORE_N_COUNTERS] = {
#define TCP_CORE_CNT_ROW(name, help) {#name, help},
	TCP_CORE_COUNTERS(TCP_CORE_CNT_ROW)
#undef TCP_CORE_CNT_ROW
};

void tcp_core_counters_publish(const struct tcp_core_counters *c,
			       const uint64_t *base, uint64_t *slot)
{
	const uint64_t *v = (const uint64_t *)c;
	unsigned int k;

	for (k = 0; k < TCP_CORE_N_COUNTERS; k++)
		counters_store(
			slot, k,
			(base ? base[k] : 0) +
				__atomic_load_n(&v[k], __ATOMIC_RELAXED));
}

/* The hash slots for n connections: a power of two, at least 2n. */
static uint32_t table_slots(uint32_t n)
{
	uint32_t slots;

	for (slots = 16; slots < 2 * n; slots <<= 1)
		;
	return slots;
}

static uint32_t default_rx_bufs(uint32_t n)
{
	return n / 64 < 64 ? 64 : n / 64;
}

/* The per-source counts for nrx buffers: a power of two, at least 4 nrx. */
static uint32_t src_slots(uint32_t nrx)
{
	uint32_t slots;

	for (slots = 16; slots < 4 * nrx; slots <<= 1)
		;
	return slots;
}

size_t tcp_core_table_bytes(uint32_t n)
{
	uint32_t nrx = default_rx_bufs(n);

	return (size_t)n * (sizeof(struct tcp_conn) + sizeof(uint32_t)) +
	       (size_t)table_slots(n) * sizeof(struct tbl_slot) +
	       (size_t)nrx * (RXBUF_SIZE + sizeof(uint32_t)) +
	       (size_t)src_slots(nrx) * sizeof(uint16_t);
}

uint32_t tcp_core_active(const struct tcp_core *c)
{
	return c->active;
}

/* The scoreboard sorted, disjoint, within [SND.UNA, SND.MAX] and summed;
 * the send-time records tiling [SND.UNA, SND.MAX) exactly; an
 * out-of-order range only in a buffer. Nonzero when not. */
static int sack_check(const struct tcp_conn *k)
{
	uint32_t i, sum = 0, at = k->snd_una;

	for (i = 0; i < k->nsb; i++) {
		const struct seq_range *g = &k->sb[i];

		if (!seq_lt(g->start, g->end) || seq_lt(g->start, at) ||
		    seq_gt(g->end, k->snd_max) || (i && g->start == at))
			return 1;
		sum += g->end - g->start;
		at = g->end;
	}
	if (sum != k->sacked || k->nrec > XMIT_RECS)
		return 2;
	at = k->snd_una;
	for (i = 0; i < k->nrec; i++) {
		if (k->rec[i].start != at || !seq_lt(at, k->rec[i].end))
			return 3;
		at = k->rec[i].end;
	}
	if (at != k->snd_max)
		return 4;
	if (k->ooo_len &&
	    (k->rxb == NIL || k->ooo_off + k->ooo_len > RXBUF_SIZE))
		return 5;
	return 0;
}

int tcp_core_check(const struct tcp_core *c)
{
	uint32_t i, used = 0, linked = 0;
	uint8_t *seen;

	seen = calloc(c->nconns, 1);
	if (!seen)
		return -__LINE__;
	for (i = 0; i <= c->mask; i++) {
		const struct tbl_slot *s = &c->slots[i];
		uint32_t j;

		if (!s->idx)
			continue;
		if (s->idx > c->nconns || seen[s->idx - 1] ||
		    !c->conns[s->idx - 1].in_use ||
		    c->conns[s->idx - 1].hash != s->hash) {
			free(seen);
			return -__LINE__;
		}
		seen[s->idx - 1] = 1;
		used++;
		for (j = s->hash & c->mask; j != i; j = (j + 1) & c->mask)
			if (!c->slots[j].idx) {
				free(seen);
				return -__LINE__;
			}
	}
	for (i = 0; i < c->nconns; i++) {
		const struct tcp_conn *k = &c->conns[i];

		if (k->in_use != seen[i]) {
			free(seen);
			return -__LINE__;
		}
		if (k->in_use && k->sack_ok && sack_check(k)) {
			free(seen);
			return -__LINE__;
		}
		if (k->in_use && k->q_count > TCP_CORE_RESP_QUEUE) {
			free(seen);
			return -__LINE__;
		}
		if (k->in_use && !k->linked_at) {
			free(seen);
			return -__LINE__;
		}
		if (k->in_use)
			linked++;
	}
	free(seen);
	if (used != c->active || used + c->nfree != c->nconns)
		return -__LINE__;
	/* Every active connection sits on a wheel exactly once, in the
	 * slot of its deadline. */
	for (i = 0; i < WHEEL_SLOTS + L1_SLOTS; i++) {
		bool l1 = i >= WHEEL_SLOTS;
		uint32_t idx = l1 ? c->wheel1[i - WHEEL_SLOTS] : c->wheel[i];
		uint32_t prev = NIL;

		while (idx != NIL) {
			const struct tcp_conn *k = &c->conns[idx];

			if (idx >= c->nconns || !k->in_use ||
			    k->tprev != prev || k->tl1 != l1 ||
			    (l1 ? (k->linked_at / L1_MS) % L1_SLOTS !=
					     i - WHEEL_SLOTS
				: k->linked_at % WHEEL_SLOTS != i))
				return -__LINE__;
			prev = idx;
			idx = c->conns[idx].tnext;
			if (!linked--)
				return -__LINE__;
		}
	}
	if (linked)
		return -__LINE__;
	if (c->nrxfree > c->nrxbufs)
		return -__LINE__;
	/* Every buffer holder on the LRU list exactly once, in order. */
	{
		uint32_t idx = c->lru_head, prev = NIL, held = 0, n = 0;

		for (i = 0; i < c->nconns; i++)
			held += c->conns[i].in_use && c->conns[i].rxb != NIL;
		while (idx != NIL) {
			if (idx >= c->nconns || !c->conns[idx].in_use ||
			    c->conns[idx].rxb == NIL ||
			    c->conns[idx].lru_prev != prev || ++n > held)
				return -__LINE__;
			prev = idx;
			idx = c->conns[idx].lru_next;
		}
		if (n != held || prev != c->lru_tail ||
		    held + c->nrxfree != c->nrxbufs)
			return -__LINE__;
	}
	return 0;
}
