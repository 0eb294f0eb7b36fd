// SPDX-License-Identifier: GPL-2.0
/*
 * loader_pins.c - the pin directory BLITZ_PIN_ROOT/<ifname>/ and unload
 * (loader.h): claiming it, pinning the maps, stale pins, whose pins they
 * are, and taking blitz off an interface.
 *
 * Owns: the pins. Must never act on pins of another network namespace
 * (blitz_pins_owner) nor detach an XDP program that is not blitz's.
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

/* The maps blitz pins, in the order they are pinned. */
static const char *const pinned_maps[] = {"config", "responses",
					  BLITZ_PIN_COUNTERS, "xsks"};

void ld_remove_pins(const char *ifname)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (blitz_pin_path(dir, sizeof(dir), ifname, NULL))
		return;
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			if (snprintf(path, sizeof(path), "%s/%s", dir,
				     de->d_name) < (int)sizeof(path))
				unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
	rmdir(BLITZ_PIN_ROOT); /* only when no other interface uses it */
}

int ld_pin_maps(struct blitz_loaded *l)
{
	struct bpf_map *maps[] = {l->skel->maps.config, l->skel->maps.responses,
				  l->skel->maps.counters, l->skel->maps.xsks};
	char path[PATH_MAX];
	size_t i;
	int err;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		err = blitz_pin_path(path, sizeof(path), l->ifname,
				     pinned_maps[i]);
		if (!err)
			err = bpf_map__pin(maps[i], path);
		/* Pins are 0600 less the umask; say it outright (config
		 * holds the key). */
		if (!err && chmod(path, 0600))
			err = -errno;
		if (err) {
			pr_warn("cannot pin map %s at %s: %s\n", pinned_maps[i],
				path, strerror(-err));
			return err;
		}
	}
	/* blitz load: the filter's tracers outlive this process (unload
	 * removes the pins, and with them the tracers). */
	if (l->persist && l->ks) {
		err = blitz_pin_path(path, sizeof(path), l->ifname, NULL);
		if (!err)
			err = blitz_ksock_pin(l->ks, path);
		if (err) {
			pr_warn("cannot pin the kernel-socket filter's "
				"tracers: %s\n",
				strerror(-err));
			return err;
		}
	}
	return 0;
}

void ld_loaded_free(struct blitz_loaded *l)
{
	if (l->xprog)
		xdp_program__close(l->xprog);
	if (l->link_fd >= 0)
		close(l->link_fd);
	if (l->skel)
		blitz_xdp_bpf__destroy(l->skel);
	blitz_ksock_free(l->ks);
	free(l);
}

int blitz_stale_pins_why(const char *ifname, char *buf, size_t len)
{
	pid_t pid = serve_state_pid_on(ifname, SERVE_GONE);

	if (pid)
		snprintf(buf, len,
			 "stale pins of a serve that was killed (pid %d)",
			 (int)pid);
	else
		snprintf(buf, len,
			 "stale pins of a serve that was killed, or of a "
			 "program removed by hand: no program uses them");
	return pid ? 1 : 0;
}

/* Nothing of blitz is attached here (checked before claiming): pins in
 * use are another namespace's interface of the same name. */
static void say_already_loaded(const char *ifname)
{
	__u32 user = 0;

	if (blitz_pins_owner(ifname, 0, &user) == BLITZ_PINS_OTHER_NETNS)
		pr_warn("already loaded on %s in another network namespace "
			"(prog id %u): pins are per name: unload it there "
			"first\n",
			ifname, user);
	else
		pr_warn("already loaded on %s: run `blitz unload %s` first\n",
			ifname, ifname);
}

/*
 * The pin directory exists, but are its pins anybody's? Pins with a
 * config no program uses are what a killed serve leaves (its bpf_link
 * went with it, the pins did not): reclaimable. A directory without a
 * readable config may be another load's being made right now: only once
 * it is older than STALE_DIR_AGE_S.
 */
#define STALE_DIR_AGE_S 10
static bool pins_reclaimable(const char *ifname, const char *dir)
{
	struct blitz_config cfg;
	struct stat st;

	if (blitz_pins_owner(ifname, 0, NULL) != BLITZ_PINS_STALE)
		return false;
	if (!blitz_pinned_config(ifname, &cfg, NULL))
		return true;
	return !stat(dir, &st) && time(NULL) - st.st_mtime > STALE_DIR_AGE_S;
}

