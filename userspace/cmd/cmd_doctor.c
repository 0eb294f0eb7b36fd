// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_doctor.c - `blitz doctor [ifname] [--json] [--probe]`: is this
 * machine, and this interface, ready for blitz? One aligned table, one
 * row per check, each ok / warn / fail with what to do.
 *
 * The system rows: the kernel and the features blitz uses (XDP links,
 * TCX, the hand-off kfunc, bpf_ktime_get_tai_ns: read from the kernel's
 * BTF), the sysctls of this network namespace the hand-off needs, bpffs,
 * the locked-memory limit, and for the dpdk engine hugepages, vfio/IOMMU
 * and the blitz-dpdk binary. The interface rows: the driver and what it
 * offers (the netdev family's xdp-features, nic_info.h), queues against
 * CPUs, MTU against the program and the body, LRO, what is attached and
 * pinned, and the engine `serve --engine auto` would pick.
 *
 * Owns: the checks, their verdicts and hints, the table and the JSON.
 * Must never change anything it does not undo: it reads, except with
 * --probe, which attaches a pass-all XDP program natively and detaches it,
 * and binds an AF_XDP socket in zero-copy mode and closes it (on a real
 * NIC either can reset its rings, hence only when asked).
 * Exit status: 0 when every row is ok or warn, 1 when any is fail.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "http.h"
#include "loader.h"
#include "log.h"
#include "nic_info.h"
#include "tc_handoff.h"
#include "tcp_core.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define CAP_BPF_BIT 39 /* newer than some headers */
/* The afxdp engine's UMEM per queue (afxdp_engine.c: 4096 frames of 2 KiB). */
#define AFXDP_UMEM_BYTES (4096ull * 2048)

enum verdict { V_OK, V_WARN, V_FAIL };
static const char *const verdict_name[] = {"ok", "warn", "fail"};

#define MAX_ROWS 40

struct row {
	char check[20];
	enum verdict v;
	char value[112];
	char hint[240];
};

struct doctor {
	struct row rows[MAX_ROWS];
	int n;
	const char *ifname;
	int ifindex;
	bool probe;
	struct btf *btf;
	uint64_t caps;
	/* What the rows learnt, for the engine `auto` would pick. */
	bool privileged, bpffs, body_fits, mtu_native, native, have_features;
	unsigned int mtu;
	uint64_t features;
	struct blitz_attached att;
	struct blitz_service svc;
	struct http_responses resp; /* of svc: the body row */
};

enum { OPT_JSON = OPT_CMD_BASE, OPT_PROBE };

static const struct opt_spec doctor_opts[] = {
	{OPT_JSON, "json", NULL, "one JSON object instead of the table", 0, 0},
	{OPT_PROBE, "probe", NULL,
	 "also attach a pass-all XDP program natively and bind an AF_XDP "
	 "socket in zero-copy mode, then undo both (may reset a NIC's rings)",
	 0, 0},
	{0},
};

const struct cmd_spec cmd_doctor_spec = {
	.name = "doctor",
	.prog = "blitz doctor",
	.operands = "[ifname]",
	.summary = "check this machine and an interface for blitz",
	.about = "Check that this machine (and <ifname>) can run blitz: one "
		 "row per check, ok / warn / fail with what to do. Reads only: "
		 "nothing is attached unless --probe. The service options say "
		 "which body to check.",
	.notes = "Exit status: 0 when every row is ok or warn, 1 when any "
		 "fails.",
	.groups = {doctor_opts, options_service, options_common},
};

static void __attribute__((format(printf, 4, 5)))
add(struct doctor *d, const char *check, enum verdict v, const char *fmt, ...)
{
	struct row *r;
	va_list ap;

	if (d->n >= MAX_ROWS)
		return;
	r = &d->rows[d->n++];
	snprintf(r->check, sizeof(r->check), "%s", check);
	r->v = v;
	va_start(ap, fmt);
	vsnprintf(r->value, sizeof(r->value), fmt, ap);
	va_end(ap);
	r->hint[0] = '\0';
}

/* The hint of the row just added. */
static void __attribute__((format(printf, 2, 3)))
hint(struct doctor *d, const char *fmt, ...)
{
	va_list ap;

	if (!d->n)
		return;
	va_start(ap, fmt);
	vsnprintf(d->rows[d->n - 1].hint, sizeof(d->rows[0].hint), fmt, ap);
	va_end(ap);
}

/* ---- the kernel ---- */

static bool btf_has(const struct btf *btf, const char *name, int kind)
{
	return btf && btf__find_by_name_kind(btf, name, kind) > 0;
}

/* Does BTF enum @type have the value @name? */
static bool btf_enum_has(const struct btf *btf, const char *type,
			 const char *name)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name))
			return true;
	return false;
}

