// SPDX-License-Identifier: GPL-2.0
/*
 * tc_handoff.c - see tc_handoff.h: load bpf/blitz_tc.bpf.c with the XDP
 * program's maps and attach it to TCX ingress through a bpf_link.
 *
 * Owns: the TC skeleton, its link and the link's pin. Must never detach
 * anything that is not a blitz hand-off program (the programs on the
 * interface's TCX ingress, queried in this network namespace, matched by
 * name) and never create the shared maps.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../bpf/blitz_shared.h"
#include "blitz_probe.skel.h"
#include "blitz_tc.skel.h"
#include "host_sys.h"
#include "loader.h"
#include "log.h"
#include "tc_handoff.h"

/*
 * Debian 12's linux/bpf.h predates TCX (Linux 6.6); these are the UAPI
 * values, which never change once released.
 */
#define TCX_ATTACH_INGRESS 46 /* enum bpf_attach_type BPF_TCX_INGRESS */
#define TCX_LINK_TYPE 11      /* enum bpf_link_type BPF_LINK_TYPE_TCX */
#define TC_HANDOFF_KFUNC "bpf_sk_assign_tcp_reqsk"

struct tc_handoff {
	struct blitz_tc_bpf *skel;
	int link_fd;
	bool persist;
	char pin[PATH_MAX]; /* set when persist */
};

const char *kernel_release(bool *pretend)
{
	static struct utsname u;
	const char *fake = getenv("BLITZ_TEST_KERNEL_RELEASE");

	if (pretend)
		*pretend = fake && *fake;
	if (fake && *fake)
		return fake;
	if (!u.release[0] && uname(&u))
		return "unknown";
	return u.release;
}

bool kernel_older_than(int maj, int min)
{
	bool pretend;
	const char *rel = kernel_release(&pretend);
	int a = 0, b = 0;

	/* A real kernel's features are read from its BTF, not its version
	 * (distributions backport); only a pretended one is taken at its
	 * word. */
	if (!pretend || sscanf(rel, "%d.%d", &a, &b) != 2)
		return false;
	return a < maj || (a == maj && b < min);
}

bool tc_handoff_supported(void)
{
	static int cached = -1;
	struct btf *btf;

	if (cached >= 0)
		return cached;
	if (kernel_older_than(KERNEL_HANDOFF)) {
		cached = 0;
		return false;
	}
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		pr_debug("tc hand-off: no kernel BTF: %s\n", strerror(errno));
		cached = 0;
		return false;
	}
	cached = btf__find_by_name_kind(btf, TC_HANDOFF_KFUNC, BTF_KIND_FUNC) >
		 0;
	btf__free(btf);
	return cached;
}

int tc_handoff_kfunc_probe(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	struct blitz_probe_bpf *skel = NULL;
	unsigned char f[54] = {0};
	int fd, rc = -EIO;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 1) || getsockname(fd, (struct sockaddr *)&a, &al))
		goto out;
	/* Ethernet, IPv4 127.0.0.1 -> 127.0.0.1, TCP ACK to that port. */
	f[12] = 0x08;
	f[14] = 0x45;
	f[17] = 40;
	f[22] = 64;
	f[23] = IPPROTO_TCP;
	f[26] = f[30] = 127;
	f[29] = f[33] = 1;
	f[35] = 1;
	memcpy(f + 36, &a.sin_port, 2);
	f[46] = 5 << 4;
	f[47] = 0x10;
	skel = blitz_probe_bpf__open_and_load();
	if (!skel)
		goto out;
	{
		struct bpf_test_run_opts o = {.sz = sizeof(o),
					      .data_in = f,
					      .data_size_in = sizeof(f),
					      .repeat = 1};

		if (bpf_prog_test_run_opts(
			    bpf_program__fd(skel->progs.blitz_probe_reqsk), &o))
			goto out;
	}
	rc = skel->data->probe_rc;
out:
	if (skel)
		blitz_probe_bpf__destroy(skel);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* A sysctl of this network namespace: its value, or -1 when absent. */
static long sysctl_int(const char *name)
{
	long v;

	return host_sysctl_long(name, &v) ? -1 : v;
}