/* mkdir BLITZ_PIN_ROOT (if need be) and dir: 0 or -errno. */
static int make_pin_dir(const char *dir)
{
	if (mkdir(BLITZ_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	/* The config pin holds the cookie key: the folders are root's
	 * alone, whoever made the top one before. */
	if (chmod(BLITZ_PIN_ROOT, 0700))
		return -errno;
	return mkdir(dir, 0700) ? -errno : 0;
}

/* Claim BLITZ_PIN_ROOT/<ifname>: its existence is "loaded". Stale pins
 * (a killed serve's) are said and reclaimed. */
int ld_claim_pin_dir(const char *ifname)
{
	char dir[PATH_MAX], why[160];
	int err;

	if (blitz_pin_path(dir, sizeof(dir), ifname, NULL)) {
		pr_warn("interface name too long: %s\n", ifname);
		return -ENAMETOOLONG;
	}
	err = make_pin_dir(dir);
	if (err == -EEXIST && pins_reclaimable(ifname, dir)) {
		blitz_stale_pins_why(ifname, why, sizeof(why));
		pr_info("blitz: %s: %s: reclaiming them\n", ifname, why);
		ld_remove_pins(ifname);
		serve_state_remove_stale(ifname);
		err = make_pin_dir(dir);
	}
	if (err == -EEXIST)
		say_already_loaded(ifname);
	else if (err)
		pr_warn("cannot create %s: %s\n", dir, strerror(-err));
	return err;
}

/* Does program prog_id use map map_id? */
static bool prog_uses_map(__u32 prog_id, __u32 map_id, __u32 *type)
{
	__u32 len, maps[16] = {}, i, n;
	struct bpf_prog_info info;
	bool uses = false;
	int fd;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = sizeof(maps) / sizeof(maps[0]);
	info.map_ids = (__u64)(unsigned long)maps;
	len = sizeof(info);
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		n = info.nr_map_ids < sizeof(maps) / sizeof(maps[0])
			    ? info.nr_map_ids
			    : sizeof(maps) / sizeof(maps[0]);
		for (i = 0; i < n; i++)
			if (maps[i] == map_id)
				uses = true;
		if (type)
			*type = info.type;
	}
	close(fd);
	return uses;
}

__u32 blitz_prog_using_map(__u32 map_id)
{
	__u32 id = 0, type;

	/*
	 * Only blitz's XDP program counts (an extension when inside a libxdp
	 * dispatcher): the tc hand-off shares the config map too, and its
	 * pinned link may outlive the XDP program.
	 */
	while (!bpf_prog_get_next_id(id, &id)) {
		type = 0;
		if (prog_uses_map(id, map_id, &type) &&
		    (type == BPF_PROG_TYPE_XDP || type == BPF_PROG_TYPE_EXT))
			return id;
	}
	return 0;
}

enum blitz_pins_owner blitz_pins_owner(const char *ifname, __u32 attached,
				       __u32 *user)
{
	char dir[PATH_MAX];
	struct blitz_config cfg;
	__u32 map_id = 0, id;
	struct stat st;

	if (user)
		*user = 0;
	if (blitz_pin_path(dir, sizeof(dir), ifname, NULL) || stat(dir, &st))
		return BLITZ_PINS_NONE;
	/* A directory without a readable config: a half-done attach or
	 * another build's pins; nothing runs from them. */
	if (blitz_pinned_config(ifname, &cfg, &map_id))
		return BLITZ_PINS_STALE;
	if (attached && prog_uses_map(attached, map_id, NULL)) {
		if (user)
			*user = attached;
		return BLITZ_PINS_HERE;
	}
	id = blitz_prog_using_map(map_id);
	if (user)
		*user = id;
	/*
	 * Pins are per interface name, shared by every network namespace;
	 * a program that uses them but is not the one attached here runs on
	 * an interface of that name in another namespace.
	 */
	return id ? BLITZ_PINS_OTHER_NETNS : BLITZ_PINS_STALE;
}

/* ---- unload ---- */

/* Take blitz's program off ifindex however it was attached. */
static int detach_attached(int ifindex, const struct blitz_attached *a)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	int err = -ENOENT, fd;

	if (a->link) {
		/* A bpf_link (blitz serve): detaching it works even while
		 * the process holding it is still alive. */
		fd = ld_link_fd_of_prog(a->prog_id);
		if (fd < 0)
			return fd;
		err = bpf_link_detach(fd) ? -errno : 0;
		close(fd);
		return err;
	}
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	err = (int)libxdp_get_error(mp);
	if (err || !mp)
		return err ? err : -ENOENT;
	if (xdp_multiprog__is_legacy(mp)) {
		err = xdp_multiprog__detach(mp);
	} else {
		err = -ENOENT;
		while ((p = xdp_multiprog__next_prog(p, mp))) {
			if (xdp_program__id(p) == a->prog_id) {
				err = xdp_program__detach(
					p, ifindex,
					xdp_multiprog__attach_mode(mp), 0);
				break;
			}
		}
	}
	xdp_multiprog__close(mp);
	return err;
}

