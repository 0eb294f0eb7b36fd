// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_handshake.c - the TCP core's SYN cookies: a SYN is answered with a
 * SYN-ACK whose ISN carries a keyed MAC of the tuple and what the SYN
 * offered, and the ACK that brings it back opens the connection.
 *
 * The SYN-ACK's send time goes to a fixed array slot of the tuple's hash
 * (tcp_core.synack), so the ACK that completes the handshake gives the
 * first RTT sample, as Linux takes one from the SYN-ACK (the tail-loss
 * probe of the first flight needs it).
 *
 * Must never allocate for a SYN (a SYN flood allocates nothing: it only
 * overwrites send times, which costs samples, never a connection).
 */
#include "tcp_core_int.h"

/* Peer MSS values a cookie can encode (3 bits): the largest <= theirs. */
static const uint16_t cookie_mss[8] = {536,  1220, 1300, 1360,
				       1400, 1440, 1460, 8960};

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

/* The SYN-ACK with ISN isn leaves now: its time kept; the same SYN-ACK a
 * second time (a retransmitted SYN) makes the sample ambiguous (Karn). */
static void synack_sent(struct tcp_core *c, uint32_t h, uint32_t isn)
{
	struct synack_rec *r = &c->synack[h & c->synack_mask];

	if (r->isn == isn && r->ts)
		r->ts |= 1;
	else
		*r = (struct synack_rec){isn, (c->now_us & ~1u) | 2};
}

/* The handshake's RTT sample (us), or 0: the SYN-ACK this ACK answers
 * went once, and not too long ago to be a sample. */
static uint32_t synack_rtt(struct tcp_core *c, uint32_t h, uint32_t isn)
{
	struct synack_rec *r = &c->synack[h & c->synack_mask];
	uint32_t rtt, ts = r->ts;

	if (r->isn != isn || !ts)
		return 0;
	*r = (struct synack_rec){0, 0};
	rtt = c->now_us - (ts & ~3u);
	if (ts & 1 || rtt > c->p.rto_max_ms * 1000u)
		return 0;
	return rtt ? rtt : 1;
}

static void answer_syn(struct tcp_core *c, const struct seg *s, uint32_t h)
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
	synack_sent(c, h, isn);
	c->cnt.synack++;
}

/* A segment for a tuple we hold no connection for. */
void handle_unknown(struct tcp_core *c, const struct seg *s, uint32_t h)
{
	struct tcp_conn *k;
	uint32_t rtt;
	uint8_t info;
	uint16_t mss;

	if (s->flags & TCPHDR_RST)
		return;
	if ((s->flags & (TCPHDR_SYN | TCPHDR_ACK)) == TCPHDR_SYN) {
		answer_syn(c, s, h);
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
	k->rcv_nxt = k->irs1 = s->seq;
	mss = cookie_mss[info & 7];
	k->mss = min_u32(mss, s->t.v6 ? c->mss6 : c->mss4);
	k->snd_wscale =
		((info >> 3) & 15) == 15 ? 0 : (uint8_t)((info >> 3) & 15);
	k->sack_ok = !!(info & COOKIE_SACK_OK);
	k->reo_mult = 1;
	/* Before the first send: a 0 here would read as the future while
	 * the microsecond clock is in the upper half of its 2^32 lap. */
	k->last_ts = (c->now_us & ~1u) - 2;
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
	rtt = synack_rtt(c, h, s->ack - 1);
	if (rtt)
		rtt_update(c, k, rtt);
	k->idle_at = c->now_ms + c->p.idle_ms;
	timer_update(c, k);
	conn_handle(c, k, s);
}
