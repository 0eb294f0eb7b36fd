/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_ksock.h - the kernel-socket filter in front of the XDP program's
 * socket lookup (kernel_owns() in blitz_xdp_tcp.h; docs/cost.md).
 *
 * A bitmap of hashed (remote address, remote port, local port) tuples: a
 * bit is set for every TCP socket with the service's local port that the
 * kernel puts into its established hash (established, request and
 * TIME_WAIT socks), by blitz_ksock.bpf.c's tracing programs from the
 * moment they are attached, and for the sockets that existed before by its
 * tcp iterator, which the loader runs after the attach. A clear bit means
 * the kernel has no socket for the tuple, so the lookup can be skipped; a
 * set bit only means "look up" (false positives are fine, false
 * negatives never happen). Bits are never cleared while loaded: a load or
 * reload builds a fresh bitmap.
 *
 * Owns: the layout (word 0: BLITZ_KSOCK_READY | port once seeded; words
 * 1..BLITZ_KSOCK_WORDS: the bits) and the hash, shared by the tracer and
 * the XDP program, which must compute it identically. Must never: be read
 * as "no socket" while word 0 does not name the segment's local port (a
 * filter not attached, not seeded yet, or for another port): then every
 * segment is looked up.
 */
#ifndef BLITZ_KSOCK_H
#define BLITZ_KSOCK_H

#define BLITZ_KSOCK_LOG2_BITS 20 /* 2^20 bits: 128 KiB */
#define BLITZ_KSOCK_WORDS (1u << (BLITZ_KSOCK_LOG2_BITS - 6))
#define BLITZ_KSOCK_READY (1ULL << 32)

/* The bit of a tuple: addr is the remote IPv4 address as it sits in the
 * header (network order, read as a native __u32), or for IPv6 the xor of
 * its four words; ports in host order. */
static inline __u32 blitz_ksock_bit(__u32 addr, __u32 rport, __u32 lport)
{
	__u64 x =
		((__u64)addr << 32) | (rport & 0xffff) << 16 | (lport & 0xffff);

	x *= 0x9E3779B97F4A7C15ULL;
	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ULL;
	return (__u32)(x >> (64 - BLITZ_KSOCK_LOG2_BITS));
}

#ifdef __bpf__
/* One definition for both objects: the loader gives the XDP program the
 * tracer's map (bpf_map__reuse_fd); unshared, it stays all zero (word 0
 * not ready: always look up). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BLITZ_KSOCK_WORDS + 1);
	__type(key, __u32);
	__type(value, __u64);
} ksock SEC(".maps");
#endif

#endif /* BLITZ_KSOCK_H */
