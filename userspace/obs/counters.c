// SPDX-License-Identifier: GPL-2.0
/*
 * counters.c - the counter registry's shared-memory areas (counters.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "log.h"
#include "serve_state.h"

#define FILE_PREFIX "counters-"

static size_t area_size(unsigned int n, unsigned int slots)
{
	return sizeof(struct counters_hdr) + n * sizeof(struct counters_def) +
	       (size_t)n * slots * sizeof(uint64_t);
}

static void map_parts(struct counters_area *a, void *base)
{
	a->hdr = base;
	a->defs = (struct counters_def *)(a->hdr + 1);
	a->values = (uint64_t *)(a->defs + a->hdr->n_counters);
}

/* "pass_host" -> passed/host, "drop_rst" -> dropped/rst, else name/"". */
static void def_fill(struct counters_def *d, const struct counter_name *c)
{
	snprintf(d->name, sizeof(d->name), "%s", c->name);
	snprintf(d->help, sizeof(d->help), "%s", c->help ? c->help : "");
	if (!strncmp(c->name, "pass_", 5)) {
		snprintf(d->family, sizeof(d->family), "passed");
		snprintf(d->reason, sizeof(d->reason), "%s", c->name + 5);
	} else if (!strncmp(c->name, "drop_", 5)) {
		snprintf(d->family, sizeof(d->family), "dropped");
		snprintf(d->reason, sizeof(d->reason), "%s", c->name + 5);
	} else {
		snprintf(d->family, sizeof(d->family), "%s", c->name);
	}
}

/* A child engine (afxdp, blitz-dpdk) of a `blitz serve` counts for that
 * serve: its parent is the process called "blitz". Run alone (blitz-dpdk
 * from a shell), it counts for itself. */
static pid_t area_owner(const char *engine)
{
	pid_t parent = getppid();
	char path[64], comm[32] = "";
	FILE *f;

	if (!strcmp(engine, "epoll") || parent <= 1)
		return getpid();
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)parent);
	f = fopen(path, "re");
	if (!f)
		return getpid();
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, "blitz") ? getpid() : parent;
}

static int area_open(const char *path, struct counters_area *a);

/* An area at path of the same shape (a child engine serve restarted):
 * its values into a's, so what `blitz stats` shows never goes back. */
static void carry_over(struct counters_area *a, const char *path)
{
	struct counters_area old;
	unsigned int k;

	if (area_open(path, &old))
		return;
	if (old.hdr->n_counters == a->hdr->n_counters &&
	    old.hdr->n_slots == a->hdr->n_slots) {
		for (k = 0; k < a->hdr->n_counters; k++)
			if (strcmp(old.defs[k].name, a->defs[k].name))
				break;
		if (k == a->hdr->n_counters)
			memcpy(a->values, old.values,
			       (size_t)a->hdr->n_counters * a->hdr->n_slots *
				       sizeof(uint64_t));
	}
	munmap(old.hdr, old.size);
}

int counters_create(struct counters_area *a, const char *engine,
		    const char *ifname, unsigned int port,
		    const struct counter_name *names, unsigned int n,
		    unsigned int n_slots)
{
	char tmp[sizeof(a->path) + 8];
	struct counters_hdr h;
	pid_t owner = area_owner(engine);
	unsigned int k;
	void *base;
	int fd, err;

	memset(a, 0, sizeof(*a));
	if (!n || n > COUNTERS_MAX || !n_slots)
		return -EINVAL;
	snprintf(a->path, sizeof(a->path), "%s/" FILE_PREFIX "%d-%s",
		 COUNTERS_DIR, (int)owner, engine);
	snprintf(tmp, sizeof(tmp), "%s.tmp", a->path);
	a->size = area_size(n, n_slots);
	if (mkdir(COUNTERS_DIR, 0755) && errno != EEXIST)
		goto fail;
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (ftruncate(fd, (off_t)a->size)) {
		close(fd);
		unlink(tmp);
		goto fail;
	}
	base = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		unlink(tmp);
		goto fail;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, COUNTERS_MAGIC, sizeof(h.magic));
	h.n_counters = n;
	h.n_slots = n_slots;
	snprintf(h.engine, sizeof(h.engine), "%s", engine);
	snprintf(h.ifname, sizeof(h.ifname), "%s", ifname ? ifname : "");
	h.pid = owner;
	h.starttime = serve_state_starttime(owner);
	h.netns = serve_state_netns_here();
	h.port = port;
	memcpy(base, &h, sizeof(h));
	map_parts(a, base);
	for (k = 0; k < n; k++)
		def_fill(&a->defs[k], &names[k]);
	carry_over(a, a->path);
	/* Whole before a reader can see it. */
	if (rename(tmp, a->path)) {
		munmap(base, a->size);
		unlink(tmp);
		goto fail;
	}
	return 0;
