/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_fixture.h - what the BPF_PROG_TEST_RUN programs (tests/bpf/test_xdp,
 * tests/bpf/test_seq, tests/perf/xdp_cost) set up alike: the xdp program's
 * config for the test service (port 8080 on 10.0.0.1 and fd00::1, one MAC,
 * a given key, the cookie clock mid-epoch), its maps filled, lo up, and
 * libbpf printing warnings only.
 */
#ifndef BLITZ_TEST_XDP_FIXTURE_H
#define BLITZ_TEST_XDP_FIXTURE_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <bpf/libbpf.h>

#include "../bpf/blitz_shared.h"
#include "cookie_ring.h"
#include "http.h"

/* CLOCK_REALTIME - CLOCK_TAI, as the loader computes it. */
static inline int64_t xdp_fixture_tai_offset_ns(void)
{
	struct timespec rt, tai;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_TAI, &tai);
	return ((int64_t)rt.tv_sec - tai.tv_sec) * 1000000000LL +
	       (rt.tv_nsec - tai.tv_nsec);
}

/* The test service's config: port, addresses (IPv6 when v6), the MAC,
 * the key (s0, s1), clocks, and resp's templates. */
static inline void xdp_fixture_cfg(struct blitz_config *cfg,
				   const struct http_responses *resp,
				   uint16_t port, const uint8_t mac[6],
				   uint64_t s0, uint64_t s1, int v6)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->port_be = htons(port);
	cfg->mss = 1460;
	cfg->mode = BLITZ_MODE_XDP;
	cfg->n_addr4 = 1;
	inet_pton(AF_INET, "10.0.0.1", &cfg->addr4_be[0]);
	if (v6) {
		cfg->n_addr6 = 1;
		inet_pton(AF_INET6, "fd00::1", cfg->addr6_be[0]);
	}
	cfg->secret[0] = s0;
	cfg->secret[1] = s1;
	cfg->n_macs = 1;
	cfg->macs[0] = blitz_mac_u64(mac);
	cfg->tai_to_unix_ns = xdp_fixture_tai_offset_ns();
	cfg->loaded_unix = (uint64_t)time(NULL);
	/* The cookie clock in the middle of an epoch (see ring_now()). */
	cfg->cookie_clock_adj_ns = cookie_clock_mid_epoch(cfg);
	http_responses_meta(resp, cfg->resp);
}

/* cfg into the config map, resp's bytes into the responses map. */
static inline int xdp_fixture_push(struct bpf_map *config,
				   struct bpf_map *responses,
				   const struct blitz_config *cfg,
				   const struct http_responses *resp)
{
	uint32_t k = 0;

	if (bpf_map__update_elem(config, &k, sizeof(k), cfg, sizeof(*cfg), 0))
		return -1;
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		struct blitz_resp r;

		memcpy(r.bytes, resp->bytes[k], BLITZ_RESP_MAX);
		if (bpf_map__update_elem(responses, &k, sizeof(k), &r,
					 sizeof(r), 0))
			return -1;
	}
	return 0;
}

/* The sum over CPUs of counter `id` of the xdp and tc programs'
 * `counters` (one entry: a struct blitz_counters per CPU), or UINT64_MAX
 * when it cannot be read. */
static inline uint64_t xdp_fixture_counter(const struct bpf_map *m, int id)
{
	static struct blitz_counters v[64];
	uint64_t total = 0;
	uint32_t key = 0;
	int i, n = libbpf_num_possible_cpus();

	if (n < 1 || n > 64 || id < 0 || id >= BLITZ_CNT_MAX ||
	    bpf_map__lookup_elem(m, &key, sizeof(key), v, sizeof(v[0]) * n, 0))
		return UINT64_MAX;
	for (i = 0; i < n; i++)
		total += v[i].v[id];
	return total;
}

/* The kernel's ephemeral ports of this private netns: 20000-29999.  The
 * tests forge segments from fixed client ports (40000-45999 and the like);
 * a kernel connection the tests keep open (or in TIME_WAIT) on one of those
 * ports would make the kernel own the forged tuple, and the verdict change
 * (a SYN passed where a SYN-ACK was expected: 1 run in ~30 before this). */
#define XDP_FIXTURE_EPHEMERAL "20000 29999"
#define XDP_FIXTURE_EPHEMERAL_LO 20000
#define XDP_FIXTURE_EPHEMERAL_HI 29999

/* Write a sysctl of the caller's (private) netns. 0 or -1. */
static inline int xdp_fixture_sysctl(const char *path, const char *val)
{
	FILE *fp = fopen(path, "w");
	int ok;

	if (!fp)
		return -1;
	ok = fputs(val, fp) >= 0;
	return fclose(fp) == 0 && ok ? 0 : -1;
}

static inline int xdp_fixture_ephemeral(void)
{
	return xdp_fixture_sysctl("/proc/sys/net/ipv4/ip_local_port_range",
				  XDP_FIXTURE_EPHEMERAL);
}

/* lo up, and the ephemeral range above: call right after unshare(). */
static inline void xdp_fixture_lo_up(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (xdp_fixture_ephemeral())
		fprintf(stderr, "warning: cannot set ip_local_port_range\n");
	if (fd < 0)
		return;
	strcpy(ifr.ifr_name, "lo");
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
}

static inline int xdp_fixture_libbpf_quiet(enum libbpf_print_level l,
					   const char *f, va_list a)
{
	if (l == LIBBPF_WARN)
		return vfprintf(stderr, f, a);
	return 0;
}

/* The responses the XDP tests serve: "Hello World!" as text/plain,
 * dated now. 0, or -1. */
static inline int xdp_fixture_hello(struct http_responses *r)
{
	char err[256];

	return http_responses_build(r, "Hello World!", 12, "text/plain",
				    time(NULL), err, sizeof(err))
		       ? -1
		       : 0;
}

/* The one FAIL line of test program prog whose setup could not load
 * blitz_xdp or fill its maps; its main returns what this returns. */
static inline int xdp_fixture_setup_failed(const char *prog)
{
	printf("FAIL %s_setup: cannot load blitz_xdp or fill its maps: %s\n",
	       prog, strerror(errno));
	return 1;
}

#endif
