// SPDX-License-Identifier: GPL-2.0
/*
 * serve_state.c - the runtime state files of running `blitz serve`
 * processes (format and rules: serve_state.h).
 *
 * Owns: SERVE_STATE_DIR and the files in it. Must never remove the file
 * of a serve that still runs, nor be called on a hot path (it does file
 * I/O; serve writes only when its tier changes).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "serve_state.h"

#define STATE_PREFIX "serve-"
#define STATE_SUFFIX ".state"

unsigned long long serve_state_netns_here(void)
{
	struct stat s;

	if (stat("/proc/self/ns/net", &s))
		return 0;
	return (unsigned long long)s.st_ino;
}

/* Field 22 of /proc/<pid>/stat, the start time in clock ticks after boot:
 * with the pid it names one process, even once the pid is reused. */
unsigned long long serve_state_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	size_t n;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold blanks and parentheses */
	if (!p)
		return 0;
	/* The blank after ')' opens field 3; field 22's is the 20th. */
	for (i = 0; i < 20 && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

static void format_addrs(const struct blitz_service *svc, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	size_t used = 0;
	int i;

	snprintf(out, len, "*");
	if (!svc || (!svc->n_addr4 && !svc->n_addr6))
		return;
	out[0] = '\0';
	for (i = 0; i < svc->n_addr4 && used < len; i++) {
		inet_ntop(AF_INET, &svc->addr4[i], a, sizeof(a));
		used += (size_t)snprintf(out + used, len - used, "%s%s",
					 used ? "," : "", a);
	}
	for (i = 0; i < svc->n_addr6 && used < len; i++) {
		inet_ntop(AF_INET6, &svc->addr6[i], a, sizeof(a));
		used += (size_t)snprintf(out + used, len - used, "%s%s",
					 used ? "," : "", a);
	}
}

static bool state_name(const char *name)
{
	size_t n = strlen(name), p = strlen(STATE_PREFIX),
	       s = strlen(STATE_SUFFIX);

	return n > p + s && !strncmp(name, STATE_PREFIX, p) &&
	       !strcmp(name + n - s, STATE_SUFFIX);
}

/* Parse one file; 0 when it names a pid. */
static int state_read(const char *path, struct serve_state *st)
{
	char line[512], *v;
	FILE *f;

	memset(st, 0, sizeof(*st));
	snprintf(st->path, sizeof(st->path), "%s", path);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		v = strchr(line, '=');
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "pid"))
			st->pid = (pid_t)atoi(v);
		else if (!strcmp(line, "netns"))
			st->netns = strtoull(v, NULL, 10);
		else if (!strcmp(line, "tier"))
			snprintf(st->tier, sizeof(st->tier), "%s", v);
		else if (!strcmp(line, "ifname"))
			snprintf(st->ifname, sizeof(st->ifname), "%s", v);
		else if (!strcmp(line, "port"))
			st->port = (unsigned int)strtoul(v, NULL, 10);
		else if (!strcmp(line, "addresses"))
			snprintf(st->addrs, sizeof(st->addrs), "%s", v);
		else if (!strcmp(line, "engine_pid"))
			st->engine_pid = (pid_t)atoi(v);
		else if (!strcmp(line, "started"))
			st->started = strtoll(v, NULL, 10);
		else if (!strcmp(line, "starttime"))
			st->starttime = strtoull(v, NULL, 10);
	}
	fclose(f);
	return st->pid > 0 ? 0 : -1;
}

enum serve_state_life serve_state_life(const struct serve_state *st)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (st->pid <= 0 || (kill(st->pid, 0) && errno == ESRCH))
		return SERVE_GONE;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)st->pid);
	f = fopen(path, "r");
	if (!f)
		return SERVE_GONE;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	/* Another program, or another blitz, under a reused pid. */
	if (strcmp(comm, "blitz") ||
	    (st->starttime && serve_state_starttime(st->pid) != st->starttime))
		return SERVE_GONE;
	if (st->netns && st->netns != serve_state_netns_here())
		return SERVE_OTHER_NETNS;
	return SERVE_ALIVE;
}

/* Call fn on every state file; stops early when fn returns non-zero. */
static void state_each(int (*fn)(struct serve_state *st, void *ctx), void *ctx)
{
	char path[sizeof(((struct serve_state *)0)->path)];
	struct serve_state st;
	struct dirent *de;
	DIR *d;

	d = opendir(SERVE_STATE_DIR);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!state_name(de->d_name))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s",
				     SERVE_STATE_DIR,
				     de->d_name) >= sizeof(path))
			continue;
		if (state_read(path, &st))
			continue;
		if (fn(&st, ctx))
			break;
	}
	closedir(d);
}

static int sweep_gone(struct serve_state *st, void *ctx)
{
	const unsigned long long *netns = ctx;

	/* Another namespace's stale serve is for its own status to show. */
	if (st->netns == *netns && serve_state_life(st) == SERVE_GONE &&
	    !unlink(st->path))
		pr_debug("removed %s: serve pid %d is gone\n", st->path,
			 (int)st->pid);
	return 0;
}

