// SPDX-License-Identifier: GPL-2.0
/*
 * counters_xdp.c - the BPF programs' counters of one interface
 * (counters_xdp.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

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

int counters_xdp_layout(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_PERCPU_ARRAY || info.max_entries != 1 ||
	    info.key_size != sizeof(__u32) ||
	    info.value_size != sizeof(struct blitz_counters))
		return -EPROTO;
	return 0;
}

int counters_xdp_read(int fd, uint64_t tot[BLITZ_CNT_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), c, err;
	struct blitz_counters *per_cpu;
	__u32 key = 0, k;

	if (ncpu < 1)
		return ncpu < 0 ? ncpu : -EINVAL;
	err = counters_xdp_layout(fd);
	if (err)
		return err;
	/* A per-CPU value is read as one slot per possible CPU, each
	 * rounded up to 8 bytes (blitz_counters is a multiple of 8). */
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, per_cpu)) {
		err = -errno;
		free(per_cpu);
		return err;
	}
	for (k = 0; k < BLITZ_CNT_MAX; k++) {
		tot[k] = 0;
		for (c = 0; c < ncpu; c++)
			tot[k] += per_cpu[c].v[k];
	}
	free(per_cpu);
	return 0;
}

int counters_xdp_open(const char *ifname)
{
	char path[PATH_MAX];
	int fd;

	if (blitz_pin_path(path, sizeof(path), ifname, BLITZ_PIN_COUNTERS))
		return -EINVAL;
	fd = bpf_obj_get(path);
	if (fd >= 0 || errno != ENOENT)
		return fd >= 0 ? fd : -errno;
	if (!blitz_pin_path(path, sizeof(path), ifname,
			    BLITZ_PIN_COUNTERS_OLD) &&
	    !access(path, F_OK))
		return -EPROTO;
	return -ENOENT;
}

const char *counters_xdp_strerror(int err)
{
	if (err == -EPROTO)
		return "the map has another layout (an older blitz loaded the "
		       "program): `blitz reload` it, or unload and load";
	return strerror(-err);
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