/* A feature's row: ok when present, else what it needs and what it means. */
static void feature(struct doctor *d, const char *check, bool have,
		    enum verdict missing, const char *ok_value,
		    const char *what, int maj, int min, const char *means)
{
	if (have && !kernel_older_than(maj, min)) {
		add(d, check, V_OK, "%s", ok_value);
		return;
	}
	add(d, check, missing, "no %s", what);
	hint(d, "%s needs Linux %d.%d or later; this kernel is %s: %s", what,
	     maj, min, kernel_release(NULL), means);
}

static void check_kernel(struct doctor *d)
{
	bool pretend;
	const char *rel = kernel_release(&pretend);

	if (kernel_older_than(KERNEL_HANDOFF)) {
		add(d, "kernel", V_WARN,
		    "%s (pretended by a test: "
		    "BLITZ_TEST_KERNEL_RELEASE)",
		    rel);
		hint(d, "Linux 6.9 or later has every feature blitz uses "
			"(the hand-off kfunc is 6.9): see the rows below");
	} else if (pretend) {
		add(d, "kernel", V_OK,
		    "%s (pretended by a test: "
		    "BLITZ_TEST_KERNEL_RELEASE)",
		    rel);
	} else if (tc_handoff_supported()) {
		add(d, "kernel", V_OK, "%s", rel);
	} else {
		add(d, "kernel", V_WARN, "%s", rel);
		hint(d, "Linux 6.9 or later has every feature blitz uses "
			"(the hand-off kfunc is 6.9): see the rows below");
	}
	if (!d->btf) {
		add(d, "kernel-btf", V_FAIL, "no /sys/kernel/btf/vmlinux");
		hint(d,
		     "blitz needs a kernel built with CONFIG_DEBUG_INFO_BTF");
	}
	feature(d, "xdp-link", btf_has(d->btf, "bpf_xdp_link", BTF_KIND_STRUCT),
		V_FAIL, "yes", "bpf_xdp_link", KERNEL_XDP_LINK,
		"serve cannot own its XDP program as a bpf_link");
	feature(d, "tcx",
		btf_enum_has(d->btf, "bpf_attach_type", "BPF_TCX_INGRESS"),
		V_WARN, "yes", "TCX ingress", KERNEL_TCX,
		"no TC hand-off: `blitz load` refuses; serve (auto) runs "
		"the epoll engine alone, --engine afxdp works");
	feature(d, "handoff-kfunc", tc_handoff_supported(), V_WARN,
		"bpf_sk_assign_tcp_reqsk", "bpf_sk_assign_tcp_reqsk",
		KERNEL_HANDOFF,
		"`blitz load` refuses (what XDP does not answer could reach "
		"no kernel socket); serve (auto) runs the epoll engine alone, "
		"--engine afxdp works");
	feature(d, "ktime-tai",
		btf_enum_has(d->btf, "bpf_func_id",
			     "BPF_FUNC_ktime_get_tai_ns"),
		V_FAIL, "bpf_ktime_get_tai_ns", "bpf_ktime_get_tai_ns",
		KERNEL_KTIME_TAI, "the xdp engine's Date header");
}

static int read_sysctl(const char *path, long *v)
{
	char buf[32];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) && sscanf(buf, "%ld", v) == 1;
	fclose(f);
	return ok ? 0 : -EIO;
}

static void check_sysctls(struct doctor *d)
{
	long v;

	if (read_sysctl("/proc/sys/net/ipv4/tcp_syncookies", &v)) {
		add(d, "tcp_syncookies", V_WARN, "unreadable");
	} else if (v) {
		add(d, "tcp_syncookies", V_OK, "%ld", v);
	} else {
		add(d, "tcp_syncookies", V_FAIL, "0 (this network namespace)");
		hint(d, "the hand-off needs it: sysctl -w "
			"net.ipv4.tcp_syncookies=1");
	}
	if (read_sysctl("/proc/sys/net/ipv4/tcp_timestamps", &v)) {
		add(d, "tcp_timestamps", V_WARN, "unreadable");
	} else if (v) {
		add(d, "tcp_timestamps", V_OK, "%ld", v);
	} else {
		add(d, "tcp_timestamps", V_FAIL, "0 (this network namespace)");
		hint(d, "the hand-off needs it: sysctl -w "
			"net.ipv4.tcp_timestamps=1");
	}
}

