// SPDX-License-Identifier: GPL-2.0
/*
 * bench_http.c - the HTTP/1.1 response checker of the load generator
 * (bench_int.h): status line, Content-Length framing, Connection: close,
 * across segment boundaries.
 *
 * Owns: framing responses and counting them (good, bad status, parse
 * errors). Must never accept a response it cannot frame (chunked, no
 * Content-Length): the caller resets that connection.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench_int.h"

/* ---- HTTP response checking ---- */

static bool header_is(const char *line, size_t len, const char *name,
		      const char **val, size_t *vlen)
{
	size_t n = strlen(name);

	if (len <= n || strncasecmp(line, name, n) || line[n] != ':')
		return false;
	line += n + 1;
	len -= n + 1;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	*val = line;
	*vlen = len;
	return true;
}

/* Parse one complete header section (ending in CRLF CRLF). -1: malformed. */
static int parse_header(struct gen *g, struct conn *c, const char *h,
			size_t len)
{
	const char *end = h + len, *line, *nl, *v;
	bool have_len = false, http10;
	unsigned long cl = 0;
	size_t vlen;
	int status;

	if (len < 12 || memcmp(h, "HTTP/1.", 7) ||
	    (h[7] != '0' && h[7] != '1') || h[8] != ' ')
		return -1;
	http10 = h[7] == '0';
	if (h[9] < '1' || h[9] > '5' || h[10] < '0' || h[10] > '9' ||
	    h[11] < '0' || h[11] > '9')
		return -1;
	status = (h[9] - '0') * 100 + (h[10] - '0') * 10 + (h[11] - '0');
	c->closing = http10;
	line = memchr(h, '\n', len);
	while (line && ++line < end) {
		size_t ll;

		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			break;
		ll = (size_t)(nl - line);
		if (ll && line[ll - 1] == '\r')
			ll--;
		if (header_is(line, ll, "content-length", &v, &vlen)) {
			char *e;
			char num[24];

			if (!vlen || vlen >= sizeof(num))
				return -1;
			memcpy(num, v, vlen);
			num[vlen] = 0;
			cl = strtoul(num, &e, 10);
			if (*e)
				return -1;
			have_len = true;
		} else if (header_is(line, ll, "connection", &v, &vlen)) {
			if (vlen == 5 && !strncasecmp(v, "close", 5))
				c->closing = 1;
			else if (vlen == 10 &&
				 !strncasecmp(v, "keep-alive", 10))
				c->closing = 0;
		} else if (header_is(line, ll, "transfer-encoding", &v,
				     &vlen)) {
			return -1; /* a hello server has no reason to chunk */
		}
		line = nl;
	}
	if (!have_len)
		return -1;
	if (status != 200)
		g->r->err_status++;
	c->body_left = (uint32_t)cl;
	return status == 200 ? 0 : 1;
}

static void response_done(struct gen *g, struct conn *c, bool good)
{
	uint64_t lat = g->now - c->t_sent;

	g->r->responses++;
	if (good) {
		g->r->ok++;
		if (!c->answered) {
			c->answered = 1;
			g->r->conns_answered++;
		}
	}
	bench_hist_add(&g->r->hist, lat);
	g->cur.lat_sum_ns += lat;
	g->cur.lat_n++;
	if (lat > g->cur.lat_max_ns)
		g->cur.lat_max_ns = lat;
	c->pending--;
	g->inflight--;
	if (!c->pending)
		g->out--;
	c->rstate = R_HDR;
	c->hlen = 0;
}

/* Feed in-order payload to the response parser. -1: the stream can no
 * longer be framed (the caller resets the connection). */
int bg_consume(struct gen *g, struct conn *c, const char *d, uint32_t len)
{
	static const char eoh[] = "\r\n\r\n";

	while (len) {
		if (!c->pending) { /* bytes nobody asked for */
			g->r->err_parse++;
			return -1;
		}
		if (c->rstate == R_HDR) {
			const char *e;
			uint32_t take;
			int rc;

			if (!c->hlen) {
				/* The same bytes as the last header: its first
				 * CRLF CRLF is where the cached one ends, and
				 * the parse is the same. */
				if (g->hc_len && len >= g->hc_len &&
				    !memcmp(d, g->hc, g->hc_len)) {
					take = g->hc_len;
					rc = g->hc_rc;
					c->closing = g->hc_closing;
					c->body_left = g->hc_body;
					if (rc == 1)
						g->r->err_status++;
					g->r->hdr_cache_hits++;
					goto parsed;
				}
				e = memmem(d, len, eoh, 4);
				if (e) {
					take = (uint32_t)(e + 4 - d);
					rc = parse_header(g, c, d, take);
					if (rc >= 0 && take <= HC_MAX) {
						memcpy(g->hc, d, take);
						g->hc_len = take;
						g->hc_rc = (int8_t)rc;
						g->hc_closing = c->closing;
						g->hc_body = c->body_left;
					}
					goto parsed;
				}
			}
			/* Split header: collect it, then look again. */
			{
				uint32_t old = c->hlen, from;
				char *hb;

				if (c->hbuf == NO_BUF) {
					if (!g->n_hdr_free) {
						g->r->hdr_pool_empty++;
						g->r->err_parse++;
						return -1;
					}
					c->hbuf = g->hdr_free[--g->n_hdr_free];
				}
				hb = g->hdr_pool + (size_t)c->hbuf * HDR_MAX;
				take = len;
				if (old + take > HDR_MAX)
					take = HDR_MAX - old;
				memcpy(hb + old, d, take);
				c->hlen = (uint16_t)(old + take);
				from = old > 3 ? old - 3 : 0;
				e = memmem(hb + from, c->hlen - from, eoh, 4);
				if (!e) {
					if (c->hlen >= HDR_MAX)
						return -1;
					return 0; /* all of len taken */
				}
				take = (uint32_t)(e + 4 - hb) - old;
				rc = parse_header(g, c, hb,
						  (size_t)(e + 4 - hb));
				bg_hdr_put(g, c);
			}
		parsed:
			if (rc < 0) {
				g->r->err_parse++;
				return -1;
			}
			d += take;
			len -= take;
			c->rstate = R_BODY;
			c->hlen = 0;
			c->bad = rc == 1;
			if (!c->body_left)
				response_done(g, c, !c->bad);
			continue;
		}
		/* R_BODY */
		{
			uint32_t take = len < c->body_left ? len : c->body_left;

			d += take;
			len -= take;
			c->body_left -= take;
			if (!c->body_left)
				response_done(g, c, !c->bad);
		}
	}
	return 0;
}
