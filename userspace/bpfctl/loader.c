// SPDX-License-Identifier: GPL-2.0
/*
 * loader.c - see loader.h. Puts blitz's XDP program onto an interface
 * (libxdp for `blitz load`, a process-owned bpf_link for `blitz serve`)
 * and takes it off again. The checks before an attach are
 * loader_checks.c's, the config and responses loader_config.c's, the pins
 * and unload loader_pins.c's, the keys loader_keys.c's, reload
 * loader_reload.c's (loader_int.h ties them).
 *
 * Owns: the skeleton's lifetime, the config and responses map contents,
 * the pin directory, and finding blitz's program on an interface. Must
 * never leave a half-done attach behind: every failure unwinds in reverse
 * order, and must never detach an XDP program that is not blitz's.
 * Everything it finds is this network namespace's: attachments through
 * netlink/bpf_xdp_query() and links matched by the program id found there
 * (never by a bare ifindex, which every namespace reuses); pins, shared
 * by every namespace, are acted on only when this one's (blitz_pins_owner).
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

/* ---- attach ---- */

static const char *mode_name(enum xdp_attach_mode m)
{
	return m == XDP_MODE_SKB ? "skb" : m == XDP_MODE_HW ? "hw" : "native";
}

static void say_attach_error(const char *ifname, enum xdp_attach_mode m,
			     int err)
{
	char buf[256];

	libxdp_strerror(err, buf, sizeof(buf));
	if (m == XDP_MODE_NATIVE && err == -EOPNOTSUPP)
		pr_warn("cannot attach to %s in native mode: the driver has "
			"no native XDP: try -m skb\n",
			ifname);
	else
		pr_warn("cannot attach to %s in %s mode: %s\n", ifname,
			mode_name(m), buf);
}

/* libxdp: dispatcher when the kernel allows it, else one program. */
static int attach_libxdp(struct blitz_loaded *l, enum xdp_attach_mode m,
			 const struct blitz_config *cfg,
			 const struct blitz_resp *resp)
{
	struct xdp_program_opts xo = {.sz = sizeof(xo),
				      .obj = l->skel->obj,
				      .prog_name = BLITZ_PROG_NAME};
	struct bpf_program *prog;
	int err;

	if (l->xprog) /* a second try (skb after native) */
		xdp_program__close(l->xprog);
	l->xprog = xdp_program__create(&xo);
	err = (int)libxdp_get_error(l->xprog);
	if (err) {
		l->xprog = NULL;
		pr_warn("cannot prepare the XDP program: %s\n", strerror(-err));
		return err;
	}
	err = xdp_program__attach(l->xprog, l->ifindex, m, 0);
	prog = l->skel->progs.blitz_xdp;
	if (!err || (bpf_program__fd(prog) >= 0 &&
		     bpf_program__type(prog) == BPF_PROG_TYPE_XDP))
		return err; /* loaded as XDP: the attach itself failed */
	/*
	 * A failed dispatcher attempt leaves the object loaded as an
	 * freplace extension, or marked loaded after the extension's load
	 * failed (here: EPERM), and libxdp's own fallback then fails on it:
	 * start again from a fresh skeleton without the dispatcher.
	 */
	pr_debug("libxdp attach failed (%d): retrying without dispatcher\n",
		 err);
	xdp_program__close(l->xprog);
	l->xprog = NULL;
	blitz_xdp_bpf__destroy(l->skel);
	l->skel = ld_open_skel(cfg, resp, l->frags, l->ks);
	if (!l->skel)
		return -ENOMEM;
	setenv("LIBXDP_SKIP_DISPATCHER", "1", 1);
	xo.obj = l->skel->obj;
	l->xprog = xdp_program__create(&xo);
	err = (int)libxdp_get_error(l->xprog);
	if (err) {
		l->xprog = NULL;
		unsetenv("LIBXDP_SKIP_DISPATCHER");
		pr_warn("cannot prepare the XDP program: %s\n", strerror(-err));
		return err;
	}
	err = xdp_program__attach(l->xprog, l->ifindex, m, 0);
	unsetenv("LIBXDP_SKIP_DISPATCHER");
	return err;
}