/* ---- privileges, bpffs, memory ---- */

static uint64_t effective_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return (uint64_t)data[0].effective |
	       ((uint64_t)data[1].effective << 32);
}

#define HAS(caps, c) (!!((caps) & (1ull << (c))))

static void check_privileges(struct doctor *d)
{
	bool bpf = HAS(d->caps, CAP_BPF_BIT), sys = HAS(d->caps, CAP_SYS_ADMIN),
	     net = HAS(d->caps, CAP_NET_ADMIN);

	d->privileged = net && (bpf || sys);
	if (d->privileged) {
		add(d, "privileges", V_OK, "%s%s%s", bpf ? "CAP_BPF " : "",
		    sys ? "CAP_SYS_ADMIN " : "", "CAP_NET_ADMIN");
	} else {
		add(d, "privileges", V_FAIL, "missing %s%s",
		    net ? "" : "CAP_NET_ADMIN ",
		    bpf || sys ? "" : "CAP_BPF (or CAP_SYS_ADMIN)");
		hint(d, "run blitz as root (or give it those capabilities)");
	}
}

static void check_bpffs(struct doctor *d)
{
	struct statfs st;

	d->bpffs = !statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC;
	if (d->bpffs) {
		add(d, "bpffs", V_OK, "/sys/fs/bpf");
	} else {
		add(d, "bpffs", V_FAIL, "not mounted at /sys/fs/bpf");
		hint(d, "mount -t bpf bpf /sys/fs/bpf (load pins its maps "
			"there)");
	}
}

static void fmt_bytes(unsigned long long b, char *buf, size_t len)
{
	if (b >= 1ull << 30 && !(b & ((1ull << 30) - 1)))
		snprintf(buf, len, "%llu GiB", b >> 30);
	else if (b >= 1ull << 20)
		snprintf(buf, len, "%llu MiB", b >> 20);
	else
		snprintf(buf, len, "%llu KiB", b >> 10);
}

static void check_memlock(struct doctor *d, unsigned int queues)
{
	unsigned long long need = AFXDP_UMEM_BYTES * (queues ? queues : 1);
	struct rlimit rl = {};
	char have[24], want[24];

	getrlimit(RLIMIT_MEMLOCK, &rl);
	fmt_bytes(need, want, sizeof(want));
	if (rl.rlim_cur == RLIM_INFINITY) {
		add(d, "memlock", V_OK, "unlimited");
		return;
	}
	fmt_bytes(rl.rlim_cur, have, sizeof(have));
	if (HAS(d->caps, CAP_IPC_LOCK)) {
		add(d, "memlock", V_OK, "%s, CAP_IPC_LOCK: not a limit", have);
	} else if (rl.rlim_cur >= need) {
		add(d, "memlock", V_OK, "%s (afxdp needs %s)", have, want);
	} else {
		add(d, "memlock", V_WARN, "%s, afxdp needs %s", have, want);
		hint(d, "the afxdp engine's UMEM (8 MiB per queue) is locked: "
			"ulimit -l unlimited, LimitMEMLOCK=infinity or "
			"CAP_IPC_LOCK");
	}
}

/* The afxdp and dpdk engines' connection tables: what a connection costs
 * and what the default and a million take, against the memory free. */
static void check_conn_memory(struct doctor *d, unsigned int queues)
{
	unsigned long long avail = 0, kb;
	unsigned long long def = tcp_core_table_bytes(TCP_CORE_DEFAULT_TABLE) *
				 (queues ? queues : 1);
	unsigned long long mil = tcp_core_table_bytes(1000000);
	char line[128], a[24], b[24], c[24];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			avail = kb << 10;
	if (f)
		fclose(f);
	fmt_bytes(def, a, sizeof(a));
	fmt_bytes(mil, b, sizeof(b));
	fmt_bytes(avail, c, sizeof(c));
	add(d, "conn-memory", avail && def > avail ? V_WARN : V_OK,
	    "%zu bytes a connection (afxdp, dpdk); %u a queue: %s, "
	    "1,000,000: %s; %s available",
	    tcp_core_table_bytes(1000000) / 1000000, TCP_CORE_DEFAULT_TABLE, a,
	    b, c);
	if (avail && def > avail)
		hint(d, "serve --max-conns N sizes the table (split over the "
			"queues)");
}

