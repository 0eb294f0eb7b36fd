// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_doctor_nic.c - `blitz doctor <ifname>`'s rows about the interface:
 * the driver and what it offers (the netdev family's xdp-features,
 * nic_info.h), queues against CPUs, MTU against the program and the body,
 * LRO, what is attached and pinned, and the engine `serve --engine auto`
 * would pick; with --probe, a native attach and a zero-copy bind.
 *
 * Owns: those rows (cmd_doctor_int.h). Must never change anything it does
 * not undo: it reads, except with --probe, which attaches a pass-all XDP
 * program natively and detaches it, and binds an AF_XDP socket in
 * zero-copy mode and closes it.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/if_xdp.h>

#include <bpf/bpf.h>

#include "cmd_doctor_int.h"
#include "nic_info.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static void check_features(struct doctor *d)
{
	uint32_t zc_segs = 0;
	uint64_t f = 0;
	int err = nic_xdp_features(d->ifindex, &f, &zc_segs);

	d->have_features = !err;
	d->features = f;
	if (err) {
		static const char *const rows[] = {
			"native-xdp", "xdp-tx-redirect", "multi-buffer",
			"afxdp-zerocopy"};
		size_t i;

		for (i = 0; i < 4; i++) {
			doctor_add(d, rows[i], V_WARN, "unknown");
			doctor_hint(
				d, "%s: use --probe to try it",
				err == -ENOENT
					? "no netdev xdp-features (Linux < 6.3)"
					: strerror(-err));
		}
		d->native = true; /* auto tries native first anyway */
		return;
	}
	d->native = f & NIC_XDP_BASIC;
	if (!doctor_flag(d, "native-xdp", d->native, "yes", V_WARN, "no"))
		doctor_hint(d,
			    "load and serve fall back to skb (generic) mode: "
			    "correct but slower");
	doctor_add(d, "xdp-tx-redirect",
		   d->native && (f & NIC_XDP_REDIRECT) ? V_OK : V_WARN,
		   "tx %s, redirect %s, redirect target %s", yes_no(d->native),
		   yes_no(f & NIC_XDP_REDIRECT), yes_no(f & NIC_XDP_NDO_XMIT));
	if (!(f & NIC_XDP_REDIRECT))
		doctor_hint(
			d,
			"no native XDP_REDIRECT: the afxdp engine runs in skb "
			"mode");
	else if (!d->native)
		doctor_hint(
			d,
			"no native XDP_TX: the xdp engine answers in skb mode");
	doctor_add(d, "multi-buffer", V_OK, "%s", yes_no(f & NIC_XDP_RX_SG));
	if (!(f & NIC_XDP_RX_SG))
		doctor_hint(
			d,
			"native XDP needs each frame in one page: MTU <= %ld",
			blitz_xdp_single_buffer_mtu());
	if ((f & NIC_XDP_XSK_ZEROCOPY) && zc_segs)
		doctor_add(d, "afxdp-zerocopy", V_OK, "yes (up to %u segments)",
			   zc_segs);
	else if (!doctor_flag(d, "afxdp-zerocopy", f & NIC_XDP_XSK_ZEROCOPY,
			      "yes", V_WARN, "no (copy mode)"))
		doctor_hint(d,
			    "the afxdp engine copies every frame between the "
			    "driver and its UMEM: xdp is the fast engine here");
}