#define SYNCOOKIES "net/ipv4/tcp_syncookies"
#define TIMESTAMPS "net/ipv4/tcp_timestamps"
#define SACK "net/ipv4/tcp_sack"
#define WSCALE "net/ipv4/tcp_window_scaling"

int tc_handoff_prereqs(void)
{
	int bad = 0, rc;
	long v;

	if (!tc_handoff_supported()) {
		pr_warn("%s() needs Linux 6.9 or later; this kernel is %s: "
			"the xdp engine cannot hand connections to the kernel; "
			"use a newer kernel, or `blitz serve --engine "
			"afxdp|epoll`\n",
			TC_HANDOFF_KFUNC, kernel_release(NULL));
		return -EOPNOTSUPP;
	}
	v = sysctl_int(SYNCOOKIES);
	if (v < 0) {
		pr_warn("net.ipv4.tcp_syncookies is missing: this kernel is "
			"built without CONFIG_SYN_COOKIES, which the hand-off "
			"to the kernel needs; use a kernel built with it\n");
		bad++;
	} else if (v == 0) {
		pr_warn("net.ipv4.tcp_syncookies is 0: the kernel would "
			"ignore every connection handed to it; run `sysctl -w "
			"net.ipv4.tcp_syncookies=1`\n");
		bad++;
	}
	/* Not followed like SACK and window scaling (below): the TSecr
	 * carries the cookie of every segment after the handshake; without
	 * timestamps each connection would rest on a per-CPU flow entry
	 * (docs/tcp-security.md, "Clients without timestamps"). */
	if (sysctl_int(TIMESTAMPS) == 0) {
		pr_warn("net.ipv4.tcp_timestamps is 0: the kernel would refuse "
			"handed-over connections of clients that use "
			"timestamps; run `sysctl -w "
			"net.ipv4.tcp_timestamps=1`\n");
		bad++;
	}
	rc = tc_handoff_kfunc_probe();
	if (rc == -EOPNOTSUPP) {
		pr_warn("%s() is a stub on this kernel (-EOPNOTSUPP: built "
			"without CONFIG_SYN_COOKIES); use a kernel built with "
			"it\n",
			TC_HANDOFF_KFUNC);
		bad++;
	} else if (rc < 0 && rc != -EINVAL) {
		pr_debug("tc hand-off probe: %s\n", strerror(-rc));
	}
	return bad ? -EOPNOTSUPP : 0;
}

/*
 * SACK and window scaling follow the namespace's sysctls instead of being
 * prerequisites: the kfunc refuses sack_ok / wscale_ok while its sysctl is
 * 0 (-EINVAL), so the XDP SYN-ACK leaves out what the kernel would
 * (bpf/blitz_tcpopt.h, blitz_tcpopt_syn_offer). A sysctl that cannot be
 * read counts as on, the kernel's default.
 */
__u32 tc_handoff_kernel_opts(void)
{
	return (sysctl_int(SACK) == 0 ? BLITZ_CFG_NO_SACK : 0) |
	       (sysctl_int(WSCALE) == 0 ? BLITZ_CFG_NO_WSCALE : 0);
}

/* The options flags leaves out, with their sysctls, e.g. "SACK-permitted
 * (net.ipv4.tcp_sack)"; "" when none. */
static void opts_clauses(__u32 flags, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s",
		 flags & BLITZ_CFG_NO_SACK
			 ? "SACK-permitted (net.ipv4.tcp_sack)"
			 : "",
		 (flags & BLITZ_CFG_NO_SACK) && (flags & BLITZ_CFG_NO_WSCALE)
			 ? " and "
			 : "",
		 flags & BLITZ_CFG_NO_WSCALE
			 ? "window scaling (net.ipv4.tcp_window_scaling)"
			 : "");
}

void tc_handoff_say_opts(const char *ifname, __u32 flags)
{
	char what[120];

	flags &= BLITZ_CFG_NO_SACK | BLITZ_CFG_NO_WSCALE;
	if (!flags)
		return;
	opts_clauses(flags, what, sizeof(what));
	pr_info("blitz: %s: SYN-ACKs leave out %s, as the kernel does: its "
		"sysctl is 0 here\n",
		ifname, what);
}