static void check_hugepages(struct doctor *d)
{
	unsigned long total = 0, free_ = 0, size_kb = 0, v;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "HugePages_Total: %lu", &v) == 1)
			total = v;
		else if (sscanf(line, "HugePages_Free: %lu", &v) == 1)
			free_ = v;
		else if (sscanf(line, "Hugepagesize: %lu", &v) == 1)
			size_kb = v;
	}
	if (f)
		fclose(f);
	if (total) {
		add(d, "hugepages", V_OK, "%lu of %lu kB, %lu free", total,
		    size_kb, free_);
	} else {
		add(d, "hugepages", V_WARN, "none reserved (%lu kB pages)",
		    size_kb);
		hint(d, "dpdk engine only: it runs with --no-huge (slower); "
			"reserve some with scripts/hugepages.sh or sysctl "
			"vm.nr_hugepages=512");
	}
}

static int count_dir(const char *path)
{
	struct dirent *de;
	DIR *dir = opendir(path);
	int n = 0;

	while (dir && (de = readdir(dir)))
		n += de->d_name[0] != '.';
	if (dir)
		closedir(dir);
	return dir ? n : -1;
}

static void check_vfio(struct doctor *d)
{
	int groups = count_dir("/sys/kernel/iommu_groups");
	bool vfio = !access("/sys/bus/pci/drivers/vfio-pci", F_OK);

	if (groups > 0 && vfio) {
		add(d, "vfio-iommu", V_OK, "%d IOMMU groups, vfio-pci loaded",
		    groups);
		return;
	}
	add(d, "vfio-iommu", V_WARN, "%d IOMMU groups, vfio-pci %s",
	    groups < 0 ? 0 : groups, vfio ? "loaded" : "not loaded");
	hint(d, "dpdk on a PCI NIC only: boot with intel_iommu=on (or "
		"amd_iommu=on) iommu=pt, modprobe vfio-pci; on a kernel "
		"interface serve uses the af_packet vdev");
}

static void check_dpdk_binary(struct doctor *d)
{
	char self[PATH_MAX], path[PATH_MAX + 16], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		n = 0;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		slash[1] = '\0';
	snprintf(path, sizeof(path), "%sblitz-dpdk", slash ? self : "./");
	if (!access(path, X_OK)) {
		add(d, "dpdk-engine", V_OK, "%s", path);
	} else {
		add(d, "dpdk-engine", V_WARN, "no %s", path);
		hint(d, "serve --engine dpdk needs it: install libdpdk-dev and "
			"rebuild (make)");
	}
}

/* ---- the interface ---- */

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static void check_features(struct doctor *d)
{
	uint32_t zc_segs = 0;
	uint64_t f = 0;
	int err = nic_xdp_features(d->ifindex, &f, &zc_segs);

	d->have_features = !err;
	d->features = f;
	if (err) {
		static const char *const rows[] = {
			"native-xdp", "xdp-tx-redirect", "multi-buffer",
			"afxdp-zerocopy"};
		size_t i;

		for (i = 0; i < 4; i++) {
			add(d, rows[i], V_WARN, "unknown");
			hint(d, "%s: use --probe to try it",
			     err == -ENOENT
				     ? "no netdev xdp-features (Linux < 6.3)"
				     : strerror(-err));
		}
		d->native = true; /* auto tries native first anyway */
		return;
	}
	d->native = f & NIC_XDP_BASIC;
	if (d->native) {
		add(d, "native-xdp", V_OK, "yes");
	} else {
		add(d, "native-xdp", V_WARN, "no");
		hint(d, "load and serve fall back to skb (generic) mode: "
			"correct but slower");
	}
	add(d, "xdp-tx-redirect",
	    d->native && (f & NIC_XDP_REDIRECT) ? V_OK : V_WARN,
	    "tx %s, redirect %s, redirect target %s", yes_no(d->native),
	    yes_no(f & NIC_XDP_REDIRECT), yes_no(f & NIC_XDP_NDO_XMIT));
	if (!(f & NIC_XDP_REDIRECT))
		hint(d, "no native XDP_REDIRECT: the afxdp engine runs in skb "
			"mode");
	else if (!d->native)
		hint(d, "no native XDP_TX: the xdp engine answers in skb mode");
	add(d, "multi-buffer", V_OK, "%s", yes_no(f & NIC_XDP_RX_SG));
	if (!(f & NIC_XDP_RX_SG))
		hint(d, "native XDP needs each frame in one page: MTU <= %ld",
		     blitz_xdp_single_buffer_mtu());
	if (f & NIC_XDP_XSK_ZEROCOPY) {
		if (zc_segs)
			add(d, "afxdp-zerocopy", V_OK,
			    "yes (up to %u segments)", zc_segs);
		else
			add(d, "afxdp-zerocopy", V_OK, "yes");
	} else {
		add(d, "afxdp-zerocopy", V_WARN, "no (copy mode)");
		hint(d, "the afxdp engine copies every frame between the "
			"driver and its UMEM: xdp is the fast engine here");
	}
}