static void check_queues(struct doctor *d, unsigned int *rxq)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct nic_channels c;
	unsigned int rx, max;
	int err = nic_channels(d->ifname, &c);

	*rxq = 1;
	if (err) {
		doctor_add(d, "queues", V_WARN, "unknown (%s)", strerror(-err));
		doctor_hint(d,
			    "the driver has no `ethtool -l`: the afxdp engine "
			    "binds every RX queue it finds");
		return;
	}
	rx = c.rx + c.combined;
	max = c.max_rx + c.max_combined;
	*rxq = rx ? rx : 1;
	if (rx >= (unsigned int)cpus) {
		doctor_add(d, "queues", V_OK,
			   "rx %u tx %u combined %u, %ld CPUs", c.rx, c.tx,
			   c.combined, cpus);
		return;
	}
	doctor_add(d, "queues", V_WARN,
		   "rx %u tx %u combined %u (max %u/%u/%u), %ld CPUs", c.rx,
		   c.tx, c.combined, c.max_rx, c.max_tx, c.max_combined, cpus);
	if (max > rx)
		doctor_hint(d,
			    "XDP runs on %u of %ld CPUs: ethtool -L %s %s %ld "
			    "(one queue per CPU, docs/nic.md)",
			    rx, cpus, d->ifname,
			    c.max_combined ? "combined" : "rx",
			    (long)max < cpus ? (long)max : cpus);
	else
		doctor_hint(
			d,
			"XDP runs on %u of %ld CPUs: the driver has no more "
			"queues%s",
			rx, cpus,
			c.max_rx && !c.max_combined
				? " (veth: numrxqueues/numtxqueues at creation)"
				: "");
}

static void check_mtu(struct doctor *d, unsigned int mtu)
{
	long limit = blitz_xdp_single_buffer_mtu();
	bool frags = blitz_xdp_has_frags();
	bool sg = !d->have_features || (d->features & NIC_XDP_RX_SG);
	enum blitz_mtu_fit fit;
	size_t max_body = 0;

	fit = blitz_xdp_mtu_fit(mtu, limit, frags, sg);
	d->mtu_native = fit == BLITZ_MTU_SINGLE || fit == BLITZ_MTU_MULTI;
	switch (fit) {
	case BLITZ_MTU_TOO_SMALL:
		doctor_add(d, "mtu", V_FAIL, "%u", mtu);
		doctor_hint(d,
			    "the xdp engine needs MTU >= %d to answer in one "
			    "segment",
			    BLITZ_MIN_MTU);
		break;
	case BLITZ_MTU_SINGLE:
		doctor_add(d, "mtu", V_OK,
			   "%u (native single-buffer up to %ld)", mtu, limit);
		break;
	case BLITZ_MTU_MULTI:
		doctor_add(d, "mtu", V_OK,
			   "%u (program and driver multi-buffer)", mtu);
		break;
	case BLITZ_MTU_PROG_SINGLE:
	case BLITZ_MTU_DRIVER_NO_SG:
		doctor_add(d, "mtu", V_FAIL,
			   "%u > %ld, the most a %s takes natively", mtu, limit,
			   fit == BLITZ_MTU_DRIVER_NO_SG
				   ? "driver without multi-buffer XDP"
				   : "single-buffer XDP program");
		doctor_hint(
			d,
			"native attach fails (ERANGE): ip link set dev %s mtu "
			"%ld, or -m skb%s",
			d->ifname, limit,
			frags ? ""
			      : " (this blitz is built without xdp.frags)");
		break;
	}

	if (service_responses(&d->svc, &d->resp) ||
	    blitz_xdp_max_body(&d->resp, mtu, &max_body)) {
		doctor_add(d, "body", V_WARN, "cannot build the response");
		return;
	}
	d->body_fits = mtu >= BLITZ_MIN_MTU && d->svc.body_len <= max_body;
	if (d->body_fits) {
		doctor_add(d, "body", V_OK,
			   "%zu bytes, xdp answers up to %zu at MTU %u",
			   d->svc.body_len, max_body, mtu);
	} else {
		doctor_add(d, "body", V_FAIL,
			   "%zu bytes > %zu, the most at MTU %u",
			   d->svc.body_len, max_body, mtu);
		doctor_hint(
			d,
			"the xdp engine answers in one segment: serve --engine "
			"afxdp|epoll takes bodies up to 16 MiB");
	}
}

static void check_lro(struct doctor *d)
{
	bool lro = false;
	int err = nic_lro(d->ifname, &lro);

	if (err)
		doctor_add(d, "lro", V_WARN, "unknown (%s)", strerror(-err));
	else if (!doctor_flag(d, "lro", !lro, "off", V_WARN, "on"))
		doctor_hint(
			d,
			"LRO merges frames before XDP: drivers refuse native "
			"XDP or drop it: ethtool -K %s lro off",
			d->ifname);
}

