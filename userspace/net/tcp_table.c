// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_table.c - the TCP core's connection table (open addressing, linear
 * probing, backward-shift delete), connections' allocation and release,
 * the pool of reassembly buffers with its per-source share, the table's
 * sizing, and tcp_core_check() over all of it.
 *
 * Must never allocate (the arrays are tcp_core_new()'s) or send anything
 * but the RST of a connection it resets.
 */
#include <stdlib.h>

#include "tcp_core_int.h"

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

struct tcp_conn *conn_alloc(struct tcp_core *c, const struct tcp_tuple *t,
			    uint32_t h)
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
	c->tl[idx].prev = c->tl[idx].next = NIL;
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

void rxbuf_put(struct tcp_core *c, struct tcp_conn *k)
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

void conn_free(struct tcp_core *c, struct tcp_conn *k)
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
bool rxbuf_get(struct tcp_core *c, struct tcp_conn *k)
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

void conn_reset(struct tcp_core *c, struct tcp_conn *k, bool send)
{
	if (send)
		send_rst(c, &k->t, k->snd_nxt, k->rcv_nxt, true);
	c->cnt.connections_reset++;
	conn_free(c, k);
}

/* The hash slots for n connections: a power of two, at least 2n. */
uint32_t table_slots(uint32_t n)
{
	uint32_t slots;

	for (slots = 16; slots < 2 * n; slots <<= 1)
		;
	return slots;
}

uint32_t default_rx_bufs(uint32_t n)
{
	return n / 64 < 64 ? 64 : n / 64;
}

/* The per-source counts for nrx buffers: a power of two, at least 4 nrx. */
uint32_t src_slots(uint32_t nrx)
{
	uint32_t slots;

	for (slots = 16; slots < 4 * nrx; slots <<= 1)
		;
	return slots;
}

size_t tcp_core_table_bytes(uint32_t n)
{
	uint32_t nrx = default_rx_bufs(n);

	return (size_t)n * (sizeof(struct tcp_conn) + sizeof(uint32_t) +
			    sizeof(struct tlink)) +
	       (size_t)table_slots(n) * sizeof(struct tbl_slot) +
	       (size_t)nrx * (RXBUF_SIZE + sizeof(uint32_t)) +
	       (size_t)src_slots(nrx) * sizeof(uint16_t);
}

uint32_t tcp_core_active(const struct tcp_core *c)
{
	return c->active;
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
			    c->tl[idx].prev != prev || k->tl1 != l1 ||
			    (l1 ? (k->linked_at / L1_MS) % L1_SLOTS !=
					     i - WHEEL_SLOTS
				: k->linked_at % WHEEL_SLOTS != i))
				return -__LINE__;
			prev = idx;
			idx = c->tl[idx].next;
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
