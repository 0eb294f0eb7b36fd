// SPDX-License-Identifier: GPL-2.0
/*
 * loader.c - see loader.h. Puts blitz's XDP program onto an interface
 * (libxdp for `blitz load`, a process-owned bpf_link for `blitz serve`),
 * pins its maps under BLITZ_PIN_ROOT/<ifname>/, and takes it all off again.
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
#include <sys/ioctl.h>
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
#include "log.h"
#include "nic_info.h"
#include "serve_state.h"
#include "tc_handoff.h"

#define BPFFS_ROOT "/sys/fs/bpf"
#define BLITZ_PROG_NAME "blitz_xdp"
#define TCP_TIMESTAMPS_LEN 12 /* the option bytes every segment may carry */

/* The maps blitz pins, in the order they are pinned. */
static const char *const pinned_maps[] = {"config", "responses", "counters",
					  "xsks"};

struct blitz_loaded {
	struct blitz_xdp_bpf *skel;
	struct xdp_program *xprog; /* persist: libxdp's handle */
	int link_fd; /* !persist: the bpf_link this process owns */
	int ifindex;
	char ifname[IF_NAMESIZE];
	bool persist;
	bool pinned;
	enum xdp_attach_mode mode; /* what the attach ended up with */
	bool frags;		   /* loaded multi-buffer (xdp.frags) */
	__u32 prog_id;
	struct blitz_ksock *ks; /* the kernel-socket filter, NULL: off */
};

/* ---- checks shared by every verb that touches BPF ---- */

int blitz_check_privileges(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};
	bool bpf, net_admin, sys_admin;

	if (syscall(SYS_capget, &hdr, data)) {
		pr_warn("cannot read this process's capabilities: %s\n",
			strerror(errno));
		return -errno;
	}
#define HAS_CAP(c) (!!(data[(c) / 32].effective & (1u << ((c) % 32))))
	bpf = HAS_CAP(39 /* CAP_BPF, newer than some headers */);
	net_admin = HAS_CAP(CAP_NET_ADMIN);
	sys_admin = HAS_CAP(CAP_SYS_ADMIN);
#undef HAS_CAP
	if (!net_admin || !(bpf || sys_admin)) {
		pr_warn("needs root (CAP_BPF or CAP_SYS_ADMIN, and "
			"CAP_NET_ADMIN): run it with sudo\n");
		return -EPERM;
	}
	return 0;
}

int blitz_check_bpffs(void)
{
	struct statfs st;

	if (statfs(BPFFS_ROOT, &st) || st.f_type != BPF_FS_MAGIC) {
		pr_warn("no bpf filesystem at " BPFFS_ROOT
			": mount it with `mount -t bpf bpf " BPFFS_ROOT "`\n");
		return -ENOENT;
	}
	return 0;
}

int blitz_ifindex(const char *ifname)
{
	unsigned int idx = 0;

	if (strlen(ifname) < IF_NAMESIZE)
		idx = if_nametoindex(ifname);
	if (!idx) {
		pr_warn("no interface '%s': see `ip link`\n", ifname);
		return -ENODEV;
	}
	return (int)idx;
}

int blitz_pin_path(char *buf, size_t len, const char *ifname, const char *name)
{
	int n;

	if (name)
		n = snprintf(buf, len, "%s/%s/%s", BLITZ_PIN_ROOT, ifname,
			     name);
	else
		n = snprintf(buf, len, "%s/%s", BLITZ_PIN_ROOT, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int prog_name_by_id(__u32 id, char name[BPF_OBJ_NAME_LEN])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd, err;

	name[0] = '\0';
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (err)
		return -errno;
	memcpy(name, info.name, BPF_OBJ_NAME_LEN);
	name[BPF_OBJ_NAME_LEN - 1] = '\0';
	return 0;
}

/* blitz's program inside a libxdp dispatcher on ifindex, 0 when none. */
static __u32 blitz_in_dispatcher(int ifindex)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	__u32 id = 0;

	mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (libxdp_get_error(mp) || !mp)
		return 0;
	while ((p = xdp_multiprog__next_prog(p, mp))) {
		if (!strcmp(xdp_program__name(p), BLITZ_PROG_NAME)) {
			id = xdp_program__id(p);
			break;
		}
	}
	xdp_multiprog__close(mp);
	return id;
}

