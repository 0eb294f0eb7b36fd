// SPDX-License-Identifier: GPL-2.0
/*
 * options.c - getopt_long's arrays and every help text made from the
 * option tables (options.h), and the option groups several commands share.
 *
 * Owns: the layout of the -h text (two columns, wrapped at 79), of the
 * synopsis (wrapped at 100 under the command), of the Markdown and roff.
 * Must never print anything the tables do not say.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "options.h"

#define HELP_WIDTH 79
#define SYNOPSIS_WIDTH 100
#define HELP_COL_MAX 29 /* the help column starts here at the latest */

const struct opt_spec options_common[] = {
	{'v', "verbose", NULL, "more messages (libbpf and libxdp's too)", 0,
	 OPT_NOSYNOPSIS},
	{'h', "help", NULL, "this text", 0, OPT_NOSYNOPSIS},
	{OPT_VERSION, "version", NULL, "print the version", 0, OPT_NOSYNOPSIS},
	{0},
};

/* -p first: `blitz reload` lists the rest (options_service + 1). */
const struct opt_spec options_service[] = {
	{'p', "port", "PORT", "TCP port to serve (default %d)",
	 BLITZ_DEFAULT_PORT, 0},
	{'a', "addr", "ADDR",
	 "serve only this IPv4 or IPv6 address (repeatable, up to %d of each; "
	 "default: every address)",
	 BLITZ_MAX_ADDRS, OPT_REPEAT},
	{OPT_BODY, "body", "TEXT",
	 "response body (default \"" BLITZ_DEFAULT_BODY "\")", 0, 0},
	{OPT_BODY_FILE, "body-file", "FILE",
	 "response body read from FILE (up to 16 MiB)", 0, 0},
	{OPT_SECRET_FILE, "secret-file", "FILE",
	 "cookie key: 32 hex digits in a file owned by root, mode 600; one "
	 "file for every host of a fleet (default: a random key each load)",
	 0, 0},
	{OPT_CONTENT_TYPE, "content-type", "TYPE",
	 "Content-Type of the body (default " BLITZ_DEFAULT_CONTENT_TYPE ")", 0,
	 0},
	{0},
};

int options_service_apply(struct blitz_service *s, int key, const char *arg)
{
	int r;

	switch (key) {
	case 'p':
		r = service_set_port(s, arg);
		break;
	case 'a':
		r = service_add_addr(s, arg);
		break;
	case OPT_BODY:
		r = service_set_body(s, arg, strlen(arg));
		break;
	case OPT_BODY_FILE:
		r = service_read_body_file(s, arg);
		break;
	case OPT_CONTENT_TYPE:
		r = service_set_content_type(s, arg);
		break;
	case OPT_SECRET_FILE:
		r = service_set_secret_file(s, arg);
		break;
	default:
		return 0;
	}
	return r ? -1 : 1;
}

/* The value's name, or NULL for an option without one. */
static const char *opt_arg(const struct opt_spec *o)
{
	return o->arg;
}

/* Call fn for every option of c, groups in order. */
#define FOR_EACH_OPT(c, g, o)                                        \
	for (const struct opt_spec *const *g = (c)->groups; *g; g++) \
		for (const struct opt_spec *o = *g; o->key; o++)

int options_getopt(const struct cmd_spec *c, struct option *lo, size_t nlo,
		   char *shortopts, size_t nshort)
{
	size_t n = 0, s = 0;

	if (nshort < 2)
		return -1;
	shortopts[s++] = ':';
	FOR_EACH_OPT(c, g, o)
	{
		if (n + 1 >= nlo || s + 3 >= nshort) {
			pr_warn("%s: option table too large\n", c->name);
			return -1;
		}
		lo[n].name = o->name;
		lo[n].has_arg = opt_arg(o) ? required_argument : no_argument;
		lo[n].flag = NULL;
		lo[n].val = o->key;
		n++;
		if (o->key < 0x100) {
			shortopts[s++] = (char)o->key;
			if (opt_arg(o))
				shortopts[s++] = ':';
		}
	}
	memset(&lo[n], 0, sizeof(lo[n]));
	shortopts[s] = '\0';
	return 0;
}

/* The help sentence with its "%d" replaced by val. */
static void help_text(const struct opt_spec *o, char *out, size_t len)
{
	const char *d = strstr(o->help, "%d");

	if (!d) {
		snprintf(out, len, "%s", o->help);
		return;
	}
	snprintf(out, len, "%.*s%ld%s", (int)(d - o->help), o->help, o->val,
		 d + 2);
}

/* "-p, --port PORT" or "    --body TEXT" (no indent). */
static void opt_left(const struct opt_spec *o, char *out, size_t len)
{
	const char *arg = opt_arg(o);

	if (o->key < 0x100)
		snprintf(out, len, "-%c, --%s%s%s", o->key, o->name,
			 arg ? " " : "", arg ? arg : "");
	else
		snprintf(out, len, "    --%s%s%s", o->name, arg ? " " : "",
			 arg ? arg : "");
}

/* Words of text from column col to width, continuation lines indented
 * to col; the first line starts at column at (already printed). */
static void wrap(FILE *f, const char *text, int at, int col, int width)
{
	const char *p = text;
	int pos = at;

	while (*p) {
		const char *w = p;
		int n;

		while (*w == ' ')
			w++;
		n = (int)strcspn(w, " ");
		if (!n)
			break;
		if (pos > col && pos + 1 + n > width) {
			fprintf(f, "\n%*s", col, "");
			pos = col;
		} else if (pos > col) {
			fputc(' ', f);
			pos++;
		}
		fprintf(f, "%.*s", n, w);
		pos += n;
		p = w + n;
	}
	fputc('\n', f);
}

