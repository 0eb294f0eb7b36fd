// SPDX-License-Identifier: GPL-2.0
/*
 * loader_keys.c - the cookie keys in a pinned config (loader.h): reading it,
 * rotating and staging a key.
 *
 * Owns: the key slots of struct blitz_config. Must never write a map.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "blitz_cookie2.h"
#include "blitz_ksock.h"
#include "http.h"
#include "ksock.h"
#include "loader.h"
#include "loader_int.h"
#include "log.h"
#include "nic_info.h"
#include "serve_state.h"
#include "tc_handoff.h"

int blitz_pinned_config(const char *ifname, struct blitz_config *cfg,
			__u32 *map_id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0;
	char path[PATH_MAX];
	int fd, err = 0;

	if (blitz_pin_path(path, sizeof(path), ifname, "config"))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	else if (info.value_size != sizeof(*cfg))
		err = -EPROTO; /* pinned by another build of blitz */
	else if (bpf_map_lookup_elem(fd, &key, cfg))
		err = -errno;
	if (!err && map_id)
		*map_id = info.id;
	close(fd);
	return err;
}

/* Is key the previous slot's, and is that slot accepted at now? */
static bool prev_is(const struct blitz_config *c, const uint64_t key[2])
{
	return c->secret_prev[0] == key[0] && c->secret_prev[1] == key[1];
}

int blitz_config_rotate_key(struct blitz_config *c, const uint64_t key[2],
			    uint64_t now_unix_ns)
{
	uint64_t accept =
		now_unix_ns + 2 * BLITZ_CK2_EPOCH_NS + 2 * BLITZ_CK2_SKEW_NS;

	if (c->secret[0] == key[0] && c->secret[1] == key[1])
		return 1;
	/* The one previous slot is still some connections' key. */
	if (c->prev_accept_unix_ns > now_unix_ns && !prev_is(c, key))
		return -EBUSY;
	c->secret_prev[0] = c->secret[0];
	c->secret_prev[1] = c->secret[1];
	c->secret[0] = key[0];
	c->secret[1] = key[1];
	c->prev_accept_unix_ns = accept;
	c->prev_rst_unix_ns = accept + BLITZ_CK2_RING * BLITZ_CK2_EPOCH_NS;
	return 0;
}

int blitz_config_stage_key(struct blitz_config *c, const uint64_t key[2],
			   uint64_t now_unix_ns)
{
	if (c->secret[0] == key[0] && c->secret[1] == key[1])
		return -EEXIST;
	if (prev_is(c, key) && c->prev_accept_unix_ns == BLITZ_KEY_STAGED)
		return 1;
	if (c->prev_accept_unix_ns > now_unix_ns)
		return -EBUSY;
	c->secret_prev[0] = key[0];
	c->secret_prev[1] = key[1];
	c->prev_accept_unix_ns = BLITZ_KEY_STAGED;
	c->prev_rst_unix_ns = BLITZ_KEY_STAGED;
	return 0;
}