/* serve: a bpf_link owned by this process, gone when it dies. */
static int attach_link(struct blitz_loaded *l, enum xdp_attach_mode m)
{
	struct bpf_link_create_opts lo = {.sz = sizeof(lo)};
	int err, pfd;

	if (bpf_program__fd(l->skel->progs.blitz_xdp) < 0) {
		err = blitz_xdp_bpf__load(l->skel);
		if (err) {
			pr_warn("cannot load the XDP program: %s (run with -v "
				"for the verifier's log)\n",
				strerror(-err));
			return err;
		}
	}
	pfd = bpf_program__fd(l->skel->progs.blitz_xdp);
	lo.flags = m == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	l->link_fd = bpf_link_create(pfd, l->ifindex, BPF_XDP, &lo);
	if (l->link_fd < 0) {
		err = -errno;
		l->link_fd = -1;
		return err;
	}
	return 0;
}

static int do_attach(struct blitz_loaded *l, enum xdp_attach_mode m,
		     const struct blitz_config *cfg,
		     const struct blitz_resp *resp)
{
	if (l->persist)
		return attach_libxdp(l, m, cfg, resp);
	return attach_link(l, m);
}

/* What must hold before anything is attached: a service address XDP
 * answers, privileges, bpffs, the hand-off's needs, an MTU that fits a
 * response, and no XDP program on the interface yet. 0 or -errno, said
 * in one line. */
static int attach_checks(const struct blitz_loader_opts *o, int ifindex,
			 unsigned int *mtu)
{
	struct blitz_attached att;
	int err;

	if (service_xdp_addrs_ok(o->svc))
		return -EINVAL;
	err = blitz_check_privileges();
	if (!err)
		err = blitz_check_bpffs();
	/* No half-working tier: the xdp engine hands what it does not answer
	 * to the kernel, so what the hand-off needs is checked first. */
	if (!err && o->engine == BLITZ_MODE_XDP) {
		err = tc_handoff_prereqs();
		if (err)
			pr_warn("not attaching the xdp engine to %s: what it "
				"does not answer could not reach the kernel "
				"(above)\n",
				o->ifname);
	}
	if (!err)
		err = ld_mtu(o->ifname, mtu);
	if (err)
		return err;
	if (*mtu < BLITZ_MIN_MTU) {
		pr_warn("MTU %u of %s is too small to answer in one segment\n",
			*mtu, o->ifname);
		return -EINVAL;
	}

	err = blitz_find_attached(ifindex, &att);
	if (!err && att.prog_id && o->fallback) {
		pr_debug("%s has blitz's XDP program (id %u, %s): not "
			 "attaching\n",
			 o->ifname, att.prog_id,
			 att.link ? "a serve's" : "blitz load's");
		*o->fallback = att;
		return -EEXIST;
	}
	if (!err && att.prog_id && att.link) {
		/* reload refuses a serve's program: do not send users there. */
		if (o->persist)
			pr_warn("%s is run by `blitz serve` (the process owns "
				"the program): stop the serve first, then "
				"`blitz load %s [options]`\n",
				o->ifname, o->ifname);
		else
			pr_warn("%s is run by another `blitz serve` (the "
				"process owns the program): stop that serve "
				"first\n",
				o->ifname);
		return -EEXIST;
	}
	if (!err && att.prog_id) {
		pr_warn("already loaded on %s: `blitz reload %s [options]` "
			"changes it, `blitz unload %s` removes it\n",
			o->ifname, o->ifname, o->ifname);
		return -EEXIST;
	}
	if (!err && att.other_id) {
		pr_warn("%s already has an XDP program (id %u) that is not "
			"blitz's: remove it first (`ip link set dev %s %s "
			"off`)\n",
			o->ifname, att.other_id, o->ifname, att.other_slot);
		return -EBUSY;
	}
	return 0;
}