int tc_handoff_opts_drift(const char *ifname, __u32 flags, bool serve,
			  char *buf, size_t len)
{
	__u32 now = tc_handoff_kernel_opts(), diff;
	char fix[80];

	flags &= BLITZ_CFG_NO_SACK | BLITZ_CFG_NO_WSCALE;
	if (len)
		buf[0] = 0;
	diff = now ^ flags;
	if (!diff)
		return 0;
	if (serve)
		snprintf(fix, sizeof(fix), "restarting the serve");
	else
		snprintf(fix, sizeof(fix), "`blitz reload %s`", ifname);
	/* Off since: still offered; the TC hand-off leaves SACK out by
	 * itself (it reads tcp_sack live), window scaling it cannot. */
	snprintf(
		buf, len,
		"%s: SYN-ACKs follow the sysctls as they were at load: %s%s%s; "
		"%s follows them now",
		ifname,
		!(diff & BLITZ_CFG_NO_SACK) ? ""
		: now & BLITZ_CFG_NO_SACK
			? "net.ipv4.tcp_sack turned off since (SACK-permitted "
			  "still offered; hand-offs leave it out)"
			: "net.ipv4.tcp_sack turned on since (SACK-permitted "
			  "not offered)",
		diff == (BLITZ_CFG_NO_SACK | BLITZ_CFG_NO_WSCALE) ? "; " : "",
		!(diff & BLITZ_CFG_NO_WSCALE) ? ""
		: now & BLITZ_CFG_NO_WSCALE
			? "net.ipv4.tcp_window_scaling turned off since (still "
			  "offered: the kernel refuses hand-offs that use it)"
			: "net.ipv4.tcp_window_scaling turned on since (not "
			  "offered)",
		fix);
	return 1;
}

static void pin_path(char *buf, size_t len, const char *ifname)
{
	snprintf(buf, len, "%s/%s/%s", BLITZ_PIN_ROOT, ifname,
		 TC_HANDOFF_PIN_NAME);
}

/* Is prog_id a blitz hand-off program? */
static bool prog_is_handoff(__u32 prog_id)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	bool ours;
	int fd;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	ours = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       !strcmp(info.name, TC_HANDOFF_PROG_NAME);
	close(fd);
	return ours;
}

/*
 * The TCX link that attaches prog_id, as an fd, or -ENOENT. Matched by the
 * program, never by ifindex: link info carries a bare ifindex, which every
 * network namespace reuses (each testbed's veth is ifindex 2 in its own).
 * Program ids are global and each attach loads its own program, so there
 * is at most one.
 */
static int tcx_link_of_prog(__u32 prog_id)
{
	__u32 id = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info;
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue; /* gone meanwhile */
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == TCX_LINK_TYPE && info.prog_id == prog_id)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/*
 * The blitz hand-off programs on ifindex's TCX ingress. The query is made
 * in this process's network namespace, where ifindex means this interface;
 * only programs it lists are considered, so another namespace's hand-off
 * on "its" ifindex 2 is never seen here. For each: *prog_id is set; when
 * detach is true its link is detached. Returns how many, or -errno.
 */
static int for_each_handoff_link(int ifindex, bool detach, __u32 *prog_id)
{
	__u32 ids[64], cnt = 64, flags = 0, i;
	int found = 0, fd;

	if (ifindex <= 0)
		return 0;
	if (bpf_prog_query(ifindex, TCX_ATTACH_INGRESS, 0, &flags, ids, &cnt))
		return errno == EINVAL || errno == ENOENT || errno == ENODEV
			       ? 0
			       : -errno;
	for (i = 0; i < cnt && i < 64; i++) {
		if (!prog_is_handoff(ids[i]))
			continue;
		found++;
		if (prog_id)
			*prog_id = ids[i];
		if (!detach)
			continue;
		fd = tcx_link_of_prog(ids[i]);
		if (fd < 0)
			continue; /* attached without a link: not ours */
		if (bpf_link_detach(fd)) {
			int err = -errno;

			pr_warn("could not detach the tc hand-off (prog id "
				"%u): %s\n",
				ids[i], strerror(-err));
			close(fd);
			return err;
		}
		close(fd);
	}
	return found;
}