void serve_state_init(struct serve_state *st, const char *ifname,
		      const struct blitz_service *svc)
{
	memset(st, 0, sizeof(*st));
	st->pid = getpid();
	st->starttime = serve_state_starttime(st->pid);
	st->netns = serve_state_netns_here();
	st->started = (long long)time(NULL);
	st->port = svc ? svc->port : 0;
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname ? ifname : "");
	snprintf(st->tier, sizeof(st->tier), "starting");
	format_addrs(svc, st->addrs, sizeof(st->addrs));
	snprintf(st->path, sizeof(st->path), "%s/" STATE_PREFIX "%s-%u-%d%s",
		 SERVE_STATE_DIR, ifname ? ifname : "any", st->port,
		 (int)st->pid, STATE_SUFFIX);
	/* A killed serve of this namespace could not remove its file:
	 * status only reads, unload only for its interface. */
	state_each(sweep_gone, &st->netns);
}

void serve_state_set(struct serve_state *st, const char *tier, pid_t engine_pid)
{
	static bool said;
	char tmp[sizeof(st->path) + 8], buf[1024];
	int fd, n;

	if (tier)
		snprintf(st->tier, sizeof(st->tier), "%s", tier);
	st->engine_pid = engine_pid;
	n = snprintf(buf, sizeof(buf),
		     "pid=%d\nstarttime=%llu\nnetns=%llu\ntier=%s\n"
		     "ifname=%s\nport=%u\naddresses=%s\nengine_pid=%d\n"
		     "started=%lld\n",
		     (int)st->pid, st->starttime, st->netns, st->tier,
		     st->ifname, st->port, st->addrs, (int)st->engine_pid,
		     st->started);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", st->path);
	if (mkdir(SERVE_STATE_DIR, 0755) && errno != EEXIST)
		goto fail;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		unlink(tmp);
		goto fail;
	}
	close(fd);
	/* rename: a reader sees the old file or the new one, never half. */
	if (rename(tmp, st->path)) {
		unlink(tmp);
		goto fail;
	}
	return;
fail:
	if (!said)
		pr_warn("cannot write %s: %s (`blitz status` will not show "
			"this serve)\n",
			st->path, strerror(errno));
	said = true;
}

void serve_state_remove(struct serve_state *st)
{
	if (st->path[0] && unlink(st->path) && errno != ENOENT)
		pr_debug("cannot remove %s: %s\n", st->path, strerror(errno));
}

struct list_ctx {
	struct serve_state *out;
	int n, max;
};

static int list_one(struct serve_state *st, void *ctx)
{
	struct list_ctx *l = ctx;

	if (l->n >= l->max)
		return 1;
	l->out[l->n++] = *st;
	return 0;
}

int serve_state_list(struct serve_state *out, int max)
{
	struct list_ctx l = {.out = out, .max = max};

	state_each(list_one, &l);
	return l.n;
}

struct pid_on_ctx {
	const char *ifname;
	enum serve_state_life life;
	pid_t pid;
};

static int pid_on_one(struct serve_state *st, void *ctx)
{
	struct pid_on_ctx *q = ctx;

	if (strcmp(st->ifname, q->ifname) || serve_state_life(st) != q->life)
		return 0;
	q->pid = st->pid;
	return 1;
}

pid_t serve_state_pid_on(const char *ifname, enum serve_state_life life)
{
	struct pid_on_ctx q = {.ifname = ifname, .life = life};

	state_each(pid_on_one, &q);
	return q.pid;
}

struct stale_ctx {
	const char *ifname;
	int n;
};

static int remove_stale_one(struct serve_state *st, void *ctx)
{
	struct stale_ctx *s = ctx;

	if (strcmp(st->ifname, s->ifname) || serve_state_life(st) != SERVE_GONE)
		return 0;
	if (!unlink(st->path)) {
		pr_info("removed the state of serve pid %d, which is gone "
			"(%s)\n",
			(int)st->pid, st->path);
		s->n++;
	}
	return 0;
}

int serve_state_remove_stale(const char *ifname)
{
	struct stale_ctx s = {.ifname = ifname};

	state_each(remove_stale_one, &s);
	return s.n;
}

/* ---- the afxdp engine's socket modes ---- */

void serve_state_xsk_path(pid_t engine_pid, char *buf, size_t len)
{
	snprintf(buf, len, "%s/afxdp-%d.xsk", SERVE_STATE_DIR, (int)engine_pid);
}

int serve_state_xsk_lines(pid_t engine_pid, const char *ifname, char *out,
			  size_t len)
{
	char path[192], line[256], mode[16];
	size_t used = 0;
	int n = 0, q, off;
	FILE *f;

	out[0] = '\0';
	serve_state_xsk_path(engine_pid, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && used < len) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%d %15s %n", &q, mode, &off) < 2)
			continue;
		used += (size_t)snprintf(out + used, len - used,
					 "%s: AF_XDP socket on queue %d: %s "
					 "mode (%s)\n",
					 ifname, q, mode, line + off);
		n++;
	}
	fclose(f);
	return n;
}

void serve_state_xsk_reap(void)
{
	char path[320];
	struct dirent *de;
	DIR *d = opendir(SERVE_STATE_DIR);
	int pid;

	while (d && (de = readdir(d))) {
		if (sscanf(de->d_name, "afxdp-%d.xsk", &pid) != 1 || pid <= 0)
			continue;
		if (!kill(pid, 0) || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", SERVE_STATE_DIR,
			 de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}
