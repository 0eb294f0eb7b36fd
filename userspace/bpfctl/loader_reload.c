// SPDX-License-Identifier: GPL-2.0
/*
 * loader_reload.c - `blitz reload`'s swap (loader.h): a new program with the
 * per-flow state maps carried over, repinned in one step each, and what
 * `blitz status` reads of a loaded interface.
 *
 * Owns: replacing a loaded program in place. Must never leave the
 * interface without blitz's program between the old and the new one.
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
#include "blitz_xdp.skel.h"
#include "http.h"
#include "ksock.h"
#include "loader.h"
#include "loader_int.h"
#include "log.h"
#include "nic_info.h"
#include "serve_state.h"
#include "tc_handoff.h"

/* ---- reload ---- */

/* The maps of program prog_id: up to max ids into ids. The count, or
 * -errno. */
static int prog_map_ids(__u32 prog_id, __u32 *ids, __u32 max)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd, n;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = max;
	info.map_ids = (__u64)(unsigned long)ids;
	n = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno
						    : (int)info.nr_map_ids;
	close(fd);
	return n > (int)max ? (int)max : n;
}

void blitz_ksock_line(const char *ifname, __u32 prog_id, char *buf, size_t len)
{
	__u32 ids[32], ilen;
	struct bpf_map_info info;
	unsigned long bits = 0;
	int n, i, fd, st = -ENOENT;
	__u16 port = 0;

	n = prog_map_ids(prog_id, ids, 32);
	for (i = 0; i < n && st == -ENOENT; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		ilen = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &ilen) &&
		    !strcmp(info.name, "ksock"))
			st = blitz_ksock_state(fd, &port, &bits);
		close(fd);
	}
	if (st > 0)
		snprintf(buf, len,
			 "%s: kernel-socket filter on (port %u, %lu of %u bits "
			 "set): the socket lookup runs only for tuples the "
			 "kernel may hold",
			 ifname, port, bits, BLITZ_KSOCK_WORDS * 64);
	else
		snprintf(buf, len,
			 "%s: kernel-socket filter off (no tracer here, or an "
			 "older program): every segment gets the socket lookup",
			 ifname);
}

/* Per-flow state: what a reload must carry over. */
static bool map_keeps_state(const char *name, __u32 type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       !strcmp(name, "counters") || !strcmp(name, "xsks");
}

static bool name_in(const char *name, const char *const *list)
{
	for (; list && *list; list++)
		if (!strcmp(name, *list))
			return true;
	return false;
}

static void add_word(char *buf, size_t len, const char *w)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%s%s", n ? " " : "", w);
}

int blitz_reuse_state_maps(struct bpf_object *obj, __u32 old_prog_id,
			   const char *const *skip, char *fresh,
			   size_t fresh_len)
{
	__u32 ids[32], len;
	struct bpf_map_info info;
	struct bpf_map *m;
	int n, i, fd, reused = 0, err;

	n = prog_map_ids(old_prog_id, ids, 32);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			close(fd);
			continue;
		}
		bpf_object__for_each_map(m, obj)
		{
			const char *name = bpf_map__name(m);

			/* info.name is cut at BPF_OBJ_NAME_LEN - 1. */
			if (strncmp(name, info.name, BPF_OBJ_NAME_LEN - 1) ||
			    name_in(name, skip) ||
			    !map_keeps_state(name, info.type))
				continue;
			if (bpf_map__type(m) != info.type ||
			    bpf_map__key_size(m) != info.key_size ||
			    bpf_map__value_size(m) != info.value_size ||
			    bpf_map__max_entries(m) != info.max_entries) {
				add_word(fresh, fresh_len, name);
				continue;
			}
			err = bpf_map__reuse_fd(m, fd);
			if (err) {
				close(fd);
				return err;
			}
			reused++;
		}
		close(fd);
	}
	return reused;
}

