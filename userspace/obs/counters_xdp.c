// SPDX-License-Identifier: GPL-2.0
/*
 * counters_xdp.c - the BPF programs' counters of one interface
 * (counters_xdp.h).
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>

#include "counters.h"
#include "counters_xdp.h"
#include "loader.h"

/* The answers of afxdp mode: the TCP cores count them under these names
 * (tcp_core_counter_names), the program never does. */
static const unsigned int afxdp_keys[] = {
	BLITZ_CNT_SYNACK,	   BLITZ_CNT_REQUESTS, BLITZ_CNT_HTTP_ERRORS,
	BLITZ_CNT_REPLIES,	   BLITZ_CNT_TX_BYTES, BLITZ_CNT_FINACK,
	BLITZ_CNT_DROP_BAD_COOKIE, BLITZ_CNT_DROP_RST,
};
#define N_AFXDP_KEYS (sizeof(afxdp_keys) / sizeof(afxdp_keys[0]))

static const struct {
	const char *name, *help;
} key_names[BLITZ_CNT_MAX] = {
#define BLITZ_CNT_KEY_NAME(id, n, h) [BLITZ_CNT_##id] = {n, h},
	BLITZ_COUNTERS(BLITZ_CNT_KEY_NAME)
#undef BLITZ_CNT_KEY_NAME
};

const char *counters_xdp_name(unsigned int k)
{
	return k < BLITZ_CNT_MAX ? key_names[k].name : "";
}

const char *counters_xdp_help(unsigned int k)
{
	return k < BLITZ_CNT_MAX ? key_names[k].help : "";
}

int counters_xdp_read(int fd, int ncpu, uint64_t *vals,
		      uint64_t tot[BLITZ_CNT_MAX], unsigned int *bad)
{
	__u32 k;
	int c;

	for (k = 0; k < BLITZ_CNT_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals)) {
			if (bad)
				*bad = k;
			return -errno;
		}
		tot[k] = 0;
		for (c = 0; c < ncpu; c++)
			tot[k] += vals[c];
	}
	return 0;
}

bool counters_xdp_is_afxdp(const char *ifname)
{
	struct blitz_config cfg;
	bool afxdp;

	if (blitz_pinned_config(ifname, &cfg, NULL))
		return false;
	afxdp = cfg.mode == BLITZ_MODE_AFXDP;
	memset(&cfg, 0, sizeof(cfg)); /* it holds the key */
	return afxdp;
}

bool counters_xdp_afxdp_key(unsigned int k)
{
	unsigned int i;

	for (i = 0; i < N_AFXDP_KEYS; i++)
		if (afxdp_keys[i] == k)
			return true;
	return false;
}

bool counters_xdp_core_counts(unsigned int k)
{
	return k == BLITZ_CNT_SERVICE_SEGMENTS || k == BLITZ_CNT_RETRANSMITS ||
	       counters_xdp_afxdp_key(k);
}

struct add_ctx {
	const char *ifname;
	uint64_t *tot;
};

static int add_area(const struct counters_area *a, void *ctx)
{
	struct add_ctx *c = ctx;
	unsigned int i, k;

	if (strcmp(a->hdr->engine, "afxdp") ||
	    strcmp(a->hdr->ifname, c->ifname))
		return 0;
	for (k = 0; k < a->hdr->n_counters; k++)
		for (i = 0; i < N_AFXDP_KEYS; i++)
			if (!strcmp(a->defs[k].name,
				    key_names[afxdp_keys[i]].name))
				c->tot[afxdp_keys[i]] += counters_sum(a, k);
	return 0;
}

void counters_xdp_add_afxdp(const char *ifname, uint64_t tot[BLITZ_CNT_MAX])
{
	struct add_ctx c = {ifname, tot};

	counters_each(add_area, &c);
}
