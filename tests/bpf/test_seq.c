// SPDX-License-Identifier: GPL-2.0
/*
 * test_seq.c - known sequence numbers in the xdp engine (issue 11), under
 * an oracle that knows nothing of our rules: a client-side model of a
 * Linux TCP client (snd_una/snd_max, rcv_nxt, rcv_wup and ts_recent as
 * RFC 7323 section 4.3 keeps them, PAWS) writes HTTP requests in random
 * segmentations (whole, split, two in one), retransmits, coalesces, sends
 * FINs, pure ACKs and RSTs; both directions lose, reorder and duplicate.
 * Every segment goes through the real program (BPF_PROG_TEST_RUN). For
 * every frame the program sends, the oracle checks:
 *   - its ack covers only bytes the client sent, and ends on a request;
 *   - its payload is, byte for byte (the Date aside), the response stream
 *     of the requests, at the position those responses have in it, and
 *     only responses to requests its own ack covers;
 *   - a FIN only at the end of the response to a closing request or
 *     after the client's FIN, always at one position; never a RST (after our
 * FIN data is acked and discarded, a bare ACK right after our FIN);
 *   - re-sent ranges agree byte for byte (the Date aside);
 * and after a final drain (the client retransmits what is unacked, nothing
 * lost) that the stream is the responses to exactly the acked requests
 * and that nothing answerable was left unanswered.
 *
 * Runs in a private network namespace on one CPU (the flow table is per
 * CPU). SEQ_SEED=n reproduces a run; SEQ_RUNS=n changes its size.
 * Must never: touch a real interface or an address outside its netns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "blitz_xdp.skel.h"
#include "../bpf/blitz_shared.h"
#include "cookie_ring.h"
#include "xdp_fixture.h"
#include "http.h"
#include "testlib.h"
#include "frame.h"

#define PORT 8080
#define FRAME_MAX 4096
#define CMAX 2048 /* client stream bytes per connection */
#define SMAX 4096 /* server stream bytes per connection */
#define MAXREQ 6
#define MAXSEG 32
#define QMAX 24
#define MINTED 256 /* TSvals remembered per connection */

static struct blitz_xdp_bpf *skel;
static int prog_fd, ncpus;
static struct http_responses resp;
static struct blitz_config cfg;

static const uint8_t srv_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t cli_mac[6] = {0x02, 0, 0, 0, 0, 0x02};

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static int chance(unsigned pct)
{
	return rnd() % 100 < pct;
}

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

struct pkt {
	uint32_t seq, ack, tsval, tsecr;
	uint8_t flags;
	uint16_t plen;
	uint8_t payload[1400];
};

struct conn_addr {
	int v6;
	uint8_t src[16], dst[16];
	uint16_t sport;
};

static size_t frame_of(uint8_t *b, const struct conn_addr *c,
		       const struct pkt *p, int ts, int syn_opts)
{
	uint8_t opts[16];
	uint32_t optlen = 0;
	struct tf_seg s = {
		.v6 = c->v6,
		.src_mac = cli_mac,
		.dst_mac = srv_mac,
		.sport = c->sport,
		.dport = PORT,
		.seq = p->seq,
		.ack = p->ack,
		.flags = p->flags,
		.win = 64240,
		.frag_off = WIRE_IP_DF,
		.payload = p->payload,
		.plen = p->plen,
	};

	memcpy(s.saddr, c->src, sizeof(s.saddr));
	memcpy(s.daddr, c->dst, sizeof(s.daddr));
	if (syn_opts)
		optlen += wire_opt_mss(opts, 1460);
	if (ts)
		optlen += wire_opt_timestamps(opts + optlen, p->tsval,
					      syn_opts ? 0 : p->tsecr);
	s.opts = opts;
	s.optlen = optlen;
	return tf_build(b, &s);
}

/* What the program sent back, parsed (0 if it is not a TCP frame of c). */
struct out {
	uint32_t seq, ack, tsval, tsecr;
	uint8_t flags;
	int has_ts;
	uint16_t plen;
	uint8_t payload[1600];
};

static int parse_out(const uint8_t *b, uint32_t n, const struct conn_addr *c,
		     struct out *o)
{
	struct tf_out t;

	if (!tf_parse(b, n, &t) || t.dport != c->sport)
		return 0;
	memset(o, 0, offsetof(struct out, payload));
	o->seq = t.seq;
	o->ack = t.ack;
	o->flags = t.flags;
	o->has_ts = t.o.has_ts;
	o->tsval = t.o.tsval;
	o->tsecr = t.o.tsecr;
	o->plen = (uint16_t)t.p.payload_len;
	if (o->plen > sizeof(o->payload))
		return 0;
	memcpy(o->payload, t.p.payload, o->plen);
	return 1;
}

/* ------------------------------------------------------------------ */
/* The client and the oracle                                           */
/* ------------------------------------------------------------------ */