fail:
	err = -errno;
	pr_warn("cannot create the counters of the %s engine in %s: %s "
		"(`blitz stats` will not show them)\n",
		engine, COUNTERS_DIR, strerror(-err));
	memset(a, 0, sizeof(*a));
	return err;
}

void counters_close(struct counters_area *a, bool remove)
{
	if (!a->hdr)
		return;
	munmap(a->hdr, a->size);
	if (remove)
		unlink(a->path);
	a->hdr = NULL;
}

uint64_t counters_sum(const struct counters_area *a, unsigned int k)
{
	uint64_t sum = 0;
	unsigned int s;

	for (s = 0; s < a->hdr->n_slots; s++)
		sum += __atomic_load_n(&counters_slot(a, s)[k],
				       __ATOMIC_RELAXED);
	return sum;
}

static enum serve_state_life owner_life(const struct counters_hdr *h)
{
	struct serve_state st;

	memset(&st, 0, sizeof(st));
	st.pid = (pid_t)h->pid;
	st.starttime = h->starttime;
	st.netns = h->netns;
	return serve_state_life(&st);
}

/* Map one file read-only; 0 and *a filled, or -1 (not an area). */
static int area_open(const char *path, struct counters_area *a)
{
	struct counters_hdr h;
	struct stat st;
	void *base;
	int fd;

	memset(a, 0, sizeof(*a));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, COUNTERS_MAGIC, sizeof(h.magic)) || !h.n_counters ||
	    h.n_counters > COUNTERS_MAX || !h.n_slots || h.n_slots > 4096 ||
	    (size_t)st.st_size != area_size(h.n_counters, h.n_slots)) {
		close(fd);
		return -1;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return -1;
	a->size = (size_t)st.st_size;
	map_parts(a, base);
	snprintf(a->path, sizeof(a->path), "%s", path);
	return 0;
}

static int area_each(int (*fn)(struct counters_area *a, void *ctx), void *ctx)
{
	struct counters_area a;
	char path[sizeof(a.path)];
	struct dirent *de;
	DIR *d = opendir(COUNTERS_DIR);
	int stop = 0;

	if (!d)
		return 0;
	while (!stop && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (strncmp(de->d_name, FILE_PREFIX, strlen(FILE_PREFIX)) ||
		    (n > 4 && !strcmp(de->d_name + n - 4, ".tmp")))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", COUNTERS_DIR,
				     de->d_name) >= sizeof(path) ||
		    area_open(path, &a))
			continue;
		stop = fn(&a, ctx);
		munmap(a.hdr, a.size);
	}
	closedir(d);
	return stop;
}

struct each_ctx {
	int (*fn)(const struct counters_area *a, void *ctx);
	void *ctx;
};

static int each_live(struct counters_area *a, void *ctx)
{
	struct each_ctx *e = ctx;

	if (owner_life(a->hdr) != SERVE_ALIVE)
		return 0;
	return e->fn(a, e->ctx);
}

int counters_each(int (*fn)(const struct counters_area *a, void *ctx),
		  void *ctx)
{
	struct each_ctx e = {fn, ctx};

	return area_each(each_live, &e);
}

static int sweep_one(struct counters_area *a, void *ctx)
{
	(void)ctx;
	if (a->hdr->netns == serve_state_netns_here() &&
	    owner_life(a->hdr) == SERVE_GONE)
		unlink(a->path);
	return 0;
}

void counters_sweep(void)
{
	area_each(sweep_one, NULL);
}
