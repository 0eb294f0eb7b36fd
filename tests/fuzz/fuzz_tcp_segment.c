// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_tcp_segment.c - libFuzzer target for the userspace TCP core.
 *
 * Owns: a fake engine (TX frames are checked and dropped) and three modes
 * chosen by the first input byte:
 *   even: the rest is a sequence of [u16 len][bytes] raw frames;
 *   odd:  a valid handshake (IPv4 or IPv6) first, then a sequence of ops
 *         that build segments on that connection from fuzzed flags,
 *         sequence/ack offsets, window and payload, ACK what the core
 *         sent, or advance the clock (timers);
 *   odd with bit 3 (0x08): the same with a 64 KiB body (not inline: the
 *         core sends it in MSS segments within the peer's window) and a
 *         fake peer that keeps what it received in order: a GET right
 *         after the handshake (in the handshake ACK with bit 4; that ACK
 *         opens only a two-segment window with bit 5), then the ops above
 *         (op 1 ACKs what the peer holds) and four more: ACK part of it,
 *         three duplicate ACKs (fast retransmit), a zero window then time
 *         (probes), lose the unacknowledged tail (go-back-N after the
 *         RTO); and RFC 5961 sequences: a RST in the window but not at
 *         RCV.NXT and a SYN with a fuzzed ISN (the connection must live
 *         on and no SYN-ACK go out), five ACKs of bytes never sent in one
 *         instant (at most one ACK back: the per-connection limit), and a
 *         reordered older ACK closing the window (it must not stall the
 *         response). At the end the peer ACKs what it holds with an open window
 *         until the response is through. With bit 6 (0x40) the SYN
 *         offers SACK: out-of-order segments are held and SACKed,
 *         duplicates D-SACKed; every SACK block must lie within what the
 *         peer sent (its ISN + 1 to the end of its highest segment), and
 *         a peer that did not offer SACK gets no SACK option. Every frame
 *         on that connection is checked: payload <= MSS, never before the
 *         stream nor past the responses owed, never past the highest ACK
 *         plus the largest window the peer gave (one more byte for a
 *         zero-window probe), the bytes of the first response exactly that
 *         response (Date aside); and the whole response must arrive by the
 *         end.
 * After every step the table invariants are checked (tcp_core_check) and
 * every frame the core sends must parse with a valid length. Must never
 * touch a network.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "log.h"
#include "tcp_core.h"
#include "wire.h"

#define FRAME_SZ 2048
#define BIG_BODY (64u * 1024)
#define PEER_MSS 1460 /* what our SYNs offer */
#define PEER_WS 2     /* the window scale our SYNs offer (8-byte options) */

static uint8_t txb[TCP_CORE_TX_BATCH][FRAME_SZ];
static uint32_t txn;
/* Frames the core sent to the big-mode peer's port: SYN-ACKs, pure ACKs. */
static uint32_t fz_synacks, fz_pure_acks;
static uint32_t fz_rcv_nxt; /* the ack field of the last one: RCV.NXT */
/* Big mode: the end of the highest sequence number the peer has sent on
 * the connection (data, FIN); the core must never ack past it. */
static uint32_t fz_peer_end;
static uint32_t fz_conn_ack; /* the ack of its last frame but a SYN-ACK */
/* Big mode: the peer's first sequence number after its SYN, and whether
 * its SYN offered SACK. */
static uint32_t fz_peer_start;
static bool fz_sack;
/* What the fake peer learned from the core's frames. */
static uint32_t last_seq, last_end, got_any;
static struct tcp_core *cur; /* the core under test (fz_send reads it) */

/* Big-body mode: the fake peer's view of the connection under test, in
 * stream offsets (sequence numbers minus base, signed to catch bytes
 * before the stream). */
static struct {
	bool on;	  /* check the frames to sport */
	uint16_t sport;	  /* the peer's port of the connection */
	uint32_t base;	  /* the core's ISN + 1: stream offset 0 */
	int64_t rcv;	  /* stream bytes the peer holds in order */
	int64_t hi;	  /* highest offset sent (FIN counted) */
	int64_t acked;	  /* highest ACK the peer sent within [0, hi] */
	uint64_t max_win; /* largest window the peer advertised, scaled */
	uint32_t ws;	  /* the peer's window scale */
} pe;
static uint8_t big_body[BIG_BODY];
static struct http_responses big_resp; /* the first response's bytes */
static uint32_t big_resp0;	       /* wire length of the first response */
static uint32_t big_max_resp;	       /* wire length of the longest kind */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* A big-mode invariant broke: say which (the crash log shows it), abort. */
static void broken(const char *what, long long a, long long b)
{
	fprintf(stderr, "fuzz_tcp_segment: %s (%lld, %lld)\n", what, a, b);
	abort();
}

/* The bytes the core sent at stream offset off..off+n: those inside the
 * first response must be that response (its Date aside: it may differ). */
static void check_first_response(int64_t off, const uint8_t *p, uint32_t n)
{
	const struct http_responses *r = &big_resp;
	uint32_t hl = r->hdr_len[BLITZ_RESP_GET_KA];
	uint32_t ds = r->date_off[BLITZ_RESP_GET_KA];
	uint32_t i;

	for (i = 0; i < n && off + i < big_resp0; i++) {
		uint32_t o = (uint32_t)(off + i);
		uint8_t want;

		if (o >= ds && o < ds + BLITZ_DATE_LEN)
			continue;
		want = o < hl ? r->bytes[BLITZ_RESP_GET_KA][o]
			      : big_body[o - hl];
		if (p[i] != want)
			broken("wrong byte of the response at offset", o, p[i]);
	}
}

/* One frame the core sent (th: its TCP header, n payload bytes): check it
 * against what the peer allowed and update the peer's view. */
static void peer_check(const uint8_t *th, uint32_t n, uint32_t doff)
{
	const struct tcp_core_counters *cnt = tcp_core_counters(cur);
	uint8_t flags = th[13];
	uint32_t fin = flags & 0x01;
	int64_t off, end, owed;

	if ((uint32_t)(th[2] << 8 | th[3]) != pe.sport || (flags & 0x04))
		return;
	if (flags & 0x02 || cnt->connections_opened > 1) {
		/* A new handshake or connection on the tuple: its stream
		 * starts over, with other bytes; stop checking. */
		pe.on = false;
		return;
	}
	off = (int32_t)(rd32(th + 4) - pe.base);
	end = off + n + fin;
	if (!n && !fin)
		return; /* a pure ACK: no stream bytes */
	if (off < 0)
		broken("bytes before the stream: offset, length", off, n);
	if (n > PEER_MSS)
		broken("segment over the MSS: offset, length", off, n);
	/* Never past the responses owed: the first one, then at most the
	 * longest kind for each other request answered, then the FIN. */
	owed = cnt->requests
		       ? big_resp0 + (int64_t)(cnt->requests - 1) * big_max_resp
		       : 0;
	if (end > owed + 1)
		broken("bytes past the responses owed: end, owed", end, owed);
	/* Never past what the peer's window allowed (plus a probe byte). */
	if (n && off + n > pe.acked + (int64_t)pe.max_win + 1)
		broken("bytes past the peer's window: end, acked", off + n,
		       pe.acked);
	check_first_response(off, th + doff, n);
	if (off <= pe.rcv && end > pe.rcv)
		pe.rcv = end;
	if (end > pe.hi)
		pe.hi = end;
}

/* Big mode: the SACK blocks of a frame to the peer (th: its TCP header,
 * doff bytes of it) name only sequence numbers the peer sent, and none go
 * to a peer that did not offer SACK. */
static void sack_check(const uint8_t *th, uint32_t doff)
{
	uint32_t blk[8][2], i, n;

	if (wire_tcp_sack_blocks((const struct tcphdr *)th, doff, blk, 8, &n))
		abort(); /* a malformed option */
	if (n && !fz_sack)
		broken("a SACK option to a peer without SACK", (int32_t)n, 0);
	for (i = 0; i < n; i++)
		if ((int32_t)(blk[i][1] - blk[i][0]) <= 0 ||
		    (int32_t)(blk[i][0] - fz_peer_start) < 0 ||
		    (int32_t)(blk[i][1] - fz_peer_end) > 0)
			broken("a SACK block outside what the peer sent: "
			       "start, end (offsets)",
			       (int32_t)(blk[i][0] - fz_peer_start),
			       (int32_t)(blk[i][1] - fz_peer_start));
}

static uint32_t fz_alloc(void *ctx, struct tcp_frame *f, uint32_t n)
{
	uint32_t i;

	(void)ctx;
	for (i = 0; i < n; i++) {
		f[i].data = txb[txn++ % TCP_CORE_TX_BATCH];
		f[i].cap = FRAME_SZ;
		f[i].len = 0;
	}
	return n;
}

static void fz_send(void *ctx, struct tcp_frame *f, uint32_t n)
{
	uint32_t i;

	(void)ctx;
	for (i = 0; i < n; i++) {
		const uint8_t *d = f[i].data;
		uint32_t l3, tl, doff;

		if (f[i].len < 54 || f[i].len > FRAME_SZ)
			abort();
		if (d[12] == 0x08) {
			l3 = 20;
			tl = (uint32_t)(d[16] << 8 | d[17]) - 20;
		} else {
			l3 = 40;
			tl = (uint32_t)(d[18] << 8 | d[19]);
		}
		if (14 + l3 + tl != f[i].len)
			abort();
		doff = (uint32_t)(d[14 + l3 + 12] >> 4) * 4;
		if (doff < 20 || doff > tl)
			abort();
		last_seq = rd32(d + 14 + l3 + 4);
		last_end = last_seq + tl - doff +
			   ((d[14 + l3 + 13] & 0x03) ? 1 : 0);
		got_any = 1;
		if ((uint32_t)(d[14 + l3 + 2] << 8 | d[14 + l3 + 3]) ==
		    pe.sport) {
			uint8_t fl = d[14 + l3 + 13];
			uint32_t ack = rd32(d + 14 + l3 + 8);

			fz_synacks += (fl & 0x12) == 0x12;
			if (fl & 0x10)
				fz_rcv_nxt = ack;
			/* Not a SYN-ACK: a SYN of a fuzzed ISN on a closed
			 * tuple makes another connection, acking that SYN */
			if ((fl & 0x12) == 0x10) {
				fz_conn_ack = ack;
				if (pe.on &&
				    (int32_t)(fz_conn_ack - fz_peer_end) > 0)
					broken("an ACK of bytes the peer never "
					       "sent: acked past its end by",
					       (int32_t)(fz_conn_ack -
							 fz_peer_end),
					       0);
			}
			fz_pure_acks += fl == 0x10 && tl == doff;
			if (pe.on)
				sack_check(d + 14 + l3, doff);
		}
		if (pe.on)
			peer_check(d + 14 + l3, tl - doff, doff);
	}
}

static const struct tcp_io_ops fz_ops = {.tx_alloc = fz_alloc,
					 .tx_send = fz_send};

static uint64_t now_ns;

static void check(struct tcp_core *c)
{
	if (tcp_core_check(c))
		abort();
}

static uint32_t mk(uint8_t *f, bool v6, uint16_t sport, uint8_t flags,
		   uint32_t seq, uint32_t ack, uint16_t win,
		   const uint8_t *data, uint32_t len, const uint8_t *opts,
		   uint32_t optlen)
{
	static const uint8_t srv_mac[6] = {2, 0, 0, 0, 0, 1};
	static const uint8_t cli_mac[6] = {2, 0, 0, 0, 0, 2};
	static const uint8_t cli4[4] = {10, 0, 0, 2}, srv4[4] = {10, 0, 0, 1};
	static const uint8_t cli6[16] = {0xfd, [15] = 2};
	static const uint8_t srv6[16] = {0xfd, [15] = 1};
	struct wire_seg sg = {
		.src_mac = cli_mac,
		.dst_mac = srv_mac,
		.v6 = v6,
		.saddr = v6 ? (const void *)cli6 : cli4,
		.daddr = v6 ? (const void *)srv6 : srv4,
		.sport_be = htons(sport),
		.dport_be = htons(8080),
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.win = win,
	};
	uint32_t off = wire_write_tcp_hdrs(f, &sg, optlen, len);

	if (optlen)
		memcpy(f + off + WIRE_TCP_HLEN, opts, optlen);
	if (len)
		memcpy(f + off + WIRE_TCP_HLEN + optlen, data, len);
	/* The core drops a segment whose checksum fails: fill it. */
	wire_tcp_csum(f, v6, off, WIRE_TCP_HLEN + optlen + len);
	return off + WIRE_TCP_HLEN + optlen + len;
}

static void rx(struct tcp_core *c, uint8_t *f, uint32_t len)
{
	struct tcp_frame fr = {.data = f, .len = len, .cap = len};

	tcp_core_rx_burst(c, &fr, 1, now_ns);
	check(c);
}

/* The peer sent a segment with this ACK and window on the connection
 * under test: what the core may send grows accordingly. */
static void note_ack(uint32_t ack, uint16_t win)
{
	int64_t a = (int32_t)(ack - pe.base);
	uint64_t w = (uint64_t)win << pe.ws;

	if (a >= 0 && a <= pe.hi) {
		if (a > pe.acked)
			pe.acked = a;
		if (a > pe.rcv)
			pe.rcv = a; /* the peer says it has them */
	}
	if (w > pe.max_win)
		pe.max_win = w;
}

/* Big mode: the peer ACKs stream offset ackoff with window win. */
static void peer_ack(struct tcp_core *c, uint8_t *f, bool v6, uint32_t cseq,
		     int64_t ackoff, uint16_t win)
{
	uint32_t ack = pe.base + (uint32_t)ackoff;

	note_ack(ack, win);
	rx(c, f, mk(f, v6, pe.sport, 0x10, cseq, ack, win, NULL, 0, NULL, 0));
}

static void big_setup(void)
{
	static bool done;
	char err[128];
	uint32_t i, k;

	if (done)
		return;
	for (i = 0; i < BIG_BODY; i++)
		big_body[i] = (uint8_t)('a' + (i * 7 + i / 251) % 26);
	if (http_responses_build(&big_resp, big_body, BIG_BODY, NULL, 0, err,
				 sizeof(err)) ||
	    big_resp.body_inline)
		abort();
	big_resp0 = (uint32_t)http_response_len(&big_resp, BLITZ_RESP_GET_KA);
	for (k = 0; k < BLITZ_RESP_KINDS; k++)
		if (http_response_len(&big_resp, (int)k) > big_max_resp)
			big_max_resp =
				(uint32_t)http_response_len(&big_resp, (int)k);
	done = true;
}

/*
 * Big mode, at the end: when the GET is still the only request and its
 * connection is up, the peer ACKs what it holds with an open window (time
 * passing, for retransmissions) until the response is through. All of it
 * must arrive.
 */
static void big_drain(struct tcp_core *c, uint8_t *f, bool v6, uint32_t cseq)
{
	const struct tcp_core_counters *cnt = tcp_core_counters(c);
	int r;

	if (tcp_core_active(c) != 1 || cnt->requests != 1)
		return;
	for (r = 0; r < 400 && pe.on && pe.rcv < big_resp0; r++) {
		peer_ack(c, f, v6, cseq, pe.rcv, 0xffff);
		now_ns += 50000000ull;
		tcp_core_poll_timers(c, now_ns);
		check(c);
	}
	if (pe.on && pe.rcv < big_resp0)
		broken("response not delivered though the peer ACKs all it "
		       "got: bytes got, response length",
		       pe.rcv, big_resp0);
}

static const char get_req[] = "GET / HTTP/1.1\r\nHost: f\r\n\r\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t f[FRAME_SZ + 128];
	static struct http_responses hello;
	struct tcp_core_params p = {
		.port = 8080,
		.resp = &hello,
		.table_size = 8,
		.rx_bufs = 2,
		.secret = {1, 2},
		.ops = &fz_ops,
		.idle_ms = 1000,
		.max_retries = 3,
	};
	struct tcp_core *c;
	size_t i = 1;
	bool big;

	if (size < 1)
		return 0;
	blitz_log_level = -1; /* quiet */
	big = (data[0] & 9) == 9;
	pe.on = false;
	if (big) {
		big_setup();
		p.resp = &big_resp;
	} else if (!hello.len[BLITZ_RESP_GET_KA] &&
		   http_responses_build(&hello, "Hello World!", 12, NULL, 0,
					NULL, 0)) {
		abort();
	}
	now_ns = 10ull * 1000000000ull;
	got_any = 0;
	c = tcp_core_new(&p);
	if (!c)
		abort();
	cur = c;
	if (!(data[0] & 1)) {
		while (i + 2 <= size) {
			uint32_t len = (uint32_t)(data[i] << 8 | data[i + 1]);

			i += 2;
			if (len > size - i)
				len = (uint32_t)(size - i);
			if (len > FRAME_SZ)
				len = FRAME_SZ;
			memcpy(f, data + i, len);
			rx(c, f, len);
			i += len;
			now_ns += 3000000;
			tcp_core_poll_timers(c, now_ns);
			check(c);
		}
	} else {
		bool v6 = data[0] & 2;
		/* MSS, window scale (bit 2), SACK-permitted (bit 6) */
		uint8_t opts[12] = {2, 4, 0x05, 0xb4, 1, 3, 3, PEER_WS};
		uint32_t ol = (data[0] & 4) ? 8 : 4;
		uint32_t iss = 0xfffffff0u, srv, cseq, sack;
		uint16_t sport = 40000;
		/* big mode: the GET rides on the handshake ACK (0x10) */
		bool get_in_ack = big && (data[0] & 0x10);
		/* big mode: a small first window (0x20), to start window-bound
		 */
		uint16_t win0 = big && (data[0] & 0x20) ? 2 * PEER_MSS : 65535;
		uint32_t glen = (uint32_t)sizeof(get_req) - 1;

		fz_sack = data[0] & 0x40;
		if (fz_sack) {
			memcpy(opts + ol, "\x01\x01\x04\x02", 4);
			ol += 4;
		}
		got_any = 0;
		rx(c, f,
		   mk(f, v6, sport, 0x02, iss, 0, 65535, NULL, 0, opts, ol));
		if (!got_any)
			abort(); /* a valid SYN must get a SYN-ACK */
		srv = last_seq;
		cseq = iss + 1;
		sack = srv + 1;
		if (big) {
			memset(&pe, 0, sizeof(pe));
			pe.sport = sport;
			pe.base = sack;
			pe.ws = (data[0] & 4) ? PEER_WS : 0;
			pe.on = true;
			fz_peer_end = cseq + (get_in_ack ? glen : 0);
			fz_peer_start = cseq;
			fz_conn_ack = cseq;
			note_ack(sack, win0);
		}
		rx(c, f,
		   mk(f, v6, sport, get_in_ack ? 0x18 : 0x10, cseq, sack, win0,
		      (const uint8_t *)get_req, get_in_ack ? glen : 0, NULL,
		      0));
		if (tcp_core_active(c) != 1)
			abort();
		if (big && !get_in_ack) {
			fz_peer_end = cseq + glen;
			rx(c, f,
			   mk(f, v6, sport, 0x18, cseq, sack, win0,
			      (const uint8_t *)get_req, glen, NULL, 0));
		}
		if (big) {
			cseq += glen;
			/* 64 KiB of body must be on its way: a first window */
			if (!pe.on || pe.hi <= 0)
				abort();
		}
		/* ops: [op][flags][seq off][ack off][win][len][payload] */
		while (i + 6 <= size) {
			uint8_t op = data[i], flags = data[i + 1];
			int8_t so = (int8_t)data[i + 2],
			       ao = (int8_t)data[i + 3];
			uint16_t win = (uint16_t)(data[i + 4] << 8);
			uint32_t len = data[i + 5];

			i += 6;
			if (len > size - i)
				len = (uint32_t)(size - i);
			if (big && pe.on)
				sack = pe.base + (uint32_t)pe.rcv;
			uint32_t was = tcp_core_active(c), sa = fz_synacks,
				 pa = fz_pure_acks, k;

			switch (op % (big ? 12 : 4)) {
			case 0: /* a segment near the expected numbers */
				if (big) {
					uint32_t e = cseq + (uint32_t)so + len +
						     !!(flags & 0x01) +
						     !!(flags & 0x02);

					note_ack(sack + (uint32_t)ao, win);
					if (!(flags & 0x04) &&
					    (int32_t)(e - fz_peer_end) > 0)
						fz_peer_end = e;
				}
				rx(c, f,
				   mk(f, v6, sport, flags, cseq + (uint32_t)so,
				      sack + (uint32_t)ao, win, data + i, len,
				      NULL, 0));
				if (!(flags & 0x04) && so == 0)
					cseq += len + ((flags & 0x01) ? 1 : 0);
				break;
			case 1: /* ACK everything the core sent */
				if (big) {
					peer_ack(c, f, v6, cseq, pe.rcv,
						 win | 0xff);
					break;
				}
				if (got_any)
					sack = last_end;
				rx(c, f,
				   mk(f, v6, sport, 0x10, cseq, sack,
				      win | 0xff, NULL, 0, NULL, 0));
				break;
			case 2: /* time passes */
				now_ns += (uint64_t)(flags + 1) * 7000000ull;
				tcp_core_poll_timers(c, now_ns);
				check(c);
				break;
			case 3: /* another tuple, fuzzed flags */
				rx(c, f,
				   mk(f, v6,
				      (uint16_t)(sport + 1 + (flags & 7)),
				      flags, cseq, sack, win, data + i, len,
				      NULL, 0));
				break;
			case 4: /* ACK part of what the peer holds */
				peer_ack(c, f, v6, cseq,
					 pe.acked + (pe.rcv - pe.acked) *
							    flags / 255,
					 win);
				break;
			case 5: /* three duplicate ACKs: fast retransmit */
				peer_ack(c, f, v6, cseq, pe.acked, win | 0xff);
				peer_ack(c, f, v6, cseq, pe.acked, win | 0xff);
				peer_ack(c, f, v6, cseq, pe.acked, win | 0xff);
				break;
			case 6: /* zero window, then time: probes */
				peer_ack(c, f, v6, cseq, pe.rcv, 0);
				now_ns += (uint64_t)(flags + 1) * 3000000ull;
				tcp_core_poll_timers(c, now_ns);
				check(c);
				break;
			case 7: /* segments past acked + flags/255 were lost */
				pe.rcv = pe.acked +
					 (pe.rcv - pe.acked) * flags / 255;
				break;
			case 8: /* RST in the window, not at RCV.NXT */
				rx(c, f,
				   mk(f, v6, sport, 0x04,
				      fz_rcv_nxt + 1 + (uint32_t)flags * 97, 0,
				      0, NULL, 0, NULL, 0));
				if (was == 1 && tcp_core_active(c) != 1)
					broken("an inexact RST reset the "
					       "connection: seq offset",
					       1 + flags * 97, 0);
				break;
			case 9: /* SYN with a fuzzed ISN on the tuple */
				rx(c, f,
				   mk(f, v6, sport, 0x02 | (flags & 0x10),
				      cseq + (uint32_t)(so * 65536) +
					      (uint32_t)ao,
				      sack, win, NULL, 0, NULL, 0));
				if (was == 1 && (tcp_core_active(c) != 1 ||
						 fz_synacks != sa))
					broken("a SYN on an established "
					       "connection: active, SYN-ACKs",
					       tcp_core_active(c),
					       fz_synacks - sa);
				break;
			case 10: /* ACKs of bytes never sent, one instant */
				for (k = 0; k < 5; k++)
					rx(c, f,
					   mk(f, v6, sport, 0x10, cseq,
					      pe.base + (uint32_t)pe.hi + 1 +
						      flags + k,
					      win | 0xff, NULL, 0, NULL, 0));
				if (was == 1 && fz_pure_acks - pa > 1)
					broken("ACKs answering 5 unacceptable "
					       "ACKs in one instant",
					       fz_pure_acks - pa, 0);
				break;
			case 11: /* a reordered older ACK with window 0 */
				if (pe.acked > 0)
					rx(c, f,
					   mk(f, v6, sport, 0x10, cseq,
					      pe.base +
						      (uint32_t)(pe.acked - 1 -
								 flags % (pe.acked)),
					      0, NULL, 0, NULL, 0));
				break;
			}
			i += len;
			/* A peer's next sequence number is never below what
			 * the core acked: a segment that reached back under
			 * cseq (so < 0) may have carried data or a FIN past
			 * it, and the core took them. */
			if (big && (int32_t)(fz_conn_ack - cseq) > 0)
				cseq = fz_conn_ack;
		}
		if (big && pe.on)
			big_drain(c, f, v6, cseq);
	}
	cur = NULL;
	tcp_core_free(c);
	return 0;
}