struct req {
	uint32_t off, len;   /* in the client's stream */
	uint32_t roff, rlen; /* its response in ours (rlen 0: after a close) */
	int closing;
};

struct cseg {
	uint32_t off, len;
	int fin;
};

struct conn {
	struct conn_addr a;
	int ts;
	uint32_t ciss, siss;
	uint8_t cbuf[CMAX];
	uint32_t clen;
	struct req reqs[MAXREQ];
	int nreq, iclose;
	struct cseg segs[MAXSEG];
	int nseg;
	uint32_t snd_una, snd_max; /* offsets from ciss + 1 */
	int fin_sent;		   /* client FIN at offset clen */
	uint8_t exp[SMAX], datemask[SMAX];
	uint32_t exp_len;
	uint8_t sbuf[SMAX], have[SMAX];
	uint32_t rcv_nxt, rcv_wup; /* offsets from siss + 1 */
	int peer_fin;
	int64_t srv_fin; /* where the server's FIN is, -1: none yet */
	uint32_t ts_recent, tsval_next;
	int reset, client_rst;
	struct pkt to_srv[QMAX];
	int n_to_srv;
	struct out to_cli[QMAX];
	int n_to_cli;
	/* What the TSvals of our segments were minted on (a + x: our
	 * sequence number after the segment plus its ack): a client segment
	 * is proved by its TSecr only if it echoes one of them and its seq +
	 * ack is that sum (blitz_ck2_ts_check_slot()). */
	struct {
		uint32_t tsval, sum;
	} minted[MINTED];
	uint32_t nminted;
	/* The program answered a segment no TSval of ours proved: its MAC
	 * matched by chance (2^-22 a segment, docs/tcp-security.md): the
	 * connection's later failures are that collision's, not a bug. */
	int collided;
	const char *fail;
	char why[160];
};

struct stats {
	uint64_t seqs, segs, replies, resent_bytes, rsts, fins, paws;
	uint64_t unproved, collisions; /* timestamp segments, see below */
	uint64_t answered_flow, answered_cookie;
};

static struct stats st;
static uint64_t trace; /* SEQ_TRACE=n: print connection n's segments */

static void conn_fail(struct conn *c, const char *fmt, uint32_t a, uint32_t b)
{
	if (c->fail)
		return;
	snprintf(c->why, sizeof(c->why), fmt, a, b);
	c->fail = c->why;
}

/* Offset of the first request boundary at or after off in the client
 * stream: 1 if off is a boundary (or the end, or just after the FIN). */
static int is_boundary(const struct conn *c, uint32_t off)
{
	int i;

	if (off == 0 || off == c->clen)
		return 1;
	if (c->fin_sent && off == c->clen + 1)
		return 1;
	for (i = 0; i < c->nreq; i++)
		if (c->reqs[i].off == off)
			return 1;
	return 0;
}

/* End, in our stream, of the responses to the requests acked by off. */
static uint32_t resp_end(const struct conn *c, uint32_t off)
{
	uint32_t end = 0;
	int i;

	for (i = 0; i < c->nreq; i++)
		if (c->reqs[i].off + c->reqs[i].len <= off && c->reqs[i].rlen)
			end = c->reqs[i].roff + c->reqs[i].rlen;
	return end;
}

/* Remember what the TSval of our segment o was minted on. */
static void note_minted(struct conn *c, const struct out *o, int syn)
{
	uint32_t i = c->nminted++ % MINTED;

	if (!o->has_ts)
		return;
	c->minted[i].tsval = o->tsval;
	c->minted[i].sum = o->seq + o->plen + (syn ? 1 : 0) +
			   ((o->flags & TCPHDR_FIN) ? 1 : 0) + o->ack;
}

/* Does p's TSecr prove it: an echo of one of our TSvals, minted on its
 * seq + ack? (Only the sum is bound: see docs/cookie-v2.md.) */
static int ts_proved(const struct conn *c, const struct pkt *p)
{
	uint32_t i, n = c->nminted < MINTED ? c->nminted : MINTED;

	for (i = 0; i < n; i++)
		if (c->minted[i].tsval == p->tsecr &&
		    c->minted[i].sum == p->seq + p->ack)
			return 1;
	return 0;
}

