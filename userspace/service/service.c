// SPDX-License-Identifier: GPL-2.0
/*
 * service.c - the service contract's constructors and the one build of
 * its response bytes (service.h).
 *
 * Owns: the limits of each value (port 1-65535, BLITZ_MAX_ADDRS addresses
 * per family, a body up to BLITZ_BODY_MAX) and the line that says what is
 * wrong with a bad one. Must never parse a command line or touch the
 * network: it only checks values (and reads a body file).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "secret_file.h"
#include "service.h"

/* The largest body any engine sends (http.h): a file larger is refused
 * before it is read (or, for a pipe, as soon as it passes the limit), so
 * a wrong path (a disk image) costs nothing. */
#define BODY_FILE_MAX BLITZ_BODY_MAX

void service_init(struct blitz_service *s)
{
	memset(s, 0, sizeof(*s));
	s->port = BLITZ_DEFAULT_PORT;
	s->content_type = BLITZ_DEFAULT_CONTENT_TYPE;
}

int service_set_port(struct blitz_service *s, const char *text)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 1 || v > 65535) {
		pr_warn("bad port '%s': use a number from 1 to 65535\n", text);
		return -1;
	}
	s->port = (uint16_t)v;
	return 0;
}

int service_add_addr(struct blitz_service *s, const char *text)
{
	struct in6_addr a6;
	struct in_addr a4;
	bool v6;

	if (inet_pton(AF_INET, text, &a4) == 1) {
		v6 = false;
	} else if (inet_pton(AF_INET6, text, &a6) == 1) {
		v6 = true;
	} else {
		pr_warn("bad address '%s': give an IPv4 or IPv6 address, e.g. "
			"10.0.0.1 or fd00::1\n",
			text);
		return -1;
	}
	if ((v6 ? s->n_addr6 : s->n_addr4) >= BLITZ_MAX_ADDRS) {
		pr_warn("too many IPv%d addresses: at most %d\n", v6 ? 6 : 4,
			BLITZ_MAX_ADDRS);
		return -1;
	}
	if (v6)
		s->addr6[s->n_addr6++] = a6;
	else
		s->addr4[s->n_addr4++] = a4;
	return 0;
}

/* Why the XDP program never answers a4 (network order), or NULL. */
static const char *v4_never_served(struct in_addr a4)
{
	uint32_t top = ntohl(a4.s_addr) >> 24;

	if (top == 0)
		return "an unspecified (0/8) address";
	if (top == 127)
		return "a loopback address";
	if (top >= 240)
		return "a broadcast or reserved (240/4) address";
	if (top >= 224)
		return "a multicast address";
	return NULL;
}

static const char *v6_never_served(const struct in6_addr *a6)
{
	if (a6->s6_addr[0] == 0xff)
		return "a multicast address";
	if (IN6_IS_ADDR_V4MAPPED(a6))
		return "a v4-mapped address (give the IPv4 address)";
	if (IN6_IS_ADDR_UNSPECIFIED(a6))
		return "the unspecified address";
	if (IN6_IS_ADDR_LOOPBACK(a6))
		return "a loopback address";
	return NULL;
}

int service_xdp_addrs_ok(const struct blitz_service *s)
{
	char text[INET6_ADDRSTRLEN];
	const char *why;
	int i;

	for (i = 0; i < s->n_addr4; i++) {
		why = v4_never_served(s->addr4[i]);
		if (why) {
			inet_ntop(AF_INET, &s->addr4[i], text, sizeof(text));
			goto refuse;
		}
	}
	for (i = 0; i < s->n_addr6; i++) {
		why = v6_never_served(&s->addr6[i]);
		if (why) {
			inet_ntop(AF_INET6, &s->addr6[i], text, sizeof(text));
			goto refuse;
		}
	}
	return 0;
refuse:
	pr_warn("-a %s: the xdp engine never answers %s; give one of the "
		"host's unicast addresses (`ip addr`)%s\n",
		text, why,
		strcmp(why, "a loopback address")
			? ""
			: ", or serve it with the kernel path alone: `blitz "
			  "serve -a ADDR`");
	return -1;
}

int service_set_body(struct blitz_service *s, const void *body, size_t len)
{
	char *b;

	if (len > BODY_FILE_MAX) {
		pr_warn("a body of %zu bytes is too large: at most %u bytes "
			"(%u MiB)\n",
			len, BODY_FILE_MAX, BODY_FILE_MAX >> 20);
		return -1;
	}
	b = malloc(len + 1);
	if (!b) {
		pr_warn("out of memory\n");
		return -1;
	}
	memcpy(b, body, len);
	b[len] = '\0';
	free(s->body);
	s->body = b;
	s->body_len = len;
	return 0;
}

static void body_file_too_big(const char *path)
{
	pr_warn("body file '%s' is larger than %u bytes (%u MiB), the most "
		"one response may carry\n",
		path, BODY_FILE_MAX, BODY_FILE_MAX >> 20);
}

int service_read_body_file(struct blitz_service *s, const char *path)
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
	free(s->body);
	s->body = buf;
	s->body_len = len;
	return 0;
err:
	free(buf);
	close(fd);
	return -1;
}

int service_set_content_type(struct blitz_service *s, const char *text)
{
	if (!text || !*text) {
		pr_warn("empty --content-type\n");
		return -1;
	}
	s->content_type = text;
	return 0;
}

int service_set_secret_file(struct blitz_service *s, const char *path)
{
	if (blitz_secret_file_read(path, s->secret))
		return -1;
	s->has_secret = true;
	s->secret_file = path;
	return 0;
}

int service_finish(struct blitz_service *s)
{
	if (!s->body &&
	    service_set_body(s, BLITZ_DEFAULT_BODY, strlen(BLITZ_DEFAULT_BODY)))
		return -1;
	if (!s->content_type)
		s->content_type = BLITZ_DEFAULT_CONTENT_TYPE;
	return 0;
}

void service_free(struct blitz_service *s)
{
	free(s->body);
	s->body = NULL;
	s->body_len = 0;
	explicit_bzero(s->secret, sizeof(s->secret));
	s->has_secret = false;
}

int service_responses(const struct blitz_service *s, struct http_responses *r)
{
	char err[160] = "";
	int ret;

	ret = http_responses_build(r, s->body, s->body_len, s->content_type,
				   time(NULL), err, sizeof(err));
	if (ret)
		pr_warn("cannot build the response: %s\n",
			err[0] ? err : strerror(-ret));
	return ret;
}
