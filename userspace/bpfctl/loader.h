/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loader.h - put blitz's XDP program (and, where the kernel allows, its TC
 * hand-off program) onto an interface, and take it off again.
 *
 * Owns: the skeleton's lifetime, filling the config/responses maps, pins
 * under BLITZ_PIN_ROOT/<ifname>/, and undoing a partial attach. Every
 * function prints one line for the user on failure and returns -errno;
 * nothing is left half-attached.
 */
#ifndef BLITZ_LOADER_H
#define BLITZ_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "service.h"

struct http_responses;
struct bpf_object;

enum blitz_xdp_mode_req {
	BLITZ_XDP_AUTO = 0, /* native, else skb with a line saying so */
	BLITZ_XDP_NATIVE,
	BLITZ_XDP_SKB,
};

struct blitz_attached;

struct blitz_loader_opts {
	const char *ifname;
	enum blitz_xdp_mode_req xdp_mode;
	enum blitz_engine_mode engine; /* BLITZ_MODE_XDP or BLITZ_MODE_AFXDP */
	/*
	 * true (blitz load): attach through libxdp and pin the maps, so the
	 * program keeps serving after the process exits.
	 * false (blitz serve): a bpf_link owned by the process, so the
	 * program goes away with it; maps still pinned for status/stats.
	 */
	bool persist;
	const struct blitz_service *svc; /* port, addresses */
	/* The responses built once from svc (service_responses()), for the
	 * xdp engine's templates; NULL in afxdp mode (no templates). */
	const struct http_responses *resp;
	/* Destination MACs that are ours besides the interface's (--mac:
	 * VRRP, a bond's other address). */
	int n_macs;
	unsigned char macs[BLITZ_MAX_MACS - 1][6];
	/*
	 * true: attach with the service's port held back, so the program
	 * passes every frame until blitz_loaded_arm(). The xdp engine's
	 * callers attach the TC hand-off in between: an XDP program that
	 * answers a handshake before the hand-off is there leaves the
	 * kernel a connection it has no socket for, and the kernel resets
	 * it at the first segment XDP passes (a pipelined batch, a body).
	 */
	bool hold;
	/*
	 * Non-NULL: the caller serves without XDP when another blitz program
	 * is there (-EEXIST) and says so itself, from what is there (filled
	 * in here: a serve's bpf_link or a load's). The refusal's advice
	 * ("stop that serve first", "blitz reload") would contradict it, so
	 * it goes to the debug log.
	 */
	struct blitz_attached *fallback;
};

struct blitz_loaded; /* opaque */

int blitz_loader_attach(const struct blitz_loader_opts *o,
			struct blitz_loaded **out);
/* Give the program held back by opts.hold its service port: from now on
 * it answers. 0, or -errno said in one line. */
int blitz_loaded_arm(struct blitz_loaded *l);
/* Detach what attach attached, remove its pins, free l. */
int blitz_loader_detach(struct blitz_loaded *l);
int blitz_loaded_xsks_fd(const struct blitz_loaded *l);
int blitz_loaded_counters_fd(const struct blitz_loaded *l);
int blitz_loaded_config_fd(const struct blitz_loaded *l);
int blitz_loaded_responses_fd(const struct blitz_loaded *l);
/* The per-flow table of connections without timestamps (blitz_flow.h). */
int blitz_loaded_flows_fd(const struct blitz_loaded *l);
/* "native" or "skb": what the attach ended up with. */
const char *blitz_loaded_mode(const struct blitz_loaded *l);

/* The kernel-socket filter of prog_id (the XDP program on ifname) in one
 * line for `blitz status`: on (how full), or off (every segment gets the
 * socket lookup). */
void blitz_ksock_line(const char *ifname, __u32 prog_id, char *buf, size_t len);

/* blitz unload: detach whatever blitz left on ifname in this network
 * namespace (from `load`, or a killed `serve`) and remove its pins; pins
 * another namespace's program uses (an interface of the same name there)
 * are left alone, with a line saying so (-EBUSY when that is all). */
int blitz_loader_unload(const char *ifname);

/* ---- shared with status, stats, serve and doctor ---- */

/* The smallest MTU the xdp engine answers on. */
#define BLITZ_MIN_MTU 576
/* The largest body the xdp engine answers in one segment at this MTU with
 * the headers of r (service_responses(); 0 below BLITZ_MIN_MTU). 0. */
int blitz_xdp_max_body(const struct http_responses *r, unsigned int mtu,
		       size_t *max_body);
/* The XDP program was built multi-buffer (SEC("xdp.frags")): it attaches
 * natively at an MTU over a page where the driver has RX_SG. */