int blitz_loader_loaded_state(const char *ifname, struct blitz_loaded_state *st)
{
	struct blitz_attached a;
	char path[PATH_MAX];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), k;
	int ifindex, err, fd;

	memset(st, 0, sizeof(*st));
	ifindex = blitz_ifindex(ifname);
	if (ifindex < 0)
		return ifindex;
	err = blitz_check_privileges();
	if (!err)
		err = blitz_check_bpffs();
	if (err)
		return err;
	err = blitz_find_attached(ifindex, &a);
	if (err) {
		pr_warn("cannot query XDP on %s: %s\n", ifname, strerror(-err));
		return err;
	}
	if (!a.prog_id) {
		pr_warn("blitz is not loaded on %s: `blitz load %s [options]` "
			"first\n",
			ifname, ifname);
		return -ENOENT;
	}
	if (a.link) {
		pr_warn("%s is run by `blitz serve` (the process owns the "
			"program): restart the serve with the new options; "
			"reload is for `blitz load`\n",
			ifname);
		return -EBUSY;
	}
	if (a.dispatcher) {
		pr_warn("blitz runs inside a libxdp dispatcher on %s, where "
			"its program cannot be swapped atomically: `blitz "
			"unload %s` and load it again\n",
			ifname, ifname);
		return -EOPNOTSUPP;
	}
	if (blitz_pins_owner(ifname, a.prog_id, NULL) != BLITZ_PINS_HERE) {
		pr_warn("the pins of %s are not its program's (prog id %u): "
			"`blitz unload %s`, then load it again\n",
			ifname, a.prog_id, ifname);
		return -ESTALE;
	}
	err = blitz_pinned_config(ifname, &st->cfg, NULL);
	if (err == -EPROTO) {
		pr_warn("%s was loaded by a build of blitz with another config "
			"layout, which a reload cannot carry over: `blitz "
			"unload %s` and load it again\n",
			ifname, ifname);
		return err;
	}
	if (err) {
		pr_warn("cannot read the config of %s: %s\n", ifname,
			strerror(-err));
		return err;
	}
	if (st->cfg.mode != BLITZ_MODE_XDP) {
		pr_warn("%s runs the afxdp engine, which belongs to `blitz "
			"serve`: restart the serve with the new options\n",
			ifname);
		return -EINVAL;
	}
	err = blitz_pin_path(path, sizeof(path), ifname, "responses");
	fd = err ? -1 : bpf_obj_get(path);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.value_size != sizeof(st->resp[0]))
		err = fd < 0 ? -errno : -EPROTO;
	for (k = 0; !err && k < BLITZ_RESP_KINDS; k++)
		if (bpf_map_lookup_elem(fd, &k, &st->resp[k]))
			err = -errno;
	if (fd >= 0)
		close(fd);
	if (err) {
		pr_warn("cannot read the responses of %s: %s\n", ifname,
			strerror(-err));
		return err;
	}
	err = ld_mtu(ifname, &st->mtu);
	if (err)
		return err;
	if (st->mtu < BLITZ_MIN_MTU) {
		pr_warn("MTU %u of %s is too small to answer in one segment\n",
			st->mtu, ifname);
		return -EINVAL;
	}
	st->mss = ld_mss_of_mtu(st->mtu);
	st->prog_id = a.prog_id;
	st->skb_mode = a.mode && !strcmp(a.mode, "skb");
	st->tc_prog_id = tc_handoff_prog_id(ifindex);
	return 0;
}

/* Pin map m at ifname's NAME in one step (a rename over the old pin), so
 * that a reader finds the old map or the new one, never none. */
static int repin(const char *ifname, const struct bpf_map *m, const char *name)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int err = 0;

	if (blitz_pin_path(path, sizeof(path), ifname, name))
		return -ENAMETOOLONG;
	/* bpffs refuses names with a dot. */
	snprintf(tmp, sizeof(tmp), "%s_new", path);
	unlink(tmp);
	if (bpf_obj_pin(bpf_map__fd(m), tmp) || chmod(tmp, 0600) ||
	    rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		pr_warn("cannot pin the new %s map at %s: %s\n", name, path,
			strerror(-err));
	}
	return err;
}

/* After a reload's swap: the new filter's tracers replace the old ones'
 * pins (the old ones detach as their pins go); without a new filter, the
 * old tracers go (their bitmap is the old program's). */
static void ksock_repin(const char *ifname, struct blitz_ksock *ks)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (blitz_pin_path(dir, sizeof(dir), ifname, NULL))
		return;
	if (ks) {
		if (blitz_ksock_pin(ks, dir))
			pr_warn("%s: cannot pin the new kernel-socket filter: "
				"every segment is looked up\n",
				ifname);
		return;
	}
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "ksock_", 6) &&
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
			    (int)sizeof(path))
			unlink(path);
	closedir(d);
}

/* The sysctls read again: a reload follows a change of tcp_sack or
 * tcp_window_scaling since the load (for new connections). */
static void reload_kernel_opts(const char *ifname,
			       const struct blitz_loaded_state *st,
			       struct blitz_config *c)
{
	const __u32 kopts = BLITZ_CFG_NO_SACK | BLITZ_CFG_NO_WSCALE;

