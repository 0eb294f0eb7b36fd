// SPDX-License-Identifier: GPL-2.0
/*
 * cli_common.c - the options the verbs share (cli.h): -v/--verbose,
 * -h/--help, --version, the operand count and numeric options for every
 * verb, and the
 * service options of the serving verbs: -p/--port, -a/--addr, --body,
 * --body-file, --content-type.
 *
 * Owns: turning those option strings into settings (the log level, a
 * struct blitz_service_opts) and saying in one line what is wrong with a
 * bad one. Must never touch the network or BPF: it only parses (and reads
 * the --body-file).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"
#include "log.h"
#include "secret_file.h"

#define DEFAULT_BODY "Hello World!"
#define DEFAULT_CONTENT_TYPE "text/plain"
/* The largest body any engine sends (http.h): a file larger is refused
 * before it is read (or, for a pipe, as soon as it passes the limit), so
 * a wrong path (a disk image) costs nothing. */
#define BODY_FILE_MAX BLITZ_BODY_MAX

void cli_getopt_reset(void)
{
	opterr = 0;
	optind = 1;
}

int cli_common_opt(const char *verb, int opt, char **argv,
		   void (*usage)(FILE *f))
{
	switch (opt) {
	case 'v':
		blitz_log_level = LOG_DEBUG;
		return CLI_CONTINUE;
	case 'h':
		usage(stdout);
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
		pr_warn("missing %s: blitz %s %s\n", what, verb, what);
		return -1;
	}
	if (n > max) {
		pr_warn("unexpected argument '%s': see `blitz %s -h`\n",
			argv[optind + max], verb);
		return -1;
	}
	return 0;
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

void service_opts_init(struct blitz_service_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = BLITZ_DEFAULT_PORT;
	o->content_type = DEFAULT_CONTENT_TYPE;
}

static int parse_port(struct blitz_service_opts *o, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > 65535) {
		pr_warn("bad port '%s': use a number from 1 to 65535\n", arg);
		return -1;
	}
	o->port = (uint16_t)v;
	return 1;
}

static int parse_addr(struct blitz_service_opts *o, const char *arg)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, arg, &a4) == 1) {
		if (o->n_addr4 >= BLITZ_MAX_ADDRS) {
			pr_warn("too many IPv4 addresses: at most %d\n",
				BLITZ_MAX_ADDRS);
			return -1;
		}
		o->addr4[o->n_addr4++] = a4;
		return 1;
	}
	if (inet_pton(AF_INET6, arg, &a6) == 1) {
		if (o->n_addr6 >= BLITZ_MAX_ADDRS) {
			pr_warn("too many IPv6 addresses: at most %d\n",
				BLITZ_MAX_ADDRS);
			return -1;
		}
		o->addr6[o->n_addr6++] = a6;
		return 1;
	}
	pr_warn("bad address '%s': give an IPv4 or IPv6 address, e.g. "
		"10.0.0.1 or fd00::1\n",
		arg);
	return -1;
}

static int set_body(struct blitz_service_opts *o, const char *arg)
{
	char *b = strdup(arg);

	if (!b) {
		pr_warn("out of memory\n");
		return -1;
	}
	free(o->body);
	o->body = b;
	o->body_len = strlen(b);
	return 1;
}

static void body_file_too_big(const char *path)
{
	pr_warn("body file '%s' is larger than %u bytes (%u MiB), the most "
		"one response may carry\n",
		path, BODY_FILE_MAX, BODY_FILE_MAX >> 20);
}

static int read_body_file(struct blitz_service_opts *o, const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = NULL, *nb;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_warn("cannot read body file '%s': %s\n", path,
			strerror(errno));
		return -1;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		if (st.st_size > (off_t)BODY_FILE_MAX) {
			body_file_too_big(path);
			close(fd);
			return -1;
		}
		/* One read of the known size, plus one to see the end. */
		cap = (size_t)st.st_size + 1;
	}
	for (;;) {
		if (len == cap || !buf) {
			if (buf)
				cap = cap * 2 > BODY_FILE_MAX + 1
					      ? BODY_FILE_MAX + 1
					      : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				pr_warn("out of memory reading '%s'\n", path);
				goto err;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_warn("cannot read body file '%s': %s\n", path,
				strerror(errno));
			goto err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > BODY_FILE_MAX) {
			body_file_too_big(path);
			goto err;
		}
	}
	close(fd);
	buf[len] = '\0';
	free(o->body);
	o->body = buf;
	o->body_len = len;
	return 1;
err:
	free(buf);
	close(fd);
	return -1;
}

int service_opt_parse(struct blitz_service_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case 'p':
		return parse_port(o, arg);
	case 'a':
		return parse_addr(o, arg);
	case OPT_BODY:
		return set_body(o, arg);
	case OPT_BODY_FILE:
		return read_body_file(o, arg);
	case OPT_SECRET_FILE:
		if (blitz_secret_file_read(arg, o->secret))
			return -1;
		o->has_secret = true;
		o->secret_file = arg;
		return 1;
	case OPT_CONTENT_TYPE:
		if (!*arg) {
			pr_warn("empty --content-type\n");
			return -1;
		}
		o->content_type = arg;
		return 1;
	default:
		return 0;
	}
}

int service_opts_finish(struct blitz_service_opts *o)
{
	if (!o->body) {
		o->body = strdup(DEFAULT_BODY);
		if (!o->body) {
			pr_warn("out of memory\n");
			return -1;
		}
		o->body_len = strlen(DEFAULT_BODY);
	}
	if (!o->content_type)
		o->content_type = DEFAULT_CONTENT_TYPE;
	return 0;
}

void service_opts_free(struct blitz_service_opts *o)
{
	free(o->body);
	o->body = NULL;
	o->body_len = 0;
	explicit_bzero(o->secret, sizeof(o->secret));
	o->has_secret = false;
}
