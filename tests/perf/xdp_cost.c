// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_cost.c - `make cost`: what each component of the xdp engine costs.
 *
 * Loads the real program (build/blitz_xdp.bpf.o) and its ablation builds
 * (build/cost/blitz_xdp.<name>.bpf.o: the same source with one -D switch
 * that skips or replaces one component, see the Makefile's COST_D_*) side
 * by side, and times each frame on each with BPF_PROG_TEST_RUN: a frame
 * for another port (passed untouched: the floor), a SYN, a cached GET and
 * an uncached GET. Every (build, frame) cell is measured once per round,
 * the cells in a new random order each round; the table shows medians
 * over the rounds, ratios to the floor of the same run, and per component
 * the ns the build without it saves. Beside them, the verifier's
 * instruction count and the xlated and JIT sizes of each build.
 *
 * Runs in a private network namespace with the service address on lo and
 * a kernel listener on the service port (as in production: the socket
 * lookup then finds the listener). The GETs belong to a connection whose
 * handshake each build made itself (its SYN-ACK's ISN and TSval), so a
 * build with another MAC still validates them.
 *
 * Each build is loaded --loads times (3): where the kernel puts a program's
 * code and maps moves its cost by tens of ns, so one load is not enough.
 *
 * Usage: xdp_cost [--rounds N] [--loads N] [--runs N] [--check]
 *                 FULL.bpf.o [VARIANT.bpf.o...]
 * --check prints a PASS/FAIL line per build (every frame got its expected
 * verdict, every cell measured): the CI smoke test of the ablation builds.
 * Must never: touch a real interface or an address outside its netns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "../bpf/blitz_shared.h"
#include "../bpf/blitz_ksock.h"
#include "cookie_ring.h"
#include "xdp_fixture.h"
#include "http.h"
#include "frame.h"

#define PORT 8080
#define FRAME_MAX 4096
#define MAX_BUILDS 16
#define MAX_ROUNDS 64
#define MAX_RUNS 100000
#define MAX_INST 8

enum frame_kind { F_HOST, F_SYN, F_GET, F_GET_UNCACHED, F_GET_SIZED, F_N };

static const char *const frame_names[F_N] = {"host (floor)", "SYN",
					     "GET cached", "GET uncached",
					     "GET, frame at reply size"};
/* what each frame must get from every build */
static const uint32_t frame_verdict[F_N] = {XDP_PASS, XDP_TX, XDP_TX, XDP_TX,
					    XDP_TX};

static const uint8_t srv_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t cli_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const char get_wrk[] = "GET / HTTP/1.1\r\nHost: 10.0.0.1:8080\r\n\r\n";
static const char get_var[] =
	"GET /00000 HTTP/1.1\r\nHost: 10.0.0.1:8080\r\n\r\n";
#define GET_VAR_AT 5 /* where the 5 varying digits start */

/* One load of a build: where the kernel put its code and maps moves its
 * cost by tens of ns, so each build is loaded several times. */
struct inst {
	struct bpf_object *obj;
	int fd;
	uint8_t frame[F_N][FRAME_MAX];
	uint32_t len[F_N];
	uint32_t verdict[F_N];
	int bad[F_N]; /* a run whose verdict was not frame_verdict */
};

struct build {
	const char *name, *path;
	struct bpf_prog_info info;
	struct inst in[MAX_INST];
	double ns[F_N][MAX_ROUNDS]; /* per round, the mean over loads */
};

static struct build builds[MAX_BUILDS];
static int nbuilds, ninst = 3;
static struct http_responses resp;
static struct blitz_config cfg;
static unsigned vary;

/* ------------------------------------------------------------------ */
/* Frames: Ethernet, IPv4, TCP, from tests/frame.h                     */
/* ------------------------------------------------------------------ */

static uint32_t frame(uint8_t *b, uint16_t dport, uint32_t seq, uint32_t ack,
		      uint8_t flags, const uint8_t *opts, uint32_t optlen,
		      const void *payload, uint32_t plen)
{
	struct tf_seg s = {
		.src_mac = cli_mac,
		.dst_mac = srv_mac,
		.sport = 40000,
		.dport = dport,
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.win = 64240,
		.frag_off = WIRE_IP_DF,
		.opts = opts,
		.optlen = optlen,
		.payload = payload,
		.plen = plen,
	};

	tf_addrs(&s, "10.0.0.2", "10.0.0.1");
	return (uint32_t)tf_build(b, &s);
}

static int test_run(int fd, void *in, uint32_t len, void *out, uint32_t *outlen,
		    uint32_t *verdict, uint32_t *ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = FRAME_MAX, .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	if (outlen)
		*outlen = o.data_size_out;
	*verdict = o.retval;
	*ns = o.duration;
	return 0;
}

/* The build's frames: its SYN-ACK gives the ISN and TSval the GETs of
 * that connection acknowledge and echo. */
static int make_frames(struct inst *b, const char *name)
{
	uint8_t syn_opts[20], ts_opts[12], out[FRAME_MAX];
	uint32_t outlen, verdict, ns, n;
	const uint32_t cseq = 0x11223344;
	struct tf_out r;

	/* Linux's SYN options: MSS 1460, SACK-permitted, TS, NOP, WS 7 */
	n = wire_opt_mss(syn_opts, 1460);
	n += wire_opt_sack_perm_ts(syn_opts + n, 1, 0);
	n += wire_opt_wscale(syn_opts + n, 7);
	wire_opt_timestamps(ts_opts, 2, 0);

	b->len[F_HOST] = frame(b->frame[F_HOST], 22, cseq + 1, 1,
			       TCPHDR_PSH | TCPHDR_ACK, ts_opts, 12, get_wrk,
			       sizeof(get_wrk) - 1);
	b->len[F_SYN] = frame(b->frame[F_SYN], PORT, cseq, 0, TCPHDR_SYN,
			      syn_opts, n, NULL, 0);
	if (test_run(b->fd, b->frame[F_SYN], b->len[F_SYN], out, &outlen,
		     &verdict, &ns) ||
	    verdict != XDP_TX || outlen < 54) {
		fprintf(stderr, "xdp_cost: %s: the SYN got no SYN-ACK\n", name);
		return -1;
	}
	if (!tf_parse(out, outlen, &r) || !r.o.has_ts || !r.o.tsval) {
		fprintf(stderr, "xdp_cost: %s: no TSval in the SYN-ACK\n",
			name);
		return -1;
	}
	wire_opt_timestamps(ts_opts, 2, r.o.tsval);
	b->len[F_GET] = frame(b->frame[F_GET], PORT, cseq + 1, r.seq + 1,
			      TCPHDR_PSH | TCPHDR_ACK, ts_opts, 12, get_wrk,
			      sizeof(get_wrk) - 1);
	b->len[F_GET_UNCACHED] =
		frame(b->frame[F_GET_UNCACHED], PORT, cseq + 1, r.seq + 1,
		      TCPHDR_PSH | TCPHDR_ACK, ts_opts, 12, get_var,
		      sizeof(get_var) - 1);
	/* The same GET, padded to the reply's length: no resize. */
	if (test_run(b->fd, b->frame[F_GET], b->len[F_GET], out, &outlen,
		     &verdict, &ns) ||
	    verdict != XDP_TX || outlen > FRAME_MAX) {
		fprintf(stderr, "xdp_cost: %s: the GET got no reply\n", name);
		return -1;
	}
	memcpy(b->frame[F_GET_SIZED], b->frame[F_GET], b->len[F_GET]);
	memset(b->frame[F_GET_SIZED] + b->len[F_GET], 0,
	       outlen > b->len[F_GET] ? outlen - b->len[F_GET] : 0);
	b->len[F_GET_SIZED] = outlen > b->len[F_GET] ? outlen : b->len[F_GET];
	return 0;
}

/* ------------------------------------------------------------------ */
/* Builds                                                              */
/* ------------------------------------------------------------------ */

static void config_init(void)
{
	char err[256];

	if (http_responses_build(&resp, "Hello World!", 12, "text/plain",
				 time(NULL), err, sizeof(err))) {
		fprintf(stderr, "xdp_cost: responses: %s\n", err);
		exit(1);
	}
	xdp_fixture_cfg(&cfg, &resp, PORT, srv_mac, 0x0123456789abcdefULL,
			0xfedcba9876543210ULL, 0);
}

/* The per-CPU payload buffer (scratch.buf, at its start) holds the cached
 * GET on every CPU, as after one: the build without the payload load
 * ("load") then parses those bytes. The others overwrite them. */
static int scratch_prefill(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "scratch");
	int ncpus = libbpf_num_possible_cpus(), i, err;
	size_t vsz, stride;
	uint32_t k = 0;
	uint8_t *v;

	if (!m || ncpus < 1)
		return -1;
	vsz = bpf_map__value_size(m);
	stride = (vsz + 7) & ~(size_t)7;
	v = calloc((size_t)ncpus, stride);
	if (!v || vsz < sizeof(get_wrk)) {
		free(v);
		return -1;
	}
	for (i = 0; i < ncpus; i++)
		memcpy(v + (size_t)i * stride, get_wrk, sizeof(get_wrk) - 1);
	err = bpf_map__update_elem(m, &k, sizeof(k), v, stride * (size_t)ncpus,
				   0);
	free(v);
	return err;
}

static int build_load(struct build *bd, struct inst *b)
{
	struct bpf_program *prog;
	struct bpf_map *m;
	uint32_t k, il = sizeof(bd->info);

	b->obj = bpf_object__open_file(bd->path, NULL);
	if (!b->obj || bpf_object__load(b->obj)) {
		fprintf(stderr, "xdp_cost: %s: cannot load: %s\n", bd->path,
			strerror(errno));
		return -1;
	}
	prog = bpf_object__find_program_by_name(b->obj, "blitz_xdp");
	if (!prog)
		return -1;
	b->fd = bpf_program__fd(prog);
	m = bpf_object__find_map_by_name(b->obj, "config");
	k = 0;
	if (!m || bpf_map__update_elem(m, &k, sizeof(k), &cfg, sizeof(cfg), 0))
		return -1;
	m = bpf_object__find_map_by_name(b->obj, "responses");
	for (k = 0; m && k < BLITZ_RESP_KINDS; k++) {
		static struct blitz_resp r;

		memcpy(r.bytes, resp.bytes[k], BLITZ_RESP_MAX);
		if (bpf_map__update_elem(m, &k, sizeof(k), &r, sizeof(r), 0))
			return -1;
	}
	if (!m || scratch_prefill(b->obj))
		return -1;
	/* The kernel-socket filter as blitz load leaves it: seeded and ready
	 * for the port, and no kernel socket on the measured tuples (only
	 * the listener, which the filter does not mark for them). Builds
	 * from before the filter have no such map. */
	m = bpf_object__find_map_by_name(b->obj, "ksock");
	if (m) {
		uint64_t w = BLITZ_KSOCK_READY | PORT;

		k = 0;
		if (bpf_map__update_elem(m, &k, sizeof(k), &w, sizeof(w), 0))
			return -1;
	}
	/* from zero each time: counts left by the previous load would ask
	 * the kernel to fill arrays at NULL (EFAULT) */
	memset(&bd->info, 0, sizeof(bd->info));
	if (bpf_obj_get_info_by_fd(b->fd, &bd->info, &il))
		memset(&bd->info, 0, sizeof(bd->info));
	return make_frames(b, bd->name);
}

/* "build/cost/blitz_xdp.lookup.bpf.o" -> "lookup"; the first: "full". */
static const char *build_name(const char *path, int first)
{
	const char *base = strrchr(path, '/'), *dot, *end;
	static char names[MAX_BUILDS][32];
	static int n;
	char *out = names[n++ % MAX_BUILDS];

	if (first)
		return "full";
	base = base ? base + 1 : path;
	dot = strchr(base, '.');
	end = strstr(base, ".bpf.o");
	if (dot && end && end > dot)
		snprintf(out, 32, "%.*s", (int)(end - dot - 1), dot + 1);
	else
		snprintf(out, 32, "%s", base);
	return out;
}

/* ------------------------------------------------------------------ */
/* Measuring                                                           */
/* ------------------------------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The typical duration of runs test runs of one frame on one build, each
 * on a fresh copy of the frame (repeat would run on the previous reply):
 * the mean of the middle half, not of all: an interrupt or a cache that
 * another job on this CPU left cold moves a few runs by microseconds. */
static double cell(struct inst *b, int f, int runs)
{
	static uint32_t d[MAX_RUNS];
	uint8_t in[FRAME_MAX], out[FRAME_MAX];
	uint32_t verdict, ns;
	uint64_t total = 0;
	int i;

	memcpy(in, b->frame[f], b->len[f]);
	for (i = 0; i < runs; i++) {
		if (f == F_GET_UNCACHED) { /* a new target every time */
			char d[8];
			uint32_t off = b->len[f] - (sizeof(get_var) - 1);

			snprintf(d, sizeof(d), "%05u", vary++ % 100000);
			memcpy(in + off + GET_VAR_AT, d, 5);
			tf_tcp_csum_again(in, b->len[f]); /* it is checked */
		}
		if (test_run(b->fd, in, b->len[f], out, NULL, &verdict, &ns))
			return -1;
		d[i] = ns;
		b->verdict[f] = verdict;
		if (verdict != frame_verdict[f])
			b->bad[f]++;
	}
	/* the mean of the middle half: the clock's steps average out */
	qsort(d, (size_t)runs, sizeof(d[0]), cmp_u32);
	if (runs < 4)
		return d[runs / 2];
	for (i = runs / 4; i < runs - runs / 4; i++)
		total += d[i];
	return (double)total / (runs - 2 * (runs / 4));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	return n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void range(const double *v, int n, double *lo, double *hi)
{
	int i;

	*lo = *hi = v[0];
	for (i = 1; i < n; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

/* Frame f's ns above the floor on build b in round r. */
static double above(const struct build *b, int f, int r)
{
	return b->ns[f][r] - b->ns[F_HOST][r];
}

/* What each ablation build leaves out (the Makefile's COST_D_* names). */
static const char *component(const char *name)
{
	static const struct {
		const char *name, *what;
	} t[] = {
		{"lookup",
		 "kernel_owns(): the filter, and the lookup it lets by"},
		{"nofilter", "the filter off, every segment looked up (< 0: "
			     "what the filter saves)"},
		{"parse", "parse cache lookup and compare (DFA on a miss)"},
		{"load", "bpf_xdp_load_bytes of the payload (uncached: n/a)"},
		{"resp", "store of the response into the frame"},
		{"render", "the per-CPU copy with its Date (template instead)"},
		{"mac",
		 "SipHash-2-4 (the MAC; no rounds, keys and words xored)"},
		{"csum", "IP and TCP checksums"},
		{"all", "all of the above at once"},
		{"same", "nothing: the real build loaded again (noise)"},
		{"base", "COST_BASE, another build: < 0 when it costs more"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].name, name))
			return t[i].what;
	return name;
}

/* A kernel listener on the service port, as in production. */
static int listen_service(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	inet_pton(AF_INET, "10.0.0.1", &a.sin_addr);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (void *)&a, sizeof(a)) || listen(ls, 8))
		return -1;
	return ls;
}

static void usage(void)
{
	fprintf(stderr, "usage: xdp_cost [--rounds N] [--loads N] [--runs N] "
			"[--check] FULL.bpf.o [VARIANT.bpf.o...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int rounds = 11, runs = 1000, check = 0, i, f, r, ncells, ls;
	static int order[MAX_BUILDS * MAX_INST * F_N];
	int failed = 0, first, n;
	static struct build refb;
	struct build *full = &builds[0], *ref = &refb;
	double floor_ns;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--loads") && i + 1 < argc)
			ninst = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--check"))
			check = 1;
		else
			usage();
	}
	if (i >= argc || rounds < 1 || rounds > MAX_ROUNDS || runs < 1 ||
	    runs > MAX_RUNS || ninst < 1 || ninst > MAX_INST)
		usage();
	if (geteuid() != 0) {
		printf("SKIP xdp_cost: needs root (BPF_PROG_TEST_RUN)\n");
		return 0;
	}
	libbpf_set_print(xdp_fixture_libbpf_quiet);
	/* One CPU for every cell: the two CPUs of a shared VM need not run
	 * at the same speed. */
	{
		cpu_set_t cs;
		int cpu = sched_getcpu();

		CPU_ZERO(&cs);
		CPU_SET(cpu < 0 ? 0 : cpu, &cs);
		sched_setaffinity(0, sizeof(cs), &cs);
	}
	if (unshare(CLONE_NEWNET) ||
	    (xdp_fixture_lo_up(), system("ip addr add 10.0.0.1/32 dev lo && "
					 "ip addr add 10.0.0.2/32 dev lo"))) {
		printf("%s xdp_cost: no private network namespace with test "
		       "addresses\n",
		       check ? "FAIL" : "#");
		return 1;
	}
	ls = listen_service();
	if (ls < 0) {
		printf("%s xdp_cost: listen on 10.0.0.1:%d: %s\n",
		       check ? "FAIL" : "#", PORT, strerror(errno));
		return 1;
	}
	config_init();
	/* The real build twice: the second copy's row in the table is the
	 * noise of an ablation (the same code, loaded at another place). */
	for (first = i; i <= argc && nbuilds < MAX_BUILDS; i++) {
		struct build *b = &builds[nbuilds];
		int again = i == first + 1 && nbuilds == 1;

		if (i == argc && !again)
			break;
		b->path = again ? argv[first] : argv[i];
		b->name = again ? "same" : build_name(argv[i], i == first);
		if (again)
			i--;
		for (n = 0; n < ninst; n++) {
			if (build_load(b, &b->in[n])) {
				printf("%s xdp_cost_%s: %s does not load or "
				       "answer\n",
				       check ? "FAIL" : "#", b->name, b->path);
				return 1;
			}
		}
		nbuilds++;
	}

	/* Every cell once per round, in a new order each round. */
	srand((unsigned)time(NULL));
	ncells = nbuilds * ninst * F_N;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < ncells; i++)
			order[i] = i;
		for (i = ncells - 1; i > 0; i--) {
			int j = rand() % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < ncells; i++) {
			struct build *b = &builds[order[i] / (ninst * F_N)];

			n = order[i] / F_N % ninst;
			f = order[i] % F_N;
			b->ns[f][r] += cell(&b->in[n], f, runs) / ninst;
		}
	}

	/* the real build: both of its loads ("full" and "same", 2 x --loads
	 * program instances): where the kernel put one set moves its cost by
	 * tens of ns (the first loaded has read 40-65 ns above its copy in
	 * runs with a dozen builds), so the headline is their mean */
	for (f = 0; f < F_N; f++)
		for (r = 0; r < rounds; r++)
			ref->ns[f][r] = nbuilds > 1 ? (full->ns[f][r] +
						       builds[1].ns[f][r]) /
							      2
						    : full->ns[f][r];
	floor_ns = median(ref->ns[F_HOST], rounds);
	printf("# cost: blitz_xdp under BPF_PROG_TEST_RUN on one CPU, %d "
	       "shuffled rounds x %d loads x %d runs per (build, frame): "
	       "medians over rounds of the mean over loads of the mean of "
	       "the middle half of runs; a kernel listener on the port\n",
	       rounds, ninst, runs);
	printf("# %-26s %8s %8s %17s\n", "frame (full and same)", "ns",
	       "x floor", "rounds min..max");
	for (f = 0; f < F_N; f++) {
		double m = median(ref->ns[f], rounds), lo, hi;

		range(ref->ns[f], rounds, &lo, &hi);
		printf("# %-26s %8.1f %7.2fx %8.1f..%-8.1f\n", frame_names[f],
		       m, m / floor_ns, lo, hi);
	}
	printf("# resize (bpf_xdp_adjust_head): %.1f ns (GET cached minus the "
	       "same GET in a frame already of the reply's length)\n",
	       median(ref->ns[F_GET], rounds) -
		       median(ref->ns[F_GET_SIZED], rounds));
	if (nbuilds > 1) {
		printf("# ns saved by the build without it (median of "
		       "round pairs)     %8s %11s %13s\n",
		       "SYN", "GET cached", "GET uncached");
		for (i = 1; i < nbuilds; i++) {
			struct build *b = &builds[i];
			double d[3];
			int fs[3] = {F_SYN, F_GET, F_GET_UNCACHED}, j;

			/* paired within each round (the machine's speed
			 * drifts between rounds), then the median; against
			 * both loads of the real build ("same" against the
			 * first: the noise) */
			for (j = 0; j < 3; j++) {
				double pd[MAX_ROUNDS];

				for (r = 0; r < rounds; r++)
					pd[r] = above(i == 1 ? full : ref,
						      fs[j], r) -
						above(b, fs[j], r);
				d[j] = median(pd, rounds);
			}
			printf("# %-8s %-55s %8.1f %11.1f %13.1f\n", b->name,
			       component(b->name), d[0], d[1], d[2]);
		}
	}
	printf("# %-8s %8s %8s %11s %13s\n", "build", "host", "SYN",
	       "GET cached", "GET uncached");
	for (i = 0; i < nbuilds; i++)
		printf("# %-8s %8.1f %8.1f %11.1f %13.1f\n", builds[i].name,
		       median(builds[i].ns[F_HOST], rounds),
		       median(builds[i].ns[F_SYN], rounds),
		       median(builds[i].ns[F_GET], rounds),
		       median(builds[i].ns[F_GET_UNCACHED], rounds));
	printf("# %-8s %15s %13s %11s\n", "build", "verified insns",
	       "xlated bytes", "jit bytes");
	for (i = 0; i < nbuilds; i++)
		printf("# %-8s %15u %13u %11u\n", builds[i].name,
		       builds[i].info.verified_insns,
		       builds[i].info.xlated_prog_len,
		       builds[i].info.jited_prog_len);

	for (i = 0; i < nbuilds; i++) {
		struct build *b = &builds[i];
		int ok = 1;

		for (n = 0; n < ninst; n++) {
			struct inst *in = &b->in[n];

			for (f = 0; f < F_N; f++) {
				/* without the payload load, the uncached
				 * GET's bytes are never read */
				if (f == F_GET_UNCACHED &&
				    !strcmp(b->name, "load"))
					continue;
				if (!in->bad[f] && median(b->ns[f], rounds) > 0)
					continue;
				ok = 0;
				printf("# %s: %s got verdict %u in %d runs "
				       "(want %u)\n",
				       b->name, frame_names[f], in->verdict[f],
				       in->bad[f], frame_verdict[f]);
			}
			bpf_object__close(in->obj);
		}
		if (check)
			printf(ok ? "PASS xdp_cost_%s\n"
				  : "FAIL xdp_cost_%s: a frame got the wrong "
				    "verdict or was not measured\n",
			       b->name);
		failed += !ok;
	}
	close(ls);
	return failed ? 1 : 0;
}
