/* SPDX-License-Identifier: GPL-2.0 */
/*
 * veth_mss.h - an XDP pass program on a veth driven by the af_packet PMD,
 * so its peer segments to the MSS (see veth_mss.c). Setup only.
 */
#ifndef BLITZ_DPDK_VETH_MSS_H
#define BLITZ_DPDK_VETH_MSS_H

/* 0: attached (held until veth_mss_detach or exit); 1: ifname is not a
 * veth, nothing to do; negative errno: could not (one line said why). */
int veth_mss_attach(const char *ifname);
void veth_mss_detach(void);

#endif /* BLITZ_DPDK_VETH_MSS_H */