static void check_queues(struct doctor *d, unsigned int *rxq)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct nic_channels c;
	unsigned int rx, max;
	int err = nic_channels(d->ifname, &c);

	*rxq = 1;
	if (err) {
		add(d, "queues", V_WARN, "unknown (%s)", strerror(-err));
		hint(d, "the driver has no `ethtool -l`: the afxdp engine "
			"binds every RX queue it finds");
		return;
	}
	rx = c.rx + c.combined;
	max = c.max_rx + c.max_combined;
	*rxq = rx ? rx : 1;
	if (rx >= (unsigned int)cpus) {
		add(d, "queues", V_OK, "rx %u tx %u combined %u, %ld CPUs",
		    c.rx, c.tx, c.combined, cpus);
		return;
	}
	add(d, "queues", V_WARN,
	    "rx %u tx %u combined %u (max %u/%u/%u), %ld CPUs", c.rx, c.tx,
	    c.combined, c.max_rx, c.max_tx, c.max_combined, cpus);
	if (max > rx)
		hint(d,
		     "XDP runs on %u of %ld CPUs: ethtool -L %s %s %ld "
		     "(one queue per CPU, docs/nic.md)",
		     rx, cpus, d->ifname, c.max_combined ? "combined" : "rx",
		     (long)max < cpus ? (long)max : cpus);
	else
		hint(d,
		     "XDP runs on %u of %ld CPUs: the driver has no more "
		     "queues%s",
		     rx, cpus,
		     c.max_rx && !c.max_combined
			     ? " (veth: numrxqueues/numtxqueues at creation)"
			     : "");
}

static void check_mtu(struct doctor *d, unsigned int mtu)
{
	long limit = blitz_xdp_single_buffer_mtu();
	bool frags = blitz_xdp_has_frags();
	bool sg = !d->have_features || (d->features & NIC_XDP_RX_SG);
	enum blitz_mtu_fit fit;
	size_t max_body = 0;

	fit = blitz_xdp_mtu_fit(mtu, limit, frags, sg);
	d->mtu_native = fit == BLITZ_MTU_SINGLE || fit == BLITZ_MTU_MULTI;
	switch (fit) {
	case BLITZ_MTU_TOO_SMALL:
		add(d, "mtu", V_FAIL, "%u", mtu);
		hint(d,
		     "the xdp engine needs MTU >= %d to answer in one "
		     "segment",
		     BLITZ_MIN_MTU);
		break;
	case BLITZ_MTU_SINGLE:
		add(d, "mtu", V_OK, "%u (native single-buffer up to %ld)", mtu,
		    limit);
		break;
	case BLITZ_MTU_MULTI:
		add(d, "mtu", V_OK, "%u (program and driver multi-buffer)",
		    mtu);
		break;
	case BLITZ_MTU_PROG_SINGLE:
	case BLITZ_MTU_DRIVER_NO_SG:
		add(d, "mtu", V_FAIL, "%u > %ld, the most a %s takes natively",
		    mtu, limit,
		    fit == BLITZ_MTU_DRIVER_NO_SG
			    ? "driver without multi-buffer XDP"
			    : "single-buffer XDP program");
		hint(d,
		     "native attach fails (ERANGE): ip link set dev %s mtu "
		     "%ld, or -m skb%s",
		     d->ifname, limit,
		     frags ? "" : " (this blitz is built without xdp.frags)");
		break;
	}

	if (service_responses(&d->svc, &d->resp) ||
	    blitz_xdp_max_body(&d->resp, mtu, &max_body)) {
		add(d, "body", V_WARN, "cannot build the response");
		return;
	}
	d->body_fits = mtu >= BLITZ_MIN_MTU && d->svc.body_len <= max_body;
	if (d->body_fits) {
		add(d, "body", V_OK,
		    "%zu bytes, xdp answers up to %zu at MTU %u",
		    d->svc.body_len, max_body, mtu);
	} else {
		add(d, "body", V_FAIL, "%zu bytes > %zu, the most at MTU %u",
		    d->svc.body_len, max_body, mtu);
		hint(d, "the xdp engine answers in one segment: serve --engine "
			"afxdp|epoll takes bodies up to 16 MiB");
	}
}

