// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_unload.c - `blitz unload <ifname>`: take blitz off an interface of
 * this network namespace, whoever attached it (load, or a serve that was
 * killed), and remove its pins and the state file a killed serve left
 * (serve_state.h). Owns only the command line; loader.c does the work
 * (and leaves another namespace's blitz alone), serve_state.c removes
 * only the files of serves that are gone.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "loader.h"
#include "log.h"
#include "serve_state.h"

const struct cmd_spec cmd_unload_spec = {
	.name = "unload",
	.operands = "<ifname>",
	.summary = "detach blitz from an interface, remove pins",
	.about = "Detach blitz's XDP program from <ifname> (in this network "
		 "namespace) and remove its pins under " BLITZ_PIN_ROOT
		 "/<ifname>/.",
	.groups = {options_common},
};

/* The pid of a running serve of this namespace whose XDP link is on
 * ifname, else 0. Its program is its own: detached under it, the serve
 * runs on and `status` still shows its fast path. (An epoll serve next to
 * a `blitz load` owns no program: that one unloads.) */
static pid_t live_serve(const char *ifname)
{
	struct blitz_attached a;
	int idx = (int)if_nametoindex(ifname);

	if (idx <= 0 || blitz_find_attached(idx, &a) || !a.prog_id || !a.link)
		return 0;
	return serve_state_pid_on(ifname, SERVE_ALIVE);
}

int cmd_unload(int argc, char **argv)
{
	int ret, stale;
	pid_t serve;

	ret = cli_parse(&cmd_unload_spec, argc, argv, NULL, NULL, 1, 1);
	if (ret != CLI_CONTINUE)
		return ret;
	serve = live_serve(argv[optind]);
	if (serve) {
		pr_warn("%s is run by `blitz serve` (pid %d): stop it (`kill "
			"%d`) and it detaches everything; unload is for `blitz "
			"load` and what a killed serve left\n",
			argv[optind], (int)serve, (int)serve);
		return 1;
	}
	blitz_log_quiet_libs();
	ret = blitz_loader_unload(argv[optind]);
	/* A killed serve's file goes whatever the pins said: it is stale.
	 * When that file was all there was (an epoll-only serve, or the
	 * interface gone), the unload did what was asked. */
	stale = serve_state_remove_stale(argv[optind]);
	if (stale && (ret == -ENOENT || ret == -ENODEV))
		ret = 0;
	return ret ? 1 : 0;
}
