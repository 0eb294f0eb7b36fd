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
#include <stdint.h>

#include "cli.h"

enum blitz_xdp_mode_req {
	BLITZ_XDP_AUTO = 0, /* native, else skb with a line saying so */
	BLITZ_XDP_NATIVE,
	BLITZ_XDP_SKB,
};

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
	const struct blitz_service_opts *svc;
};

struct blitz_loaded; /* opaque */

int blitz_loader_attach(const struct blitz_loader_opts *o,
			struct blitz_loaded **out);
/* Detach what attach attached, remove its pins, free l. */
int blitz_loader_detach(struct blitz_loaded *l);
int blitz_loaded_xsks_fd(const struct blitz_loaded *l);
int blitz_loaded_counters_fd(const struct blitz_loaded *l);
int blitz_loaded_config_fd(const struct blitz_loaded *l);
/* "native" or "skb": what the attach ended up with. */
const char *blitz_loaded_mode(const struct blitz_loaded *l);

/* blitz unload: detach whatever blitz left on ifname (from pins or from a
 * killed `serve`) and remove every pin. */
int blitz_loader_unload(const char *ifname);

#endif /* BLITZ_LOADER_H */