static int help_column(const struct cmd_spec *c)
{
	char left[128];
	int col = 0, n;

	FOR_EACH_OPT(c, g, o)
	{
		opt_left(o, left, sizeof(left));
		n = 2 + (int)strlen(left) + 2;
		if (n > col && n <= HELP_COL_MAX)
			col = n;
	}
	return col ? col : HELP_COL_MAX;
}

/* The options in two columns, as -h prints them. */
static void print_options(const struct cmd_spec *c, FILE *f)
{
	char left[128], help[512];
	int col = help_column(c), n;

	FOR_EACH_OPT(c, g, o)
	{
		opt_left(o, left, sizeof(left));
		help_text(o, help, sizeof(help));
		n = fprintf(f, "  %s", left);
		if (n + 2 > col) {
			fprintf(f, "\n%*s", col, "");
			n = col;
		} else {
			fprintf(f, "%*s", col - n, "");
			n = col;
		}
		wrap(f, help, n, col, HELP_WIDTH);
	}
}

static void print_about(FILE *f, const char *text)
{
	/* Paragraphs are kept; lines inside one are wrapped. */
	const char *p = text;

	while (*p) {
		const char *end = strstr(p, "\n\n");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char para[2048];

		snprintf(para, sizeof(para), "%.*s", (int)n, p);
		for (char *q = para; *q; q++)
			if (*q == '\n')
				*q = ' ';
		wrap(f, para, 0, 0, HELP_WIDTH);
		p += n;
		if (*p) {
			fputc('\n', f);
			p += 2;
		}
	}
}

/* The command as typed (struct cmd_spec's prog) into buf. */
static const char *prog_of(const struct cmd_spec *c, char *buf, size_t len)
{
	if (c->prog)
		return c->prog;
	snprintf(buf, len, "blitz %s", c->name);
	return buf;
}

static void usage_text(const struct cmd_spec *c, FILE *f)
{
	char prog[64];

	fprintf(f, "usage: %s%s%s [options]\n", prog_of(c, prog, sizeof(prog)),
		c->operands ? " " : "", c->operands ? c->operands : "");
	if (c->about)
		print_about(f, c->about);
	fputc('\n', f);
	print_options(c, f);
	if (c->notes) {
		fputc('\n', f);
		print_about(f, c->notes);
	}
}

/* Made whole, then written at once: on a line-buffered stdout (serve's)
 * a reader that stops after the first line (`| head -1`) must not cut
 * the writer short with SIGPIPE. */
void options_usage(const struct cmd_spec *c, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		usage_text(c, f);
		return;
	}
	usage_text(c, m);
	fclose(m);
	fwrite(buf, 1, len, f);
	fflush(f);
	free(buf);
}

void options_synopsis(const struct cmd_spec *c, FILE *f)
{
	char item[160], buf[64];
	const char *prog = prog_of(c, buf, sizeof(buf));
	int indent = (int)strlen(prog) + 1, pos;

	pos = fprintf(f, "%s", prog);
	if (c->operands)
		pos += fprintf(f, " %s", c->operands);
	FOR_EACH_OPT(c, g, o)
	{
		const char *arg;
		int n;

		if (o->flags & OPT_NOSYNOPSIS)
			continue;
		arg = opt_arg(o);
		if (o->key < 0x100)
			n = snprintf(item, sizeof(item), "[-%c%s%s]%s", o->key,
				     arg ? " " : "", arg ? arg : "",
				     o->flags & OPT_REPEAT ? "..." : "");
		else
			n = snprintf(item, sizeof(item), "[--%s%s%s]%s",
				     o->name, arg ? " " : "", arg ? arg : "",
				     o->flags & OPT_REPEAT ? "..." : "");
		if (pos + 1 + n > SYNOPSIS_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			pos = indent;
		} else {
			fputc(' ', f);
			pos++;
		}
		pos += fprintf(f, "%s", item);
	}
	fputc('\n', f);
}

void options_markdown(const struct cmd_spec *c, FILE *f)
{
	fprintf(f, "### `%s`\n\n", c->name);
	fprintf(f, "```\n");
	usage_text(c, f);
	fprintf(f, "```\n");
}

/* roff text: backslashes doubled, '-' as \-, a leading '.' or '\''
 * escaped. */
static void roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

void options_man(const struct cmd_spec *c, FILE *f)
{
	char help[512], prog[64];

	fputs(".SS \"", f);
	roff(f, prog_of(c, prog, sizeof(prog)));
	if (c->operands) {
		fputc(' ', f);
		roff(f, c->operands);
	}
	fputs("\"\n", f);
	if (c->about) {
		roff(f, c->about);
		fputc('\n', f);
	}
	FOR_EACH_OPT(c, g, o)
	{
		fputs(".TP\n", f);
		if (o->key < 0x100)
			fprintf(f, "\\fB\\-%c\\fR, ", o->key);
		fputs("\\fB\\-\\-", f);
		roff(f, o->name);
		fputs("\\fR", f);
		if (opt_arg(o)) {
			fputs(" \\fI", f);
			roff(f, opt_arg(o));
			fputs("\\fR", f);
		}
		fputc('\n', f);
		help_text(o, help, sizeof(help));
		roff(f, help);
		fputc('\n', f);
	}
	if (c->notes) {
		fputs(".PP\n", f);
		roff(f, c->notes);
		fputc('\n', f);
	}
}
