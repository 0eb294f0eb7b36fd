// SPDX-License-Identifier: GPL-2.0
/*
 * loader_checks.c - the checks every verb that touches BPF makes (loader.h):
 * privileges, bpffs, the interface, and what is attached to it now.
 *
 * Owns: finding blitz's program on an interface. Must never change
 * anything it looks at.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "blitz_cookie2.h"
#include "blitz_ksock.h"
#include "host_sys.h"
#include "http.h"
#include "ksock.h"
#include "loader.h"
#include "loader_int.h"
#include "log.h"
#include "nic_info.h"
#include "serve_state.h"
#include "tc_handoff.h"

/* ---- checks shared by every verb that touches BPF ---- */

int blitz_check_privileges(void)
{
	uint64_t caps;
	bool bpf, net_admin, sys_admin;
	int err = host_caps(&caps);

	if (err) {
		pr_warn("cannot read this process's capabilities: %s\n",
			strerror(-err));
		return err;
	}
	bpf = host_cap_has(caps, CAP_BPF);
	net_admin = host_cap_has(caps, CAP_NET_ADMIN);
	sys_admin = host_cap_has(caps, CAP_SYS_ADMIN);
	if (!net_admin || !(bpf || sys_admin)) {
		pr_warn("needs root (CAP_BPF or CAP_SYS_ADMIN, and "
			"CAP_NET_ADMIN): run it with sudo\n");
		return -EPERM;
	}
	return 0;
}

int blitz_check_bpffs(void)
{
	struct statfs st;

	if (statfs(BPFFS_ROOT, &st) || st.f_type != BPF_FS_MAGIC) {
		pr_warn("no bpf filesystem at " BPFFS_ROOT
			": mount it with `mount -t bpf bpf " BPFFS_ROOT "`\n");
		return -ENOENT;
	}
	return 0;
}

int blitz_ifindex(const char *ifname)
{
	unsigned int idx = 0;

	if (strlen(ifname) < IF_NAMESIZE)
		idx = if_nametoindex(ifname);
	if (!idx) {
		pr_warn("no interface '%s': see `ip link`\n", ifname);
		return -ENODEV;
	}
	return (int)idx;
}

int blitz_pin_path(char *buf, size_t len, const char *ifname, const char *name)
{
	int n;

	/* The name becomes a path that unload empties: one that is not an
	 * interface's ("..", "a/../../etc") must never name another folder. */
	if (!*ifname || strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/') ||
	    !strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return -EINVAL;
	if (name)
		n = snprintf(buf, len, "%s/%s/%s", BLITZ_PIN_ROOT, ifname,
			     name);
	else
		n = snprintf(buf, len, "%s/%s", BLITZ_PIN_ROOT, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int blitz_prog_name(__u32 id, char *name)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd, err;

	name[0] = '\0';
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (err)
		return -errno;
	memcpy(name, info.name, BPF_OBJ_NAME_LEN);
	name[BPF_OBJ_NAME_LEN - 1] = '\0';
	return 0;
}

/* blitz's program inside a libxdp dispatcher on ifindex, 0 when none. */
static __u32 blitz_in_dispatcher(int ifindex)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	__u32 id = 0;

	mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (libxdp_get_error(mp) || !mp)
		return 0;
	while ((p = xdp_multiprog__next_prog(p, mp))) {
		if (!strcmp(xdp_program__name(p), BLITZ_PROG_NAME)) {
			id = xdp_program__id(p);
			break;
		}
	}
	xdp_multiprog__close(mp);
	return id;
}

/*
 * The XDP bpf_link of program prog_id, as an fd, or -ENOENT. Matched by
 * the program (callers pass one bpf_xdp_query() reported in this network
 * namespace), never by ifindex: link info carries an ifindex but no
 * network namespace, and every testbed veth is ifindex 2 in its own.
 */
int ld_link_fd_of_prog(__u32 prog_id)
{
	struct bpf_link_info info;
	__u32 id = 0, len;
	int fd;

	while (!bpf_link_get_next_id(id, &id)) {
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_XDP && info.prog_id == prog_id)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int blitz_find_attached(int ifindex, struct blitz_attached *a)
{
	static const char *const mode_of_slot[] = {"native", "skb", "hw"};
	static const char *const iplink_slot[] = {"xdpdrv", "xdpgeneric",
						  "xdpoffload"};
	struct bpf_xdp_query_opts q = {.sz = sizeof(q)};
	char name[BPF_OBJ_NAME_LEN];
	__u32 ids[3];
	int err, i, lfd;

	memset(a, 0, sizeof(*a));
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		return err;
	ids[0] = q.drv_prog_id;
	ids[1] = q.skb_prog_id;
	ids[2] = q.hw_prog_id;
	for (i = 0; i < 3 && !a->prog_id; i++) {
		if (!ids[i])
			continue;
		if (!a->other_id) {
			a->other_id = ids[i];
			a->other_slot = iplink_slot[i];
		}
		if (blitz_prog_name(ids[i], name))
			continue;
		if (!strcmp(name, BLITZ_PROG_NAME)) {
			a->prog_id = ids[i];
		} else if (!strcmp(name, "xdp_dispatcher")) {
			a->prog_id = blitz_in_dispatcher(ifindex);
			a->dispatcher = a->prog_id != 0;
		}
		if (a->prog_id) {
			a->mode = mode_of_slot[i];
			a->other_id = 0;
			a->other_slot = NULL;
		}
	}
	if (a->prog_id) {
		lfd = ld_link_fd_of_prog(a->prog_id);
		if (lfd >= 0) {
			a->link = true;
			close(lfd);
		}
	}
	return 0;
}
