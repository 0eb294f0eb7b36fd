/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cli.h - the verbs of the blitz CLI and the options they share.
 *
 * main.c dispatches `blitz <verb> ...` to cmd_<verb>(argc, argv) with
 * argv[0] = the verb (cli_verbs[], in cmd_help.c). Each verb has one
 * option table (struct cmd_spec, options.h), parses with getopt_long
 * from the arrays made from it, handles -h/--help (the text made from
 * it), -v/--verbose and --version, returns the exit status, and on error
 * prints one line saying what is wrong and what to do.
 */
#ifndef BLITZ_CLI_H
#define BLITZ_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>

#include "options.h"
#include "service.h"

int cmd_load(int argc, char **argv);
int cmd_unload(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_reload(int argc, char **argv);

/* The option tables of the verbs (options.h), one per verb. */
extern const struct cmd_spec cmd_load_spec, cmd_unload_spec, cmd_status_spec,
	cmd_stats_spec, cmd_serve_spec, cmd_bench_spec, cmd_doctor_spec,
	cmd_help_spec, cmd_reload_spec;

/* --mac aa:bb:cc:dd:ee:ff of load and reload: one more destination MAC
 * that is ours, into macs[*n] (up to BLITZ_MAX_MACS - 1). 0, or -1 with
 * one line printed. */
int cli_parse_mac(unsigned char (*macs)[6], int *n, const char *arg);

/* What `blitz reload` (cmd_reload.c) was asked to change: every option
 * not given keeps its loaded value. */
struct reload_args {
	const char *ifname;
	struct blitz_service svc; /* the service options given */
	bool port_set, addr_set, body_set, ctype_set;
	bool has_accept; /* --accept-key */
	uint64_t accept_key[2];
	int n_macs; /* --mac given: replaces the loaded list */
	unsigned char macs[BLITZ_MAX_MACS - 1][6];
	/* `load --secret-file` on a loaded interface: the same key again
	 * changes nothing (and says so). */
	bool rotate_only;
};
void reload_args_init(struct reload_args *a);
void reload_args_free(struct reload_args *a);
/* A service option into a->svc, noting that it was given: as
 * options_service_apply (1 taken, 0 not a service option, -1 bad). */
int reload_service_opt(struct reload_args *a, int opt, const char *arg);
/* Reload a->ifname: 0, or 1 with one line printed (nothing changed). */
int blitz_reload(struct reload_args *a);

/* A verb of `blitz`: main.c dispatches to fn, `blitz -h` lists them, and
 * `blitz help` prints the texts generated from their tables. */
struct cli_verb {
	const struct cmd_spec *spec;
	int (*fn)(int argc, char **argv);
};
/* Every verb, in the order `blitz -h` lists them; ends with a NULL spec. */
extern const struct cli_verb cli_verbs[];
/* `blitz -h`: the verbs and what each does. */
void cli_usage(FILE *f);
/*
 * The documents generated from every command's table (the verbs and
 * blitz-dpdk), as `blitz help --KIND` prints them: kind "synopsis" (the
 * README's CLI block), "markdown" (docs/usage.md) or "man" (roff: a .SS
 * per command, a .TP per option, for a blitz(8) page). 0, or -1 for
 * another kind.
 */
int cli_help_doc(const char *kind, FILE *f);

/* getopt_long's arrays made from a verb's table (options_getopt). */
struct cli_parser {
	struct option longopts[OPTS_MAX + 1];
	char shortopts[2 * OPTS_MAX + 2];
};

/* Make p's arrays from c's table and reset getopt for a verb's own parse:
 * from argv[1], no getopt messages (the short options start with ':' and
 * cli_common_opt says what is wrong, in one line). 0, or 1 after a line
 * saying the table is too large (a build mistake). Then:
 *   while ((opt = getopt_long(argc, argv, p.shortopts, p.longopts, NULL)) !=
 * -1) */
int cli_parse_begin(struct cli_parser *p, const struct cmd_spec *c);

/* Returned by cli_common_opt when the verb should go on parsing. */
#define CLI_CONTINUE (-1)

/*
 * cli_parse_opts - a verb's options: each option of argv is offered to
 * @opt_fn (may be NULL) with its argument and @ctx; it returns 1 when it
 * took the option, 0 when it is not the verb's own (cli_common_opt takes
 * it: -v, -h, --version or a line saying what is wrong), -1 after a line
 * saying the value is bad. CLI_CONTINUE when every option was taken (the
 * operands start at argv[optind]), else the verb's exit status: 0 after
 * -h or --version, 1 after an error.
 */
int cli_parse_opts(const struct cmd_spec *c, int argc, char **argv,
		   int (*opt_fn)(int opt, char *arg, void *ctx), void *ctx);

/*
 * cli_common_opt - what every verb does with an option its own switch did
 * not take: -v raises the log level (CLI_CONTINUE); -h prints the usage
 * made from c's table on stdout and --version the version (0); a missing
 * value (':') or an unknown option prints one line pointing at `blitz
 * VERB -h` (1). The verb returns any value but CLI_CONTINUE as its exit
 * status.
 */
int cli_common_opt(const struct cmd_spec *c, int opt, char **argv);
/*
 * cli_operands - after the options, argv[optind..argc) must hold from
 * @min to @max operands (@what names them, e.g. "<ifname>"). 0, or -1
 * with one line printed ("missing <ifname>: blitz load <ifname>
 * [options]" or "unexpected argument").
 */
int cli_operands(const char *verb, int argc, char **argv, int min, int max,
		 const char *what);

/*
 * cli_parse - a verb's command line: cli_parse_opts, then from @min to
 * @max operands, named by @c's operands. CLI_CONTINUE with the operands
 * at argv[optind], else the verb's exit status (1 after a wrong operand).
 */
int cli_parse(const struct cmd_spec *c, int argc, char **argv,
	      int (*opt_fn)(int opt, char *arg, void *ctx), void *ctx, int min,
	      int max);

/* A verb's numeric option: its value, from @lo to @hi, times @scale goes
 * to *i32 or *u32 (the one that is set). */
struct cli_num_opt {
	int opt;	  /* the getopt code */
	const char *what; /* names it in "bad WHAT 'ARG': ..." */
	long lo, hi, scale;
	int *i32;
	uint32_t *u32;
};

/*
 * cli_num_opt - if @opt is one of t[0..n), parse @arg (a decimal number,
 * no sign) and store it: 1. 0: @opt is not one of them. -1: bad value,
 * one line printed ("bad WHAT 'ARG': use a number from LO to HI").
 */
int cli_num_opt(const struct cli_num_opt *t, size_t n, int opt,
		const char *arg);

/*
 * cli_not_local - the addresses among a4 (n4 of 4 bytes, network order)
 * and a6 (n6 of 16) that this network namespace does not own (bind(2)
 * says so, as for the kernel's own sockets), as one line "PREFIX: not an
 * address of this host: A, B: ..." into out (or "" when every one is
 * local). The xdp engine answers complete requests to such an address by
 * itself, but what it hands to the kernel goes unanswered.
 */
void cli_not_local(const char *prefix, const void *a4, int n4, const void *a6,
		   int n6, char *out, size_t len);

#endif /* BLITZ_CLI_H */
