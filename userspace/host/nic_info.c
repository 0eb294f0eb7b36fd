// SPDX-License-Identifier: GPL-2.0
/*
 * nic_info.c - see nic_info.h: read-only queries of an interface, by
 * ethtool ioctls and by one generic netlink GET to the "netdev" family.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/xdp_diag.h>

#include "nic_info.h"

/* The netdev family (include/uapi/linux/netdev.h). */
#define NETDEV_FAMILY "netdev"
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#define NETDEV_A_DEV_XDP_FEATURES 3
#define NETDEV_A_DEV_XDP_ZC_MAX_SEGS 4

/* One interface ioctl on ifname (ifr zeroed first; data, when not NULL,
 * goes in ifr_data); 0 or -errno. */
static int ifreq_call(const char *ifname, unsigned long req, struct ifreq *ifr,
		      void *data)
{
	int fd, err = 0;

	memset(ifr, 0, sizeof(*ifr));
	if (strlen(ifname) >= IF_NAMESIZE)
		return -ENAMETOOLONG;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(ifr->ifr_name, ifname, strlen(ifname));
	if (data)
		ifr->ifr_data = data;
	if (ioctl(fd, req, ifr))
		err = -errno;
	close(fd);
	return err;
}

/* One SIOCETHTOOL get command on ifname; 0 or -errno. */
static int ethtool_get(const char *ifname, void *cmd)
{
	struct ifreq ifr;

	return ifreq_call(ifname, SIOCETHTOOL, &ifr, cmd);
}

static int ifreq_get(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	return ifreq_call(ifname, req, ifr, NULL);
}

int nic_drvinfo(const char *ifname, struct nic_drvinfo *d)
{
	struct ethtool_drvinfo di = {.cmd = ETHTOOL_GDRVINFO};
	int err = ethtool_get(ifname, &di);

	memset(d, 0, sizeof(*d));
	if (err)
		return err;
	snprintf(d->driver, sizeof(d->driver), "%.31s", di.driver);
	snprintf(d->version, sizeof(d->version), "%.31s", di.version);
	snprintf(d->fw_version, sizeof(d->fw_version), "%.31s", di.fw_version);
	snprintf(d->bus_info, sizeof(d->bus_info), "%.31s", di.bus_info);
	return 0;
}

bool nic_driver_csum_partial(const char *driver)
{
	static const char *const kin[] = {"veth", "netkit", "tun"};
	size_t i;

	for (i = 0; i < sizeof(kin) / sizeof(kin[0]); i++)
		if (!strcmp(driver, kin[i]))
			return true;
	return false;
}

bool nic_csum_partial(const char *ifname)
{
	struct nic_drvinfo d;

	return !nic_drvinfo(ifname, &d) && nic_driver_csum_partial(d.driver);
}

int nic_channels(const char *ifname, struct nic_channels *c)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	int err = ethtool_get(ifname, &ch);

	memset(c, 0, sizeof(*c));
	if (err)
		return err;
	c->rx = ch.rx_count;
	c->tx = ch.tx_count;
	c->combined = ch.combined_count;
	c->max_rx = ch.max_rx;
	c->max_tx = ch.max_tx;
	c->max_combined = ch.max_combined;
	return 0;
}

int nic_lro(const char *ifname, bool *lro)
{
	struct ethtool_value v = {.cmd = ETHTOOL_GFLAGS};
	int err = ethtool_get(ifname, &v);

	*lro = !err && (v.data & ETH_FLAG_LRO);
	return err;
}

int nic_mtu(const char *ifname, unsigned int *mtu)
{
	struct ifreq ifr;
	int err = ifreq_get(ifname, SIOCGIFMTU, &ifr);

	*mtu = err ? 0 : (unsigned int)ifr.ifr_mtu;
	return err;
}

int nic_mac(const char *ifname, unsigned char mac[6])
{
	struct ifreq ifr;
	int err = ifreq_get(ifname, SIOCGIFHWADDR, &ifr);

	if (err)
		return err;
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
		return -EAFNOSUPPORT;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

int nic_flags(const char *ifname, bool *up, bool *running)
{
	struct ifreq ifr;
	int err = ifreq_get(ifname, SIOCGIFFLAGS, &ifr);

	*up = !err && (ifr.ifr_flags & IFF_UP);
	*running = !err && (ifr.ifr_flags & IFF_RUNNING);
	return err;
}

/* ---- generic netlink ---- */

struct genl_req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[64];
};

static void put_attr(struct genl_req *r, uint16_t type, const void *data,
		     uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + r->nh.nlmsg_len);

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len += NLA_ALIGN(a->nla_len);
}

/*
 * Send r on fd and read its one answer into buf; the answer's attributes
 * (after the genl header) as *attrs and *len. 0 or -errno (the kernel's
 * NLMSG_ERROR code among them).
 */
static int genl_call(int fd, struct genl_req *r, char *buf, size_t cap,
		     struct nlattr **attrs, int *len)
{
	struct nlmsghdr *nh;
	struct nlmsgerr *e;
	ssize_t n;

	if (send(fd, r, r->nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, cap, 0);
	if (n < 0)
		return -errno;
	nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (size_t)n))
		return -EPROTO;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		e = NLMSG_DATA(nh);
		return e->error ? e->error : -EPROTO;
	}
	if (nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return -EPROTO;
	*attrs = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
	*len = (int)(nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN));
	return 0;
}

