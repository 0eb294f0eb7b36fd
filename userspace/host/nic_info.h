/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nic_info.h - what an interface and its driver offer, read from the
 * kernel's own reports without attaching anything: the driver (ethtool
 * GDRVINFO), its queues (GCHANNELS), its receive offload flags (GFLAGS),
 * its MTU, and its XDP features from the "netdev" generic netlink family
 * (Linux >= 6.3), spoken here directly because libbpf 1.1 has no
 * feature_flags in bpf_xdp_query().
 *
 * Owns: those queries. Must never change an interface: every call is a
 * read (ioctl SIOCETHTOOL get commands, a netlink GET), in the caller's
 * network namespace. Functions return 0 or -errno and print nothing.
 */
#ifndef BLITZ_NIC_INFO_H
#define BLITZ_NIC_INFO_H

#include <stdbool.h>
#include <stdint.h>

/* The netdev family's xdp-features bits (include/uapi/linux/netdev.h,
 * absent from Debian 12's headers; UAPI values never change). */
#define NIC_XDP_BASIC 0x01	  /* native XDP: ABORTED, DROP, PASS, TX */
#define NIC_XDP_REDIRECT 0x02	  /* XDP_REDIRECT from this device */
#define NIC_XDP_NDO_XMIT 0x04	  /* a redirect target (ndo_xdp_xmit) */
#define NIC_XDP_XSK_ZEROCOPY 0x08 /* AF_XDP zero-copy */
#define NIC_XDP_HW_OFFLOAD 0x10
#define NIC_XDP_RX_SG 0x20	 /* multi-buffer (xdp.frags) on receive */
#define NIC_XDP_NDO_XMIT_SG 0x40 /* multi-buffer as a redirect target */

struct nic_drvinfo {
	char driver[32], version[32], fw_version[32], bus_info[32];
};

struct nic_channels {
	uint32_t rx, tx, combined;	       /* in use */
	uint32_t max_rx, max_tx, max_combined; /* what the driver allows */
};

int nic_drvinfo(const char *ifname, struct nic_drvinfo *d);
/*
 * Can the driver deliver a TCP segment whose checksum field holds only the
 * pseudo-header sum (CHECKSUM_PARTIAL, the form a local stack leaves for
 * offload)? True for the devices whose sender is a stack on this host or
 * a guest's: veth, netkit, tun/tap. Never for a NIC driver: a frame from
 * a wire carries its full sum. By the driver name (nic_drvinfo()).
 */
bool nic_driver_csum_partial(const char *driver);
/* The same for ifname's driver; false when the driver cannot be read. */
bool nic_csum_partial(const char *ifname);
/* -EOPNOTSUPP when the driver has no `ethtool -l`. */
int nic_channels(const char *ifname, struct nic_channels *c);
/* *lro: large receive offload is on. */
int nic_lro(const char *ifname, bool *lro);
int nic_mtu(const char *ifname, unsigned int *mtu);
/* The Ethernet address into mac; -EAFNOSUPPORT when not Ethernet. */
int nic_mac(const char *ifname, unsigned char mac[6]);
/* *up: administratively up (IFF_UP); *running: carrier (IFF_RUNNING). */
int nic_flags(const char *ifname, bool *up, bool *running);
/*
 * The device's xdp-features (NIC_XDP_*) and, when the kernel reports it
 * (>= 6.6), the most segments a zero-copy AF_XDP frame may have (0 when
 * not reported). -ENOENT when the kernel has no "netdev" family (< 6.3).
 */
int nic_xdp_features(int ifindex, uint64_t *features, uint32_t *zc_max_segs);

/* An AF_XDP socket bound in this network namespace, as sock_diag
 * (xsk_diag, `ss --xdp`) reports it. */
struct nic_xsk {
	uint32_t ino; /* the socket's inode: /proc/PID/fd links name it */
	uint32_t ifindex, queue;
	bool zerocopy; /* XDP_DU_F_ZEROCOPY: the driver DMAs into its UMEM */
	uint64_t umem_size;
};

/*
 * The AF_XDP sockets bound to ifindex (every one when ifindex is 0), in
 * queue order, at most max of them into out. Returns how many there are
 * (may exceed max), or -errno: -ENOENT when the kernel has no AF_XDP
 * socket diagnostics (CONFIG_XDP_SOCKETS_DIAG).
 */
int nic_xsk_list(int ifindex, struct nic_xsk *out, int max);

#endif /* BLITZ_NIC_INFO_H */
