// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_tcp_segment.c - libFuzzer target for the userspace TCP core.
 *
 * Owns: a fake engine (TX frames are checked and dropped) and two modes
 * chosen by the first input byte:
 *   even: the rest is a sequence of [u16 len][bytes] raw frames;
 *   odd:  a valid handshake (IPv4 or IPv6) first, then a sequence of ops
 *         that build segments on that connection from fuzzed flags,
 *         sequence/ack offsets, window and payload, ACK what the core
 *         sent, or advance the clock (timers).
 * After every step the table invariants are checked (tcp_core_check) and
 * every frame the core sends must parse with a valid length. Must never
 * touch a network.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tcp_core.h"

#define FRAME_SZ 2048

static uint8_t txb[TCP_CORE_TX_BATCH][FRAME_SZ];
static uint32_t txn;
/* What the fake peer learned from the core's frames. */
static uint32_t last_seq, last_end, got_any;

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
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
		last_seq = rd32(d + 14 + l3 + 4);
		last_end = last_seq + tl - doff +
			   ((d[14 + l3 + 13] & 0x03) ? 1 : 0);
		got_any = 1;
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
	uint32_t l3 = v6 ? 40 : 20, off = 14 + l3, tl = 20 + optlen + len;
	uint8_t *ip = f + 14, *th = f + off;

	memset(f, 0, off + 20);
	f[0] = 2, f[5] = 1, f[6] = 2, f[11] = 2;
	if (!v6) {
		f[12] = 0x08;
		ip[0] = 0x45;
		ip[2] = (uint8_t)((20 + tl) >> 8);
		ip[3] = (uint8_t)(20 + tl);
		ip[8] = 64;
		ip[9] = 6;
		ip[12] = 10, ip[15] = 2, ip[16] = 10, ip[19] = 1;
	} else {
		f[12] = 0x86, f[13] = 0xdd;
		ip[0] = 0x60;
		ip[4] = (uint8_t)(tl >> 8);
		ip[5] = (uint8_t)tl;
		ip[6] = 6;
		ip[7] = 64;
		ip[8] = 0xfd, ip[23] = 2, ip[24] = 0xfd, ip[39] = 1;
	}
	th[0] = (uint8_t)(sport >> 8), th[1] = (uint8_t)sport;
	th[2] = 0x1f, th[3] = 0x90; /* 8080 */
	th[4] = (uint8_t)(seq >> 24), th[5] = (uint8_t)(seq >> 16);
	th[6] = (uint8_t)(seq >> 8), th[7] = (uint8_t)seq;
	th[8] = (uint8_t)(ack >> 24), th[9] = (uint8_t)(ack >> 16);
	th[10] = (uint8_t)(ack >> 8), th[11] = (uint8_t)ack;
	th[12] = (uint8_t)(((20 + optlen) / 4) << 4);
	th[13] = flags;
	th[14] = (uint8_t)(win >> 8), th[15] = (uint8_t)win;
	if (optlen)
		memcpy(th + 20, opts, optlen);
	if (len)
		memcpy(th + 20 + optlen, data, len);
	return off + tl;
}

static void rx(struct tcp_core *c, uint8_t *f, uint32_t len)
{
	struct tcp_frame fr = {.data = f, .len = len, .cap = len};

	tcp_core_rx_burst(c, &fr, 1, now_ns);
	check(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t f[FRAME_SZ + 128];
	struct tcp_core_params p = {
		.port = 8080,
		.body = "Hello World!",
		.body_len = 12,
		.table_size = 8,
		.rx_bufs = 2,
		.secret = {1, 2},
		.ops = &fz_ops,
		.idle_ms = 1000,
		.max_retries = 3,
	};
	struct tcp_core *c;
	size_t i = 1;

	if (size < 1)
		return 0;
	blitz_log_level = -1; /* quiet */
	now_ns = 10ull * 1000000000ull;
	got_any = 0;
	c = tcp_core_new(&p);
	if (!c)
		abort();
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
		uint8_t opts[8] = {2, 4, 0x05, 0xb4, 1, 3, 3, 2};
		uint32_t iss = 0xfffffff0u, srv, cseq, sack;
		uint16_t sport = 40000;

		got_any = 0;
		rx(c, f,
		   mk(f, v6, sport, 0x02, iss, 0, 65535, NULL, 0, opts,
		      (data[0] & 4) ? 8 : 4));
		if (!got_any)
			abort(); /* a valid SYN must get a SYN-ACK */
		srv = last_seq;
		cseq = iss + 1;
		sack = srv + 1;
		rx(c, f,
		   mk(f, v6, sport, 0x10, cseq, sack, 65535, NULL, 0, NULL, 0));
		if (tcp_core_active(c) != 1)
			abort();
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
			switch (op % 4) {
			case 0: /* a segment near the expected numbers */
				rx(c, f,
				   mk(f, v6, sport, flags, cseq + (uint32_t)so,
				      sack + (uint32_t)ao, win, data + i, len,
				      NULL, 0));
				if (!(flags & 0x04) && so == 0)
					cseq += len + ((flags & 0x01) ? 1 : 0);
				break;
			case 1: /* ACK everything the core sent */
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
			}
			i += len;
		}
	}
	tcp_core_free(c);
	return 0;
}