static void check_attached(struct doctor *d)
{
	enum blitz_pins_owner owner;
	__u32 user = 0;
	int err = blitz_find_attached(d->ifindex, &d->att);

	if (err) {
		doctor_add(d, "xdp-attached", V_WARN, "cannot query (%s)",
			   strerror(-err));
	} else if (d->att.prog_id) {
		doctor_add(d, "xdp-attached", V_OK, "blitz prog id %u (%s, %s)",
			   d->att.prog_id, d->att.link ? "serve" : "load",
			   d->att.mode);
	} else if (!d->att.other_id) {
		doctor_add(d, "xdp-attached", V_OK, "none");
	} else {
		doctor_add(d, "xdp-attached", V_WARN, "prog id %u, not blitz's",
			   d->att.other_id);
		doctor_hint(
			d,
			"load and serve refuse to replace it: ip link set dev "
			"%s %s off",
			d->ifname, d->att.other_slot);
	}
	if (!d->bpffs)
		return; /* the bpffs row said it */
	owner = blitz_pins_owner(d->ifname, d->att.prog_id, &user);
	switch (owner) {
	case BLITZ_PINS_NONE:
		doctor_add(d, "pins", V_OK, "none");
		break;
	case BLITZ_PINS_HERE:
		doctor_add(d, "pins", V_OK, "%s/%s", BLITZ_PIN_ROOT, d->ifname);
		break;
	case BLITZ_PINS_OTHER_NETNS:
		doctor_add(d, "pins", V_WARN,
			   "used by prog id %u in another network "
			   "namespace",
			   user);
		doctor_hint(
			d,
			"pins are per interface name: unload it there first");
		break;
	case BLITZ_PINS_STALE:
		doctor_add(d, "pins", V_WARN,
			   "stale pins of a serve that was killed");
		doctor_hint(d, "blitz load reclaims them; or blitz unload %s",
			    d->ifname);
		break;
	}
}

/* What serve_fast does with --engine auto: xdp native, else xdp skb,
 * else the epoll engine alone. */
static void check_auto(struct doctor *d)
{
	const char *why = NULL;

	if (!d->privileged)
		why = "no privileges for XDP";
	else if (!d->bpffs)
		why = "no bpffs";
	else if (!d->body_fits)
		why = "the body does not fit one segment";
	else if (d->att.prog_id && !d->att.link)
		why = "behind the XDP program `blitz load` left there";
	else if (d->att.prog_id || d->att.other_id)
		why = "another XDP program is attached";
	if (why)
		doctor_add(d, "engine-auto", V_WARN, "epoll (%s)", why);
	else if (d->native && d->mtu_native)
		doctor_add(d, "engine-auto", V_OK, "xdp (native)");
	else
		doctor_add(d, "engine-auto", V_WARN, "xdp (skb: %s)",
			   !d->native ? "no native XDP"
				      : "MTU over the native limit");
}

/* ---- --probe ---- */

static void probe_native(struct doctor *d)
{
	/* r0 = XDP_PASS; exit */
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 2},
		{.code = BPF_JMP | BPF_EXIT},
	};
	struct bpf_prog_load_opts po = {.sz = sizeof(po)};
	struct bpf_link_create_opts lo = {.sz = sizeof(lo),
					  .flags = XDP_FLAGS_DRV_MODE};
	int pfd, lfd, err;

	if (d->att.prog_id || d->att.other_id) {
		doctor_add(d, "probe-native", V_WARN,
			   "skipped: an XDP program is "
			   "attached");
		return;
	}
	/* The same buffer model as the loader would load blitz's with. */
	po.prog_flags =
		blitz_xdp_has_frags() && d->mtu > blitz_xdp_single_buffer_mtu()
			? BPF_F_XDP_HAS_FRAGS
			: 0;
	pfd = bpf_prog_load(BPF_PROG_TYPE_XDP, "blitz_probe", "GPL", insns, 2,
			    &po);
	if (pfd < 0) {
		doctor_add(d, "probe-native", V_FAIL, "cannot load a probe: %s",
			   strerror(errno));
		return;
	}
	lfd = bpf_link_create(pfd, d->ifindex, BPF_XDP, &lo);
	err = lfd < 0 ? -errno : 0;
	if (lfd >= 0)
		close(lfd); /* the link goes with its last fd: detached */
	close(pfd);
	if (!err) {
		doctor_add(d, "probe-native", V_OK,
			   "native attach and detach worked");
		return;
	}
	doctor_add(d, "probe-native", V_FAIL, "native attach: %s",
		   strerror(-err));
	if (err == -ERANGE)
		doctor_hint(
			d, "the MTU is over what the driver takes natively for "
			   "this program: lower it, or -m skb");
	else if (err == -EOPNOTSUPP)
		doctor_hint(d, "no native XDP in this driver: -m skb");
}

