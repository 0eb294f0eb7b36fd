/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tc_handoff.h - attach and detach the TC ingress program that hands a
 * connection the XDP program answered statelessly over to the kernel's
 * listening socket (bpf/blitz_tc.bpf.c, docs/architecture.md "Stateless TCP").
 *
 * Owns: the TC program's skeleton and its attachment. The program is put
 * on the interface's TCX ingress hook through a bpf_link (kernel >= 6.6,
 * and the kfunc it needs is >= 6.9 anyway):
 *   persist = true  (blitz load): the link is pinned at
 *     BLITZ_PIN_ROOT/<ifname>/tc_link, so the hand-off keeps working after
 *     the process exits; removing the pin (or tc_handoff_remove) detaches.
 *   persist = false (blitz serve): the link belongs to the process, so the
 *     hand-off goes away with it even when the process is SIGKILLed.
 * The program shares the XDP program's "config", "counters" and
 * "responses" maps (the caller passes their fds; reused, never created).
 * Must never touch the XDP attachment or any tc filter it did not create.
 * Every function returns 0 or -errno and prints one line for the user on
 * failure.
 */
#ifndef BLITZ_TC_HANDOFF_H
#define BLITZ_TC_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

/* The pin name of the link under BLITZ_PIN_ROOT/<ifname>/. */
#define TC_HANDOFF_PIN_NAME "tc_link"
/* The BPF program's name, how status and remove recognise it. */
#define TC_HANDOFF_PROG_NAME "blitz_handoff"

struct tc_handoff; /* opaque */

/* The Linux version each kernel feature blitz uses arrived in. */
#define KERNEL_XDP_LINK 5, 9  /* XDP through a bpf_link (serve) */
#define KERNEL_KTIME_TAI 6, 1 /* bpf_ktime_get_tai_ns: the Date header */
#define KERNEL_TCX 6, 6	      /* TCX ingress links: the hand-off's hook */
#define KERNEL_HANDOFF 6, 9   /* bpf_sk_assign_tcp_reqsk: the hand-off */

/*
 * The running kernel's release (uname -r) and version. A test may set
 * BLITZ_TEST_KERNEL_RELEASE to pretend an older kernel: then *pretend is
 * true and kernel_older_than() turns every newer feature off, so the
 * messages of an old kernel can be checked here. Nothing else reads it.
 */
const char *kernel_release(bool *pretend);

/* True when the kernel (or the pretended one) is older than maj.min. */
bool kernel_older_than(int maj, int min);

/*
 * True when this kernel has what the hand-off needs: the kfunc
 * bpf_sk_assign_tcp_reqsk() (Linux >= 6.9, CONFIG_SYN_COOKIES) in its BTF.
 * Cheap (reads /sys/kernel/btf/vmlinux once and caches the answer).
 */
bool tc_handoff_supported(void);

/*
 * What the xdp engine's hand-off needs from the kernel of this network
 * namespace, checked before it is loaded: the kfunc in the BTF and usable
 * (a test run of bpf/blitz_probe.bpf.c: a kernel without
 * CONFIG_SYN_COOKIES has it as a stub returning -EOPNOTSUPP),
 * net.ipv4.tcp_syncookies present and not 0 (cookie_v4_check() ignores a
 * handed-over request sock otherwise), net.ipv4.tcp_timestamps on (the
 * TSecr carries the cookie of every segment past the handshake: the xdp
 * engine cannot leave timestamps out as it leaves out SACK and window
 * scaling, tc_handoff_kernel_opts). Prints
 * one line per missing piece saying what to change; 0 or -EOPNOTSUPP.
 * Opens a listening socket on an ephemeral port for the probe's length.
 */
int tc_handoff_prereqs(void);

