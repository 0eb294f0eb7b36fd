// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - `blitz <verb> ...`: finds the verb in cli_verbs[] (cmd_help.c)
 * and hands it the rest of the command line (argv[0] = the verb). Owns
 * only the top-level -h/--version; each verb parses its own options
 * (cli.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "log.h"

int main(int argc, char **argv)
{
	const struct cli_verb *v;

	if (argc < 2) {
		cli_usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		cli_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("blitz %s\n", BLITZ_VERSION);
		return 0;
	}
	for (v = cli_verbs; v->spec; v++)
		if (!strcmp(argv[1], v->spec->name))
			return v->fn(argc - 1, argv + 1);
	pr_warn("unknown command '%s': see `blitz -h`\n", argv[1]);
	return 1;
}
