// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_doctor_system.c - `blitz doctor`'s rows about this machine: the
 * kernel and the features blitz uses (read from the kernel's BTF), the
 * privileges, the sysctls of this network namespace the hand-off needs,
 * bpffs, the locked-memory limit and the connection tables, and for the
 * dpdk engine hugepages, vfio/IOMMU and the blitz-dpdk binary.
 *
 * Owns: those rows (cmd_doctor_int.h). Reads only.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include <bpf/btf.h>

#include "cmd_doctor_int.h"
#include "host_sys.h"
#include "tc_handoff.h"
#include "tcp_core.h"

/* The afxdp engine's UMEM per queue (afxdp_engine.c: 4096 frames of 2 KiB). */
#define AFXDP_UMEM_BYTES (4096ull * 2048)

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
		doctor_add(d, check, V_OK, "%s", ok_value);
		return;
	}
	doctor_add(d, check, missing, "no %s", what);
	doctor_hint(d, "%s needs Linux %d.%d or later; this kernel is %s: %s",
		    what, maj, min, kernel_release(NULL), means);
}

static void check_kernel(struct doctor *d)
{
	bool pretend;
	const char *rel = kernel_release(&pretend);

	if (kernel_older_than(KERNEL_HANDOFF)) {
		doctor_add(d, "kernel", V_WARN,
			   "%s (pretended by a test: "
			   "BLITZ_TEST_KERNEL_RELEASE)",
			   rel);
		doctor_hint(d,
			    "Linux 6.9 or later has every feature blitz uses "
			    "(the hand-off kfunc is 6.9): see the rows below");
	} else if (pretend) {
		doctor_add(d, "kernel", V_OK,
			   "%s (pretended by a test: "
			   "BLITZ_TEST_KERNEL_RELEASE)",
			   rel);
	} else if (tc_handoff_supported()) {
		doctor_add(d, "kernel", V_OK, "%s", rel);
	} else {
		doctor_add(d, "kernel", V_WARN, "%s", rel);
		doctor_hint(d,
			    "Linux 6.9 or later has every feature blitz uses "
			    "(the hand-off kfunc is 6.9): see the rows below");
	}
	if (!d->btf) {
		doctor_add(d, "kernel-btf", V_FAIL,
			   "no /sys/kernel/btf/vmlinux");
		doctor_hint(d, "blitz needs a kernel built with "
			       "CONFIG_DEBUG_INFO_BTF");
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

/* One of the sysctls the hand-off needs on (net.ipv4.<row>). */
static void sysctl_row(struct doctor *d, const char *row)
{
	char name[64];
	long v;

	snprintf(name, sizeof(name), "net/ipv4/%s", row);
	if (host_sysctl_long(name, &v)) {
		doctor_add(d, row, V_WARN, "unreadable");
	} else if (v) {
		doctor_add(d, row, V_OK, "%ld", v);
	} else {
		doctor_add(d, row, V_FAIL, "0 (this network namespace)");
		doctor_hint(d, "the hand-off needs it: sysctl -w net.ipv4.%s=1",
			    row);
	}
}

static void check_sysctls(struct doctor *d)
{
	sysctl_row(d, "tcp_syncookies");
	sysctl_row(d, "tcp_timestamps");
}

/* ---- privileges, bpffs, memory ---- */

static void check_privileges(struct doctor *d)
{
	bool bpf = host_cap_has(d->caps, CAP_BPF),
	     sys = host_cap_has(d->caps, CAP_SYS_ADMIN),
	     net = host_cap_has(d->caps, CAP_NET_ADMIN);

	d->privileged = net && (bpf || sys);
	if (d->privileged) {
		doctor_add(d, "privileges", V_OK, "%s%s%s",
			   bpf ? "CAP_BPF " : "", sys ? "CAP_SYS_ADMIN " : "",
			   "CAP_NET_ADMIN");
	} else {
		doctor_add(d, "privileges", V_FAIL, "missing %s%s",
			   net ? "" : "CAP_NET_ADMIN ",
			   bpf || sys ? "" : "CAP_BPF (or CAP_SYS_ADMIN)");
		doctor_hint(
			d, "run blitz as root (or give it those capabilities)");
	}
}

static void check_bpffs(struct doctor *d)
{
	struct statfs st;

	d->bpffs = !statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC;
	if (!doctor_flag(d, "bpffs", d->bpffs, "/sys/fs/bpf", V_FAIL,
			 "not mounted at /sys/fs/bpf"))
		doctor_hint(d,
			    "mount -t bpf bpf /sys/fs/bpf (load pins its maps "
			    "there)");
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

void doctor_check_memlock(struct doctor *d, unsigned int queues)
{
	unsigned long long need = AFXDP_UMEM_BYTES * (queues ? queues : 1);
	struct rlimit rl = {};
	char have[24], want[24];

	getrlimit(RLIMIT_MEMLOCK, &rl);
	fmt_bytes(need, want, sizeof(want));
	if (rl.rlim_cur == RLIM_INFINITY) {
		doctor_add(d, "memlock", V_OK, "unlimited");
		return;
	}
	fmt_bytes(rl.rlim_cur, have, sizeof(have));
	if (host_cap_has(d->caps, CAP_IPC_LOCK)) {
		doctor_add(d, "memlock", V_OK, "%s, CAP_IPC_LOCK: not a limit",
			   have);
	} else if (rl.rlim_cur >= need) {
		doctor_add(d, "memlock", V_OK, "%s (afxdp needs %s)", have,
			   want);
	} else {
		doctor_add(d, "memlock", V_WARN, "%s, afxdp needs %s", have,
			   want);
		doctor_hint(
			d,
			"the afxdp engine's UMEM (8 MiB per queue) is locked: "
			"ulimit -l unlimited, LimitMEMLOCK=infinity or "
			"CAP_IPC_LOCK");
	}
}

/* The afxdp and dpdk engines' connection tables: what a connection costs
 * and what the default and a million take, against the memory free. */
void doctor_check_conn_memory(struct doctor *d, unsigned int queues)
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
	doctor_add(d, "conn-memory", avail && def > avail ? V_WARN : V_OK,
		   "%zu bytes a connection (afxdp, dpdk); %u a queue: %s, "
		   "1,000,000: %s; %s available",
		   tcp_core_table_bytes(1000000) / 1000000,
		   TCP_CORE_DEFAULT_TABLE, a, b, c);
	if (avail && def > avail)
		doctor_hint(
			d,
			"serve --max-conns N sizes the table (split over the "
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
		doctor_add(d, "hugepages", V_OK, "%lu of %lu kB, %lu free",
			   total, size_kb, free_);
	} else {
		doctor_add(d, "hugepages", V_WARN,
			   "none reserved (%lu kB pages)", size_kb);
		doctor_hint(
			d, "dpdk engine only: it runs with --no-huge (slower); "
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
		doctor_add(d, "vfio-iommu", V_OK,
			   "%d IOMMU groups, vfio-pci loaded", groups);
		return;
	}
	doctor_add(d, "vfio-iommu", V_WARN, "%d IOMMU groups, vfio-pci %s",
		   groups < 0 ? 0 : groups, vfio ? "loaded" : "not loaded");
	doctor_hint(d, "dpdk on a PCI NIC only: boot with intel_iommu=on (or "
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
		doctor_add(d, "dpdk-engine", V_OK, "%s", path);
	} else {
		doctor_add(d, "dpdk-engine", V_WARN, "no %s", path);
		doctor_hint(
			d,
			"serve --engine dpdk needs it: install libdpdk-dev and "
			"rebuild (make)");
	}
}

void doctor_check_host(struct doctor *d)
{
	check_kernel(d);
	check_privileges(d);
	check_sysctls(d);
	check_bpffs(d);
}

void doctor_check_dpdk(struct doctor *d)
{
	check_hugepages(d);
	check_vfio(d);
	check_dpdk_binary(d);
}