/* Attach in the mode asked for; auto tries native, then skb. Records the
 * mode and the program id in l. 0 or -errno, said in one line. */
static int attach_mode(struct blitz_loaded *l,
		       const struct blitz_loader_opts *o,
		       const struct blitz_config *cfg,
		       const struct blitz_resp *resp)
{
	enum xdp_attach_mode m;
	int err;

	m = o->xdp_mode == BLITZ_XDP_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	err = do_attach(l, m, cfg, resp);
	if (err &&
	    (!l->skel || bpf_program__fd(l->skel->progs.blitz_xdp) < 0)) {
		/* Not an attach problem: the program never loaded. */
		pr_warn("the kernel refused blitz's XDP program (%s): run with "
			"-v for the verifier's log\n",
			strerror(-err));
		return err;
	}
	if (err && o->xdp_mode == BLITZ_XDP_AUTO) {
		pr_debug("native attach failed (%d), trying skb mode\n", err);
		m = XDP_MODE_SKB;
		if (!do_attach(l, m, cfg, resp)) {
			if (err == -EOPNOTSUPP)
				pr_info("blitz: %s has no native XDP support: "
					"using skb (generic) mode\n",
					o->ifname);
			else
				pr_info("blitz: native XDP on %s failed (%s): "
					"using skb (generic) mode\n",
					o->ifname, strerror(-err));
			err = 0;
		} else {
			m = XDP_MODE_NATIVE; /* report the first failure */
		}
	}
	if (err) {
		say_attach_error(o->ifname, m, err);
		return err;
	}
	l->mode = m;
	if (l->persist)
		l->prog_id = xdp_program__id(l->xprog);
	else {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);

		if (!bpf_obj_get_info_by_fd(
			    bpf_program__fd(l->skel->progs.blitz_xdp), &pi,
			    &len))
			l->prog_id = pi.id;
	}
	return 0;
}

int blitz_loader_attach(const struct blitz_loader_opts *o,
			struct blitz_loaded **out)
{
	const struct http_responses *r = o->resp;
	struct blitz_resp *resp = NULL;
	struct blitz_loaded *l;
	struct blitz_config cfg;
	unsigned int mtu = 0;
	int err, ifindex, k;
	__u16 mss;

	*out = NULL;
	ifindex = blitz_ifindex(o->ifname);
	if (ifindex < 0)
		return ifindex;
	err = attach_checks(o, ifindex, &mtu);
	if (err)
		return err;
	mss = ld_mss_of_mtu(mtu);

	resp = calloc(BLITZ_RESP_KINDS, sizeof(*resp));
	l = calloc(1, sizeof(*l));
	if (!resp || !l) {
		pr_warn("out of memory\n");
		err = -ENOMEM;
		goto err_free;
	}
	l->link_fd = -1;
	l->ifindex = ifindex;
	l->persist = o->persist;
	snprintf(l->ifname, sizeof(l->ifname), "%s", o->ifname);

	/*
	 * In afxdp mode the XDP program only redirects: the responses are
	 * built and sent by the engine in userspace, so the templates stay
	 * empty (lengths 0) and the body may be any size the engine takes.
	 */
	if (o->engine != BLITZ_MODE_AFXDP) {
		if (!r) {
			pr_warn("loader: the xdp engine needs the responses\n");
			err = -EINVAL;
			goto err_free;
		}
		err = ld_check_responses_fit(r, mss, mtu);
		if (err)
			goto err_free;
		for (k = 0; k < BLITZ_RESP_KINDS; k++)
			memcpy(resp[k].bytes, r->bytes[k], r->len[k]);
	}
	err = ld_fill_config(&cfg, o, mss,
			     o->engine == BLITZ_MODE_AFXDP ? NULL : r);
	if (err)
		goto err_free;