bool tc_handoff_present(int ifindex)
{
	return for_each_handoff_link(ifindex, false, NULL) > 0;
}

unsigned int tc_handoff_prog_id(int ifindex)
{
	__u32 prog_id = 0;

	if (for_each_handoff_link(ifindex, false, &prog_id) <= 0)
		return 0;
	return prog_id;
}

/*
 * Is the link pinned at pin still attached somewhere? Pins are shared by
 * every network namespace, so a pinned link that is still attached after
 * this namespace's hand-offs were detached is another namespace's (an
 * interface of the same name there): its pin must stay.
 */
static bool pinned_link_attached(const char *pin)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	bool attached = false;
	int fd;

	fd = bpf_obj_get(pin);
	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	/*
	 * A detached TCX link reports ifindex 0. Debian 12's header has no
	 * info.tcx; its ifindex is the union's first __u32, as xdp's is.
	 */
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    info.type == TCX_LINK_TYPE && info.xdp.ifindex)
		attached = true;
	close(fd);
	return attached;
}

int tc_handoff_remove(int ifindex)
{
	char ifname[IF_NAMESIZE], pin[PATH_MAX];
	int n;

	n = for_each_handoff_link(ifindex, true, NULL);
	if (n < 0)
		return n;
	if (n > 0)
		pr_debug("tc hand-off: detached %d link(s)\n", n);
	/* A detached link can still be pinned; the pin goes too, unless it
	 * holds another namespace's live link. */
	if (if_indextoname(ifindex, ifname)) {
		pin_path(pin, sizeof(pin), ifname);
		if (pinned_link_attached(pin)) {
			pr_debug("tc hand-off: %s is another network "
				 "namespace's: kept\n",
				 pin);
			return 0;
		}
		if (unlink(pin) && errno != ENOENT) {
			pr_warn("could not remove %s: %s\n", pin,
				strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/*
 * The map called name of the XDP program that holds the map map_fd (its
 * flows map): the burst records (blitz_flow.h) are shared the same way,
 * found through the program so that no caller has to pass them. An fd
 * the caller closes, or -1 when no loaded program holds map_fd.
 */
static int sibling_map_fd(int map_fd, const char *name)
{
	struct bpf_map_info mi = {0};
	__u32 len = sizeof(mi), id = 0, i;
	int found = -1;

	if (map_fd < 0 || bpf_obj_get_info_by_fd(map_fd, &mi, &len))
		return -1;
	while (found < 0 && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info pi = {0};
		__u32 ids[64], plen = sizeof(pi);
		int pfd = bpf_prog_get_fd_by_id(id);

		if (pfd < 0)
			continue;
		pi.nr_map_ids = 64;
		pi.map_ids = (__u64)(unsigned long)ids;
		if (bpf_obj_get_info_by_fd(pfd, &pi, &plen) ||
		    pi.nr_map_ids > 64) {
			close(pfd);
			continue;
		}
		close(pfd);
		for (i = 0; i < pi.nr_map_ids && ids[i] != mi.id; i++)
			;
		if (i == pi.nr_map_ids)
			continue;
		for (i = 0; i < pi.nr_map_ids && found < 0; i++) {
			struct bpf_map_info oi = {0};
			__u32 olen = sizeof(oi);
			int fd = bpf_map_get_fd_by_id(ids[i]);

			if (fd < 0)
				continue;
			if (!bpf_obj_get_info_by_fd(fd, &oi, &olen) &&
			    !strcmp(oi.name, name))
				found = fd;
			else
				close(fd);
		}
	}
	return found;
}

/* Share the XDP program's burst records (found through its flows map). */
static int share_bursts(struct blitz_tc_bpf *skel, int flows_map_fd)
{
	int fd = sibling_map_fd(flows_map_fd, "bursts"), err;

	if (fd < 0)
		return 0; /* a table of its own: nothing is re-sent by XDP's */
	err = bpf_map__reuse_fd(skel->maps.bursts, fd);
	close(fd);
	return err;
}

/*
 * The XDP program's maps in the hand-off, never copies: its config and
 * counters; its responses (the new templates after a reload: an array is
 * never taken over from the old program, and an empty one would send
 * zeros; without them, a test's bare maps, the program has an empty map
 * of its own and answers nothing itself); its flow entries, which prove
 * the segments of connections without timestamps that the hand-off may
 * take (blitz_flow.h); and the burst records.
 */
static int share_maps(struct blitz_tc_bpf *skel, int config_map_fd,
		      int counters_map_fd, int responses_map_fd,
		      int flows_map_fd)
{
	int err = bpf_map__reuse_fd(skel->maps.config, config_map_fd);

	if (!err)
		err = bpf_map__reuse_fd(skel->maps.counters, counters_map_fd);
	if (!err && responses_map_fd >= 0)
		err = bpf_map__reuse_fd(skel->maps.responses, responses_map_fd);
	if (!err && flows_map_fd >= 0)
		err = bpf_map__reuse_fd(skel->maps.flows, flows_map_fd);
	if (!err)
		err = share_bursts(skel, flows_map_fd);
	return err;
}

int tc_handoff_attach(const char *ifname, int ifindex, int config_map_fd,
		      int counters_map_fd, int responses_map_fd,
		      int flows_map_fd, bool persist, struct tc_handoff **out)
{
	struct tc_handoff *h;
	char dir[PATH_MAX];
	int err;

	*out = NULL;
	if (!tc_handoff_supported()) {
		pr_warn("%s() needs Linux 6.9 or later (with "
			"CONFIG_SYN_COOKIES); this kernel is %s: requests the "
			"XDP program does not answer cannot be handed to the "
			"kernel on the same connection\n",
			TC_HANDOFF_KFUNC, kernel_release(NULL));
		return -EOPNOTSUPP;
	}
	if (tc_handoff_present(ifindex)) {
		pr_warn("a blitz tc hand-off is already attached to %s: run "
			"`blitz unload %s` first\n",
			ifname, ifname);
		return -EEXIST;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->link_fd = -1;
	h->persist = persist;

	h->skel = blitz_tc_bpf__open();
	if (!h->skel) {
		err = -errno;
		pr_warn("could not open the tc hand-off program: %s\n",
			strerror(-err));
		goto fail;
	}
	err = share_maps(h->skel, config_map_fd, counters_map_fd,
			 responses_map_fd, flows_map_fd);
	if (err) {
		pr_warn("could not share the XDP program's maps with the tc "
			"hand-off: %s\n",
			strerror(-err));
		goto fail;
	}
	err = blitz_tc_bpf__load(h->skel);
	if (err) {
		pr_warn("the kernel refused the tc hand-off program: %s "
			"(run with -v for the verifier's log)\n",
			strerror(-err));
		goto fail;
	}
	h->link_fd =
		bpf_link_create(bpf_program__fd(h->skel->progs.blitz_handoff),
				ifindex, TCX_ATTACH_INGRESS, NULL);
	if (h->link_fd < 0) {
		err = -errno;
		pr_warn("could not attach the tc hand-off to %s's ingress: %s "
			"(TCX needs Linux >= 6.6)\n",
			ifname, strerror(-err));
		goto fail;
	}
	if (persist) {
		snprintf(dir, sizeof(dir), "%s/%s", BLITZ_PIN_ROOT, ifname);
		/* The loader normally made it; a missing one is not fatal. */
		mkdir(BLITZ_PIN_ROOT, 0700);
		mkdir(dir, 0700);
		pin_path(h->pin, sizeof(h->pin), ifname);
		/* No hand-off is attached (checked above): a pin left here
		 * is a dead link's. */
		unlink(h->pin);
		if (bpf_obj_pin(h->link_fd, h->pin)) {
			err = -errno;
			pr_warn("could not pin the tc hand-off link at %s: "
				"%s\n",
				h->pin, strerror(-err));
			h->pin[0] = '\0';
			goto fail;
		}
	}
	pr_debug("tc hand-off attached to %s ingress (%s)\n", ifname,
		 persist ? "pinned" : "owned by this process");
	*out = h;
	return 0;
fail:
	tc_handoff_detach(h);
	return err;
}

int tc_handoff_prepare(const char *ifname, int config_map_fd,
		       int counters_map_fd, int responses_map_fd,
		       int flows_map_fd, unsigned int old_prog_id,
		       struct tc_handoff **out)
{
	static const char *const skip[] = {"config", "counters", "flows",
					   "bursts", NULL};
	char fresh[128] = "";
	struct tc_handoff *h;
	int err;

	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->link_fd = -1;
	h->skel = blitz_tc_bpf__open();
	err = h->skel ? 0 : -errno;
	if (!err)
		err = share_maps(h->skel, config_map_fd, counters_map_fd,
				 responses_map_fd, flows_map_fd);
	if (!err) {
		err = blitz_reuse_state_maps(h->skel->obj, old_prog_id, skip,
					     fresh, sizeof(fresh));
		if (err > 0)
			err = 0;
	}
	if (err) {
		pr_warn("could not prepare the new tc hand-off of %s: %s\n",
			ifname, strerror(-err));
		goto fail;
	}
	if (fresh[0])
		pr_debug("tc hand-off: new maps (layout changed): %s\n", fresh);
	err = blitz_tc_bpf__load(h->skel);
	if (err) {
		pr_warn("the kernel refused the new tc hand-off program: %s "
			"(run with -v for the verifier's log)\n",
			strerror(-err));
		goto fail;
	}
	*out = h;
	return 0;
fail:
	tc_handoff_release(h);
	return err;
}

int tc_handoff_prog_fd(const struct tc_handoff *h)
{
	return h ? bpf_program__fd(h->skel->progs.blitz_handoff) : -1;
}

unsigned int tc_handoff_id(const struct tc_handoff *h)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (!h || bpf_obj_get_info_by_fd(tc_handoff_prog_fd(h), &info, &len))
		return 0;
	return info.id;
}

int tc_handoff_swap(int ifindex, unsigned int old_prog_id, int new_prog_fd)
{
	struct bpf_link_update_opts uo = {.sz = sizeof(uo),
					  .flags = BPF_F_REPLACE};
	__u32 ids[64], cnt = 64, qflags = 0, i;
	int fd, old_fd, err = -ENOENT;

	/* Only a link this namespace's query lists on ifindex. */
	if (bpf_prog_query(ifindex, TCX_ATTACH_INGRESS, 0, &qflags, ids, &cnt))
		return -errno;
	for (i = 0; i < cnt && i < 64; i++)
		if (ids[i] == old_prog_id)
			err = 0;
	if (err)
		return err;
	fd = tcx_link_of_prog(old_prog_id);
	if (fd < 0)
		return fd;
	old_fd = bpf_prog_get_fd_by_id(old_prog_id);
	if (old_fd < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	uo.old_prog_fd = (__u32)old_fd;
	err = bpf_link_update(fd, new_prog_fd, &uo) ? -errno : 0;
	close(old_fd);
	close(fd);
	return err;
}

int tc_handoff_detach(struct tc_handoff *h)
{
	int err = 0;

	if (!h)
		return 0;
	if (h->link_fd >= 0) {
		/* Detach explicitly: a pin or a forked child may still hold
		 * a reference to the link. */
		if (bpf_link_detach(h->link_fd) && errno != ENOLINK) {
			err = -errno;
			pr_warn("could not detach the tc hand-off: %s\n",
				strerror(errno));
		}
		close(h->link_fd);
	}
	if (h->pin[0] && unlink(h->pin) && errno != ENOENT && !err)
		err = -errno;
	blitz_tc_bpf__destroy(h->skel);
	free(h);
	return err;
}

void tc_handoff_release(struct tc_handoff *h)
{
	if (!h)
		return;
	if (h->link_fd >= 0)
		close(h->link_fd);
	blitz_tc_bpf__destroy(h->skel);
	free(h);
}
