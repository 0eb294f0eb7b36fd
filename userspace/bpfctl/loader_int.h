/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loader_int.h - inside the loader (loader.h is its interface): struct
 * blitz_loaded and the calls between loader.c (attach), loader_checks.c,
 * loader_config.c, loader_pins.c (pins, unload), loader_keys.c and
 * loader_reload.c.
 *
 * Owns: struct blitz_loaded. Must never be included outside
 * userspace/bpfctl.
 */
#ifndef BLITZ_LOADER_INT_H
#define BLITZ_LOADER_INT_H

#include <net/if.h>
#include <stdbool.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "loader.h"

#define BPFFS_ROOT "/sys/fs/bpf"
#define BLITZ_PROG_NAME "blitz_xdp"
#define TCP_TIMESTAMPS_LEN 12 /* the option bytes every segment may carry */

struct blitz_xdp_bpf;
struct blitz_ksock;

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
	__u16 held_port_be;	/* opts.hold: the port arm() writes, else 0 */
};

/* loader_checks.c */
int ld_link_fd_of_prog(__u32 prog_id);

/* loader_config.c */
int ld_check_responses_fit(const struct http_responses *r, __u16 mss,
			   unsigned int mtu);
__u16 ld_mss_of_mtu(unsigned int mtu);
int ld_mtu(const char *ifname, unsigned int *mtu);
int ld_fill_config(struct blitz_config *c, const struct blitz_loader_opts *o,
		   __u16 mss, const struct http_responses *r);
struct blitz_ksock *ld_ksock_start(const struct blitz_config *cfg,
				   const char *ifname);
struct blitz_xdp_bpf *ld_open_skel(const struct blitz_config *cfg,
				   const struct blitz_resp *resp, bool frags,
				   const struct blitz_ksock *ks);

/* loader_pins.c */
void ld_remove_pins(const char *ifname);
int ld_pin_maps(struct blitz_loaded *l);
void ld_loaded_free(struct blitz_loaded *l);
int ld_claim_pin_dir(const char *ifname);

#endif /* BLITZ_LOADER_INT_H */