int blitz_loader_unload(const char *ifname)
{
	char dir[PATH_MAX];
	struct blitz_attached a = {};
	enum blitz_pins_owner pins;
	bool handoff;
	int err, ifindex = 0;
	__u32 user = 0;

	if (blitz_pin_path(dir, sizeof(dir), ifname, NULL)) {
		pr_warn("no interface '%s': see `ip link`\n", ifname);
		return -ENODEV;
	}
	err = blitz_check_privileges();
	if (!err)
		err = blitz_check_bpffs();
	if (err)
		return err;
	/*
	 * Everything below looks only at this network namespace: the
	 * interface by name, what netlink and the TCX query report on it.
	 * The pins are the one thing shared by every namespace, so they are
	 * removed only when they are this namespace's or nobody's.
	 */
	if (strlen(ifname) < IF_NAMESIZE)
		ifindex = (int)if_nametoindex(ifname);
	if (ifindex) {
		err = blitz_find_attached(ifindex, &a);
		if (err) {
			pr_warn("cannot query XDP on %s: %s\n", ifname,
				strerror(-err));
			return err;
		}
	}
	pins = blitz_pins_owner(ifname, a.prog_id, &user);
	handoff = ifindex && tc_handoff_present(ifindex);
	if (!ifindex && pins == BLITZ_PINS_NONE) {
		pr_warn("no interface '%s': see `ip link`\n", ifname);
		return -ENODEV;
	}
	if (pins == BLITZ_PINS_OTHER_NETNS && !a.prog_id && !handoff) {
		pr_warn("%s: blitz is loaded in another network namespace "
			"(prog id %u), not this one: run `blitz unload %s` "
			"there\n",
			ifname, user, ifname);
		return -EBUSY;
	}
	if (!ifindex) {
		ld_remove_pins(ifname);
		pr_info("blitz: no interface '%s' any more: removed its stale "
			"pins\n",
			ifname);
		return 0;
	}
	if (!a.prog_id && pins == BLITZ_PINS_NONE && !handoff) {
		pr_warn("nothing loaded on %s\n", ifname);
		return -ENOENT;
	}
	/* XDP first, as serve does: until the hand-off goes too, what the
	 * XDP program answered still reaches the kernel on its connection
	 * (the other order leaves XDP answering handshakes the kernel then
	 * resets). The hand-off alone touches only segments whose cookie
	 * verifies and that no kernel socket owns. Its pinned link (blitz
	 * load) goes with it. */
	if (a.prog_id) {
		err = detach_attached(ifindex, &a);
		if (err) {
			pr_warn("cannot detach prog id %u from %s: %s\n",
				a.prog_id, ifname, strerror(-err));
			return err;
		}
	}
	err = tc_handoff_remove(ifindex);
	if (err < 0)
		return err;
	if (pins != BLITZ_PINS_OTHER_NETNS)
		ld_remove_pins(ifname);
	if (pins == BLITZ_PINS_OTHER_NETNS)
		pr_info("blitz: unloaded from %s in this network namespace; "
			"the pins are another namespace's %s (prog id %u): "
			"kept\n",
			ifname, ifname, user);
	else if (!a.prog_id)
		pr_info("blitz: no program was attached on %s (a killed "
			"`blitz serve`?): removed its pins\n",
			ifname);
	else
		pr_info("blitz: unloaded from %s (prog id %u)\n", ifname,
			a.prog_id);
	return 0;
}
