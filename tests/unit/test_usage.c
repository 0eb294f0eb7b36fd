// SPDX-License-Identifier: GPL-2.0
/*
 * test_usage.c - the usage texts cannot drift from the option tables:
 * README.md's CLI block and docs/usage.md must be exactly what `blitz help
 * --synopsis` / `--markdown` print now (run `make docs` after changing a
 * table), and each command's table must give getopt_long what it parses:
 * no long name or key twice, a ':' after every short option that takes a
 * value, and the -h text naming every option. Run from the repository root
 * (tests/run.sh does).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpdk_options.h"
#include "testlib.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static char *generated(const char *kind)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (cli_help_doc(kind, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

/* The first differing line of a and b, for the failure message. */
static void say_diff(const char *what, const char *a, const char *b)
{
	int line = 1;

	while (*a && *a == *b) {
		if (*a == '\n')
			line++;
		a++;
		b++;
	}
	printf("  %s differs from the tables at line %d: '%.60s' vs '%.60s' "
	       "(run `make docs`)\n",
	       what, line, a, b);
}

static void test_readme_cli_block(void)
{
	char *readme = slurp("README.md"), *syn = generated("synopsis");
	char *begin, *end, *block;

	T_CHECK_MSG(readme != NULL, "cannot read README.md: run from the "
				    "repository root");
	T_CHECK(syn != NULL);
	if (!readme || !syn)
		goto out;
	begin = strstr(readme, "<!-- usage:begin");
	end = begin ? strstr(begin, "<!-- usage:end") : NULL;
	T_CHECK_MSG(begin && end, "no usage:begin/usage:end markers");
	if (!begin || !end)
		goto out;
	begin = strchr(begin, '\n') + 1;
	*end = '\0';
	/* The block is the synopsis inside one ``` fence. */
	T_CHECK(!strncmp(begin, "```\n", 4));
	block = begin + 4;
	T_CHECK(strlen(block) >= 4 &&
		!strcmp(block + strlen(block) - 4, "```\n"));
	if (strlen(block) >= 4)
		block[strlen(block) - 4] = '\0';
	if (strcmp(block, syn)) {
		say_diff("README.md's CLI block", block, syn);
		t_failed_now = 1;
	}
out:
	free(readme);
	free(syn);
}

static void test_docs_usage_md(void)
{
	char *doc = slurp("docs/usage.md"), *md = generated("markdown");

	T_CHECK_MSG(doc != NULL, "cannot read docs/usage.md");
	T_CHECK(md != NULL);
	if (doc && md && strcmp(doc, md)) {
		say_diff("docs/usage.md", doc, md);
		t_failed_now = 1;
	}
	free(doc);
	free(md);
}

/* Every command's table, as getopt_long gets it. */
static void check_table(const struct cmd_spec *c)
{
	struct option lo[OPTS_MAX + 1];
	char so[2 * OPTS_MAX + 2], *help = NULL, needle[64];
	size_t hlen = 0;
	FILE *f;
	int i, j;

	T_EQ_INT(options_getopt(c, lo, OPTS_MAX + 1, so, sizeof(so)), 0);
	T_CHECK(so[0] == ':');
	f = open_memstream(&help, &hlen);
	options_usage(c, f);
	fclose(f);
	for (i = 0; lo[i].name; i++) {
		for (j = i + 1; lo[j].name; j++) {
			T_CHECK_MSG(strcmp(lo[i].name, lo[j].name),
				    "%s: --%s twice", c->name, lo[i].name);
			T_CHECK_MSG(lo[i].val != lo[j].val,
				    "%s: --%s and --%s share a key", c->name,
				    lo[i].name, lo[j].name);
		}
		if (lo[i].val < 0x100) {
			char *p = strchr(so + 1, lo[i].val);

			T_CHECK_MSG(p && (p[1] == ':') == (lo[i].has_arg ==
							   required_argument),
				    "%s: -%c in '%s'", c->name, lo[i].val, so);
		}
		snprintf(needle, sizeof(needle), "--%s", lo[i].name);
		T_CHECK_MSG(help && strstr(help, needle),
			    "%s: -h does not name %s", c->name, needle);
	}
	free(help);
}

/* Every `blitz X` the documents describe is a verb main.c dispatches. */
static void test_documented_verbs_dispatch(void)
{
	char *syn = generated("synopsis"), *line, *save = NULL;
	const struct cli_verb *v;
	char verb[32];

	T_CHECK(syn != NULL);
	for (line = syn ? strtok_r(syn, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "blitz ", 6) ||
		    sscanf(line, "blitz %31s", verb) != 1)
			continue;
		for (v = cli_verbs; v->spec; v++)
			if (!strcmp(v->spec->name, verb))
				break;
		T_CHECK_MSG(v->spec != NULL, "`blitz %s` is not dispatched",
			    verb);
	}
	free(syn);
}

static void test_tables_consistent(void)
{
	const struct cli_verb *v;

	for (v = cli_verbs; v->spec; v++)
		check_table(v->spec);
	check_table(&dpdk_cmd_spec);
}

int main(void)
{
	T_RUN(test_readme_cli_block);
	T_RUN(test_docs_usage_md);
	T_RUN(test_tables_consistent);
	T_RUN(test_documented_verbs_dispatch);
	T_EXIT();
}