/*
 * The XDP bpf_link of program prog_id, as an fd, or -ENOENT. Matched by
 * the program (callers pass one bpf_xdp_query() reported in this network
 * namespace), never by ifindex: link info carries an ifindex but no
 * network namespace, and every testbed veth is ifindex 2 in its own.
 */
static int link_fd_of_prog(__u32 prog_id)
{
	struct bpf_link_info info;
	__u32 id = 0, len;
	int fd;

	while (!bpf_link_get_next_id(id, &id)) {
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_XDP && info.prog_id == prog_id)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int blitz_find_attached(int ifindex, struct blitz_attached *a)
{
	static const char *const mode_of_slot[] = {"native", "skb", "hw"};
	struct bpf_xdp_query_opts q = {.sz = sizeof(q)};
	char name[BPF_OBJ_NAME_LEN];
	__u32 ids[3];
	int err, i, lfd;

	memset(a, 0, sizeof(*a));
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		return err;
	ids[0] = q.drv_prog_id;
	ids[1] = q.skb_prog_id;
	ids[2] = q.hw_prog_id;
	for (i = 0; i < 3 && !a->prog_id; i++) {
		if (!ids[i])
			continue;
		if (!a->other_id)
			a->other_id = ids[i];
		if (prog_name_by_id(ids[i], name))
			continue;
		if (!strcmp(name, BLITZ_PROG_NAME)) {
			a->prog_id = ids[i];
		} else if (!strcmp(name, "xdp_dispatcher")) {
			a->prog_id = blitz_in_dispatcher(ifindex);
			a->dispatcher = a->prog_id != 0;
		}
		if (a->prog_id) {
			a->mode = mode_of_slot[i];
			a->other_id = 0;
		}
	}
	if (a->prog_id) {
		lfd = link_fd_of_prog(a->prog_id);
		if (lfd >= 0) {
			a->link = true;
			close(lfd);
		}
	}
	return 0;
}

/* ---- responses and config ---- */

static size_t decimal_digits(size_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/*
 * The largest body whose responses fit one segment of mss bytes with room
 * for the timestamp option: the header bytes of the xdp kinds (each says
 * the body's Content-Length) with a one-digit length are the overhead; a
 * longer body's length has more digits: step down until they fit too.
 */
static size_t xdp_body_room(const struct http_responses *r, __u16 mss)
{
	size_t overhead = 0, room = mss - TCP_TIMESTAMPS_LEN, max_body, digits;
	int k;

	/* The templates hold at most BLITZ_RESP_MAX bytes whatever the MSS
	 * (at MTU 9000 the response, not the segment, is the limit). */
	if (room > BLITZ_RESP_MAX)
		room = BLITZ_RESP_MAX;

	digits = decimal_digits(r->body_len);
	for (k = 0; k < BLITZ_RESP_OK_KINDS; k++)
		if (r->hdr_len[k] - digits + 1 > overhead)
			overhead = r->hdr_len[k] - digits + 1;
	max_body = room > overhead ? room - overhead : 0;
	while (max_body &&
	       max_body + overhead + decimal_digits(max_body) - 1 > room)
		max_body--;
	return max_body;
}

/* The 200 response must fit one segment of mss bytes with room for the
 * timestamp option; returns 0 or -EMSGSIZE with the largest body said. */
static int check_responses_fit(const struct http_responses *r, __u16 mss,
			       unsigned int mtu)
{
	size_t biggest = 0, room = mss - TCP_TIMESTAMPS_LEN;
	int k;

	if (r->body_inline) {
		for (k = 0; k < BLITZ_RESP_KINDS; k++)
			if (r->len[k] > biggest)
				biggest = r->len[k];
		if (biggest <= room)
			return 0;
	}
	pr_warn("a body of %zu bytes does not fit one segment: at most %zu "
		"bytes with MTU %u\n",
		r->body_len, xdp_body_room(r, mss), mtu);
	return -EMSGSIZE;
}

/* IPv4 numbers: 20 bytes of IP header and 20 of TCP. */
static __u16 mss_of_mtu(unsigned int mtu)
{
	return (__u16)(mtu - 40 > 65535 ? 65535 : mtu - 40);
}

int blitz_xdp_max_body(const struct http_responses *r, unsigned int mtu,
		       size_t *max_body)
{
	*max_body = mtu < BLITZ_MIN_MTU ? 0 : xdp_body_room(r, mss_of_mtu(mtu));
	return 0;
}

int blitz_loader_templates(const struct http_responses *r, __u16 mss,
			   unsigned int mtu, struct blitz_config *cfg,
			   struct blitz_resp *resp)
{
	int k, err = check_responses_fit(r, mss, mtu);

	if (err)
		return err;
	memset(resp, 0, sizeof(*resp) * BLITZ_RESP_KINDS);
	for (k = 0; k < BLITZ_RESP_KINDS; k++)
		memcpy(resp[k].bytes, r->bytes[k], r->len[k]);
	http_responses_meta(r, cfg->resp);
	return 0;
}

/* A single-buffer XDP frame is one page: headroom (256) and the skb's
 * shared info (320 on x86-64) come out of it, then the Ethernet header. */
#define XDP_PAGE_OVERHEAD (256 + 320 + 14)

long blitz_xdp_single_buffer_mtu(void)
{
	return sysconf(_SC_PAGESIZE) - XDP_PAGE_OVERHEAD;
}

enum blitz_mtu_fit blitz_xdp_mtu_fit(unsigned int mtu, long limit, bool frags,
				     bool driver_sg)
{
	if (mtu < BLITZ_MIN_MTU)
		return BLITZ_MTU_TOO_SMALL;
	if ((long)mtu <= limit)
		return BLITZ_MTU_SINGLE;
	if (!frags)
		return BLITZ_MTU_PROG_SINGLE;
	return driver_sg ? BLITZ_MTU_MULTI : BLITZ_MTU_DRIVER_NO_SG;
}

bool blitz_xdp_has_frags(void)
{
	struct blitz_xdp_bpf *skel = blitz_xdp_bpf__open();
	const char *sec;
	bool frags;

	if (!skel)
		return false;
	sec = bpf_program__section_name(skel->progs.blitz_xdp);
	frags = sec && !strcmp(sec, "xdp.frags");
	blitz_xdp_bpf__destroy(skel);
	return frags;
}

/* One SIOCGIF* ioctl on ifname into *ifr. 0 or -errno. */
static int if_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strncpy(ifr->ifr_name, ifname, IF_NAMESIZE - 1);
	if (ioctl(fd, req, ifr))
		err = -errno;
	close(fd);
	return err;
}

static int if_mtu(const char *ifname, unsigned int *mtu)
{
	struct ifreq ifr = {};
	int err = if_ioctl(ifname, SIOCGIFMTU, &ifr);

	if (!err)
		*mtu = (unsigned int)ifr.ifr_mtu;
	if (err)
		pr_warn("cannot read the MTU of %s: %s\n", ifname,
			strerror(-err));
	return err;
}

/* The interface's Ethernet address into mac[6]. 0 or -errno. */
static int if_mac(const char *ifname, unsigned char *mac)
{
	struct ifreq ifr = {};
	int err = if_ioctl(ifname, SIOCGIFHWADDR, &ifr);

	if (err)
		return err;
	if (ifr.ifr_hwaddr.sa_family != 1 /* ARPHRD_ETHER */)
		return -EAFNOSUPPORT;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

/* CLOCK_REALTIME - CLOCK_TAI, rounded to the second it really is. */
static __s64 tai_to_unix_ns(void)
{
	struct timespec rt, tai;
	__s64 d;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_TAI, &tai);
	d = (rt.tv_sec - tai.tv_sec) * 1000000000LL +
	    (rt.tv_nsec - tai.tv_nsec);
	/* The offset is whole seconds; the two reads differ by a little. */
	return (d >= 0 ? (d + 500000000LL) : (d - 500000000LL)) / 1000000000LL *
	       1000000000LL;
}

__s64 blitz_tai_to_unix_ns(void)
{
	return tai_to_unix_ns();
}

/* r NULL: no response templates (afxdp mode). */
static int fill_config(struct blitz_config *c,
		       const struct blitz_loader_opts *o, __u16 mss,
		       const struct http_responses *r)
{
	const struct blitz_service *svc = o->svc;
	int i;

	memset(c, 0, sizeof(*c));
	c->port_be = htons(svc->port);
	c->mss = mss;
	c->mode = o->engine;
	c->n_addr4 = (__u32)svc->n_addr4;
	c->n_addr6 = (__u32)svc->n_addr6;
	for (i = 0; i < svc->n_addr4; i++)
		c->addr4_be[i] = svc->addr4[i].s_addr;
	for (i = 0; i < svc->n_addr6; i++)
		memcpy(c->addr6_be[i], &svc->addr6[i], 16);
	if (svc->has_secret) { /* --secret-file: a fleet's shared key */
		c->secret[0] = svc->secret[0];
		c->secret[1] = svc->secret[1];
	} else if (getrandom(c->secret, sizeof(c->secret), 0) !=
		   (ssize_t)sizeof(c->secret)) {
		pr_warn("cannot get random bytes for the cookie secret: %s\n",
			strerror(errno));
		return -EIO;
	}
	/* Only frames to the interface's MAC (and --mac ones) are ours; an
	 * interface without one (not Ethernet) leaves any unicast MAC. */
	{
		unsigned char mac[6] = {0};

		if (!if_mac(o->ifname, mac)) {
			c->macs[c->n_macs++] = blitz_mac_u64(mac);
			for (i = 0; i < o->n_macs && c->n_macs < BLITZ_MAX_MACS;
			     i++)
				c->macs[c->n_macs++] =
					blitz_mac_u64(o->macs[i]);
		}
	}
	/* SACK and window scaling as this namespace's kernel takes them
	 * (its sysctls): the SYN-ACK leaves out what a hand-off could not
	 * carry. */
	if (o->engine == BLITZ_MODE_XDP) {
		c->flags |= tc_handoff_kernel_opts();
		tc_handoff_say_opts(o->ifname, c->flags);
	}
	/* veth and its kin deliver a local stack's partial checksums. */
	if (nic_csum_partial(o->ifname))
		c->flags |= BLITZ_CFG_CSUM_PARTIAL;
	c->tai_to_unix_ns = tai_to_unix_ns();
	c->loaded_unix = (__u64)time(NULL);
	if (r) /* else no templates: every length stays 0 */
		http_responses_meta(r, c->resp);
	return 0;
}

/*
 * Give a map of the opened skeleton a filled fd before the program is
 * loaded, so the program never runs with an empty config.
 */
static int prefill_map(struct bpf_map *m, const void *vals, __u32 n)
{
	__u32 vsz = bpf_map__value_size(m), k;
	int fd, err;

	fd = bpf_map_create(bpf_map__type(m), bpf_map__name(m),
			    bpf_map__key_size(m), vsz, bpf_map__max_entries(m),
			    NULL);
	if (fd < 0)
		return -errno;
	for (k = 0; k < n; k++) {
		if (bpf_map_update_elem(fd, &k, (const char *)vals + k * vsz,
					BPF_ANY)) {
			err = -errno;
			goto out;
		}
	}
	err = bpf_map__reuse_fd(m, fd);
out:
	close(fd);
	return err;
}

/* The kernel-socket filter for cfg's port (ksock.h), or NULL with a line
 * saying that every segment is looked up instead. */
static struct blitz_ksock *ksock_start(const struct blitz_config *cfg,
				       const char *ifname)
{
	struct blitz_ksock *ks = NULL;
	char why[200];

	if (blitz_ksock_start(ntohs(cfg->port_be), &ks, why, sizeof(why))) {
		pr_info("blitz: %s: no kernel-socket filter (%s): every "
			"segment gets the socket lookup\n",
			ifname, why);
		return NULL;
	}
	return ks;
}

/* frags: load it multi-buffer (an MTU over a page); else single-buffer.
 * ks: the kernel-socket filter whose bitmap the program reads, or NULL
 * (its own, never ready: every segment is looked up). */
static struct blitz_xdp_bpf *open_skel(const struct blitz_config *cfg,
				       const struct blitz_resp *resp,
				       bool frags, const struct blitz_ksock *ks)
{
	struct blitz_xdp_bpf *skel;
	struct bpf_program *p;
	int err;

	skel = blitz_xdp_bpf__open();
	if (!skel) {
		pr_warn("cannot open the XDP program: %s\n", strerror(errno));
		return NULL;
	}
	p = skel->progs.blitz_xdp;
	if (!frags)
		bpf_program__set_flags(p, bpf_program__flags(p) &
						  ~BPF_F_XDP_HAS_FRAGS);
	if (bpf_map__value_size(skel->maps.config) != sizeof(*cfg) ||
	    bpf_map__value_size(skel->maps.responses) != sizeof(*resp)) {
		pr_warn("the XDP program was built with another "
			"blitz_shared.h: rebuild it\n");
		goto err;
	}
	err = prefill_map(skel->maps.config, cfg, 1);
	if (!err)
		err = prefill_map(skel->maps.responses, resp, BLITZ_RESP_KINDS);
	if (!err && ks)
		err = bpf_map__reuse_fd(skel->maps.ksock,
					blitz_ksock_map_fd(ks));
	if (err) {
		pr_warn("cannot create the config maps: %s\n", strerror(-err));
		goto err;
	}
	return skel;
err:
	blitz_xdp_bpf__destroy(skel);
	return NULL;
}

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
	l->skel = open_skel(cfg, resp, l->frags, l->ks);
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

static void remove_pins(const char *ifname)
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

static int pin_maps(struct blitz_loaded *l)
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

static void loaded_free(struct blitz_loaded *l)
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
	struct serve_state *st;
	pid_t pid = 0;
	int i, n;

	st = calloc(SERVE_STALE_MAX, sizeof(*st));
	n = st ? serve_state_list(st, SERVE_STALE_MAX) : 0;
	for (i = 0; i < n && !pid; i++)
		if (!strcmp(st[i].ifname, ifname) &&
		    serve_state_life(&st[i]) == SERVE_GONE)
			pid = st[i].pid;
	free(st);
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
static int claim_pin_dir(const char *ifname)
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
		remove_pins(ifname);
		serve_state_remove_stale(ifname);
		err = make_pin_dir(dir);
	}
	if (err == -EEXIST)
		say_already_loaded(ifname);
	else if (err)
		pr_warn("cannot create %s: %s\n", dir, strerror(-err));
	return err;
}

