// SPDX-License-Identifier: GPL-2.0
/*
 * epoll_sock.c - the epoll engine's listening sockets (epoll_int.h): the
 * addresses to listen on, one socket bound with the options the engine needs,
 * and the one line that says why a bind failed.
 *
 * Owns: socket(), setsockopt(), bind() and listen() of the service port.
 * Must never accept or touch a worker: epoll_engine.c spreads the sockets
 * over the threads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "epoll_int.h"
#include "log.h"

static void fmt_sa(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(out, len, "%s:%u", a, ntohs(s->sin_port));
	} else {
		const struct sockaddr_in6 *s = (const void *)ss;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(out, len, "[%s]:%u", a, ntohs(s->sin6_port));
	}
}

/* ss: the socket address of addr (a struct in_addr, or with v6 a struct
 * in6_addr) and port. */
static void sockaddr_set(struct sockaddr_storage *ss, bool v6, const void *addr,
			 uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (!v6) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, addr, sizeof(s->sin_addr));
	} else {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, addr, sizeof(s->sin6_addr));
	}
	ep_sock_set_port(ss, port);
}

/* The addresses to listen on: the configured ones, else the wildcard. */
int ep_sock_listen_addrs(const struct blitz_service *svc, uint16_t port,
			 struct sockaddr_storage *ss, bool *dual)
{
	int n = 0, i;

	*dual = false;
	for (i = 0; i < svc->n_addr4; i++)
		sockaddr_set(&ss[n++], false, &svc->addr4[i], port);
	for (i = 0; i < svc->n_addr6; i++)
		sockaddr_set(&ss[n++], true, &svc->addr6[i], port);
	if (!n) {
		sockaddr_set(&ss[n++], true, &in6addr_any, port);
		*dual = true;
	}
	return n;
}

void ep_sock_wildcard4(struct sockaddr_storage *ss, uint16_t port)
{
	struct in_addr any = {.s_addr = htonl(INADDR_ANY)};

	sockaddr_set(ss, false, &any, port);
}

void ep_sock_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in)
					: sizeof(struct sockaddr_in6);
}

void ep_sock_say_bind_error(const struct sockaddr_storage *ss, int err)
{
	char a[INET6_ADDRSTRLEN + 16];
	uint16_t port =
		ss->ss_family == AF_INET
			? ntohs(((const struct sockaddr_in *)ss)->sin_port)
			: ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);

	fmt_sa(ss, a, sizeof(a));
	if (err == EADDRINUSE)
		pr_warn("cannot listen on %s: port %u is already in use "
			"(`ss -ltnp 'sport = :%u'` shows by whom)\n",
			a, port, port);
	else if (err == EADDRNOTAVAIL)
		pr_warn("cannot listen on %s: no interface here has that "
			"address (check -a)\n",
			a);
	else if (err == EACCES)
		pr_warn("cannot listen on %s: port %u needs root "
			"(CAP_NET_BIND_SERVICE)\n",
			a, port);
	else
		pr_warn("cannot listen on %s: %s\n", a, strerror(err));
}

/*
 * One listening socket. reuseport: the per-thread listeners; without it,
 * the probe that tells "port in use" apart (SO_REUSEPORT would otherwise
 * quietly share the port with another server started by the same user).
 */
int ep_sock_open_listener(const struct sockaddr_storage *ss, bool dual,
			  bool reuseport, bool report)
{
	int fd, one = 1, zero = 0, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		err = errno;
		if (report)
			pr_warn("socket: %s\n", strerror(err));
		return -err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		err = errno;
		if (report)
			pr_warn("SO_REUSEPORT: %s\n", strerror(err));
		goto err;
	}
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual ? &zero : &one,
			   sizeof(int));
	if (bind(fd, (const struct sockaddr *)ss, sa_len(ss)) < 0) {
		err = errno;
		if (report)
			ep_sock_say_bind_error(ss, err);
		goto err;
	}
	if (reuseport && listen(fd, 65535) < 0) {
		err = errno;
		if (report)
			pr_warn("listen: %s\n", strerror(err));
		goto err;
	}
	return fd;
err:
	close(fd);
	return -err;
}
