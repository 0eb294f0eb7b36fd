// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_unload.c - `blitz unload <ifname>`: take blitz off an interface of
 * this network namespace, whoever attached it (load, or a serve that was
 * killed), and remove its pins. Owns only the command line; loader.c does
 * the work (and leaves another namespace's blitz alone).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "loader.h"
#include "log.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: blitz unload <ifname> [-v]\n"
		   "Detach blitz's XDP program from <ifname> (in this network "
		   "namespace) and\nremove its pins under " BLITZ_PIN_ROOT
		   "/<ifname>/.\n\n"
		   "  -v, --verbose  show libbpf/libxdp messages\n"
		   "  -h, --help     this text\n"
		   "      --version  print the version\n");
}

int cmd_unload(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			blitz_log_level = LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("blitz %s\n", BLITZ_VERSION);
			return 0;
		default:
			pr_warn("unknown option '%s': see `blitz unload -h`\n",
				argv[optind - 1]);
			return 1;
		}
	}
	if (optind >= argc) {
		pr_warn("missing <ifname>: blitz unload <ifname>\n");
		return 1;
	}
	if (optind + 1 < argc) {
		pr_warn("unexpected argument '%s': see `blitz unload -h`\n",
			argv[optind + 1]);
		return 1;
	}
	blitz_log_quiet_libs();
	return blitz_loader_unload(argv[optind]) ? 1 : 0;
}
