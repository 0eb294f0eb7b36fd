/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blitz_proto.h - the protocol numbers of every BPF program and of the
 * userspace code that reads or builds the same headers: the Ethernet, IP
 * and ICMP values vmlinux.h lacks (it carries no #define), the TCP header
 * flags, option kinds and lengths, the option words our replies carry, and
 * the window and scale the xdp engine advertises.
 *
 * Owns: each of these values, once, under the name Linux or the BSD
 * headers give it (a name a system header already defines is defined
 * here only when it is missing, with the same value). Header fields are
 * reached through struct ethhdr/iphdr/ipv6hdr/tcphdr/icmphdr and
 * offsetof, never by a literal offset.
 * Must never hold code, types or state: numbers only, so a BPF program
 * (after vmlinux.h) and userspace (after the linux/ uapi headers) can
 * both include it.
 */
#ifndef BLITZ_PROTO_H
#define BLITZ_PROTO_H

/* ---- Ethernet (linux/if_ether.h) ---- */
#ifndef ETH_ALEN
#define ETH_ALEN 6
#endif
#ifndef ETH_HLEN
#define ETH_HLEN 14
#endif
#ifndef ETH_P_IP
#define ETH_P_IP 0x0800
#endif
#ifndef ETH_P_IPV6
#define ETH_P_IPV6 0x86DD
#endif
#ifndef ETH_P_8021Q
#define ETH_P_8021Q 0x8100
#endif
#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif
#define BLITZ_PACKET_HOST 0 /* linux/if_packet.h: to this host */

/* ---- IPv4 (the frag_off field, host order) and IPv6 ---- */
#define BLITZ_IP_DF 0x4000
#define BLITZ_IP_MF 0x2000
#define BLITZ_IP_OFFSET 0x1fff
/* Header lengths without options, as 32-bit numbers (a bare sizeof is
 * 64 bits wide, and widens the arithmetic it enters). */
#define BLITZ_IP4_HLEN ((__u32)sizeof(struct iphdr))
#define BLITZ_IP6_HLEN ((__u32)sizeof(struct ipv6hdr))
#define BLITZ_IP_TTL 64	      /* our replies' TTL and hop limit */
#define BLITZ_IP4_HLEN_MAX 60 /* IHL is a count of 4-byte words */
/* glibc's IPPROTO_ICMPV6 is an enum constant: ours has another name */
#define BLITZ_IPPROTO_ICMPV6 58
/* IPv6 extension headers (net/ipv6.h's NEXTHDR_*) */
#define BLITZ_NEXTHDR_HOP 0
#define BLITZ_NEXTHDR_ROUTING 43
#define BLITZ_NEXTHDR_FRAGMENT 44
#define BLITZ_NEXTHDR_AUTH 51
#define BLITZ_NEXTHDR_DEST 60
#define BLITZ_NEXTHDR_MOBILITY 135
#define BLITZ_NEXTHDR_HIP 139
#define BLITZ_NEXTHDR_SHIM6 140
#define BLITZ_NEXTHDR_EXP1 253 /* RFC 3692 experiments */
#define BLITZ_NEXTHDR_EXP2 254

/* ---- ICMP (linux/icmp.h, linux/icmpv6.h) ---- */
#ifndef ICMP_DEST_UNREACH
#define ICMP_DEST_UNREACH 3
#endif
#ifndef ICMP_FRAG_NEEDED
#define ICMP_FRAG_NEEDED 4
#endif
#ifndef ICMPV6_PKT_TOOBIG
#define ICMPV6_PKT_TOOBIG 2
#endif
#define BLITZ_ICMP_HLEN 8 /* type, code, checksum, 4 bytes of the type's */

/* ---- TCP ---- */
/* Header flag bits (the byte before the window), as the kernel names
 * them (include/net/tcp.h). */
#define TCPHDR_FIN 0x01
#define TCPHDR_SYN 0x02
#define TCPHDR_RST 0x04
#define TCPHDR_PSH 0x08
#define TCPHDR_ACK 0x10
#define TCPHDR_URG 0x20
#define TCPHDR_ECE 0x40
#define TCPHDR_CWR 0x80
/* A member's offset as a 32-bit constant. libbpf's offsetof() takes the
 * member's address, which clang makes a CO-RE relocation for a vmlinux.h
 * struct: a value computed at run time, and more instructions. */
#define BLITZ_OFF(type, member) ((__u32) __builtin_offsetof(type, member))
/* Where the flag byte sits in struct tcphdr (bit-fields there): the
 * byte before the window. */
#define BLITZ_TCP_FLAGS_OFF (BLITZ_OFF(struct tcphdr, window) - 1)
#define BLITZ_TCP_HLEN ((__u32)sizeof(struct tcphdr))
#define BLITZ_TCP_HLEN_MAX 60 /* doff is a count of 4-byte words */

/* Option kinds (RFC 9293, 7323, 2018) and lengths, as <netinet/tcp.h>
 * names them (same values: a file may include both). */
#ifndef TCPOPT_EOL
#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MAXSEG 2
#define TCPOPT_WINDOW 3
#define TCPOPT_SACK_PERMITTED 4
#define TCPOPT_SACK 5
#define TCPOPT_TIMESTAMP 8
#define TCPOLEN_MAXSEG 4
#define TCPOLEN_WINDOW 3
#define TCPOLEN_SACK_PERMITTED 2
#define TCPOLEN_TIMESTAMP 10
#endif
#define TCPOLEN_TSTAMP_ALIGNED 12 /* NOP NOP TS: every later segment's */
#define TCPOLEN_SACK_BASE 2	  /* kind, length, then blocks */
#define TCPOLEN_SACK_PERBLOCK 8
#define TCPOLEN_MAX 40	  /* options in a TCP header, at most */
#define TCP_MAX_WSCALE 14 /* RFC 7323 2.3: larger shifts are taken as 14 */

/* An option word of four option bytes, first byte highest, host order
 * (store it with htonl). */
#define BLITZ_OPTW(a, b, c, d) \
	((__u32)(a) << 24 | (__u32)(b) << 16 | (__u32)(c) << 8 | (__u32)(d))
/* The words of Linux's layouts, which our replies copy: NOP NOP TS... on
 * every segment after the SYN; SACK-permitted then TS, or NOP NOP
 * SACK-permitted alone; MSS; NOP and window scale. */
#define BLITZ_OPTW_NOP_NOP_TS \
	BLITZ_OPTW(TCPOPT_NOP, TCPOPT_NOP, TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP)
#define BLITZ_OPTW_SACKP_TS                                       \
	BLITZ_OPTW(TCPOPT_SACK_PERMITTED, TCPOLEN_SACK_PERMITTED, \
		   TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP)
#define BLITZ_OPTW_NOP_NOP_SACKP                                  \
	BLITZ_OPTW(TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK_PERMITTED, \
		   TCPOLEN_SACK_PERMITTED)
#define BLITZ_OPTW_MSS(mss) \
	(BLITZ_OPTW(TCPOPT_MAXSEG, TCPOLEN_MAXSEG, 0, 0) | (__u16)(mss))
#define BLITZ_OPTW_NOP_WS(shift)                                    \
	(BLITZ_OPTW(TCPOPT_NOP, TCPOPT_WINDOW, TCPOLEN_WINDOW, 0) | \
	 (__u8)(shift))
/* The same words with their value bytes masked out (what a parser
 * compares). */
#define BLITZ_OPTW_MSS_MASK 0xffff0000U
#define BLITZ_OPTW_NOP_WS_MASK 0xffffff00U
/* Linux's SYN: MSS, SACK-permitted and TS, NOP and window scale. */
#define BLITZ_OPTLEN_LINUX_SYN 20

/* The xdp engine's window (the TC bursts and hand-off say the same): the
 * field of every segment, shifted by BLITZ_WSCALE once the client offers
 * scaling (the SYN-ACK's field is never scaled). */
#define BLITZ_WINDOW 65535
#define BLITZ_WSCALE 7
#define BLITZ_WINDOW_FIELD(scaled) \
	((scaled) ? BLITZ_WINDOW >> BLITZ_WSCALE : BLITZ_WINDOW)
/* The MSS when config.mss is not set: a 1500-byte MTU less IPv4 and TCP. */
#define BLITZ_DEFAULT_MSS 1460

#endif /* BLITZ_PROTO_H */