/* Bind an AF_XDP socket to queue 0 in zero-copy mode, then close it. */
static void probe_zerocopy(struct doctor *d)
{
	const size_t frames = 64, fsize = 4096, len = frames * fsize;
	struct xdp_umem_reg reg = {.len = len, .chunk_size = fsize};
	struct sockaddr_xdp sxdp = {.sxdp_family = AF_XDP,
				    .sxdp_ifindex = (__u32)d->ifindex,
				    .sxdp_flags = XDP_ZEROCOPY};
	int fd, ring = 64, err = 0;
	void *area;

	area = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		doctor_add(d, "probe-zerocopy", V_WARN, "mmap: %s",
			   strerror(errno));
		return;
	}
	reg.addr = (__u64)(unsigned long)area;
	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring,
		       sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring))) {
		doctor_add(d, "probe-zerocopy", V_WARN, "AF_XDP socket: %s",
			   strerror(errno));
		goto out;
	}
	if (bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
		err = -errno;
	if (!err)
		doctor_add(d, "probe-zerocopy", V_OK,
			   "zero-copy bind on queue 0 "
			   "worked");
	else if (err == -EOPNOTSUPP)
		doctor_add(d, "probe-zerocopy", V_WARN,
			   "copy mode only (zero-copy "
			   "bind: %s)",
			   strerror(-err));
	else
		doctor_add(d, "probe-zerocopy", V_WARN,
			   "zero-copy bind on queue 0: "
			   "%s",
			   strerror(-err));
out:
	if (fd >= 0)
		close(fd);
	munmap(area, len);
}

void doctor_check_interface(struct doctor *d)
{
	struct nic_drvinfo di;
	unsigned int mtu = 0, rxq = 1;
	bool up = false, running = false;
	int err;

	d->ifindex = (int)(strlen(d->ifname) < IF_NAMESIZE
				   ? if_nametoindex(d->ifname)
				   : 0);
	if (!d->ifindex) {
		doctor_add(d, "interface", V_FAIL, "no interface '%s'",
			   d->ifname);
		doctor_hint(d,
			    "not in this network namespace: see ip link (or "
			    "ip netns exec NS blitz doctor %s)",
			    d->ifname);
		doctor_check_memlock(d, 1);
		return;
	}
	nic_flags(d->ifname, &up, &running);
	nic_mtu(d->ifname, &mtu);
	d->mtu = mtu;
	doctor_add(d, "interface", up && running ? V_OK : V_WARN,
		   "%s ifindex %d, %s%s", d->ifname, d->ifindex,
		   up ? "up" : "down", up && !running ? ", no carrier" : "");
	if (!up)
		doctor_hint(d, "ip link set dev %s up", d->ifname);
	err = nic_drvinfo(d->ifname, &di);
	if (err) {
		doctor_add(d, "driver", V_WARN, "unknown (%s)", strerror(-err));
	} else {
		doctor_add(d, "driver", V_OK, "%s %s%s%s", di.driver,
			   di.version, di.bus_info[0] ? " at " : "",
			   di.bus_info);
		if (!strcmp(di.driver, "veth"))
			doctor_hint(d, "veth: XDP_TX and redirected frames are "
				       "dropped "
				       "unless the peer has an XDP program");
	}
	check_features(d);
	check_queues(d, &rxq);
	doctor_check_memlock(d, rxq);
	doctor_check_conn_memory(d, rxq);
	check_mtu(d, mtu);
	check_lro(d);
	check_attached(d);
	check_auto(d);
	if (d->probe) {
		probe_native(d);
		probe_zerocopy(d);
	}
}
