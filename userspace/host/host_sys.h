/* SPDX-License-Identifier: GPL-2.0 */
/*
 * host_sys.h - what this process may do and how this network namespace's
 * kernel is set: the effective capabilities (capget) and the sysctls under
 * /proc/sys.
 *
 * Owns: those two reads; every capability check and sysctl read of
 * blitz goes through here. Must never change a capability or a sysctl.
 * Functions return 0 or -errno and print nothing.
 */
#ifndef BLITZ_HOST_SYS_H
#define BLITZ_HOST_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/capability.h>

#ifndef CAP_BPF
#define CAP_BPF 39 /* Linux 5.8; older headers lack it */
#endif

/* This process's effective capabilities: bit c set for capability c. */
int host_caps(uint64_t *effective);

static inline bool host_cap_has(uint64_t caps, int cap)
{
	return (caps >> cap) & 1;
}

/*
 * The first line of /proc/sys/<name> (e.g. "net/ipv4/tcp_sack"), newline
 * dropped, into buf. -EIO when it is empty.
 */
int host_sysctl_read(const char *name, char *buf, size_t len);
/* The same sysctl as a number; -EIO when it does not begin with one. */
int host_sysctl_long(const char *name, long *v);

#endif /* BLITZ_HOST_SYS_H */