static void check_lro(struct doctor *d)
{
	bool lro = false;
	int err = nic_lro(d->ifname, &lro);

	if (err) {
		add(d, "lro", V_WARN, "unknown (%s)", strerror(-err));
	} else if (lro) {
		add(d, "lro", V_WARN, "on");
		hint(d,
		     "LRO merges frames before XDP: drivers refuse native "
		     "XDP or drop it: ethtool -K %s lro off",
		     d->ifname);
	} else {
		add(d, "lro", V_OK, "off");
	}
}

static void check_attached(struct doctor *d)
{
	enum blitz_pins_owner owner;
	__u32 user = 0;
	int err = blitz_find_attached(d->ifindex, &d->att);

	if (err) {
		add(d, "xdp-attached", V_WARN, "cannot query (%s)",
		    strerror(-err));
	} else if (d->att.prog_id) {
		add(d, "xdp-attached", V_OK, "blitz prog id %u (%s, %s)",
		    d->att.prog_id, d->att.link ? "serve" : "load",
		    d->att.mode);
	} else if (d->att.other_id) {
		add(d, "xdp-attached", V_WARN, "prog id %u, not blitz's",
		    d->att.other_id);
		hint(d,
		     "load and serve refuse to replace it: ip link set dev "
		     "%s xdp off",
		     d->ifname);
	} else {
		add(d, "xdp-attached", V_OK, "none");
	}
	if (!d->bpffs)
		return; /* the bpffs row said it */
	owner = blitz_pins_owner(d->ifname, d->att.prog_id, &user);
	switch (owner) {
	case BLITZ_PINS_NONE:
		add(d, "pins", V_OK, "none");
		break;
	case BLITZ_PINS_HERE:
		add(d, "pins", V_OK, "%s/%s", BLITZ_PIN_ROOT, d->ifname);
		break;
	case BLITZ_PINS_OTHER_NETNS:
		add(d, "pins", V_WARN,
		    "used by prog id %u in another network "
		    "namespace",
		    user);
		hint(d, "pins are per interface name: unload it there first");
		break;
	case BLITZ_PINS_STALE:
		add(d, "pins", V_WARN, "stale pins of a serve that was killed");
		hint(d, "blitz load reclaims them; or blitz unload %s",
		     d->ifname);
		break;
	}
}

/* What serve_fast does with --engine auto: xdp native, else xdp skb,
 * else the epoll engine alone. */
static void check_auto(struct doctor *d)
{
	const char *why = NULL;

	if (!d->privileged)
		why = "no privileges for XDP";
	else if (!d->bpffs)
		why = "no bpffs";
	else if (!d->body_fits)
		why = "the body does not fit one segment";
	else if (d->att.prog_id && !d->att.link)
		why = "behind the XDP program `blitz load` left there";
	else if (d->att.prog_id || d->att.other_id)
		why = "another XDP program is attached";
	if (why)
		add(d, "engine-auto", V_WARN, "epoll (%s)", why);
	else if (d->native && d->mtu_native)
		add(d, "engine-auto", V_OK, "xdp (native)");
	else
		add(d, "engine-auto", V_WARN, "xdp (skb: %s)",
		    !d->native ? "no native XDP" : "MTU over the native limit");
}

/* ---- --probe ---- */