int blitz_loader_attach(const struct blitz_loader_opts *o,
			struct blitz_loaded **out)
{
	const struct http_responses *r = o->resp;
	struct blitz_resp *resp = NULL;
	struct blitz_attached att;
	struct blitz_loaded *l;
	struct blitz_config cfg;
	enum xdp_attach_mode m;
	unsigned int mtu = 0;
	int err, ifindex, k;
	__u16 mss;

	*out = NULL;
	ifindex = blitz_ifindex(o->ifname);
	if (ifindex < 0)
		return ifindex;
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
		err = if_mtu(o->ifname, &mtu);
	if (err)
		return err;
	if (mtu < BLITZ_MIN_MTU) {
		pr_warn("MTU %u of %s is too small to answer in one segment\n",
			mtu, o->ifname);
		return -EINVAL;
	}
	mss = mss_of_mtu(mtu);

	err = blitz_find_attached(ifindex, &att);
	if (!err && att.prog_id) {
		pr_warn("already loaded on %s: `blitz reload %s [options]` "
			"changes it, `blitz unload %s` removes it\n",
			o->ifname, o->ifname, o->ifname);
		return -EEXIST;
	}
	if (!err && att.other_id) {
		pr_warn("%s already has an XDP program (id %u) that is not "
			"blitz's: remove it first (`ip link set dev %s xdp "
			"off`)\n",
			o->ifname, att.other_id, o->ifname);
		return -EBUSY;
	}

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
		err = check_responses_fit(r, mss, mtu);
		if (err)
			goto err_free;
		for (k = 0; k < BLITZ_RESP_KINDS; k++)
			memcpy(resp[k].bytes, r->bytes[k], r->len[k]);
	}
	err = fill_config(&cfg, o, mss,
			  o->engine == BLITZ_MODE_AFXDP ? NULL : r);
	if (err)
		goto err_free;

	err = claim_pin_dir(o->ifname);
	if (err)
		goto err_free;

	l->frags = (long)mtu > blitz_xdp_single_buffer_mtu();
	if (l->frags)
		pr_debug("MTU %u is over a page: multi-buffer XDP\n", mtu);
	l->ks = ksock_start(&cfg, o->ifname);
	l->skel = open_skel(&cfg, resp, l->frags, l->ks);
	if (!l->skel) {
		err = -EINVAL;
		goto err_unpin;
	}

	m = o->xdp_mode == BLITZ_XDP_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	err = do_attach(l, m, &cfg, resp);
	if (err &&
	    (!l->skel || bpf_program__fd(l->skel->progs.blitz_xdp) < 0)) {
		/* Not an attach problem: the program never loaded. */
		pr_warn("the kernel refused blitz's XDP program (%s): run with "
			"-v for the verifier's log\n",
			strerror(-err));
		goto err_unpin;
	}
	if (err && o->xdp_mode == BLITZ_XDP_AUTO) {
		pr_debug("native attach failed (%d), trying skb mode\n", err);
		m = XDP_MODE_SKB;
		if (!do_attach(l, m, &cfg, resp)) {
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
		goto err_unpin;
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

	err = pin_maps(l);
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
	remove_pins(o->ifname);
err_free:
	if (l)
		loaded_free(l);
	free(resp);
	return err;
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
		remove_pins(l->ifname);
	loaded_free(l);
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
		loaded_free(l);
}

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
	err = if_mtu(ifname, &st->mtu);
	if (err)
		return err;
	if (st->mtu < BLITZ_MIN_MTU) {
		pr_warn("MTU %u of %s is too small to answer in one segment\n",
			st->mtu, ifname);
		return -EINVAL;
	}
	st->mss = mss_of_mtu(st->mtu);
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

int blitz_loader_reload(const char *ifname, const struct blitz_loaded_state *st,
			const struct blitz_config *cfg,
			const struct blitz_resp *resp,
			struct blitz_reload_result *res)
{
	static const char *const skip[] = {"config", "responses", NULL};
	const __u32 kopts = BLITZ_CFG_NO_SACK | BLITZ_CFG_NO_WSCALE;
	struct bpf_xdp_attach_opts xo = {.sz = sizeof(xo)};
	struct blitz_config c;
	struct blitz_xdp_bpf *skel;
	struct blitz_ksock *ks;
	struct tc_handoff *h = NULL;
	struct bpf_prog_info pi;
	int ifindex, err, n, old_fd = -1, old_tc_fd = -1, new_fd;
	bool tc_swapped = false;
	__u32 len = sizeof(pi), flags;
	__u16 gen;

	memset(res, 0, sizeof(*res));
	res->old_prog_id = st->prog_id;
	res->old_tc_id = st->tc_prog_id;
	ifindex = blitz_ifindex(ifname);
	if (ifindex < 0)
		return ifindex;
	/* The sysctls read again: a reload follows a change of tcp_sack or
	 * tcp_window_scaling since the load (for new connections). */
	c = *cfg;
	c.flags = (c.flags & ~kopts) | tc_handoff_kernel_opts();
	if ((c.flags & kopts) != (st->cfg.flags & kopts))
		tc_handoff_say_opts(ifname, c.flags);
	if ((st->cfg.flags & kopts & ~c.flags))
		pr_info("blitz: %s: SYN-ACKs offer %s%s%s again, as the "
			"kernel does now\n",
			ifname,
			st->cfg.flags & ~c.flags & BLITZ_CFG_NO_SACK
				? "SACK-permitted"
				: "",
			(st->cfg.flags & ~c.flags & kopts) == kopts ? " and "
								    : "",
			st->cfg.flags & ~c.flags & BLITZ_CFG_NO_WSCALE
				? "window scaling"
				: "");
	gen = reload_gen(st, &c, resp);
	for (n = 0; n < BLITZ_RESP_KINDS; n++)
		c.resp[n].gen = gen;
	cfg = &c;
	/* A fresh filter (for the new port, and emptied of the old one's
	 * false positives), swapped in with the program. */
	ks = ksock_start(cfg, ifname);
	skel = open_skel(cfg, resp,
			 (long)st->mtu > blitz_xdp_single_buffer_mtu(), ks);
	if (!skel) {
		blitz_ksock_free(ks);
		explicit_bzero(&c, sizeof(c));
		return -EINVAL;
	}
	n = blitz_reuse_state_maps(skel->obj, st->prog_id, skip, res->fresh,
				   sizeof(res->fresh));
	if (n < 0) {
		err = n;
		pr_warn("cannot take over the maps of prog id %u: %s; %s is "
			"unchanged\n",
			st->prog_id, strerror(-err), ifname);
		goto out;
	}
	res->maps_kept = n;
	err = blitz_xdp_bpf__load(skel);
	if (err) {
		pr_warn("the kernel refused the new XDP program (%s): run with "
			"-v for the verifier's log; %s is unchanged\n",
			strerror(-err), ifname);
		goto out;
	}
	new_fd = bpf_program__fd(skel->progs.blitz_xdp);
	memset(&pi, 0, sizeof(pi));
	if (!bpf_obj_get_info_by_fd(new_fd, &pi, &len))
		res->new_prog_id = pi.id;

	old_fd = bpf_prog_get_fd_by_id(st->prog_id);
	if (old_fd < 0) {
		err = -errno;
		pr_warn("prog id %u of %s went away meanwhile: %s\n",
			st->prog_id, ifname, strerror(-err));
		goto out;
	}
	/* The hand-off first: the new one knows both keys, so it takes what
	 * the old XDP program (old key) passes as well as the new one's. */
	if (st->tc_prog_id) {
		old_tc_fd = bpf_prog_get_fd_by_id(st->tc_prog_id);
		err = old_tc_fd < 0 ? -errno : 0;
		if (!err)
			err = tc_handoff_prepare(
				ifname, bpf_map__fd(skel->maps.config),
				bpf_map__fd(skel->maps.counters),
				bpf_map__fd(skel->maps.responses),
				bpf_map__fd(skel->maps.flows), st->tc_prog_id,
				&h);
		if (!err)
			err = tc_handoff_swap(ifindex, st->tc_prog_id,
					      tc_handoff_prog_fd(h));
		if (err) {
			pr_warn("%s is unchanged (the hand-off could not be "
				"switched: %s)\n",
				ifname, strerror(-err));
			goto out;
		}
		tc_swapped = true;
		res->new_tc_id = tc_handoff_id(h);
	}
	flags = (st->skb_mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE) |
		XDP_FLAGS_REPLACE;
	xo.old_prog_fd = old_fd;
	err = bpf_xdp_attach(ifindex, new_fd, flags, &xo);
	if (err) {
		pr_warn("cannot swap the XDP program of %s: %s; %s is "
			"unchanged\n",
			ifname, strerror(-err), ifname);
		goto out;
	}
	tc_swapped = false; /* done: no way back from here */
	ksock_repin(ifname, ks);
	err = repin(ifname, skel->maps.config, "config");
	if (!err)
		err = repin(ifname, skel->maps.responses, "responses");
	if (!err && strstr(res->fresh, "counters"))
		err = repin(ifname, skel->maps.counters, "counters");
	if (!err && strstr(res->fresh, "xsks"))
		err = repin(ifname, skel->maps.xsks, "xsks");
	if (err)
		pr_warn("%s runs the new program (prog id %u), but status and "
			"stats may show the old pins\n",
			ifname, res->new_prog_id);
out:
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
		fd = link_fd_of_prog(a->prog_id);
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
		remove_pins(ifname);
		pr_info("blitz: no interface '%s' any more: removed its stale "
			"pins\n",
			ifname);
		return 0;
	}
	if (!a.prog_id && pins == BLITZ_PINS_NONE && !handoff) {
		pr_warn("nothing loaded on %s\n", ifname);
		return -ENOENT;
	}
	/* The hand-off first: it must not outlive the XDP program. Its
	 * pinned link (blitz load) goes with it. */
	err = tc_handoff_remove(ifindex);
	if (err < 0)
		return err;
	if (a.prog_id) {
		err = detach_attached(ifindex, &a);
		if (err) {
			pr_warn("cannot detach prog id %u from %s: %s\n",
				a.prog_id, ifname, strerror(-err));
			return err;
		}
	}
	if (pins != BLITZ_PINS_OTHER_NETNS)
		remove_pins(ifname);
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