#define for_each_attr(a, head, len)                               \
	for ((a) = (head);                                        \
	     (len) >= NLA_HDRLEN && (a)->nla_len >= NLA_HDRLEN && \
	     (a)->nla_len <= (len);                               \
	     (len) -= NLA_ALIGN((a)->nla_len),                    \
	    (a) = (struct nlattr *)((char *)(a) + NLA_ALIGN((a)->nla_len)))

static void *attr_data(struct nlattr *a)
{
	return (char *)a + NLA_HDRLEN;
}

static void genl_init(struct genl_req *r, uint16_t family, uint8_t cmd)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->nh.nlmsg_type = family;
	r->nh.nlmsg_flags = NLM_F_REQUEST;
	r->nh.nlmsg_seq = 1;
	r->gh.cmd = cmd;
	r->gh.version = 1;
}

int nic_xdp_features(int ifindex, uint64_t *features, uint32_t *zc_max_segs)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	char buf[4096] __attribute__((aligned(8)));
	struct nlattr *a, *head;
	struct genl_req r;
	uint16_t family = 0;
	uint32_t idx = (uint32_t)ifindex;
	bool got = false;
	int fd, err, len;

	*features = 0;
	*zc_max_segs = 0;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto out;
	}
	genl_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY,
		 sizeof(NETDEV_FAMILY));
	err = genl_call(fd, &r, buf, sizeof(buf), &head, &len);
	if (err)
		goto out; /* -ENOENT: no such family (kernel < 6.3) */
	for_each_attr(a, head, len) if (a->nla_type == CTRL_ATTR_FAMILY_ID &&
					a->nla_len >= NLA_HDRLEN + 2)
		memcpy(&family, attr_data(a), 2);
	if (!family) {
		err = -ENOENT;
		goto out;
	}
	genl_init(&r, family, NETDEV_CMD_DEV_GET);
	r.nh.nlmsg_seq = 2;
	put_attr(&r, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	err = genl_call(fd, &r, buf, sizeof(buf), &head, &len);
	if (err)
		goto out;
	for_each_attr(a, head, len)
	{
		if (a->nla_type == NETDEV_A_DEV_XDP_FEATURES &&
		    a->nla_len >= NLA_HDRLEN + 8) {
			memcpy(features, attr_data(a), 8);
			got = true;
		} else if (a->nla_type == NETDEV_A_DEV_XDP_ZC_MAX_SEGS &&
			   a->nla_len >= NLA_HDRLEN + 4) {
			memcpy(zc_max_segs, attr_data(a), 4);
		}
	}
	err = got ? 0 : -ENODATA;
out:
	close(fd);
	return err;
}

/* ---- AF_XDP sockets (sock_diag) ---- */

#ifndef AF_XDP
#define AF_XDP 44
#endif

static void xsk_from_msg(struct nlmsghdr *nh, struct nic_xsk *x)
{
	struct xdp_diag_msg *m = NLMSG_DATA(nh);
	int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
	struct nlattr *a = (struct nlattr *)((char *)m + NLA_ALIGN(sizeof(*m)));
	struct xdp_diag_umem u;
	struct xdp_diag_info in;

	memset(x, 0, sizeof(*x));
	x->ino = m->xdiag_ino;
	for_each_attr(a, a, len)
	{
		if (a->nla_type == XDP_DIAG_INFO &&
		    a->nla_len >= NLA_HDRLEN + sizeof(in)) {
			memcpy(&in, attr_data(a), sizeof(in));
			x->ifindex = in.ifindex;
			x->queue = in.queue_id;
		} else if (a->nla_type == XDP_DIAG_UMEM &&
			   a->nla_len >= NLA_HDRLEN + sizeof(u)) {
			memcpy(&u, attr_data(a), sizeof(u));
			x->zerocopy = u.flags & XDP_DU_F_ZEROCOPY;
			x->umem_size = u.size;
		}
	}
}

int nic_xsk_list(int ifindex, struct nic_xsk *out, int max)
{
	struct {
		struct nlmsghdr nh;
		struct xdp_diag_req r;
	} req = {
		.nh = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = 1},
		.r = {.sdiag_family = AF_XDP,
		      .xdiag_show = XDP_SHOW_INFO | XDP_SHOW_UMEM},
	};
	char buf[8192] __attribute__((aligned(8)));
	struct nlmsghdr *nh;
	struct nic_xsk x;
	int fd, n = 0, i, err = 0;
	bool done = false;
	ssize_t got;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		err = -errno;
		goto out;
	}
	while (!done && !err) {
		got = recv(fd, buf, sizeof(buf), 0);
		if (got < 0) {
			err = -errno;
			break;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)got);
		     nh = NLMSG_NEXT(nh, got)) {
			if (nh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				err = e->error ? e->error : -EPROTO;
				break;
			}
			if (nh->nlmsg_len <
			    NLMSG_LENGTH(sizeof(struct xdp_diag_msg)))
				continue;
			xsk_from_msg(nh, &x);
			if (ifindex && x.ifindex != (uint32_t)ifindex)
				continue;
			/* Insert in queue order. */
			if (n < max) {
				for (i = n; i > 0 && out[i - 1].queue > x.queue;
				     i--)
					out[i] = out[i - 1];
				out[i] = x;
			}
			n++;
		}
	}
out:
	close(fd);
	return err ? err : n;
}
