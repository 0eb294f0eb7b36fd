// SPDX-License-Identifier: GPL-2.0
/*
 * ksock.c - see ksock.h. The order is what makes the filter sound:
 *   1. load the tracers and attach every one (any failure: none, and the
 *      bitmap stays not ready);
 *   2. run the tcp iterator over this namespace's sockets: each tracer
 *      event comes after its socket is in the hash (blitz_ksock.bpf.c), so
 *      a socket whose event fell before step 1 is in the hash for the
 *      iterator, and any other one is marked by its event;
 *   3. only then write word 0 (ready for this port).
 */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "blitz_ksock.h"
#include "blitz_ksock.skel.h"
#include "ksock.h"
#include "log.h"

#define KS_LINKS 2

struct blitz_ksock {
	struct blitz_ksock_bpf *skel;
	struct bpf_link *links[KS_LINKS];
	bool pinned; /* the links outlive the handles */
};

static struct bpf_program *ks_prog(struct blitz_ksock_bpf *s, int i)
{
	struct bpf_program *p[KS_LINKS] = {s->progs.ks_xmit, s->progs.ks_state};

	return p[i];
}

void blitz_ksock_free(struct blitz_ksock *k)
{
	int i;

	__u64 off = 0;
	__u32 key = 0;

	if (!k)
		return;
	/* Tracers about to go: nothing may trust the bitmap after them. */
	if (!k->pinned && k->skel && bpf_map__fd(k->skel->maps.ksock) >= 0)
		bpf_map_update_elem(bpf_map__fd(k->skel->maps.ksock), &key,
				    &off, BPF_ANY);
	for (i = 0; i < KS_LINKS; i++)
		bpf_link__destroy(k->links[i]);
	blitz_ksock_bpf__destroy(k->skel);
	free(k);
}

/* Mark every socket of this namespace: read the iterator to its end. */
static int seed(struct blitz_ksock *k)
{
	struct bpf_link *it;
	char buf[256];
	int fd, err = 0;
	ssize_t n;

	it = bpf_program__attach_iter(k->skel->progs.ks_seed, NULL);
	if (!it)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(it));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = -errno;
	close(fd);
out:
	bpf_link__destroy(it);
	return err;
}

int blitz_ksock_start(__u16 port, struct blitz_ksock **out, char *why,
		      size_t why_len)
{
	struct blitz_ksock *k;
	__u64 ready = BLITZ_KSOCK_READY | port;
	__u32 key = 0;
	int i, err;

	*out = NULL;
	k = calloc(1, sizeof(*k));
	if (!k) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	k->skel = blitz_ksock_bpf__open();
	if (!k->skel) {
		err = -errno;
		snprintf(why, why_len, "cannot open the tracer: %s",
			 strerror(-err));
		goto err;
	}
	k->skel->rodata->blitz_ksock_port = port;
	err = blitz_ksock_bpf__load(k->skel);
	if (err) {
		snprintf(why, why_len,
			 "the kernel refused the tracer (%s): no BTF or "
			 "tp_btf here?",
			 strerror(-err));
		goto err;
	}
	for (i = 0; i < KS_LINKS; i++) {
		k->links[i] = bpf_program__attach(ks_prog(k->skel, i));
		if (!k->links[i]) {
			err = -errno;
			snprintf(
				why, why_len,
				"cannot attach the tracer on %s: %s",
				bpf_program__section_name(ks_prog(k->skel, i)) +
					strlen("tp_btf/"),
				strerror(-err));
			goto err;
		}
	}
	err = seed(k);
	if (err) {
		snprintf(why, why_len,
			 "cannot read this namespace's sockets "
			 "(tcp iterator): %s",
			 strerror(-err));
		goto err;
	}
	if (bpf_map_update_elem(bpf_map__fd(k->skel->maps.ksock), &key, &ready,
				BPF_ANY)) {
		err = -errno;
		snprintf(why, why_len, "cannot mark the filter ready: %s",
			 strerror(-err));
		goto err;
	}
	*out = k;
	return 0;
err:
	blitz_ksock_free(k);
	return err;
}

int blitz_ksock_map_fd(const struct blitz_ksock *k)
{
	return bpf_map__fd(k->skel->maps.ksock);
}

int blitz_ksock_pin(struct blitz_ksock *k, const char *dir)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int i, err = 0;

	for (i = 0; i < KS_LINKS && !err; i++) {
		if (snprintf(path, sizeof(path), "%s/ksock_%s", dir,
			     bpf_program__name(ks_prog(k->skel, i))) >=
		    (int)sizeof(path))
			return -ENAMETOOLONG;
		/* bpffs refuses names with a dot */
		snprintf(tmp, sizeof(tmp), "%s_new", path);
		unlink(tmp);
		if (bpf_obj_pin(bpf_link__fd(k->links[i]), tmp) ||
		    chmod(tmp, 0600) || rename(tmp, path))
			err = -errno;
		if (err)
			unlink(tmp);
	}
	k->pinned = !err;
	return err;
}

int blitz_ksock_state(int map_fd, __u16 *port, unsigned long *bits)
{
	__u64 w;
	__u32 key;

	*bits = 0;
	*port = 0;
	key = 0;
	if (bpf_map_lookup_elem(map_fd, &key, &w))
		return -errno;
	if (!(w & BLITZ_KSOCK_READY))
		return 0;
	*port = (__u16)w;
	for (key = 1; key <= BLITZ_KSOCK_WORDS; key++) {
		if (bpf_map_lookup_elem(map_fd, &key, &w))
			return -errno;
		*bits += (unsigned long)__builtin_popcountll(w);
	}
	return 1;
}