static void probe_native(struct doctor *d)
{
	/* r0 = XDP_PASS; exit */
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 2},
		{.code = BPF_JMP | BPF_EXIT},
	};
	struct bpf_prog_load_opts po = {.sz = sizeof(po)};
	struct bpf_link_create_opts lo = {.sz = sizeof(lo),
					  .flags = XDP_FLAGS_DRV_MODE};
	int pfd, lfd, err;

	if (d->att.prog_id || d->att.other_id) {
		add(d, "probe-native", V_WARN,
		    "skipped: an XDP program is "
		    "attached");
		return;
	}
	/* The same buffer model as the loader would load blitz's with. */
	po.prog_flags =
		blitz_xdp_has_frags() && d->mtu > blitz_xdp_single_buffer_mtu()
			? BPF_F_XDP_HAS_FRAGS
			: 0;
	pfd = bpf_prog_load(BPF_PROG_TYPE_XDP, "blitz_probe", "GPL", insns, 2,
			    &po);
	if (pfd < 0) {
		add(d, "probe-native", V_FAIL, "cannot load a probe: %s",
		    strerror(errno));
		return;
	}
	lfd = bpf_link_create(pfd, d->ifindex, BPF_XDP, &lo);
	err = lfd < 0 ? -errno : 0;
	if (lfd >= 0)
		close(lfd); /* the link goes with its last fd: detached */
	close(pfd);
	if (!err) {
		add(d, "probe-native", V_OK, "native attach and detach worked");
		return;
	}
	add(d, "probe-native", V_FAIL, "native attach: %s", strerror(-err));
	if (err == -ERANGE)
		hint(d, "the MTU is over what the driver takes natively for "
			"this program: lower it, or -m skb");
	else if (err == -EOPNOTSUPP)
		hint(d, "no native XDP in this driver: -m skb");
}

/* Bind an AF_XDP socket to queue 0 in zero-copy mode, then close it. */
static void probe_zerocopy(struct doctor *d)
{
	const size_t frames = 64, fsize = 4096, len = frames * fsize;
	struct xdp_umem_reg reg = {.len = len, .chunk_size = fsize};
	struct sockaddr_xdp sxdp = {.sxdp_family = AF_XDP,
				    .sxdp_ifindex = (__u32)d->ifindex,
				    .sxdp_flags = XDP_ZEROCOPY};
	int fd, ring = 64, err = 0;
	void *area;

	area = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		add(d, "probe-zerocopy", V_WARN, "mmap: %s", strerror(errno));
		return;
	}
	reg.addr = (__u64)(unsigned long)area;
	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring,
		       sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring))) {
		add(d, "probe-zerocopy", V_WARN, "AF_XDP socket: %s",
		    strerror(errno));
		goto out;
	}
	if (bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
		err = -errno;
	if (!err)
		add(d, "probe-zerocopy", V_OK,
		    "zero-copy bind on queue 0 "
		    "worked");
	else if (err == -EOPNOTSUPP)
		add(d, "probe-zerocopy", V_WARN,
		    "copy mode only (zero-copy "
		    "bind: %s)",
		    strerror(-err));
	else
		add(d, "probe-zerocopy", V_WARN,
		    "zero-copy bind on queue 0: "
		    "%s",
		    strerror(-err));
out:
	if (fd >= 0)
		close(fd);
	munmap(area, len);
}

/* ---- output ---- */

