/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cli.h - the verbs of the blitz CLI and the options they share.
 *
 * main.c dispatches `blitz <verb> ...` to cmd_<verb>(argc, argv) with
 * argv[0] = the verb. Each verb parses its own options with getopt_long,
 * handles -h/--help, -v/--verbose and --version, returns the exit status,
 * and on error prints one line saying what is wrong and what to do.
 */
#ifndef BLITZ_CLI_H
#define BLITZ_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>

#include "../bpf/blitz_shared.h"

#define BLITZ_VERSION "0.1.0"
#define BLITZ_DEFAULT_PORT 80

int cmd_load(int argc, char **argv);
int cmd_unload(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

/* What to serve: shared by load, serve and the engines. */
struct blitz_service_opts {
	uint16_t port;	      /* host order */
	int n_addr4, n_addr6; /* both 0: every local address */
	struct in_addr addr4[BLITZ_MAX_ADDRS];
	struct in6_addr addr6[BLITZ_MAX_ADDRS];
	char *body; /* malloc'd; default "Hello World!" */
	size_t body_len;
	const char *content_type; /* default "text/plain" */
	/* --secret-file (secret_file.h): the cookie key every engine and
	 * every host given the same file uses; the path is kept for a child
	 * engine's argv (never the key). has_secret false: a random key. */
	bool has_secret;
	uint64_t secret[2];
	const char *secret_file;
};

/* Long-option codes for the service options without a short letter. */
enum {
	OPT_BODY = 0x100,
	OPT_BODY_FILE,
	OPT_CONTENT_TYPE,
	OPT_VERSION,
	OPT_SECRET_FILE,
};

/* getopt_long entries for -p/--port, -a/--addr, --body, --body-file,
 * --content-type, --secret-file; the short letters are "p:a:". */
#define BLITZ_SERVICE_LONGOPTS                                             \
	{"port", required_argument, NULL, 'p'},                            \
		{"addr", required_argument, NULL, 'a'},                    \
		{"body", required_argument, NULL, OPT_BODY},               \
		{"body-file", required_argument, NULL, OPT_BODY_FILE},     \
		{"secret-file", required_argument, NULL, OPT_SECRET_FILE}, \
	{                                                                  \
		"content-type", required_argument, NULL, OPT_CONTENT_TYPE  \
	}

/* getopt_long entries every verb takes: -v/--verbose, -h/--help, --version
 * (the short letters are "vh"). */
#define BLITZ_COMMON_LONGOPTS                                                  \
	{"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}, \
	{                                                                      \
		"version", no_argument, NULL, OPT_VERSION                      \
	}

/* Returned by cli_common_opt when the verb should go on parsing. */
#define CLI_CONTINUE (-1)

/* Reset getopt for a verb's own parse: from argv[1], no getopt messages
 * (the verb's optstring starts with ':' and cli_common_opt says what is
 * wrong, in one line). */
void cli_getopt_reset(void);
/*
 * cli_common_opt - what every verb does with an option its own switch did
 * not take: -v raises the log level (CLI_CONTINUE); -h prints usage() on
 * stdout and --version the version (0); a missing value (':') or an
 * unknown option prints one line pointing at `blitz VERB -h` (1). The verb
 * returns any value but CLI_CONTINUE as its exit status.
 */
int cli_common_opt(const char *verb, int opt, char **argv,
		   void (*usage)(FILE *f));
/*
 * cli_operands - after the options, argv[optind..argc) must hold from
 * @min to @max operands (@what names them, e.g. "<ifname>"). 0, or -1
 * with one line printed ("missing <ifname>: ..." or "unexpected argument").
 */
int cli_operands(const char *verb, int argc, char **argv, int min, int max,
		 const char *what);

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

void service_opts_init(struct blitz_service_opts *o);
/* 1: opt was a service option and is applied; 0: not one of them;
 * -1: bad value (one line printed saying what is wrong). */
int service_opt_parse(struct blitz_service_opts *o, int opt, const char *arg);
/* Fill defaults left unset (body). 0 or -1 with a message printed. */
int service_opts_finish(struct blitz_service_opts *o);
void service_opts_free(struct blitz_service_opts *o);

#endif /* BLITZ_CLI_H */
