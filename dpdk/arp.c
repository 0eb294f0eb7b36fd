// SPDX-License-Identifier: GPL-2.0
/*
 * arp.c - the neighbour table and ARP of the dpdk engine.
 *
 * Owns: which MAC each peer address has, learnt with no static entry from
 * ARP requests and replies and from the source MAC of IP packets; the
 * answers to ARP requests for the service addresses; ARP requests for
 * peers a reply must reach and the table does not know.
 * Must never: take a lock or write shared memory on a lookup, or when
 * learning a mapping it already has (every received IP packet learns);
 * answer ARP for an address that is not a service address (those requests
 * go to the kernel through the TAP, which may own other addresses).
 *
 * The table is one array of NEIGH_SLOTS entries shared by every lcore,
 * open addressing with linear probing over NEIGH_PROBE slots. Readers use
 * a per-entry sequence count (odd while written) and retry on a change;
 * writers serialise on one spinlock. Entries are never freed, so a free
 * slot ends a probe; a full probe window evicts the home slot.
 */
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_malloc.h>

#include "dpdk_engine.h"
#include "log.h"

#define NEIGH_PROBE_MS 200 /* at most one ARP request per address per this */

struct neigh_table *neigh_create(void)
{
	struct neigh_table *t;

	t = rte_zmalloc("blitz_neigh", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t)
		rte_spinlock_init(&t->lock);
	return t;
}

void neigh_addr4(uint8_t out[16], uint32_t ip_be)
{
	memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	memcpy(out + 12, &ip_be, 4);
}

static uint32_t neigh_hash(const uint8_t a[16])
{
	uint32_t w[4];

	memcpy(w, a, 16);
	return ((w[0] ^ w[1] ^ w[2] ^ w[3]) * 0x9e3779b1u) >> 20;
}

/* Read one entry consistently. Returns its state (NEIGH_FREE on a slot
 * being written for the first time). */
static uint32_t neigh_read(const struct neigh_entry *e, uint8_t addr[16],
			   struct rte_ether_addr *mac)
{
	uint32_t s1, s2, state;

	for (;;) {
		s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			rte_pause();
			continue;
		}
		state = e->state;
		memcpy(addr, e->addr, 16);
		*mac = e->mac;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return state;
	}
}

