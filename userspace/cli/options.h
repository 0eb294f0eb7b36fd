/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options.h - the option tables of blitz's commands, and everything that
 * is generated from them: getopt_long's arrays, the -h text, the synopsis
 * lines of the README, docs/usage.md and the man page's option lists.
 *
 * One table per command (struct cmd_spec): its name, operands, what it
 * does, and groups of options (struct opt_spec), some shared by several
 * commands (options_common: -v/-h/--version; options_service: what to
 * serve). A command parses with the arrays options_getopt() makes and
 * prints options_usage() for -h, so help, README and man page say what
 * the parser takes and cannot drift (tests/unit/test_usage.c compares).
 *
 *   struct cmd_spec ──▶ options_getopt()   struct option[] + "p:a:vh"
 *                   ├─▶ options_usage()    `blitz serve -h`
 *                   ├─▶ options_synopsis() README's CLI block
 *                   ├─▶ options_markdown() docs/usage.md
 *                   └─▶ options_man()      blitz(8)'s OPTIONS
 *
 * Owns: the format of those texts and the shared groups. Must never hold
 * a command's behaviour: the commands' switch statements do that; this
 * only says which options exist and what they mean.
 */
#ifndef BLITZ_OPTIONS_H
#define BLITZ_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "service.h"

#define BLITZ_VERSION "0.1.0"

/* getopt codes of the long options without a short letter. A command's
 * own codes start at OPT_CMD_BASE. */
enum {
	OPT_BODY = 0x100,
	OPT_BODY_FILE,
	OPT_CONTENT_TYPE,
	OPT_VERSION,
	OPT_SECRET_FILE,
	OPT_CMD_BASE = 0x200,
};

enum {
	OPT_REPEAT = 1,	    /* may be given several times ("..." in synopses) */
	OPT_NOSYNOPSIS = 2, /* left out of the synopsis (-h, -v, --version) */
};

/* One option. A table of them ends with an entry whose key is 0. */
struct opt_spec {
	int key;	  /* getopt's code: the short letter, or >= 0x100 */
	const char *name; /* the long name, without "--" */
	const char *arg;  /* the value's name ("PORT"); NULL: takes none */
	/* What it does, one sentence or two; a "%d" in it is replaced by
	 * val (a default or a limit that lives in a constant). */
	const char *help;
	long val;
	unsigned int flags; /* OPT_REPEAT, OPT_NOSYNOPSIS */
};

#define OPTS_MAX_GROUPS 4
#define OPTS_MAX 64 /* options of one command, all groups */

struct cmd_spec {
	const char *name; /* "serve": in messages ("see `blitz serve -h`") */
	/* The command as typed, "blitz-dpdk [EAL args] --"; NULL for a verb:
	 * "blitz <name>". */
	const char *prog;
	const char *operands; /* "[<ifname>]", "<ifname>" or NULL */
	const char *summary;  /* one line, for `blitz -h` */
	const char *about;    /* the paragraph under the usage line */
	const char *notes;    /* printed after the options, or NULL */
	/* The option groups, the command's own first; NULL ends it. */
	const struct opt_spec *groups[OPTS_MAX_GROUPS + 1];
};

/* -v/--verbose, -h/--help, --version. */
extern const struct opt_spec options_common[];
/* -p/--port, -a/--addr, --body, --body-file, --content-type,
 * --secret-file. */
extern const struct opt_spec options_service[];

/*
 * Fill getopt_long's arrays from c's table: lo[] (ending with a zero
 * entry) and the short option string, which starts with ':' so that a
 * missing value is reported as ':' (the command says what is wrong, in
 * one line). 0, or -1 when the arrays are too small (a build mistake).
 */
int options_getopt(const struct cmd_spec *c, struct option *lo, size_t nlo,
		   char *shortopts, size_t nshort);

/* The -h text: usage line, about, the options in two columns, notes. */
void options_usage(const struct cmd_spec *c, FILE *f);
/* The command with every option, wrapped under itself (no trailing
 * newline handling needed: ends with one). */
void options_synopsis(const struct cmd_spec *c, FILE *f);
/* A Markdown section: a heading, what it does, the -h text's options. */
void options_markdown(const struct cmd_spec *c, FILE *f);
/* roff for a man page: .SS with the synopsis, .TP per option. */
void options_man(const struct cmd_spec *c, FILE *f);

/*
 * A service option (options_service) given to its setter in service.h:
 * 1 when key was one and the value is applied, 0 when key is not a
 * service option, -1 for a bad value (one line printed).
 */
int options_service_apply(struct blitz_service *s, int key, const char *arg);

#endif /* BLITZ_OPTIONS_H */
