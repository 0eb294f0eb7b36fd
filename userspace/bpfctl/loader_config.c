// SPDX-License-Identifier: GPL-2.0
/*
 * loader_config.c - the config and responses maps' contents (loader.h): what
 * fits one segment at an MTU, the config a load writes, the kernel-socket
 * filter it starts.
 *
 * Owns: struct blitz_config as a load fills it. Must never attach or pin.
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
int ld_check_responses_fit(const struct http_responses *r, __u16 mss,
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
__u16 ld_mss_of_mtu(unsigned int mtu)
{
	return (__u16)(mtu - 40 > 65535 ? 65535 : mtu - 40);
}

int blitz_xdp_max_body(const struct http_responses *r, unsigned int mtu,
		       size_t *max_body)
{
	*max_body =
		mtu < BLITZ_MIN_MTU ? 0 : xdp_body_room(r, ld_mss_of_mtu(mtu));
	return 0;
}

int blitz_loader_templates(const struct http_responses *r, __u16 mss,
			   unsigned int mtu, struct blitz_config *cfg,
			   struct blitz_resp *resp)
{
	int k, err = ld_check_responses_fit(r, mss, mtu);

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

/* The interface's MTU, or -errno said in one line. */
int ld_mtu(const char *ifname, unsigned int *mtu)
{
	int err = nic_mtu(ifname, mtu);

	if (err)
		pr_warn("cannot read the MTU of %s: %s\n", ifname,
			strerror(-err));
	return err;
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
int ld_fill_config(struct blitz_config *c, const struct blitz_loader_opts *o,
		   __u16 mss, const struct http_responses *r)
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

		if (!nic_mac(o->ifname, mac)) {
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
struct blitz_ksock *ld_ksock_start(const struct blitz_config *cfg,
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
struct blitz_xdp_bpf *ld_open_skel(const struct blitz_config *cfg,
				   const struct blitz_resp *resp, bool frags,
				   const struct blitz_ksock *ks)
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