/* Check one frame the program sent, in answer to client packet p. */
static void oracle(struct conn *c, const struct pkt *p, const struct out *o)
{
	uint32_t off_a = o->ack - c->ciss - 1, so = o->seq - c->siss - 1, i;
	int64_t fin_at;

	st.replies++;
	if (trace && trace == st.seqs)
		printf("    srv: seq %u ack %u len %u flags %x\n", so, off_a,
		       o->plen, o->flags);
	if (c->ts && !ts_proved(c, p)) {
		/* Nothing proves where this reply goes: the MAC of a TSecr
		 * matched for a seq + ack it was not minted on (tried with
		 * and without the FIN mark). Counted (seq_collisions_check),
		 * and checked like any other: only a point on the track may
		 * be answered. */
		st.collisions++;
		c->collided = 1;
		if (trace && trace == st.seqs)
			printf("    (a MAC collision: no TSval of ours proves "
			       "it)\n");
	}
	if (o->flags & TCPHDR_RST) { /* we never reset a connection here */
		st.rsts++;
		conn_fail(c, "RST at %u (our FIN at %d)", so,
			  (uint32_t)c->srv_fin);
		return;
	}
	if (c->ts && (!o->has_ts || o->tsecr != p->tsval))
		conn_fail(c, "reply without our TSval echoed (%u vs %u)",
			  o->tsecr, p->tsval);
	if ((int32_t)(off_a - c->snd_max) > 0)
		conn_fail(c, "ack %u covers bytes never sent (sent %u)", off_a,
			  c->snd_max);
	/* (after a closing request anything is acked and discarded) */
	if (!is_boundary(c, off_a) &&
	    !(c->iclose >= 0 &&
	      off_a > c->reqs[c->iclose].off + c->reqs[c->iclose].len))
		conn_fail(c, "ack %u is not on a request boundary (%u)", off_a,
			  0);
	if (o->plen && so + o->plen > resp_end(c, off_a))
		conn_fail(c, "data up to %u: responses to what ack %u covers",
			  so + o->plen, off_a);
	for (i = 0; i < o->plen && !c->fail; i++) {
		uint32_t at = so + i;

		if (at >= SMAX || at >= c->exp_len) {
			conn_fail(c, "byte at %u past the responses (%u)", at,
				  c->exp_len);
			break;
		}
		if (!c->datemask[at] && o->payload[i] != c->exp[at])
			conn_fail(c, "byte at %u is not the response's (%u)",
				  at, o->payload[i]);
	}
	fin_at = (o->flags & TCPHDR_FIN) ? (int64_t)so + o->plen : -1;
	if (!(o->flags & TCPHDR_FIN) && !o->plen) {
		/* a bare ACK: only after our FIN, of a FIN or data */
		if (c->srv_fin < 0 || so != (uint32_t)c->srv_fin + 1)
			conn_fail(c, "bare ACK at %u acking %u", so, off_a);
	}
	if (fin_at >= 0) {
		int64_t want = -1;

		st.fins++;
		if (c->iclose >= 0 &&
		    c->reqs[c->iclose].off + c->reqs[c->iclose].len <= off_a)
			want = c->reqs[c->iclose].roff +
			       c->reqs[c->iclose].rlen;
		else if (c->fin_sent && off_a == c->clen + 1)
			want = c->exp_len;
		if (fin_at != want)
			conn_fail(c, "FIN at %u, expected at %d",
				  (uint32_t)fin_at, (uint32_t)want);
		if (c->srv_fin >= 0 && c->srv_fin != fin_at)
			conn_fail(c, "a second FIN at %u (first at %u)",
				  (uint32_t)fin_at, (uint32_t)c->srv_fin);
		c->srv_fin = fin_at;
	}
}

/* The client takes a frame of ours (Linux's order: PAWS, ts_recent, ack,
 * data, FIN). */
static void client_rx(struct conn *c, const struct out *o)
{
	uint32_t off_a = o->ack - c->ciss - 1, so = o->seq - c->siss - 1, i;

	if (o->flags & TCPHDR_RST) {
		if (so == c->rcv_nxt)
			c->reset = 1;
		return;
	}
	if (c->ts && (int32_t)(c->ts_recent - o->tsval) > 1) {
		st.paws++;
		return;
	}
	if (c->ts && (int32_t)(so - c->rcv_wup) <= 0 &&
	    (int32_t)(o->tsval - c->ts_recent) >= 0)
		c->ts_recent = o->tsval;
	if ((int32_t)(off_a - c->snd_una) > 0 &&
	    (int32_t)(off_a - c->snd_max) <= 0)
		c->snd_una = off_a;
	for (i = 0; i < o->plen; i++) {
		uint32_t at = so + i;

		if (at >= SMAX)
			break;
		if (c->have[at]) {
			st.resent_bytes++;
			if (!c->datemask[at] && c->sbuf[at] != o->payload[i])
				conn_fail(c, "re-sent byte at %u differs (%u)",
					  at, o->payload[i]);
			continue;
		}
		c->have[at] = 1;
		c->sbuf[at] = o->payload[i];
	}
	while (c->rcv_nxt < SMAX && c->have[c->rcv_nxt])
		c->rcv_nxt++;
	if ((o->flags & TCPHDR_FIN) && !c->peer_fin &&
	    so + o->plen == c->rcv_nxt) {
		c->peer_fin = 1;
		c->rcv_nxt++;
	}
}