bool blitz_xdp_has_frags(void);
/* The largest MTU at which a frame fits one page (4 KiB pages: 3506):
 * below it the loader loads the program single-buffer, as drivers then
 * keep their single-buffer fast path (and veth its peer's GSO off). */
long blitz_xdp_single_buffer_mtu(void);
/* Can the xdp engine run natively at this MTU? */
enum blitz_mtu_fit {
	BLITZ_MTU_TOO_SMALL, /* below BLITZ_MIN_MTU: no reply fits */
	BLITZ_MTU_SINGLE,    /* one page: loaded single-buffer */
	BLITZ_MTU_MULTI,     /* over a page: multi-buffer, the driver has it */
	BLITZ_MTU_PROG_SINGLE,	/* over a page, the program is single-buffer */
	BLITZ_MTU_DRIVER_NO_SG, /* over a page, the driver has no RX_SG */
};
/* The rule doctor reports and the loader follows: mtu against limit
 * (blitz_xdp_single_buffer_mtu()), frags (blitz_xdp_has_frags()) and
 * driver_sg (the driver's xdp-features have RX_SG, or are unknown). */
enum blitz_mtu_fit blitz_xdp_mtu_fit(unsigned int mtu, long limit, bool frags,
				     bool driver_sg);

/* What of blitz is attached to an interface right now. */
struct blitz_attached {
	__u32 prog_id;	/* blitz's program; 0 when none */
	__u32 other_id; /* another XDP program that is not blitz's */
	/* ip link's name of other_id's slot, "xdpdrv", "xdpgeneric" or
	 * "xdpoffload": `ip link set dev IF <it> off` removes it (plain
	 * "xdp off" leaves a generic program in place). */
	const char *other_slot;
	const char *mode; /* "native", "skb" or "hw" when prog_id */
	bool dispatcher;  /* inside a libxdp dispatcher */
	bool link;	  /* a bpf_link (blitz serve) rather than netlink */
};

/* 0 and *a filled (all zero when nothing is attached), or -errno. */
int blitz_find_attached(int ifindex, struct blitz_attached *a);
/* Each prints one line and returns -errno when the check fails. */
int blitz_check_privileges(void);
int blitz_check_bpffs(void);
int blitz_ifindex(const char *ifname); /* >0, or -ENODEV said */
/* The name of BPF program id into name, BPF_OBJ_NAME_LEN bytes ("" and
 * -errno when unknown). */
int blitz_prog_name(__u32 id, char *name);
/* BLITZ_PIN_ROOT/<ifname>[/<name>] into buf; name may be NULL. -EINVAL
 * when ifname cannot be an interface's name (empty, too long, a '/', "."
 * or ".."), -ENAMETOOLONG when buf is too small. */
int blitz_pin_path(char *buf, size_t len, const char *ifname, const char *name);
/* The pin name of the "counters" map: one entry, a struct blitz_counters
 * per CPU. Older blitz pinned a map of an entry per counter as "counters";
 * a new name keeps their readers, whose buffers fit that one, off this
 * one (the kernel would write a whole block per CPU into them). */
#define BLITZ_PIN_COUNTERS "counters_block"
#define BLITZ_PIN_COUNTERS_OLD "counters"
__u32 blitz_loaded_prog_id(const struct blitz_loaded *l);
/* Free this process's handles but leave the program attached and the
 * pins in place (blitz load exits this way). */
void blitz_loaded_release(struct blitz_loaded *l);
/* Read BLITZ_PIN_ROOT/<ifname>/config; map_id (may be NULL) gets its id.
 * -ENOENT when not pinned. Prints nothing. */
int blitz_pinned_config(const char *ifname, struct blitz_config *cfg,
			__u32 *map_id);
/*
 * Key rotation (docs/cookie-v2.md): key becomes the current cookie key,
 * the current one the previous key, accepted for one validity period
 * (2 epochs + 2 skews) from now_unix_ns and answered with RST for 8
 * epochs more. Returns 0, 1 when key is the current key already (nothing
 * changes), or -EBUSY when the previous slot holds another key that is
 * still accepted (its connections would break): nothing changes.
 * A key staged by blitz_config_stage_key() becomes current this way.
 */
int blitz_config_rotate_key(struct blitz_config *c, const uint64_t key[2],
			    uint64_t now_unix_ns);
/* prev_accept_unix_ns and prev_rst_unix_ns of a staged next key. */
#define BLITZ_KEY_STAGED UINT64_MAX
/*
 * Stage key as a fleet's next key: accepted (never minted with) until a
 * rotation makes it current, so that every host accepts it before any
 * host mints with it. 0 staged, 1 already staged, -EEXIST it is the
 * current key, -EBUSY the previous slot holds a key still accepted.
 */
int blitz_config_stage_key(struct blitz_config *c, const uint64_t key[2],
			   uint64_t now_unix_ns);