static void neigh_write(struct neigh_entry *e, uint32_t state,
			const uint8_t addr[16],
			const struct rte_ether_addr *mac, uint64_t probe_tsc)
{
	uint32_t s = e->seq;

	__atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->state = state;
	memcpy(e->addr, addr, 16);
	if (mac)
		e->mac = *mac;
	e->probe_tsc = probe_tsc;
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

/* Slot index of addr, or -1; *state and *mac of it when found. */
static int neigh_find(struct neigh_table *t, const uint8_t addr[16],
		      uint32_t *state, struct rte_ether_addr *mac)
{
	uint32_t h = neigh_hash(addr), i, st;
	uint8_t a[16];

	for (i = 0; i < NEIGH_PROBE; i++) {
		uint32_t slot = (h + i) & (NEIGH_SLOTS - 1);

		st = neigh_read(&t->e[slot], a, mac);
		if (st == NEIGH_FREE)
			return -1;
		if (!memcmp(a, addr, 16)) {
			*state = st;
			return (int)slot;
		}
	}
	return -1;
}

int neigh_lookup(struct neigh_table *t, const uint8_t addr[16],
		 struct rte_ether_addr *mac)
{
	uint32_t state;

	return neigh_find(t, addr, &state, mac) >= 0 &&
	       state == NEIGH_REACHABLE;
}

/* Under the lock: the slot for addr (its own, a free one, or evicted). */
static uint32_t neigh_slot_locked(struct neigh_table *t, const uint8_t addr[16])
{
	uint32_t h = neigh_hash(addr), i;

	for (i = 0; i < NEIGH_PROBE; i++) {
		uint32_t slot = (h + i) & (NEIGH_SLOTS - 1);
		struct neigh_entry *e = &t->e[slot];

		if (e->state == NEIGH_FREE || !memcmp(e->addr, addr, 16))
			return slot;
	}
	return h & (NEIGH_SLOTS - 1);
}

void neigh_learn(struct neigh_table *t, const uint8_t addr[16],
		 const struct rte_ether_addr *mac)
{
	struct rte_ether_addr old;
	uint32_t state, slot;

	if (neigh_find(t, addr, &state, &old) >= 0 &&
	    state == NEIGH_REACHABLE && rte_is_same_ether_addr(&old, mac))
		return;
	if (!rte_is_unicast_ether_addr(mac) || rte_is_zero_ether_addr(mac))
		return;
	rte_spinlock_lock(&t->lock);
	slot = neigh_slot_locked(t, addr);
	neigh_write(&t->e[slot], NEIGH_REACHABLE, addr, mac, 0);
	rte_spinlock_unlock(&t->lock);
}

bool engine_has_addr4(const struct engine *eng, uint32_t ip_be)
{
	int i;

	for (i = 0; i < eng->n_addr4; i++)
		if (eng->addr4_be[i] == ip_be)
			return true;
	return false;
}

bool engine_has_addr6(const struct engine *eng, const uint8_t a[16])
{
	int i;

	for (i = 0; i < eng->n_addr6; i++)
		if (!memcmp(eng->addr6[i], a, 16))
			return true;
	return false;
}

static void arp_send_request(struct worker *w, uint32_t target_be,
			     uint32_t sender_be)
{
	struct engine *eng = w->eng;
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;
	struct rte_mbuf *m;

	m = rte_pktmbuf_alloc(eng->pool);
	if (!m) {
		w->st.no_mbuf++;
		return;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(
		m, sizeof(*eth) + sizeof(*arp));
	arp = (struct rte_arp_hdr *)(eth + 1);
	memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	eth->src_addr = eng->mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	arp->arp_data.arp_sha = eng->mac;
	arp->arp_data.arp_sip = sender_be;
	memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	arp->arp_data.arp_tip = target_be;
	w->st.arp_request++;
	worker_tx_port(w, m);
}

void neigh_resolve(struct worker *w, uint32_t ip_be, uint32_t src_be)
{
	struct neigh_table *t = w->eng->neigh;
	uint64_t gap = w->eng->tsc_hz * NEIGH_PROBE_MS / 1000;
	struct rte_ether_addr mac;
	uint8_t addr[16];
	uint32_t state, slot;
	int found;

	neigh_addr4(addr, ip_be);
	found = neigh_find(t, addr, &state, &mac);
	if (found >= 0 && state == NEIGH_REACHABLE)
		return;
	rte_spinlock_lock(&t->lock);
	slot = neigh_slot_locked(t, addr);
	if (t->e[slot].state == NEIGH_INCOMPLETE &&
	    !memcmp(t->e[slot].addr, addr, 16) &&
	    w->now_tsc - t->e[slot].probe_tsc < gap) {
		rte_spinlock_unlock(&t->lock);
		return;
	}
	/* A reachable entry evicted here is relearnt from its next packet. */
	neigh_write(&t->e[slot], NEIGH_INCOMPLETE, addr, NULL, w->now_tsc);
	rte_spinlock_unlock(&t->lock);
	if (!src_be || !engine_has_addr4(w->eng, src_be))
		src_be = w->eng->addr4_be[0];
	arp_send_request(w, ip_be, src_be);
}

void arp_input(struct worker *w, struct rte_mbuf *m)
{
	struct engine *eng = w->eng;
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;
	struct rte_ether_addr known;
	uint32_t sip, tip;
	uint8_t addr[16];
	bool for_us;

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*arp))
		goto drop;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4)
		goto drop;
	sip = arp->arp_data.arp_sip;
	tip = arp->arp_data.arp_tip;
	for_us = engine_has_addr4(eng, tip);
	/* Learn from what is addressed to us (requests, and replies to our
	 * requests or to the kernel's, which share our addresses), and update
	 * a peer we already know (gratuitous ARP after a failover); a probe
	 * (sender 0.0.0.0) teaches nothing. */
	neigh_addr4(addr, sip);
	if (sip &&
	    (for_us || arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY) ||
	     neigh_lookup(eng->neigh, addr, &known)))
		neigh_learn(eng->neigh, addr, &arp->arp_data.arp_sha);
	if (for_us && arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST)) {
		/* Answer in place; the kernel never sees it, so exactly one
		 * reply leaves. */
		arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
		arp->arp_data.arp_tha = arp->arp_data.arp_sha;
		arp->arp_data.arp_tip = sip;
		arp->arp_data.arp_sha = eng->mac;
		arp->arp_data.arp_sip = tip;
		eth->dst_addr = arp->arp_data.arp_tha;
		eth->src_addr = eng->mac;
		w->st.arp_reply++;
		worker_tx_port(w, m);
		return;
	}
	/* Replies (the kernel may be waiting for one), requests for other
	 * addresses, gratuitous ARP: the kernel's business. */
	exception_to_kernel(w, m);
	return;
drop:
	w->st.drop_other++;
	rte_pktmbuf_free(m);
}