	c->flags = (c->flags & ~kopts) | tc_handoff_kernel_opts();
	if ((c->flags & kopts) != (st->cfg.flags & kopts))
		tc_handoff_say_opts(ifname, c->flags);
	if ((st->cfg.flags & kopts & ~c->flags))
		pr_info("blitz: %s: SYN-ACKs offer %s%s%s again, as the "
			"kernel does now\n",
			ifname,
			st->cfg.flags & ~c->flags & BLITZ_CFG_NO_SACK
				? "SACK-permitted"
				: "",
			(st->cfg.flags & ~c->flags & kopts) == kopts ? " and "
								     : "",
			st->cfg.flags & ~c->flags & BLITZ_CFG_NO_WSCALE
				? "window scaling"
				: "");
}

/* The new program's maps at the pinned names: config and responses
 * always, counters and xsks when the new program made fresh ones. */
static int reload_repin(const char *ifname, struct blitz_xdp_bpf *skel,
			const struct blitz_reload_result *res)
{
	char path[PATH_MAX];
	int err;

	err = repin(ifname, skel->maps.config, "config");
	if (!err)
		err = repin(ifname, skel->maps.responses, "responses");
	if (!err && strstr(res->fresh, "counters")) {
		err = repin(ifname, skel->maps.counters, BLITZ_PIN_COUNTERS);
		/* An older blitz's map of another layout, under its name. */
		if (!err && !blitz_pin_path(path, sizeof(path), ifname,
					    BLITZ_PIN_COUNTERS_OLD))
			unlink(path);
	}
	if (!err && strstr(res->fresh, "xsks"))
		err = repin(ifname, skel->maps.xsks, "xsks");
	if (err)
		pr_warn("%s runs the new program (prog id %u), but status and "
			"stats may show the old pins\n",
			ifname, res->new_prog_id);
	return err;
}

/*
 * The generation of the templates a reload installs: a TC burst's record
 * re-sends only under the generation it was cut from (blitz_pipe.h), and
 * http_responses_meta() counts per process, so a reload (a new process)
 * would reuse the load's number. Kept when every byte but the Date (which
 * the programs write) is the same, else one past the running one.
 */
static __u16 reload_gen(const struct blitz_loaded_state *st,
			const struct blitz_config *cfg,
			const struct blitz_resp *resp)
{
	int k;

	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		const struct blitz_resp_meta *o = &st->cfg.resp[k],
					     *n = &cfg->resp[k];
		__u32 d = o->date_off, len = o->len;

		if (o->len != n->len || o->date_off != n->date_off ||
		    o->csum_nodate != n->csum_nodate || len > BLITZ_RESP_MAX ||
		    (len && d + BLITZ_DATE_LEN > len) ||
		    memcmp(st->resp[k].bytes, resp[k].bytes, len ? d : 0) ||
		    (len && memcmp(st->resp[k].bytes + d + BLITZ_DATE_LEN,
				   resp[k].bytes + d + BLITZ_DATE_LEN,
				   len - d - BLITZ_DATE_LEN)))
			return (__u16)(st->cfg.resp[0].gen + 1);
	}
	return st->cfg.resp[0].gen;
}

/* The new program: the running one's state maps taken over, loaded.
 * 0, or -errno with a line said. */
static int reload_load(const char *ifname, const struct blitz_loaded_state *st,
		       struct blitz_xdp_bpf *skel,
		       struct blitz_reload_result *res)
{
	static const char *const skip[] = {"config", "responses", NULL};
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi);
	int n, err;

	n = blitz_reuse_state_maps(skel->obj, st->prog_id, skip, res->fresh,
				   sizeof(res->fresh));
	if (n < 0) {
		pr_warn("cannot take over the maps of prog id %u: %s; %s is "
			"unchanged\n",
			st->prog_id, strerror(-n), ifname);
		return n;
	}
	res->maps_kept = n;
	err = blitz_xdp_bpf__load(skel);
	if (err) {
		pr_warn("the kernel refused the new XDP program (%s): run with "
			"-v for the verifier's log; %s is unchanged\n",
			strerror(-err), ifname);
		return err;
	}
	memset(&pi, 0, sizeof(pi));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.blitz_xdp), &pi,
				    &len))
		res->new_prog_id = pi.id;
	return 0;
}

/* The hand-off first: the new one knows both keys, so it takes what the
 * old XDP program (old key) passes as well as the new one's. *old_tc_fd
 * and *h are the caller's to close and release. 0, or -errno with a line
 * said (nothing swapped). */
static int reload_handoff(const char *ifname, int ifindex,
			  const struct blitz_loaded_state *st,
			  struct blitz_xdp_bpf *skel, int *old_tc_fd,
			  struct tc_handoff **h,
			  struct blitz_reload_result *res)
{
	int err;

