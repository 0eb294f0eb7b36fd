// SPDX-License-Identifier: GPL-2.0
/*
 * metrics.c - the /metrics endpoint of serve (metrics.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "prometheus.h"

struct metrics_server {
	int fd;
	char ifname[16];
	bool has_if;
	pid_t owner;
	atomic_int stop;
	pthread_t th;
};

/* "[ADDR:]PORT" into ss; 0 or -1 with a line. */
static int parse_spec(const char *spec, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	char host[64] = "127.0.0.1";
	const char *port = spec, *colon = strrchr(spec, ':');
	char *end;
	long p;

	if (colon) {
		size_t n = (size_t)(colon - spec);

		if (n >= sizeof(host))
			goto bad;
		memcpy(host, spec, n);
		host[n] = '\0';
		if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
			memmove(host, host + 1, n - 2);
			host[n - 2] = '\0';
		}
		port = colon + 1;
	}
	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p < 1 || p > 65535)
		goto bad;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)p);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*s6);
		return 0;
	}
bad:
	pr_warn("bad --metrics '%s': use PORT or ADDR:PORT, e.g. 9100 or "
		"127.0.0.1:9100\n",
		spec);
	return -1;
}

static void answer(struct metrics_server *m, int fd)
{
	struct timeval tv = {.tv_sec = 1};
	char req[1024], head[256], *body = NULL;
	size_t blen = 0;
	ssize_t n, got = 0;
	FILE *f;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (got < (ssize_t)sizeof(req) - 1) {
		n = recv(fd, req + got, sizeof(req) - 1 - (size_t)got, 0);
		if (n <= 0)
			break;
		got += n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got > 0 ? got : 0] = '\0';
	if (strncmp(req, "GET /metrics", 12) ||
	    (req[12] != ' ' && req[12] != '?')) {
		static const char nf[] = "HTTP/1.1 404 Not Found\r\n"
					 "Content-Length: 0\r\n"
					 "Connection: close\r\n\r\n";

		if (send(fd, nf, sizeof(nf) - 1, MSG_NOSIGNAL) < 0)
			return;
		return;
	}
	f = open_memstream(&body, &blen);
	if (!f)
		return;
	prometheus_write(f, m->has_if ? m->ifname : NULL, 0, m->owner);
	fclose(f);
	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 200 OK\r\nContent-Type: text/plain; "
		     "version=0.0.4; charset=utf-8\r\nContent-Length: "
		     "%zu\r\nConnection: close\r\n\r\n",
		     blen);
	if (send(fd, head, (size_t)n, MSG_NOSIGNAL) == n)
		if (send(fd, body, blen, MSG_NOSIGNAL) < 0)
			pr_debug("metrics: send: %s\n", strerror(errno));
	free(body);
}

static void *metrics_main(void *arg)
{
	struct metrics_server *m = arg;
	struct pollfd p = {.fd = m->fd, .events = POLLIN};
	int c;

	while (!atomic_load(&m->stop)) {
		if (poll(&p, 1, 200) <= 0)
			continue;
		c = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		answer(m, c);
		close(c);
	}
	return NULL;
}

int metrics_spec_check(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return parse_spec(spec, &ss, &len);
}

int metrics_start(const char *spec, const char *ifname, pid_t owner,
		  struct metrics_server **out)
{
	struct sockaddr_storage ss;
	struct metrics_server *m;
	sigset_t block, old;
	socklen_t len;
	int one = 1, err;

	*out = NULL;
	if (parse_spec(spec, &ss, &len))
		return -1;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -1;
	m->owner = owner;
	if (ifname) {
		snprintf(m->ifname, sizeof(m->ifname), "%s", ifname);
		m->has_if = true;
	}
	m->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (m->fd < 0 ||
	    setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(m->fd, (struct sockaddr *)&ss, len) || listen(m->fd, 16)) {
		pr_warn("--metrics %s: cannot listen: %s\n", spec,
			strerror(errno));
		if (m->fd >= 0)
			close(m->fd);
		free(m);
		return -1;
	}
	/* The serving thread takes none of the signals serve handles. */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = pthread_create(&m->th, NULL, metrics_main, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_warn("--metrics: pthread_create: %s\n", strerror(err));
		close(m->fd);
		free(m);
		return -1;
	}
	*out = m;
	return 0;
}

void metrics_stop(struct metrics_server *m)
{
	if (!m)
		return;
	atomic_store(&m->stop, 1);
	pthread_join(m->th, NULL);
	close(m->fd);
	free(m);
}
