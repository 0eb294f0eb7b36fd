/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel_drop.h - while an interface is taken over, the kernel's own stack
 * drops what arrives on it at the ingress hook (see kernel_drop.c). Setup
 * only.
 */
#ifndef BLITZ_DPDK_KERNEL_DROP_H
#define BLITZ_DPDK_KERNEL_DROP_H

/* 0: attached (held until kernel_drop_detach or exit); negative errno:
 * could not (the kernel then drops the frames later, as before; one line
 * says why). */
int kernel_drop_attach(const char *ifname);
void kernel_drop_detach(void);

#endif /* BLITZ_DPDK_KERNEL_DROP_H */