/*
 * What the kernel of this network namespace would negotiate, as
 * config.flags: BLITZ_CFG_NO_SACK when net.ipv4.tcp_sack is 0,
 * BLITZ_CFG_NO_WSCALE when net.ipv4.tcp_window_scaling is 0 (the kfunc
 * refuses sack_ok / wscale_ok then). The loader reads it at load, serve
 * and reload; the XDP SYN-ACK leaves those options out.
 */
__u32 tc_handoff_kernel_opts(void);
/* One info line saying which options flags leaves out; none when none. */
void tc_handoff_say_opts(const char *ifname, __u32 flags);
/* For status: 1 and a line in buf when the sysctls no longer say what
 * flags (a loaded config's) says, naming the fix (a reload, or for serve
 * a restart); else 0 and "". */
int tc_handoff_opts_drift(const char *ifname, __u32 flags, bool serve,
			  char *buf, size_t len);
/* The probe alone: the kfunc's answer in a test run on a listener of
 * this namespace (a socket on an ephemeral port of 0.0.0.0 for the call's
 * length): -EINVAL (it checked its arguments: it works, a test run is not
 * TC ingress), -EOPNOTSUPP (a stub), another -errno (no answer). */
int tc_handoff_kfunc_probe(void);

/*
 * Load the TC program with the XDP program's config, counters, responses
 * and flows maps (responses_map_fd -1: none, the program then answers
 * no pipelined batch itself; flows_map_fd -1: a table of its own, so no
 * segment without timestamps past the handshake is handed off) and
 * attach it to ifindex's ingress. -EOPNOTSUPP
 * (with a line saying why) when tc_handoff_supported() is false; -EEXIST when a
 * blitz hand-off is already attached there.
 */
int tc_handoff_attach(const char *ifname, int ifindex, int config_map_fd,
		      int counters_map_fd, int responses_map_fd,
		      int flows_map_fd, bool persist, struct tc_handoff **out);

/*
 * For `blitz reload`: load a new instance of the TC program with the given
 * config, counters, responses and flows maps (the new XDP program's), the
 * per-flow maps of the running hand-off old_prog_id reused
 * (blitz_reuse_state_maps), without attaching it. Then tc_handoff_swap() puts
 * it in place of the old one.
 */
int tc_handoff_prepare(const char *ifname, int config_map_fd,
		       int counters_map_fd, int responses_map_fd,
		       int flows_map_fd, unsigned int old_prog_id,
		       struct tc_handoff **out);
int tc_handoff_prog_fd(const struct tc_handoff *h);
unsigned int tc_handoff_id(const struct tc_handoff *h);
/* Swap the program of the TCX link on ifindex that runs old_prog_id for
 * new_prog_fd in one step (bpf_link_update with BPF_F_REPLACE: refused if
 * the link runs something else meanwhile). 0 or -errno (no line). */
int tc_handoff_swap(int ifindex, unsigned int old_prog_id, int new_prog_fd);

/* Detach what attach attached (unpin when persistent), free h. NULL ok. */
int tc_handoff_detach(struct tc_handoff *h);

/* Free h without detaching: what `blitz load` does before it exits (the
 * pinned link keeps the program attached). NULL ok. */
void tc_handoff_release(struct tc_handoff *h);

/*
 * ifindex is always this network namespace's: what is attached is found
 * with the TCX query made in the caller's namespace, never by walking
 * links by ifindex (every namespace has its own ifindex 2).
 *
 * For `blitz unload` (and after a killed `serve`): detach every blitz
 * hand-off link on ifindex, whoever made it, and remove the pin
 * BLITZ_PIN_ROOT/<ifname>/tc_link unless it holds a link still attached
 * (another namespace's interface of the same name). 0 also when there was
 * nothing to remove.
 */
int tc_handoff_remove(int ifindex);

/* For `blitz status` and attach: is a blitz hand-off program attached on
 * ifindex? */
bool tc_handoff_present(int ifindex);
/* The id of that program, 0 when none. */
unsigned int tc_handoff_prog_id(int ifindex);

#endif /* BLITZ_TC_HANDOFF_H */
