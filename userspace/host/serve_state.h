/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve_state.h - the runtime state file of a running `blitz serve`, so
 * that `blitz status` can show every serve (the epoll-only and dpdk tiers
 * leave nothing in BPF to find) and tell a live one from a killed one.
 *
 * One file per serve process under SERVE_STATE_DIR, named
 * serve-<ifname or "any">-<port>-<pid>.state, key=value lines:
 *   pid, starttime (of that pid, so a reused pid is not taken for the
 *   serve), netns (inode of /proc/self/ns/net), tier, ifname (empty: every
 *   interface), port, addresses ("*" or a comma list), engine_pid (0: no
 *   engine child), started (unix seconds).
 * Written whole to a temporary file and renamed over the old one, so a
 * reader never sees half of it; removed when serve exits cleanly.
 *
 * Owns: the file format and the liveness check. Must never: be written by
 * anything but the serve process it names (the afxdp child is a fork of
 * serve and leaves it alone), or remove the file of a live serve.
 */
#ifndef BLITZ_SERVE_STATE_H
#define BLITZ_SERVE_STATE_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "service.h"

#define SERVE_STATE_DIR "/run/blitz"

struct serve_state {
	pid_t pid;
	unsigned long long starttime; /* of pid (/proc/pid/stat): not reused */
	unsigned long long netns; /* inode of the serve's network namespace */
	char tier[64];		  /* "xdp-native+epoll", "epoll", ... */
	char ifname[IF_NAMESIZE]; /* "": every interface (epoll alone) */
	unsigned int port;
	char addrs[BLITZ_MAX_ADDRS * 2 * 48]; /* "*" or "a,b,..." */
	pid_t engine_pid;		      /* afxdp/dpdk child; 0: none */
	long long started;		      /* unix seconds */
	char path[160];			      /* the file it lives in */
};

enum serve_state_life {
	SERVE_ALIVE,	  /* the pid is a running blitz */
	SERVE_GONE,	  /* stale: nothing runs under that pid any more */
	SERVE_OTHER_NETNS /* alive, but in another network namespace */
};

/* Fill st for this process (pid, netns, started, path) serving ifname
 * (NULL: every interface) and svc; the tier starts as "starting". Also
 * removes the state files left by serves of this network namespace that
 * are gone. Writes nothing. */
void serve_state_init(struct serve_state *st, const char *ifname,
		      const struct blitz_service *svc);
/* Set the tier and engine pid and write the file (atomically). A failure
 * is said once (at debug level after that) and otherwise ignored: the
 * state file is for status, serving does not depend on it. */
void serve_state_set(struct serve_state *st, const char *tier,
		     pid_t engine_pid);
/* Remove this process's file (clean exit). */
void serve_state_remove(struct serve_state *st);

/* Field 22 of /proc/<pid>/stat (start time in ticks): with the pid it
 * names one process, even once the pid is reused. 0 when unknown. */
unsigned long long serve_state_starttime(pid_t pid);
/* The inode of this process's network namespace (0 when unknown). */
unsigned long long serve_state_netns_here(void);
/* Read every state file into out[0..max); returns how many. */
int serve_state_list(struct serve_state *out, int max);
/* Alive (pid runs and is blitz), gone, or alive in another namespace. */
enum serve_state_life serve_state_life(const struct serve_state *st);
/* The pid of a serve of ifname in state life (the first found), else 0. */
pid_t serve_state_pid_on(const char *ifname, enum serve_state_life life);
/* blitz unload ifname: remove the state files of ifname's serves that
 * are gone (in this namespace, or of a namespace no pid runs any more);
 * returns how many. Live serves' files are left alone. */
int serve_state_remove_stale(const char *ifname);

/*
 * The afxdp engine child's report of its sockets' modes (afxdp_engine.h
 * mode_report): SERVE_STATE_DIR/afxdp-<engine pid>.xsk, written by that
 * child, read by status, removed by the engine at exit or, when it was
 * killed, by serve after reaping it (serve_state_xsk_reap).
 */
void serve_state_xsk_path(pid_t engine_pid, char *buf, size_t len);
/* Its lines as "IF: AF_XDP socket on queue N: MODE (WHY)\n" into out
 * ("" when there is none); returns how many sockets. */
int serve_state_xsk_lines(pid_t engine_pid, const char *ifname, char *out,
			  size_t len);
/* Remove the reports of engine pids that no longer run. */
void serve_state_xsk_reap(void);

#endif /* BLITZ_SERVE_STATE_H */