	*old_tc_fd = bpf_prog_get_fd_by_id(st->tc_prog_id);
	err = *old_tc_fd < 0 ? -errno : 0;
	if (!err)
		err = tc_handoff_prepare(ifname, bpf_map__fd(skel->maps.config),
					 bpf_map__fd(skel->maps.counters),
					 bpf_map__fd(skel->maps.responses),
					 bpf_map__fd(skel->maps.flows),
					 st->tc_prog_id, h);
	if (!err)
		err = tc_handoff_swap(ifindex, st->tc_prog_id,
				      tc_handoff_prog_fd(*h));
	if (err) {
		pr_warn("%s is unchanged (the hand-off could not be "
			"switched: %s)\n",
			ifname, strerror(-err));
		return err;
	}
	res->new_tc_id = tc_handoff_id(*h);
	return 0;
}

int blitz_loader_reload(const char *ifname, const struct blitz_loaded_state *st,
			const struct blitz_config *cfg,
			const struct blitz_resp *resp,
			struct blitz_reload_result *res)
{
	struct bpf_xdp_attach_opts xo = {.sz = sizeof(xo)};
	struct blitz_config c;
	struct blitz_xdp_bpf *skel;
	struct blitz_ksock *ks;
	struct tc_handoff *h = NULL;
	int ifindex, err, n, old_fd = -1, old_tc_fd = -1;
	bool tc_swapped = false, tc_added = false;
	__u32 flags;
	__u16 gen;

	memset(res, 0, sizeof(*res));
	res->old_prog_id = st->prog_id;
	res->old_tc_id = st->tc_prog_id;
	ifindex = blitz_ifindex(ifname);
	if (ifindex < 0)
		return ifindex;
	c = *cfg;
	reload_kernel_opts(ifname, st, &c);
	gen = reload_gen(st, &c, resp);
	for (n = 0; n < BLITZ_RESP_KINDS; n++)
		c.resp[n].gen = gen;
	cfg = &c;
	/* A fresh filter (for the new port, and emptied of the old one's
	 * false positives), swapped in with the program. */
	ks = ld_ksock_start(cfg, ifname);
	skel = ld_open_skel(cfg, resp,
			    (long)st->mtu > blitz_xdp_single_buffer_mtu(), ks);
	if (!skel) {
		blitz_ksock_free(ks);
		explicit_bzero(&c, sizeof(c));
		return -EINVAL;
	}
	err = reload_load(ifname, st, skel, res);
	if (err)
		goto out;
	old_fd = bpf_prog_get_fd_by_id(st->prog_id);
	if (old_fd < 0) {
		err = -errno;
		pr_warn("prog id %u of %s went away meanwhile: %s\n",
			st->prog_id, ifname, strerror(-err));
		goto out;
	}
	if (st->tc_prog_id) {
		err = reload_handoff(ifname, ifindex, st, skel, &old_tc_fd, &h,
				     res);
		if (err)
			goto out;
		tc_swapped = true;
	} else {
		/* The hand-off went (its pin removed by hand): without one
		 * what XDP passes is reset, listener or not. Put one back. */
		err = tc_handoff_attach(
			ifname, ifindex, bpf_map__fd(skel->maps.config),
			bpf_map__fd(skel->maps.counters),
			bpf_map__fd(skel->maps.responses),
			bpf_map__fd(skel->maps.flows), true, &h);
		if (err)
			goto out;
		tc_added = true;
		res->new_tc_id = tc_handoff_id(h);
	}
	flags = (st->skb_mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE) |
		XDP_FLAGS_REPLACE;
	xo.old_prog_fd = old_fd;
	err = bpf_xdp_attach(ifindex, bpf_program__fd(skel->progs.blitz_xdp),
			     flags, &xo);
	if (err) {
		pr_warn("cannot swap the XDP program of %s: %s; %s is "
			"unchanged\n",
			ifname, strerror(-err), ifname);
		goto out;
	}
	tc_swapped = tc_added = false; /* done: no way back from here */
	ksock_repin(ifname, ks);
	err = reload_repin(ifname, skel, res);
out:
	if (tc_added) {
		tc_handoff_detach(h);
		h = NULL;
	}
	if (tc_swapped &&
	    tc_handoff_swap(ifindex, res->new_tc_id, old_tc_fd) < 0)
		pr_warn("could not put the old hand-off back on %s: `blitz "
			"unload %s` and load it again\n",
			ifname, ifname);
	if (old_fd >= 0)
		close(old_fd);
	if (old_tc_fd >= 0)
		close(old_tc_fd);
	/* The attachments hold the new programs; ours are only handles. */
	tc_handoff_release(h);
	blitz_xdp_bpf__destroy(skel);
	blitz_ksock_free(ks); /* its links are pinned if it went in */
	explicit_bzero(&c, sizeof(c));
	return err;
}
