// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - `blitz <verb> ...`: finds the verb and hands it the rest of the
 * command line (argv[0] = the verb). Owns only the dispatch table and the
 * top-level -h/--version; each verb parses its own options (cli.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "log.h"

static const struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} verbs[] = {
	{"load", cmd_load, "attach the XDP engine to an interface and exit"},
	{"unload", cmd_unload, "detach blitz from an interface, remove pins"},
	{"status", cmd_status, "show where blitz is loaded"},
	{"stats", cmd_stats, "show the XDP engine's counters and rates"},
	{"serve", cmd_serve, "serve in the foreground with kernel fallback"},
	{"bench", cmd_bench, "kernel-bypass HTTP load generator"},
	{"doctor", cmd_doctor, "check this machine and an interface for blitz"},
};

#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: blitz <command> [options]\n"
		   "       blitz <command> -h   for the command's options\n\n"
		   "blitz answers HTTP hello-world requests before the "
		   "kernel's TCP stack sees them.\n\ncommands:\n");
	for (i = 0; i < N_VERBS; i++)
		fprintf(f, "  %-8s %s\n", verbs[i].name, verbs[i].help);
	fprintf(f, "\n  -h, --help     this text\n"
		   "      --version  print the version\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("blitz %s\n", BLITZ_VERSION);
		return 0;
	}
	for (i = 0; i < N_VERBS; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	pr_warn("unknown command '%s': see `blitz -h`\n", argv[1]);
	return 1;
}
