// SPDX-License-Identifier: GPL-2.0
/*
 * prometheus.c - the Prometheus text exposition (prometheus.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "counters.h"
#include "counters_xdp.h"
#include "loader.h"
#include "prometheus.h"

#define MAX_SAMPLES 4096

struct sample {
	char family[COUNTERS_NAME_LEN], reason[COUNTERS_NAME_LEN];
	char ifname[16], engine[16];
	const char *help;
	char help_buf[COUNTERS_HELP_LEN + 32];
	unsigned long long v;
};

struct samples {
	struct sample *s;
	int n;
};

/* One sample: name "pass_X"/"drop_X" is family passed/dropped with
 * reason X, any other name is its own family. */
static void add(struct samples *ss, const char *name, const char *help,
		const char *ifname, const char *engine, unsigned long long v)
{
	const char *family = name;
	struct sample *s, t;
	int i;

	memset(&t, 0, sizeof(t));
	s = &t;
	if (!strncmp(name, "pass_", 5)) {
		family = "passed";
		snprintf(s->reason, sizeof(s->reason), "%s", name + 5);
		help = "segments passed to the kernel, by reason";
	} else if (!strncmp(name, "drop_", 5)) {
		family = "dropped";
		snprintf(s->reason, sizeof(s->reason), "%s", name + 5);
		help = "segments dropped, by reason";
	}
	snprintf(s->family, sizeof(s->family), "%s", family);
	snprintf(s->help_buf, sizeof(s->help_buf), "%s", help ? help : "");
	snprintf(s->ifname, sizeof(s->ifname), "%s",
		 ifname[0] ? ifname : "any");
	snprintf(s->engine, sizeof(s->engine), "%s", engine);
	s->v = v;
	/* One series per family and labels: counts of one event by two
	 * parts of an engine (afxdp's XDP program and its TCP cores, each
	 * dropping frames with a bad checksum the other never sees) add up. */
	for (i = 0; i < ss->n; i++)
		if (!strcmp(ss->s[i].family, t.family) &&
		    !strcmp(ss->s[i].reason, t.reason) &&
		    !strcmp(ss->s[i].ifname, t.ifname) &&
		    !strcmp(ss->s[i].engine, t.engine)) {
			ss->s[i].v += v;
			return;
		}
	if (ss->n < MAX_SAMPLES)
		ss->s[ss->n++] = t;
}

/*
 * The pinned per-CPU counters of ifname, summed over CPUs, under the
 * engine the program serves: "xdp" when it answers, "afxdp" when it
 * redirects. Then its TCP cores count the answers and the service
 * segments under the same names, so the program's rows for those are
 * left out: no event is counted twice under one engine.
 */
static void add_xdp(struct samples *ss, const char *ifname)
{
	uint64_t tot[BLITZ_CNT_MAX];
	bool afxdp;
	__u32 k;
	int fd;

	fd = counters_xdp_open(ifname);
	if (fd < 0)
		return;
	afxdp = counters_xdp_is_afxdp(ifname);
	if (!counters_xdp_read(fd, tot))
		for (k = 0; k < BLITZ_CNT_MAX; k++)
			if (!afxdp || !counters_xdp_core_counts(k))
				add(ss, counters_xdp_name(k),
				    counters_xdp_help(k), ifname,
				    afxdp ? "afxdp" : "xdp", tot[k]);
	close(fd);
}

struct area_filter {
	struct samples *ss;
	const char *ifname;
	pid_t owner;
};

static int add_area(const struct counters_area *a, void *ctx)
{
	struct area_filter *f = ctx;
	unsigned int k;

	if (f->ifname && strcmp(a->hdr->ifname, f->ifname))
		return 0;
	if (f->owner && a->hdr->pid != f->owner)
		return 0;
	for (k = 0; k < a->hdr->n_counters; k++)
		add(f->ss, a->defs[k].name, a->defs[k].help, a->hdr->ifname,
		    a->hdr->engine, counters_sum(a, k));
	return 0;
}

static int by_family(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;

	return strcmp(a->family, b->family);
}

int prometheus_write(FILE *f, const char *ifname, int xdp_all, pid_t owner)
{
	struct samples ss = {calloc(MAX_SAMPLES, sizeof(struct sample)), 0};
	struct area_filter af = {&ss, ifname, owner};
	const char *last = "";
	int i;

	if (!ss.s)
		return 0;
	if (ifname) {
		add_xdp(&ss, ifname);
	} else if (xdp_all) {
		DIR *d = opendir(BLITZ_PIN_ROOT);
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				add_xdp(&ss, de->d_name);
		if (d)
			closedir(d);
	}
	counters_each(add_area, &af);
	/* Stable: a family's samples stay in the order they came. */
	for (i = 1; i < ss.n; i++) {
		struct sample t = ss.s[i];
		int j = i - 1;

		while (j >= 0 && by_family(&ss.s[j], &t) > 0) {
			ss.s[j + 1] = ss.s[j];
			j--;
		}
		ss.s[j + 1] = t;
	}
	for (i = 0; i < ss.n; i++) {
		const struct sample *s = &ss.s[i];

		if (strcmp(last, s->family)) {
			fprintf(f, "# HELP blitz_%s_total %s\n", s->family,
				s->help_buf[0] ? s->help_buf : s->family);
			fprintf(f, "# TYPE blitz_%s_total counter\n",
				s->family);
			last = s->family;
		}
		fprintf(f, "blitz_%s_total{interface=\"%s\",engine=\"%s\"",
			s->family, s->ifname, s->engine);
		if (s->reason[0])
			fprintf(f, ",reason=\"%s\"", s->reason);
		fprintf(f, "} %llu\n", s->v);
	}
	i = ss.n;
	free(ss.s);
	return i;
}
