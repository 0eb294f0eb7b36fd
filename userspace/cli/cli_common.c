// SPDX-License-Identifier: GPL-2.0
/*
 * cli_common.c - the options the verbs share (cli.h): -v/--verbose,
 * -h/--help, --version, the operand count and numeric options for every
 * verb (the tables themselves are options.h's and each verb's).
 *
 * Owns: turning those option strings into settings (the log level, the
 * numbers) and saying in one line what is wrong with a bad one. Must
 * never touch the network or BPF: it only parses.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"

int cli_parse_begin(struct cli_parser *p, const struct cmd_spec *c)
{
	opterr = 0;
	optind = 1;
	return options_getopt(c, p->longopts, OPTS_MAX + 1, p->shortopts,
			      sizeof(p->shortopts))
		       ? 1
		       : 0;
}

int cli_parse_opts(const struct cmd_spec *c, int argc, char **argv,
		   int (*opt_fn)(int opt, char *arg, void *ctx), void *ctx)
{
	struct cli_parser p;
	int opt, r;

	if (cli_parse_begin(&p, c))
		return 1;
	while ((opt = getopt_long(argc, argv, p.shortopts, p.longopts, NULL)) !=
	       -1) {
		r = opt_fn ? opt_fn(opt, optarg, ctx) : 0;
		if (r < 0)
			return 1;
		if (r > 0)
			continue;
		r = cli_common_opt(c, opt, argv);
		if (r != CLI_CONTINUE)
			return r;
	}
	return CLI_CONTINUE;
}

int cli_common_opt(const struct cmd_spec *c, int opt, char **argv)
{
	const char *verb = c->name;

	switch (opt) {
	case 'v':
		blitz_log_level = LOG_DEBUG;
		return CLI_CONTINUE;
	case 'h':
		options_usage(c, stdout);
		return 0;
	case OPT_VERSION:
		printf("blitz %s\n", BLITZ_VERSION);
		return 0;
	case ':':
		pr_warn("option '%s' needs a value: see `blitz %s -h`\n",
			argv[optind - 1], verb);
		return 1;
	default:
		pr_warn("unknown option '%s': see `blitz %s -h`\n",
			argv[optind - 1], verb);
		return 1;
	}
}

int cli_operands(const char *verb, int argc, char **argv, int min, int max,
		 const char *what)
{
	int n = argc - optind;

	if (n < min) {
		pr_warn("missing %s: blitz %s %s [options]\n", what, verb,
			what);
		return -1;
	}
	if (n > max) {
		pr_warn("unexpected argument '%s': see `blitz %s -h`\n",
			argv[optind + max], verb);
		return -1;
	}
	return 0;
}

int cli_parse(const struct cmd_spec *c, int argc, char **argv,
	      int (*opt_fn)(int opt, char *arg, void *ctx), void *ctx, int min,
	      int max)
{
	int r = cli_parse_opts(c, argc, argv, opt_fn, ctx);

	if (r != CLI_CONTINUE)
		return r;
	if (cli_operands(c->name, argc, argv, min, max, c->operands))
		return 1;
	return CLI_CONTINUE;
}

int cli_num_opt(const struct cli_num_opt *t, size_t n, int opt, const char *arg)
{
	size_t i;
	char *end;
	long v;

	for (i = 0; i < n && t[i].opt != opt; i++)
		;
	if (i == n)
		return 0;
	errno = 0;
	v = strtol(arg, &end, 10);
	/* A leading '-' is refused even for -0: no option takes a sign. */
	if (errno || end == arg || *end || *arg == '-' || v < t[i].lo ||
	    v > t[i].hi) {
		pr_warn("bad %s '%s': use a number from %ld to %ld\n",
			t[i].what, arg, t[i].lo, t[i].hi);
		return -1;
	}
	if (t[i].i32)
		*t[i].i32 = (int)(v * t[i].scale);
	else
		*t[i].u32 = (uint32_t)(v * t[i].scale);
	return 1;
}