/* Send [off, off + len) (+ FIN) now: a packet with the client's ack and
 * TSecr of this moment, queued toward the server. */
static void client_tx(struct conn *c, uint32_t off, uint32_t len, int fin,
		      uint8_t flags)
{
	struct pkt *p;

	if (c->n_to_srv >= QMAX)
		return;
	p = &c->to_srv[c->n_to_srv++];
	p->seq = c->ciss + 1 + off;
	p->ack = c->siss + 1 + c->rcv_nxt;
	p->tsval = c->tsval_next++;
	p->tsecr = c->ts_recent;
	p->flags = flags ? flags
			 : (uint8_t)(TCPHDR_ACK | (len ? TCPHDR_PSH : 0) |
				     (fin ? TCPHDR_FIN : 0));
	p->plen = (uint16_t)len;
	memcpy(p->payload, c->cbuf + off, len);
	c->rcv_wup = c->rcv_nxt;
	if ((int32_t)(off + len + (fin ? 1 : 0) - c->snd_max) > 0)
		c->snd_max = off + len + (fin ? 1 : 0);
}

/* Run one packet through the program; what it sends goes to the oracle
 * and toward the client. */
static void deliver_to_srv(struct conn *c, const struct pkt *p, int syn)
{
	uint8_t in[FRAME_MAX], outb[FRAME_MAX];
	size_t n = frame_of(in, &c->a, p, c->ts, syn);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = (uint32_t)n, .data_out = outb,
		    .data_size_out = FRAME_MAX, .repeat = 1);
	struct out r;

	st.segs++;
	if (!syn && c->ts && (p->plen || (p->flags & TCPHDR_FIN)) &&
	    !(p->flags & TCPHDR_RST) && !ts_proved(c, p))
		st.unproved++;
	if (trace && trace == st.seqs && !syn)
		printf("    cli: seq %u ack %u len %u flags %x tsecr %u\n",
		       p->seq - c->ciss - 1, p->ack - c->siss - 1, p->plen,
		       p->flags, p->tsecr);
	if (bpf_prog_test_run_opts(prog_fd, &o)) {
		conn_fail(c, "BPF_PROG_TEST_RUN failed (%u)", (uint32_t)errno,
			  0);
		return;
	}
	if (trace && trace == st.seqs && !syn)
		printf("    -> verdict %u\n", o.retval);
	if (o.retval != XDP_TX)
		return;
	if (!parse_out(outb, o.data_size_out, &c->a, &r)) {
		conn_fail(c, "unparsable reply (%u bytes)", o.data_size_out, 0);
		return;
	}
	note_minted(c, &r, syn);
	if (syn) {
		c->siss = r.seq;
		c->ts_recent = r.tsval;
		return;
	}
	oracle(c, p, &r);
	if (c->n_to_cli < QMAX)
		c->to_cli[c->n_to_cli++] = r;
}

static const char *const req_fmt[] = {
	"GET /%s HTTP/1.1\r\nHost: h\r\n\r\n",
	"HEAD /%s HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET /%s HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
};
static const int req_kind[] = {BLITZ_RESP_GET_KA, BLITZ_RESP_HEAD_KA,
			       BLITZ_RESP_GET_CLOSE};

/* Append one request to the client's stream (and its response to the
 * expected stream, unless an earlier one closed). */
static void add_request(struct conn *c)
{
	char path[24], text[128];
	int t = chance(6) ? 2 : (int)(rnd() % 2), n, i,
	    plen = (int)(rnd() % 20);
	struct req *r = &c->reqs[c->nreq++];
	const struct blitz_resp_meta *m;

	for (i = 0; i < plen; i++)
		path[i] = (char)('a' + rnd() % 26);
	path[plen] = 0;
	n = snprintf(text, sizeof(text), req_fmt[t], path);
	memcpy(c->cbuf + c->clen, text, (size_t)n);
	r->off = c->clen;
	r->len = (uint32_t)n;
	c->clen += (uint32_t)n;
	r->closing = t == 2;
	r->roff = c->exp_len;
	r->rlen = 0;
	if (c->iclose >= 0)
		return;
	m = &cfg.resp[req_kind[t]];
	r->rlen = m->len;
	memcpy(c->exp + c->exp_len, resp.bytes[req_kind[t]], m->len);
	memset(c->datemask + c->exp_len + m->date_off, 1, BLITZ_DATE_LEN);
	c->exp_len += m->len;
	if (r->closing)
		c->iclose = c->nreq - 1;
}

static void add_seg(struct conn *c, uint32_t off, uint32_t len, int fin)
{
	if (c->nseg < MAXSEG)
		c->segs[c->nseg++] = (struct cseg){off, len, fin};
	client_tx(c, off, len, fin, 0);
}

/* The client writes: one request in a segment, one split in two, or two
 * in one. */
