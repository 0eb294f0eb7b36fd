// SPDX-License-Identifier: GPL-2.0
/*
 * cli_common.c - the options the verbs share (cli.h): -v/--verbose,
 * -h/--help, --version, the operand count and numeric options for every
 * verb (the tables themselves are options.h's and each verb's).
 *
 * Owns: turning those option strings into settings (the log level, the
 * numbers) and saying in one line what is wrong with a bad one, and the
 * line about -a addresses this host does not have. Must never send a
 * packet or touch BPF: it parses, and asks bind(2) whether an address is
 * local (cli_not_local).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* Does bind(2) refuse addr as not this namespace's? Unknown is "no". */
static bool addr_not_local(int family, const void *addr)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
	struct sockaddr_in s4 = {.sin_family = AF_INET};
	bool v4 = family == AF_INET;
	int fd, r;

	if (v4)
		memcpy(&s4.sin_addr, addr, 4);
	else
		memcpy(&s6.sin6_addr, addr, 16);
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	r = v4 ? bind(fd, (struct sockaddr *)&s4, sizeof(s4))
	       : bind(fd, (struct sockaddr *)&s6, sizeof(s6));
	r = r && errno == EADDRNOTAVAIL;
	close(fd);
	return r;
}

void cli_not_local(const char *prefix, const void *a4, int n4, const void *a6,
		   int n6, char *out, size_t len)
{
	char text[INET6_ADDRSTRLEN], list[1024] = "";
	size_t used = 0;
	int i, n = 0;

	out[0] = '\0';
	for (i = 0; i < n4 + n6 && used < sizeof(list); i++) {
		int family = i < n4 ? AF_INET : AF_INET6;
		const void *a = i < n4 ? (const char *)a4 + 4 * i
				       : (const char *)a6 + 16 * (i - n4);

		if (!addr_not_local(family, a))
			continue;
		inet_ntop(family, a, text, sizeof(text));
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s%s", n++ ? ", " : "", text);
	}
	if (n)
		snprintf(out, len,
			 "%s: not an address of this host: %s: the xdp engine "
			 "answers complete requests to %s by itself, but what "
			 "it passes to the kernel (split requests, bodies) "
			 "goes unanswered; add %s (`ip addr add ADDR dev lo` "
			 "for a VIP)",
			 prefix, list, n > 1 ? "them" : "it",
			 n > 1 ? "them" : "it");
}