	err = ld_claim_pin_dir(o->ifname);
	if (err)
		goto err_free;

	l->frags = (long)mtu > blitz_xdp_single_buffer_mtu();
	if (l->frags)
		pr_debug("MTU %u is over a page: multi-buffer XDP\n", mtu);
	l->ks = ld_ksock_start(&cfg, o->ifname);
	if (o->hold) { /* port 0: no frame is the service's (blitz_seg.h) */
		l->held_port_be = cfg.port_be;
		cfg.port_be = 0;
	}
	l->skel = ld_open_skel(&cfg, resp, l->frags, l->ks);
	if (!l->skel) {
		err = -EINVAL;
		goto err_unpin;
	}

	err = attach_mode(l, o, &cfg, resp);
	if (err)
		goto err_unpin;

	err = ld_pin_maps(l);
	if (err)
		goto err_detach;
	l->pinned = true;

	free(resp);
	*out = l;
	return 0;

err_detach:
	if (l->persist)
		xdp_program__detach(l->xprog, l->ifindex, l->mode, 0);
	else if (l->link_fd >= 0)
		bpf_link_detach(l->link_fd);
err_unpin:
	ld_remove_pins(o->ifname);
err_free:
	if (l)
		ld_loaded_free(l);
	free(resp);
	return err;
}

int blitz_loaded_arm(struct blitz_loaded *l)
{
	struct blitz_config cfg;
	__u32 key = 0;
	int fd, err = 0;

	if (!l->held_port_be)
		return 0;
	/* Only the port changes: the program and the hand-off read either
	 * 0 (pass) or the port, never a mix of two configs. */
	fd = bpf_map__fd(l->skel->maps.config);
	if (bpf_map_lookup_elem(fd, &key, &cfg))
		err = -errno;
	cfg.port_be = l->held_port_be;
	if (!err && bpf_map_update_elem(fd, &key, &cfg, BPF_EXIST))
		err = -errno;
	explicit_bzero(&cfg, sizeof(cfg)); /* the cookie secret */
	if (err) {
		pr_warn("cannot start answering on %s: %s\n", l->ifname,
			strerror(-err));
		return err;
	}
	l->held_port_be = 0;
	return 0;
}

int blitz_loader_detach(struct blitz_loaded *l)
{
	int err = 0;

	if (!l)
		return 0;
	if (l->persist && l->xprog) {
		err = xdp_program__detach(l->xprog, l->ifindex, l->mode, 0);
		if (err)
			pr_warn("cannot detach from %s: %s\n", l->ifname,
				strerror(-err));
	} else if (l->link_fd >= 0) {
		bpf_link_detach(l->link_fd);
	}
	if (l->pinned)
		ld_remove_pins(l->ifname);
	ld_loaded_free(l);
	return err;
}

int blitz_loaded_xsks_fd(const struct blitz_loaded *l)
{
	return bpf_map__fd(l->skel->maps.xsks);
}

int blitz_loaded_counters_fd(const struct blitz_loaded *l)
{
	return bpf_map__fd(l->skel->maps.counters);
}

int blitz_loaded_config_fd(const struct blitz_loaded *l)
{
	return bpf_map__fd(l->skel->maps.config);
}

int blitz_loaded_responses_fd(const struct blitz_loaded *l)
{
	return bpf_map__fd(l->skel->maps.responses);
}

int blitz_loaded_flows_fd(const struct blitz_loaded *l)
{
	return bpf_map__fd(l->skel->maps.flows);
}

const char *blitz_loaded_mode(const struct blitz_loaded *l)
{
	return mode_name(l->mode);
}

__u32 blitz_loaded_prog_id(const struct blitz_loaded *l)
{
	return l->prog_id;
}

void blitz_loaded_release(struct blitz_loaded *l)
{
	if (l)
		ld_loaded_free(l);
}