static void client_write(struct conn *c)
{
	uint32_t off = c->clen, cut;

	add_request(c);
	if (c->nreq < MAXREQ && chance(15)) {
		add_request(c);
		add_seg(c, off, c->clen - off, 0);
	} else if (chance(15)) {
		cut = 1 + rnd() % (c->clen - off - 1);
		add_seg(c, off, cut, 0);
		add_seg(c, off + cut, c->clen - off - cut, 0);
	} else {
		add_seg(c, off, c->clen - off, 0);
	}
}

/* Retransmit from snd_una what is unacked, as one segment (Linux collapses
 * retransmissions up to an MSS), with the FIN if it was sent. */
static void client_retransmit_all(struct conn *c)
{
	uint32_t end = c->clen;

	if (c->snd_una >= c->snd_max)
		return;
	if (c->snd_una > end)
		end = c->snd_una;
	client_tx(c, c->snd_una, end - c->snd_una, c->fin_sent, 0);
}

static void pop(void *arr, int *n, int i, size_t sz)
{
	memmove((char *)arr + (size_t)i * sz,
		(char *)arr + (size_t)(i + 1) * sz, (size_t)(*n - i - 1) * sz);
	(*n)--;
}

static void step(struct conn *c)
{
	unsigned r = rnd() % 100;
	int i;

	if (r < 14) { /* write */
		if (!c->fin_sent && c->nreq < MAXREQ && c->clen + 300 < CMAX &&
		    (!c->peer_fin || chance(20)))
			client_write(c);
	} else if (r < 44) { /* the server gets a packet (any: reordering) */
		if (c->n_to_srv) {
			struct pkt p;

			i = (int)(rnd() % (unsigned)c->n_to_srv);
			if (chance(70))
				i = 0;
			p = c->to_srv[i];
			if (!chance(10)) /* else: duplicated */
				pop(c->to_srv, &c->n_to_srv, i, sizeof(p));
			deliver_to_srv(c, &p, 0);
		}
	} else if (r < 50) { /* lost toward the server */
		if (c->n_to_srv)
			pop(c->to_srv, &c->n_to_srv,
			    (int)(rnd() % (unsigned)c->n_to_srv),
			    sizeof(c->to_srv[0]));
	} else if (r < 76) { /* the client gets a frame */
		if (c->n_to_cli) {
			struct out o;

			i = (int)(rnd() % (unsigned)c->n_to_cli);
			if (chance(70))
				i = 0;
			o = c->to_cli[i];
			if (!chance(8))
				pop(c->to_cli, &c->n_to_cli, i, sizeof(o));
			client_rx(c, &o);
		}
	} else if (r < 82) { /* lost toward the client */
		if (c->n_to_cli)
			pop(c->to_cli, &c->n_to_cli,
			    (int)(rnd() % (unsigned)c->n_to_cli),
			    sizeof(c->to_cli[0]));
	} else if (r < 88) { /* retransmit one old segment as it was */
		if (c->nseg) {
			struct cseg *s = &c->segs[rnd() % (unsigned)c->nseg];

			client_tx(c, s->off, s->len, s->fin, 0);
		}
	} else if (r < 91) { /* retransmit all that is unacked */
		client_retransmit_all(c);
	} else if (r < 96) { /* a pure ACK */
		client_tx(c, c->snd_max - (c->fin_sent ? 1 : 0), 0, 0,
			  TCPHDR_ACK);
	} else if (r < 99) { /* FIN */
		if (!c->fin_sent) {
			c->fin_sent = 1;
			add_seg(c, c->clen, 0, 1);
		}
	} else if (chance(30)) { /* RST: the client is gone */
		client_tx(c, c->snd_max, 0, 0, 0x04);
		c->client_rst = 1;
	}
}

/*
 * The narrow build (test_seq_narrow) tests the point entry, which its
 * cut MAC leans on everywhere. A connection's first segments come before
 * any entry; at full width they rest on the offset margin of the TSval
 * layout alone (an early segment up to 12 KiB off never verifies:
 * docs/cookie-v2.md), which a cut MAC defeats. So there the
 * handshake-completing ACK, which makes the entry, arrives first.
 */
static void seq_narrow_first_ack(struct conn *c)
{
#ifdef SEQ_NARROW
	struct pkt p;

	if (!c->ts)
		return;
	client_tx(c, 0, 0, 0, TCPHDR_ACK);
	p = c->to_srv[--c->n_to_srv];
	deliver_to_srv(c, &p, 0);
#else
	(void)c;
#endif
}