/*
 * blitz reload (docs/cookie-v2.md "Key rotation", README "Running a
 * fleet"): what is loaded on ifname now, read from its pins and checked
 * to be reloadable (the xdp engine under `blitz load`, attached in this
 * network namespace, not inside a libxdp dispatcher). 0 and *st filled,
 * or -errno with one line printed (nothing is changed either way).
 */
struct blitz_loaded_state {
	struct blitz_config cfg;
	struct blitz_resp resp[BLITZ_RESP_KINDS];
	__u32 prog_id;	  /* the XDP program running now */
	__u32 tc_prog_id; /* its hand-off program, 0 when none */
	unsigned int mtu; /* the interface's MTU now */
	__u16 mss;	  /* the MSS that MTU gives */
	bool skb_mode;	  /* attached in skb (generic) mode */
};
int blitz_loader_loaded_state(const char *ifname,
			      struct blitz_loaded_state *st);
/* The response templates of r (the xdp kinds) into resp[KINDS], and
 * their lengths, offsets and sums into cfg->resp; -EMSGSIZE (said) when
 * the 200 response does not fit one segment of mss at mtu. */
int blitz_loader_templates(const struct http_responses *r, __u16 mss,
			   unsigned int mtu, struct blitz_config *cfg,
			   struct blitz_resp *resp);
/* CLOCK_REALTIME - CLOCK_TAI now (struct blitz_config's tai_to_unix_ns). */
__s64 blitz_tai_to_unix_ns(void);

/* What blitz_loader_reload did. */
struct blitz_reload_result {
	__u32 old_prog_id, new_prog_id;
	__u32 old_tc_id, new_tc_id;
	int maps_kept;	 /* state maps the new programs took over */
	char fresh[128]; /* maps made anew (their layout changed) */
};
/*
 * Swap the programs on ifname (st from blitz_loader_loaded_state) for new
 * instances of this build's XDP and TC programs whose config and responses
 * are new maps filled with cfg and resp before they run; the per-flow and
 * counter maps of the running programs are reused (bpf_map__reuse_fd).
 * The TC hand-off is switched first (bpf_link_update on its pinned TCX
 * link), then XDP (an atomic netlink replace of the program, expected old
 * id): each frame sees one whole configuration, old or new. Any failure
 * before the XDP switch leaves everything as it was (the TC link is put
 * back). 0, or -errno with one line printed.
 */
int blitz_loader_reload(const char *ifname, const struct blitz_loaded_state *st,
			const struct blitz_config *cfg,
			const struct blitz_resp *resp,
			struct blitz_reload_result *res);
/*
 * Reuse, for the maps of obj (not loaded yet), the maps of the running
 * program old_prog_id that carry state across a reload: per-flow hash and
 * LRU maps, "counters" and "xsks", matched by name, when their layout is
 * the same (else they stay new and their names are added to fresh, space
 * separated). Names in skip (NULL-terminated) are left alone. The number
 * reused, or -errno.
 */
int blitz_reuse_state_maps(struct bpf_object *obj, __u32 old_prog_id,
			   const char *const *skip, char *fresh,
			   size_t fresh_len);

/* The id of a loaded blitz XDP program (or libxdp extension) that uses
 * map_id, 0 when none does (pins left by a program that is gone). The tc
 * hand-off, which shares the map, does not count. */
__u32 blitz_prog_using_map(__u32 map_id);

/*
 * Whose are the pins under BLITZ_PIN_ROOT/<ifname>/? They are per name
 * and shared by every network namespace, while ifindex and attachments
 * are per namespace: status and unload act on pins only when they are
 * this namespace's (or nobody's).
 */
enum blitz_pins_owner {
	BLITZ_PINS_NONE = 0,	/* no pin directory */
	BLITZ_PINS_HERE,	/* used by `attached`, the program found here */
	BLITZ_PINS_OTHER_NETNS, /* used by a program not attached here */
	BLITZ_PINS_STALE,	/* used by no program (a killed serve) */
};
/* attached: blitz's program on ifname in this namespace (0 when none);
 * *user (may be NULL) gets the program that uses the pins, 0 when none.
 * Prints nothing. */
enum blitz_pins_owner blitz_pins_owner(const char *ifname, __u32 attached,
				       __u32 *user);
/* Why ifname's BLITZ_PINS_STALE pins are there, in words for the user:
 * "stale pins of a serve that was killed (pid N)" when a gone serve's
 * state file names ifname (returns 1), else a line saying no program
 * uses them (0). load and serve reclaim such pins; status shows this. */
int blitz_stale_pins_why(const char *ifname, char *buf, size_t len);

#endif /* BLITZ_LOADER_H */
