/* SPDX-License-Identifier: GPL-2.0 */
/*
 * service.h - the service contract: what blitz serves (the TCP port, the
 * addresses, the body and its content type) and the limits on each, with
 * the constructors that check them, and the one place the response bytes
 * are built from it.
 *
 *   CLI (cli_common.c) ─▶ service_set_port/add_addr/set_body/... ─▶ struct
 * blitz_service │ service_responses() (once per process) ──┴─▶ struct
 * http_responses │ epoll engine ◀──┬── loader (xdp templates) ◀──┬── tcp core
 * (afxdp, dpdk)
 *
 * Owns: the values and their validation; every setter prints one line
 * saying what is wrong with a bad value and leaves the service as it was.
 * Must never parse a command line (getopt letters are the CLI's, cli.h),
 * touch the network or BPF: engines and the loader include this, never
 * cli.h.
 */
#ifndef BLITZ_SERVICE_H
#define BLITZ_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "../bpf/blitz_shared.h"

#define BLITZ_DEFAULT_PORT 80
#define BLITZ_DEFAULT_BODY "Hello World!"
#define BLITZ_DEFAULT_CONTENT_TYPE "text/plain"

struct http_responses;

struct blitz_service {
	uint16_t port;	      /* host order; 0 only in tests (any port) */
	int n_addr4, n_addr6; /* both 0: every local address */
	struct in_addr addr4[BLITZ_MAX_ADDRS];
	struct in6_addr addr6[BLITZ_MAX_ADDRS];
	char *body; /* malloc'd; default BLITZ_DEFAULT_BODY */
	size_t body_len;
	const char *content_type; /* not copied; default text/plain */
	/* --secret-file (secret_file.h): the cookie key every engine and
	 * every host given the same file uses; the path is kept for a child
	 * engine's argv (never the key). has_secret false: a random key. */
	bool has_secret;
	uint64_t secret[2];
	const char *secret_file;
};

/* Defaults: port 80, every address, no body yet (service_finish). */
void service_init(struct blitz_service *s);
/* The setters: 0, or -1 with one line printed (the service unchanged). */
int service_set_port(struct blitz_service *s, const char *text);
/* An IPv4 or IPv6 address in text form, up to BLITZ_MAX_ADDRS of each. */
int service_add_addr(struct blitz_service *s, const char *text);
/* 0 when the XDP program can serve every -a address, else -1 with one
 * line: it never answers an unspecified, loopback, multicast, broadcast
 * (240/4) or v4-mapped address (bpf/blitz_addr.h: as a source it is
 * martian, as a destination not unicast). */
int service_xdp_addrs_ok(const struct blitz_service *s);
int service_set_body(struct blitz_service *s, const void *body, size_t len);
/* The body read from a file, refused above BLITZ_BODY_MAX (16 MiB)
 * before it is read. */
int service_read_body_file(struct blitz_service *s, const char *path);
/* Not copied: text must outlive s (argv does). Empty is refused; a
 * control character is refused by service_responses (http.c checks). */
int service_set_content_type(struct blitz_service *s, const char *text);
/* The cookie key from a root-only file (secret_file.h); path is kept,
 * not copied. */
int service_set_secret_file(struct blitz_service *s, const char *path);
/* Fill what was left unset (the body). 0 or -1 with a line printed. */
int service_finish(struct blitz_service *s);
void service_free(struct blitz_service *s);

/*
 * The response bytes of this service, with the Date of now: the one build
 * whose result is handed to every engine (they copy it and keep its Date
 * current; none formats a response). 0, or -errno with one line printed.
 * A body too large to be inline is referenced by r, not copied: s must
 * outlive r (or the engine's own copy).
 */
int service_responses(const struct blitz_service *s, struct http_responses *r);

#endif /* BLITZ_SERVICE_H */