/* One connection: handshake, random steps, drain, final checks. */
static int run_conn(int v6, int ts)
{
	static struct conn c;
	struct pkt syn = {0};
	uint32_t acked_end;
	int i, round;

	memset(&c, 0, offsetof(struct conn, to_srv));
	c.n_to_srv = c.n_to_cli = 0;
	c.fail = NULL;
	c.nminted = 0;
	c.collided = 0;
	c.a.v6 = v6;
	c.ts = ts;
	c.iclose = -1;
	c.srv_fin = -1;
	/* A source of its own per connection (the per-source cap is tested
	 * on its own): 10.r.r.r or fd00:r:r:r::r. */
	if (v6) {
		inet_pton(AF_INET6, "fd00::1", c.a.dst);
		inet_pton(AF_INET6, "fd00::", c.a.src);
		for (i = 2; i < 16; i++) /* a /64 of its own too */
			c.a.src[i] = (uint8_t)rnd();
	} else {
		inet_pton(AF_INET, "10.0.0.1", c.a.dst);
		c.a.src[0] = 10;
		c.a.src[1] = (uint8_t)(1 + rnd() % 250);
		c.a.src[2] = (uint8_t)rnd();
		c.a.src[3] = (uint8_t)(1 + rnd() % 250);
	}
	c.a.sport = (uint16_t)(1024 + rnd() % 60000);
	c.ciss = rnd() ^ (rnd() << 16);
	c.tsval_next = rnd();
	syn.seq = c.ciss;
	syn.flags = TCPHDR_SYN;
	syn.tsval = c.tsval_next++;
	deliver_to_srv(&c, &syn, 1);
	if (c.fail || !c.siss) {
		printf("  no SYN-ACK: %s\n", c.fail ? c.fail : "not sent");
		return -1;
	}
	st.seqs++;
	seq_narrow_first_ack(&c);
	for (i = 0, round = 5 + (int)(rnd() % 30);
	     i < round && !c.reset && !c.client_rst && !c.fail; i++)
		step(&c);
	/* Drain: nothing lost any more; the client retransmits what is
	 * unacked until it is acked, the way its RTO would. */
	for (round = 0; round < 8 && !c.reset && !c.client_rst && !c.fail;
	     round++) {
		while (c.n_to_srv) {
			struct pkt p = c.to_srv[0];

			pop(c.to_srv, &c.n_to_srv, 0, sizeof(p));
			deliver_to_srv(&c, &p, 0);
		}
		while (c.n_to_cli) {
			struct out o = c.to_cli[0];

			pop(c.to_cli, &c.n_to_cli, 0, sizeof(o));
			client_rx(&c, &o);
		}
		if (c.snd_una >= c.snd_max)
			break;
		client_retransmit_all(&c);
	}
	if (!c.fail && !c.reset && !c.client_rst) {
		/* Left unacked only what follows a closing request. */
		if (c.snd_una < c.snd_max &&
		    !(c.iclose >= 0 &&
		      c.snd_una >= c.reqs[c.iclose].off + c.reqs[c.iclose].len))
			conn_fail(&c, "stuck: acked %u of %u after the drain",
				  c.snd_una, c.snd_max);
		acked_end = resp_end(&c, c.snd_una);
		if (c.rcv_nxt - (c.peer_fin ? 1 : 0) != acked_end)
			conn_fail(&c,
				  "stream ends at %u, responses to what was "
				  "acked at %u",
				  c.rcv_nxt - (c.peer_fin ? 1u : 0u),
				  acked_end);
	}
	if (c.fail && c.collided) {
		/* Not excused: a chance match may not stall a connection. */
		printf("  connection %llu (%s, port %u): after a MAC "
		       "collision: %s\n",
		       (unsigned long long)st.seqs, v6 ? "v6" : "v4", c.a.sport,
		       c.fail);
		return -2;
	}
	if (c.fail) {
		printf("  connection %llu (%s, %s, port %u): %s\n",
		       (unsigned long long)st.seqs, v6 ? "v6" : "v4",
		       ts ? "timestamps" : "no timestamps", c.a.sport, c.fail);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */

static uint64_t counter(int id)
{
	return xdp_fixture_counter(skel->maps.counters, id);
}

static uint64_t seed;
static unsigned long runs = 100000;

/*
 * Segments no TSval of ours proves (sent before our reply arrived) are
 * never answered: their TSecr is off by the bytes since its point, which
 * moves only the MAC field, and a chance match is refused by the point
 * entry (bpf/blitz_tspt.h). The narrow build (test_seq_narrow: the TSval
 * MAC compared on SEQ_NARROW bits) makes those matches common: they must
 * all be refused, and every connection still completes.
 */
static void seq_collisions_check(uint64_t off_point)
{
	printf("  timestamp segments no TSval of ours proves %llu; MAC "
	       "matches refused at an off point %llu; answered %llu (on the "
	       "track, or the oracle failed above)\n",
	       (unsigned long long)st.unproved, (unsigned long long)off_point,
	       (unsigned long long)st.collisions);
#ifdef SEQ_NARROW
	/* The narrowing works: chance matches happened, and were refused
	 * (those answered were on the track: the oracle checked them). */
	T_CHECK_MSG(off_point >= 10, "only %llu off-point matches refused",
		    (unsigned long long)off_point);
#else
	/* With the full MAC an unproved segment verifies only when its
	 * offset borrows from the option bits (docs/cookie-v2.md): never
	 * in a run (expected far below 10^-3). */
	T_CHECK_MSG(!st.collisions && !off_point,
		    "%llu replies to unproved segments, %llu refused (seed "
		    "%llu)",
		    (unsigned long long)st.collisions,
		    (unsigned long long)off_point, (unsigned long long)seed);
#endif
}

static void t_seq_oracle(void)
{
	uint64_t o0 = counter(BLITZ_CNT_DROP_OFF_POINT),
		 f0 = counter(BLITZ_CNT_ANSWERED_FROM_FLOW),
		 s0 = counter(BLITZ_CNT_ANSWERED_STATELESS);
	unsigned long n, failed = 0, after_match = 0;
	struct timespec a, b;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (n = 0; n < runs && failed < 5; n++) {
		r = run_conn((int)(rnd() % 4 == 0), rnd() % 4 != 0);
		if (r == -2)
			after_match++;
		if (r)
			failed++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("  %llu sequences (seed %llu), %llu segments, %llu replies, "
	       "%llu re-sent bytes, %llu FINs, %llu RSTs, %llu PAWS drops, "
	       "%.1f s\n",
	       (unsigned long long)st.seqs, (unsigned long long)seed,
	       (unsigned long long)st.segs, (unsigned long long)st.replies,
	       (unsigned long long)st.resent_bytes, (unsigned long long)st.fins,
	       (unsigned long long)st.rsts, (unsigned long long)st.paws,
	       (double)(b.tv_sec - a.tv_sec) +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	printf("  requests answered from the cookie alone %llu, from flow "
	       "state %llu\n",
	       (unsigned long long)(counter(BLITZ_CNT_ANSWERED_STATELESS) - s0),
	       (unsigned long long)(counter(BLITZ_CNT_ANSWERED_FROM_FLOW) -
				    f0));
	printf("  flow entries made %llu, live ones evicted %llu, refused "
	       "(source cap) %llu\n",
	       (unsigned long long)counter(BLITZ_CNT_FLOW_NEW),
	       (unsigned long long)counter(BLITZ_CNT_FLOW_EVICT),
	       (unsigned long long)counter(BLITZ_CNT_FLOW_SRC_CAP));
#ifdef SEQ_NARROW
	/* With 6 MAC bits, now and then a chance match is one the point
	 * entry does not refuse: about one run in 7 broke one connection
	 * that way, where the build without the entry breaks 5 within
	 * ~100 unproved segments. Every other failure is a bug. */
	T_CHECK_MSG(failed - after_match == 0 && after_match <= 2,
		    "%lu sequences broke the oracle, %lu of them after a "
		    "chance match (seed %llu)",
		    failed, after_match, (unsigned long long)seed);
#else
	T_CHECK_MSG(!failed, "%lu sequences broke the oracle (seed %llu)",
		    failed, (unsigned long long)seed);
#endif
	seq_collisions_check(counter(BLITZ_CNT_DROP_OFF_POINT) - o0);
	T_CHECK(st.seqs >= runs || failed);
}

/* A connection from src (v4, the 4 bytes) that sends one GET: 1 if the
 * GET was answered. */
static int one_get(const uint8_t *src, uint16_t sport)
{
	static struct conn c;
	struct pkt syn = {0};

	memset(&c, 0, offsetof(struct conn, to_srv));
	c.n_to_srv = c.n_to_cli = 0;
	c.fail = NULL;
	c.ts = 0; /* entries are for connections without timestamps */
	c.iclose = -1;
	c.srv_fin = -1;
	inet_pton(AF_INET, "10.0.0.1", c.a.dst);
	memcpy(c.a.src, src, 4);
	c.a.sport = sport;
	c.ciss = rnd();
	c.tsval_next = rnd();
	syn.seq = c.ciss;
	syn.flags = TCPHDR_SYN;
	syn.tsval = c.tsval_next++;
	deliver_to_srv(&c, &syn, 1);
	if (!c.siss)
		return 0;
	add_request(&c);
	add_seg(&c, 0, c.clen, 0);
	while (c.n_to_srv) {
		struct pkt p = c.to_srv[0];

		pop(c.to_srv, &c.n_to_srv, 0, sizeof(p));
		deliver_to_srv(&c, &p, 0);
	}
	return c.n_to_cli > 0 && !c.fail;
}

/*
 * Where the table starts to evict: connections from distinct sources, one
 * GET each (an entry each), into the empty table; the live entries it
 * holds when the first is evicted, and the share evicted at its size.
 */
static void t_flow_table_evicts(void)
{
	uint64_t e0 = counter(BLITZ_CNT_FLOW_EVICT),
		 n0 = counter(BLITZ_CNT_FLOW_NEW);
	unsigned i, first = 0, total = 16384, ok = 0;
	uint8_t src[4] = {10, 0, 0, 0};

	for (i = 0; i < total; i++) {
		src[1] = (uint8_t)(1 + (i >> 16) % 250);
		src[2] = (uint8_t)(i >> 8);
		src[3] = (uint8_t)(i | 1);
		src[1] ^= (uint8_t)(i & 0x80 ? 0x80 : 0);
		ok += (unsigned)one_get(src, (uint16_t)(2000 + i));
		if (!first && counter(BLITZ_CNT_FLOW_EVICT) > e0)
			first = i + 1;
	}
	printf("  %u flows, %llu entries made: the first live entry was "
	       "evicted at flow %u; at %u flows %llu (%.1f%%) were\n",
	       total, (unsigned long long)(counter(BLITZ_CNT_FLOW_NEW) - n0),
	       first, total,
	       (unsigned long long)(counter(BLITZ_CNT_FLOW_EVICT) - e0),
	       100.0 * (double)(counter(BLITZ_CNT_FLOW_EVICT) - e0) / total);
	T_EQ_INT(ok, total);
	T_EQ_INT(counter(BLITZ_CNT_FLOW_NEW) - n0, total);
	T_CHECK(first > 0);
}

/* One source's many ports: at most BLITZ_FLOW_SRC_CAP new entries per
 * epoch; the rest are answered (statelessly) and refused an entry. */
static void t_flow_source_cap(void)
{
	uint64_t n0 = counter(BLITZ_CNT_FLOW_NEW),
		 c0 = counter(BLITZ_CNT_FLOW_SRC_CAP);
	const uint8_t src[4] = {10, 77, 0, 9};
	unsigned i, ok = 0;

	for (i = 0; i < 1100; i++)
		ok += (unsigned)one_get(src, (uint16_t)(20000 + i));
	/* (Sources that share its bucket, 4096 keyed buckets, share the cap:
	 * earlier tests' sources may have taken some of it.) */
	T_EQ_INT(ok, 1100);
	T_CHECK(counter(BLITZ_CNT_FLOW_NEW) - n0 <= 1024);
	T_CHECK(counter(BLITZ_CNT_FLOW_SRC_CAP) - c0 >= 76);
	T_EQ_INT(counter(BLITZ_CNT_FLOW_NEW) - n0 +
			 counter(BLITZ_CNT_FLOW_SRC_CAP) - c0,
		 1100);
}

/* ------------------------------------------------------------------ */

static int setup(void)
{
	skel = blitz_xdp_bpf__open_and_load();
	if (!skel)
		return -1;
	prog_fd = bpf_program__fd(skel->progs.blitz_xdp);
	ncpus = libbpf_num_possible_cpus();
	if (xdp_fixture_hello(&resp))
		return -1;
	xdp_fixture_cfg(&cfg, &resp, PORT, srv_mac,
			seed * 0x9e3779b97f4a7c15ULL + 1,
			seed ^ 0xfedcba9876543210ULL, 1);
	return xdp_fixture_push(skel->maps.config, skel->maps.responses, &cfg,
				&resp);
}

int main(void)
{
	const char *e;
	cpu_set_t one;

	libbpf_set_print(xdp_fixture_libbpf_quiet);
	if (geteuid() != 0) {
		printf("SKIP test_seq: needs root (BPF_PROG_TEST_RUN)\n");
		return 0;
	}
	if (unshare(CLONE_NEWNET)) {
		printf("SKIP test_seq: no private network namespace: %s\n",
		       strerror(errno));
		return 0;
	}
	xdp_fixture_lo_up();
	/* The flow table is per CPU: stay on one. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	e = getenv("SEQ_SEED");
	seed = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL);
	rng = seed * 0x2545f4914f6cdd1dULL + 0x9e3779b97f4a7c15ULL;
	e = getenv("SEQ_TRACE");
	if (e)
		trace = strtoull(e, NULL, 0);
	e = getenv("SEQ_RUNS");
	if (e)
		runs = strtoul(e, NULL, 0);
	printf("# test_seq seed %llu (SEQ_SEED=%llu reproduces it)\n",
	       (unsigned long long)seed, (unsigned long long)seed);
	if (setup())
		return xdp_fixture_setup_failed("test_seq");
	T_RUN(t_flow_table_evicts);
	/* A fresh program (empty tables) for the oracle. */
	blitz_xdp_bpf__destroy(skel);
	if (setup())
		return xdp_fixture_setup_failed("test_seq");
	T_RUN(t_seq_oracle);
	T_RUN(t_flow_source_cap);
	blitz_xdp_bpf__destroy(skel);
	T_EXIT();
}
