// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_core.c - the userspace TCP core (see tcp_core.h for the contract):
 * making and freeing a core, its copy of the responses, its counters.
 *
 * The core's files (tcp_core_int.h lists what each owns) together own:
 * the connection table (open addressing, linear probing, backward-shift
 * delete), SYN cookies, the per-connection response queue, retransmission
 * and the timer wheel, and writing whole frames with correct checksums.
 * Must never allocate or make a syscall after tcp_core_new(), never keep a
 * pointer into an RX frame past tcp_core_rx_burst(), and never copy
 * response bytes anywhere but into a TX frame.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "free_stack.h"
#include "log.h"
#include "tcp_core_int.h"

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

/* What tcp_core_new() refuses: 0, or the errno to fail with. */
static int params_check(const struct tcp_core_params *p)
{
	if (!p || !p->ops || !p->ops->tx_alloc || !p->ops->tx_send ||
	    !p->port) {
		pr_warn("tcp core: missing port or TX operations\n");
		return EINVAL;
	}
	if (!p->resp) {
		pr_warn("tcp core: no responses to send\n");
		return EINVAL;
	}
	if (p->resp->body_len > BLITZ_BODY_MAX ||
	    (!p->resp->body_inline && p->resp->body_len && !p->resp->body)) {
		pr_warn("tcp core: body of %zu bytes: at most %u bytes\n",
			p->resp->body_len, BLITZ_BODY_MAX);
		return EMSGSIZE;
	}
	if (p->n_addr4 < 0 || p->n_addr6 < 0 || p->n_addr4 > BLITZ_MAX_ADDRS ||
	    p->n_addr6 > BLITZ_MAX_ADDRS) {
		pr_warn("tcp core: bad address count\n");
		return EINVAL;
	}
	return 0;
}

/* The defaults of the parameters left 0. */
static void params_defaults(struct tcp_core_params *p)
{
	if (!p->table_size)
		p->table_size = TCP_CORE_DEFAULT_TABLE;
	if (!p->rx_bufs)
		p->rx_bufs = default_rx_bufs(p->table_size);
	if (!p->frame_cap)
		p->frame_cap = 2048;
	if (!p->rto_initial_ms)
		p->rto_initial_ms = 200;
	if (!p->rto_max_ms)
		p->rto_max_ms = 3000;
	if (!p->max_retries)
		p->max_retries = 6;
	if (!p->idle_ms)
		p->idle_ms = 60000;
	if (!p->header_ms)
		p->header_ms = 10000;
	if (!p->persist_max_ms)
		p->persist_max_ms = 30000;
}

/* Our MSS per family, MAC and addresses (frames to others are not ours). */
static void local_init(struct tcp_core *c, const struct tcp_core_params *p)
{
	uint32_t i;

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
}

#define HUGE_SZ (2u << 20)

/* Zeroed, page-aligned memory for the connections, their timer links and
 * the hash slots (a connection is aligned to a cache line; calloc's large
 * blocks are not), faulted in as it is first touched, as calloc's is.
 * Past 2 MiB it is 2 MiB-aligned and asks for transparent huge pages:
 * every segment touches a random connection, and over 4 KiB pages at
 * 100,000 connections (58 MB) nearly each of them missed the TLB. */
static void *table_mem(size_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t rb = (bytes + pg - 1) / pg * pg;
	size_t len = bytes >= HUGE_SZ ? rb + HUGE_SZ : bytes;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t head;

	if (m == MAP_FAILED)
		return NULL;
	if (len == bytes)
		return m;
	/* Keep [aligned, aligned + bytes): table_mem_free unmaps that. */
	head = (HUGE_SZ - ((uintptr_t)m & (HUGE_SZ - 1))) & (HUGE_SZ - 1);
	if (head)
		munmap(m, head);
	munmap(m + head + rb, HUGE_SZ - head);
	m += head;
	(void)madvise(m, bytes, MADV_HUGEPAGE); /* a hint: may be off */
	return m;
}

static void table_mem_free(void *m, size_t bytes)
{
	if (m)
		munmap(m, bytes);
}

/* The table, the reassembly buffers and the wheels (tcp_table.c sizes
 * them): 0, or -ENOMEM. */
static int table_alloc(struct tcp_core *c)
{
	uint32_t n, slots, i;

	n = c->p.table_size;
	slots = table_slots(n);
	c->mask = slots - 1;
	c->nconns = n;
	c->conns = table_mem((size_t)n * sizeof(*c->conns));
	c->free_stack = free_stack_new(n);
	c->tl = table_mem((size_t)n * sizeof(*c->tl));
	c->slots = table_mem((size_t)slots * sizeof(*c->slots));
	c->nrxbufs = c->p.rx_bufs;
	c->rxbufs = malloc((size_t)c->nrxbufs * RXBUF_SIZE);
	c->rxfree = free_stack_new(c->nrxbufs);
	slots = src_slots(c->nrxbufs);
	c->src_mask = slots - 1;
	c->src_cnt = calloc(slots, sizeof(*c->src_cnt));
	c->src_cap = c->p.rx_bufs_per_src
			     ? c->p.rx_bufs_per_src
			     : (c->nrxbufs / 8 > 4 ? c->nrxbufs / 8 : 4);
	c->lru_head = c->lru_tail = NIL;
	if (!c->conns || !c->free_stack || !c->tl || !c->slots || !c->rxbufs ||
	    !c->rxfree || !c->src_cnt) {
		pr_warn("tcp core: cannot allocate a table of %u "
			"connections\n",
			n);
		return -ENOMEM;
	}
	/* Handshakes in flight at once: one slot per connection the table
	 * holds, at most 64 Ki (512 KiB). */
	for (slots = 256; slots < n && slots < 65536; slots *= 2)
		;
	c->synack = calloc(slots, sizeof(*c->synack));
	if (!c->synack)
		return -ENOMEM;
	c->synack_mask = slots - 1;
	c->nfree = n;
	c->nrxfree = c->nrxbufs;
	for (i = 0; i < WHEEL_SLOTS; i++)
		c->wheel[i] = NIL;
	for (i = 0; i < L1_SLOTS; i++)
		c->wheel1[i] = NIL;
	return 0;
}

struct tcp_core *tcp_core_new(const struct tcp_core_params *p)
{
	struct tcp_core *c;
	struct timespec rt, mono;
	int err, ret;

	err = params_check(p);
	if (err) {
		errno = err;
		return NULL;
	}
	err = ENOMEM;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto fail;
	c->p = *p;
	c->p.resp = NULL; /* read during tcp_core_new only */
	params_defaults(&c->p);
	if (c->p.frame_cap < 256) {
		pr_warn("tcp core: frame_cap %u too small\n", c->p.frame_cap);
		err = EINVAL;
		goto fail;
	}
	local_init(c, p);

	if (p->secret[0] || p->secret[1]) {
		c->key[0] = p->secret[0];
		c->key[1] = p->secret[1];
	} else if (getrandom(c->key, sizeof(c->key), 0) !=
		   (ssize_t)sizeof(c->key)) {
		err = errno;
		pr_warn("tcp core: getrandom: %s\n", strerror(err));
		goto fail;
	}

	if (table_alloc(c))
		goto fail;

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
	table_mem_free(c->conns, (size_t)c->nconns * sizeof(*c->conns));
	free(c->free_stack);
	table_mem_free(c->tl, (size_t)c->nconns * sizeof(*c->tl));
	table_mem_free(c->slots, ((size_t)c->mask + 1) * sizeof(*c->slots));
	free(c->rxbufs);
	free(c->rxfree);
	free(c->src_cnt);
	free(c->synack);
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