static void print_table(const struct doctor *d)
{
	size_t w_check = strlen("CHECK"), w_value = strlen("VALUE"), l;
	const struct row *r;
	int i;

	for (i = 0; i < d->n; i++) {
		if ((l = strlen(d->rows[i].check)) > w_check)
			w_check = l;
		if ((l = strlen(d->rows[i].value)) > w_value)
			w_value = l;
	}
	printf("%-*s  %-6s  %-*s  %s\n", (int)w_check, "CHECK", "STATUS",
	       (int)w_value, "VALUE", "WHAT TO DO");
	for (i = 0; i < d->n; i++) {
		r = &d->rows[i];
		if (r->hint[0])
			printf("%-*s  %-6s  %-*s  %s\n", (int)w_check, r->check,
			       verdict_name[r->v], (int)w_value, r->value,
			       r->hint);
		else /* no trailing blanks */
			printf("%-*s  %-6s  %s\n", (int)w_check, r->check,
			       verdict_name[r->v], r->value);
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const struct doctor *d, const int count[3])
{
	int i;

	printf("{\"interface\":");
	if (d->ifname)
		json_str(d->ifname);
	else
		printf("null");
	printf(",\"ok\":%d,\"warn\":%d,\"fail\":%d,\"checks\":[", count[V_OK],
	       count[V_WARN], count[V_FAIL]);
	for (i = 0; i < d->n; i++) {
		printf("%s{\"check\":", i ? "," : "");
		json_str(d->rows[i].check);
		printf(",\"status\":\"%s\",\"value\":",
		       verdict_name[d->rows[i].v]);
		json_str(d->rows[i].value);
		printf(",\"hint\":");
		json_str(d->rows[i].hint);
		printf("}");
	}
	printf("]}\n");
}

/* ---- the verb ---- */

static void check_interface(struct doctor *d)
{
	struct nic_drvinfo di;
	unsigned int mtu = 0, rxq = 1;
	bool up = false, running = false;
	int err;

	d->ifindex = (int)(strlen(d->ifname) < IF_NAMESIZE
				   ? if_nametoindex(d->ifname)
				   : 0);
	if (!d->ifindex) {
		add(d, "interface", V_FAIL, "no interface '%s'", d->ifname);
		hint(d,
		     "not in this network namespace: see ip link (or "
		     "ip netns exec NS blitz doctor %s)",
		     d->ifname);
		check_memlock(d, 1);
		return;
	}
	nic_flags(d->ifname, &up, &running);
	nic_mtu(d->ifname, &mtu);
	d->mtu = mtu;
	add(d, "interface", up && running ? V_OK : V_WARN,
	    "%s ifindex %d, %s%s", d->ifname, d->ifindex, up ? "up" : "down",
	    up && !running ? ", no carrier" : "");
	if (!up)
		hint(d, "ip link set dev %s up", d->ifname);
	err = nic_drvinfo(d->ifname, &di);
	if (err) {
		add(d, "driver", V_WARN, "unknown (%s)", strerror(-err));
	} else {
		add(d, "driver", V_OK, "%s %s%s%s", di.driver, di.version,
		    di.bus_info[0] ? " at " : "", di.bus_info);
		if (!strcmp(di.driver, "veth"))
			hint(d,
			     "veth: XDP_TX and redirected frames are dropped "
			     "unless the peer has an XDP program");
	}
	check_features(d);
	check_queues(d, &rxq);
	check_memlock(d, rxq);
	check_conn_memory(d, rxq);
	check_mtu(d, mtu);
	check_lro(d);
	check_attached(d);
	check_auto(d);
	if (d->probe) {
		probe_native(d);
		probe_zerocopy(d);
	}
}

int cmd_doctor(int argc, char **argv)
{
	struct cli_parser p;
	int opt, r, i, ret = 1, count[3] = {0};
	struct doctor *d;
	bool json = false;

	d = calloc(1, sizeof(*d));
	if (!d) {
		pr_warn("out of memory\n");
		return 1;
	}
	service_init(&d->svc);
	if (cli_parse_begin(&p, &cmd_doctor_spec))
		goto out;
	while ((opt = getopt_long(argc, argv, p.shortopts, p.longopts, NULL)) !=
	       -1) {
		if (opt == OPT_JSON) {
			json = true;
			continue;
		}
		if (opt == OPT_PROBE) {
			d->probe = true;
			continue;
		}
		r = options_service_apply(&d->svc, opt, optarg);
		if (r < 0)
			goto out;
		if (r > 0)
			continue;
		r = cli_common_opt(&cmd_doctor_spec, opt, argv);
		if (r != CLI_CONTINUE) {
			ret = r;
			goto out;
		}
	}
	if (cli_operands("doctor", argc, argv, 0, 1, "[ifname]") ||
	    service_finish(&d->svc))
		goto out;
	if (optind < argc)
		d->ifname = argv[optind];
	if (d->probe && !d->ifname) {
		pr_warn("--probe needs an interface: blitz doctor <ifname> "
			"--probe\n");
		goto out;
	}
	blitz_log_quiet_libs();
	d->caps = effective_caps();
	d->btf = btf__load_vmlinux_btf();
	if (libbpf_get_error(d->btf))
		d->btf = NULL;

	check_kernel(d);
	check_privileges(d);
	check_sysctls(d);
	check_bpffs(d);
	if (d->ifname)
		check_interface(d);
	else
		check_memlock(d, 1);
	if (!d->ifname)
		check_conn_memory(d, 1);
	check_hugepages(d);
	check_vfio(d);
	check_dpdk_binary(d);

	for (i = 0; i < d->n; i++)
		count[d->rows[i].v]++;
	if (json)
		print_json(d, count);
	else
		print_table(d);
	ret = count[V_FAIL] ? 1 : 0;
out:
	if (d->btf)
		btf__free(d->btf);
	service_free(&d->svc);
	free(d);
	return ret;
}
