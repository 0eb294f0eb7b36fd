// SPDX-License-Identifier: GPL-2.0
/*
 * http.c - the HTTP/1.1 request parser and the prebuilt responses (see
 * http.h and docs/architecture.md, "One wire contract").
 *
 * Owns: the request grammar every engine accepts, the verdict for each
 * request, chunked-body skipping, and the exact response bytes.
 * Must never: allocate, copy or keep more of a large body than a pointer
 * to the caller's buffer, make syscalls, recurse, or look at any byte more
 * than a constant number of times (engines re-parse from the start
 * after HTTP_INCOMPLETE, so one call must stay O(len)).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "csum.h"
#include "hex.h"
#include "http.h"

/* ---------------------------------------------------------------------- */
/* Response builder                                                        */
/* ---------------------------------------------------------------------- */

static const char *const status_line[BLITZ_RESP_KINDS] = {
	[BLITZ_RESP_GET_KA] = "HTTP/1.1 200 OK",
	[BLITZ_RESP_GET_KA10] = "HTTP/1.1 200 OK",
	[BLITZ_RESP_GET_CLOSE] = "HTTP/1.1 200 OK",
	[BLITZ_RESP_HEAD_KA] = "HTTP/1.1 200 OK",
	[BLITZ_RESP_HEAD_KA10] = "HTTP/1.1 200 OK",
	[BLITZ_RESP_HEAD_CLOSE] = "HTTP/1.1 200 OK",
	[BLITZ_RESP_400] = "HTTP/1.1 400 Bad Request",
	[BLITZ_RESP_405] = "HTTP/1.1 405 Method Not Allowed",
	[BLITZ_RESP_431] = "HTTP/1.1 431 Request Header Fields Too Large",
	[BLITZ_RESP_505] = "HTTP/1.1 505 HTTP Version Not Supported",
};

/* The error bodies: the reason phrase and a newline. */
static const char *const error_body[BLITZ_RESP_KINDS] = {
	[BLITZ_RESP_400] = "Bad Request\n",
	[BLITZ_RESP_405] = "Method Not Allowed\n",
	[BLITZ_RESP_431] = "Request Header Fields Too Large\n",
	[BLITZ_RESP_505] = "HTTP Version Not Supported\n",
};

static const char *kind_connection(int k)
{
	switch (k) {
	case BLITZ_RESP_GET_KA:
	case BLITZ_RESP_HEAD_KA:
		return NULL;
	case BLITZ_RESP_GET_KA10:
	case BLITZ_RESP_HEAD_KA10:
		return "keep-alive";
	default:
		return "close";
	}
}

static const char wday_name[7][4] = {"Thu", "Fri", "Sat", "Sun",
				     "Mon", "Tue", "Wed"};
static const char month_name[12][4] = {"Jan", "Feb", "Mar", "Apr",
				       "May", "Jun", "Jul", "Aug",
				       "Sep", "Oct", "Nov", "Dec"};

static void put2(char *p, unsigned int v)
{
	p[0] = (char)('0' + v / 10 % 10);
	p[1] = (char)('0' + v % 10);
}

/*
 * Civil date from days since 1970-01-01 (proleptic Gregorian, in 400-year
 * eras), done by hand so it needs neither gmtime's locks nor libc's TZ.
 */
static void civil_from_days(long long z, long long *y, unsigned int *m,
			    unsigned int *d)
{
	long long era, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	yoe = z - era * 146097; /* [0, 146096] */
	yoe = (yoe - yoe / 1460 + yoe / 36524 - yoe / 146096) / 365;
	doy = (z - era * 146097) - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

void http_format_date(time_t t, char out[BLITZ_DATE_LEN])
{
	long long secs = (long long)t, days, y;
	long long sod;
	unsigned int m, d, wd;

	days = secs / 86400;
	sod = secs % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	civil_from_days(days, &y, &m, &d);
	wd = (unsigned int)(((days % 7) + 7) % 7); /* 1970-01-01: Thursday */
	/* IMF-fixdate has a 4-digit year; clamp rather than overflow. */
	if (y < 0)
		y = 0;
	if (y > 9999)
		y = 9999;

	memcpy(out, wday_name[wd], 3);
	out[3] = ',';
	out[4] = ' ';
	put2(out + 5, d);
	out[7] = ' ';
	memcpy(out + 8, month_name[m - 1], 3);
	out[11] = ' ';
	put2(out + 12, (unsigned int)(y / 100));
	put2(out + 14, (unsigned int)(y % 100));
	out[16] = ' ';
	put2(out + 17, (unsigned int)(sod / 3600));
	out[19] = ':';
	put2(out + 20, (unsigned int)(sod / 60 % 60));
	out[22] = ':';
	put2(out + 23, (unsigned int)(sod % 60));
	memcpy(out + 25, " GMT", 4);
}

uint16_t http_csum16(const uint8_t *buf, size_t len)
{
	/* Network byte order: stored as-is, the two bytes read big-endian. */
	return htons(csum_fold(csum_add(0, buf, len)));
}

/* Appends to a bounded buffer; on overflow remembers it and stops. */
struct out_buf {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static void out_put(struct out_buf *o, const void *s, size_t n)
{
	if (o->overflow || n > o->cap - o->len) {
		o->overflow = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void out_str(struct out_buf *o, const char *s)
{
	out_put(o, s, strlen(s));
}

static void out_u64(struct out_buf *o, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);

	out_put(o, tmp, (size_t)n);
}

/*
 * Build the header section of kind k, announcing body_len bytes, into
 * out[0..cap). Returns its length and sets *date_off, or 0 when it does
 * not fit.
 */
static size_t build_head(int k, uint8_t *out, size_t cap, size_t body_len,
			 const char *ctype, const char *date,
			 uint16_t *date_off)
{
	struct out_buf o = {.p = out, .cap = cap};
	const char *conn = kind_connection(k);

	out_str(&o, status_line[k]);
	out_str(&o, "\r\nServer: blitz\r\nDate: ");
	*date_off = (uint16_t)o.len;
	out_put(&o, date, BLITZ_DATE_LEN);
	out_str(&o, "\r\n");
	if (k == BLITZ_RESP_405)
		out_str(&o, "Allow: GET, HEAD\r\n");
	out_str(&o, "Content-Type: ");
	out_str(&o, ctype);
	out_str(&o, "\r\nContent-Length: ");
	out_u64(&o, body_len);
	out_str(&o, "\r\n");
	if (conn) {
		out_str(&o, "Connection: ");
		out_str(&o, conn);
		out_str(&o, "\r\n");
	}
	/* How long an idle keep-alive connection stays (every engine's
	 * idle timeout; within the xdp engine's cookie validity). */
	if (!conn || strcmp(conn, "close")) {
		out_str(&o, "Keep-Alive: timeout=");
		out_u64(&o, BLITZ_KEEPALIVE_TIMEOUT);
		out_str(&o, "\r\n");
	}
	out_str(&o, "\r\n");
	return o.overflow ? 0 : o.len;
}

int http_responses_build(struct http_responses *r, const void *body,
			 size_t body_len, const char *content_type, time_t now,
			 char *err, size_t errlen)
{
	char date[BLITZ_DATE_LEN];
	const unsigned char *c;
	bool fits = true;
	int k;

	if (!content_type || !*content_type)
		content_type = "text/plain";
	for (c = (const unsigned char *)content_type; *c; c++) {
		/* A CR or LF here would let the body forge headers. */
		if (*c < 0x20 || *c == 0x7f) {
			if (err && errlen)
				snprintf(err, errlen,
					 "content type contains a control "
					 "character (byte 0x%02x)",
					 *c);
			return -EINVAL;
		}
	}
	if (!body)
		body_len = 0;
	if (body_len > BLITZ_BODY_MAX) {
		if (err && errlen)
			snprintf(err, errlen,
				 "body of %zu bytes is too large: at most %u "
				 "bytes",
				 body_len, BLITZ_BODY_MAX);
		return -EMSGSIZE;
	}

	memset(r, 0, sizeof(*r));
	http_format_date(now, date);
	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		bool error = k >= BLITZ_RESP_OK_KINDS;
		const char *ctype = error ? "text/plain" : content_type;
		size_t blen = error ? strlen(error_body[k]) : body_len;
		size_t n = build_head(k, r->bytes[k], BLITZ_RESP_MAX, blen,
				      ctype, date, &r->date_off[k]);

		/* The error kinds' own bodies always fit behind their
		 * fixed headers. */
		if (n && error && n + blen > BLITZ_RESP_MAX)
			n = 0;
		if (!n) {
			if (err && errlen)
				snprintf(err, errlen,
					 "response headers too large: a "
					 "%zu-byte content type does not fit "
					 "the %d-byte response template",
					 strlen(content_type), BLITZ_RESP_MAX);
			memset(r, 0, sizeof(*r));
			return -EMSGSIZE;
		}
		r->hdr_len[k] = (uint16_t)n;
		if (error) {
			memcpy(r->bytes[k] + n, error_body[k], blen);
			n += blen;
		} else if (http_kind_has_body(k) &&
			   n + body_len > BLITZ_RESP_MAX) {
			fits = false;
		}
		r->len[k] = (uint16_t)n;
	}
	/* All GET kinds whole, or none: one rule for every engine. */
	r->body_inline = fits;
	r->body_len = body_len;
	for (k = 0; k < BLITZ_RESP_OK_KINDS; k++) {
		if (!http_kind_has_body(k) || !fits)
			continue;
		if (body_len)
			memcpy(r->bytes[k] + r->hdr_len[k], body, body_len);
		r->len[k] = (uint16_t)(r->hdr_len[k] + body_len);
	}
	if (!fits)
		r->body = body;
	r->date_now = now;
	return 0;
}

void http_responses_set_date(struct http_responses *r, time_t now)
{
	char date[BLITZ_DATE_LEN];
	int k;

	if (now == r->date_now)
		return;
	http_format_date(now, date);
	for (k = 0; k < BLITZ_RESP_KINDS; k++)
		memcpy(r->bytes[k] + r->date_off[k], date, BLITZ_DATE_LEN);
	r->date_now = now;
}

void http_responses_meta(const struct http_responses *r,
			 struct blitz_resp_meta meta[BLITZ_RESP_KINDS])
{
	static uint16_t gen_last;
	uint16_t gen = __atomic_add_fetch(&gen_last, 1, __ATOMIC_RELAXED);
	int k;

	for (k = 0; k < BLITZ_RESP_KINDS; k++) {
		size_t off = r->date_off[k], len = r->len[k];
		/* Sum around the Date: the part after it keeps its parity
		 * only because the Date's length is odd, so realign it. */
		uint32_t sum = ntohs(http_csum16(r->bytes[k], off));
		size_t after = off + BLITZ_DATE_LEN;
		uint16_t tail =
			ntohs(http_csum16(r->bytes[k] + after, len - after));

		if (after & 1)
			tail = (uint16_t)(tail << 8 | tail >> 8);
		sum += tail;
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		meta[k].len = (uint16_t)len;
		meta[k].date_off = (uint16_t)off;
		meta[k].csum_nodate = htons((uint16_t)sum);
		meta[k].gen = gen;
	}
}

/* ---------------------------------------------------------------------- */
/* Request parser                                                          */
/* ---------------------------------------------------------------------- */

/* RFC 9110 tchar: the bytes of a method and a field name. */
static const uint8_t is_tchar[256] = {
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1, ['!'] = 1,
	['#'] = 1,	   ['$'] = 1,	      ['%'] = 1,	 ['&'] = 1,
	['\''] = 1,	   ['*'] = 1,	      ['+'] = 1,	 ['-'] = 1,
	['.'] = 1,	   ['^'] = 1,	      ['_'] = 1,	 ['`'] = 1,
	['|'] = 1,	   ['~'] = 1,
};

/* Field-value bytes: HTAB, visible ASCII, SP, and obs-text. */
static const uint8_t is_fval[256] = {
	['\t'] = 1,
	[0x20 ... 0x7e] = 1,
	[0x80 ... 0xff] = 1,
};

static bool is_ows(uint8_t c)
{
	return c == ' ' || c == '\t';
}

/* Case-insensitive match of s[0..n) against a lowercase literal made of
 * letters and '-' (OR 0x20 maps no other tchar onto those). */
static bool lc_eq(const uint8_t *s, size_t n, const char *lit, size_t litlen)
{
	size_t i;

	if (n != litlen)
		return false;
	for (i = 0; i < n; i++)
		if ((uint8_t)(s[i] | 0x20) != (uint8_t)lit[i])
			return false;
	return true;
}

#define LC_EQ(s, n, lit) lc_eq((s), (n), (lit), sizeof(lit) - 1)

/*
 * Walk a comma-separated list s[0..n) (RFC 9110 #rule: empty elements and
 * OWS around them ignored) and note what matters of each element's first
 * word (up to OWS or ';', where a transfer coding's parameters start).
 */
struct list_scan {
	bool close, keep_alive; /* Connection tokens seen */
	bool last_chunked, any; /* Transfer-Encoding: last coding */
};

static void scan_list(const uint8_t *s, size_t n, struct list_scan *ls, bool te)
{
	size_t i = 0;

	while (i < n) {
		size_t w0, w1;

		while (i < n && (is_ows(s[i]) || s[i] == ','))
			i++;
		if (i == n)
			break;
		w0 = i;
		while (i < n && s[i] != ',' && s[i] != ';' && !is_ows(s[i]))
			i++;
		w1 = i;
		while (i < n && s[i] != ',')
			i++;
		if (te) {
			ls->any = true;
			ls->last_chunked = LC_EQ(s + w0, w1 - w0, "chunked");
		} else if (LC_EQ(s + w0, w1 - w0, "close")) {
			ls->close = true;
		} else if (LC_EQ(s + w0, w1 - w0, "keep-alive")) {
			ls->keep_alive = true;
		}
	}
}

/* Content-Length: 1*DIGIT, at most 2^53 (what every client can count). */
static bool parse_content_length(const uint8_t *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > (1ULL << 53))
			return false;
	}
	*out = v;
	return true;
}

/* Where a step of the request parser stopped. */
enum req_step {
	STEP_OK,
	STEP_MORE, /* the buffer ends first */
	STEP_BAD,  /* at buf[p], a byte the grammar refuses */
};

/* What the header fields said. */
struct req_fields {
	struct list_scan conn, te;
	bool have_cl;
	unsigned int hosts;
	uint64_t cl;
};

/* Where a step of the parse stopped: *pp = p, and how it went. */
static enum req_step stopped(size_t *pp, size_t p, enum req_step step)
{
	*pp = p;
	return step;
}

/*
 * The request line from buf[0]: a method of *mlen tchars, SP, a target,
 * SP, "HTTP/" DIGIT "." DIGIT CRLF; *pp past it (or at the byte that
 * stopped it). Every byte is judged as soon as it is seen, so a garbage
 * sender gets its 400 before any end of line.
 */
static enum req_step parse_request_line(const uint8_t *buf, size_t lim,
					size_t *pp, size_t *mlen)
{
	size_t p = 0, t0, i;

	while (p < lim && is_tchar[buf[p]])
		p++;
	if (p == lim)
		goto more;
	if (buf[p] != ' ' || p == 0)
		goto bad;
	*mlen = p++;
	t0 = p;
	while (p < lim && (uint8_t)(buf[p] - 0x21) < 0x5e)
		p++;
	if (p == lim)
		goto more;
	if (buf[p] != ' ' || p == t0)
		goto bad;
	p++;
	/* "HTTP/" DIGIT "." DIGIT CRLF */
	for (i = 0; i < 10; i++, p++) {
		static const char shape[] = "HTTP/0.0\r\n";

		if (p == lim)
			goto more;
		if (shape[i] == '0') {
			if (buf[p] < '0' || buf[p] > '9')
				goto bad;
		} else if (buf[p] != (uint8_t)shape[i]) {
			goto bad;
		}
	}
	return stopped(pp, p, STEP_OK);
more:
	return stopped(pp, p, STEP_MORE);
bad:
	return stopped(pp, p, STEP_BAD);
}

/* The header fields from buf[*pp] up to the empty line, *pp past it; the
 * four names that matter into f. version: 10 or 11. */
static enum req_step parse_fields(const uint8_t *buf, size_t lim, size_t *pp,
				  int version, struct req_fields *f)
{
	size_t p = *pp;

	for (;;) {
		size_t n0, nlen, v0, v1;

		if (p == lim)
			goto more;
		if (buf[p] == '\r') {
			if (++p == lim)
				goto more;
			if (buf[p] != '\n')
				goto bad;
			p++;
			break;
		}
		/* A line starting with SP/HTAB (obs-fold), whitespace before
		 * the colon or a missing colon all stop here. */
		n0 = p;
		while (p < lim && is_tchar[buf[p]])
			p++;
		if (p == lim)
			goto more;
		if (buf[p] != ':' || p == n0)
			goto bad;
		nlen = p - n0;
		p++;
		while (p < lim && is_ows(buf[p]))
			p++;
		v0 = p;
		while (p < lim && is_fval[buf[p]])
			p++;
		if (p == lim)
			goto more;
		if (buf[p] != '\r')
			goto bad;
		if (++p == lim)
			goto more;
		if (buf[p] != '\n')
			goto bad;
		v1 = p - 1;
		while (v1 > v0 && is_ows(buf[v1 - 1]))
			v1--;

		/* Only four names matter; their lengths pick the compare. */
		if (nlen == 4 && LC_EQ(buf + n0, nlen, "host")) {
			f->hosts++;
		} else if (nlen == 10 && LC_EQ(buf + n0, nlen, "connection")) {
			scan_list(buf + v0, v1 - v0, &f->conn, false);
		} else if (nlen == 14 &&
			   LC_EQ(buf + n0, nlen, "content-length")) {
			uint64_t v;

			if (!parse_content_length(buf + v0, v1 - v0, &v) ||
			    (f->have_cl && v != f->cl) || f->te.any)
				goto bad;
			f->have_cl = true;
			f->cl = v;
		} else if (nlen == 17 &&
			   LC_EQ(buf + n0, nlen, "transfer-encoding")) {
			/* HTTP/1.0 has no chunked framing (RFC 9112 6.1). */
			if (f->have_cl || version == 10)
				goto bad;
			/* Even an empty list: a coding we cannot frame. */
			f->te.any = true;
			scan_list(buf + v0, v1 - v0, &f->te, true);
		}
		p++;
	}

	/* The last coding must be chunked, or the body has no end we know. */
	if (f->te.any && !f->te.last_chunked)
		return stopped(pp, p - 1, STEP_BAD);
	return stopped(pp, p, STEP_OK);
more:
	return stopped(pp, p, STEP_MORE);
bad:
	return stopped(pp, p, STEP_BAD);
}

/* The answer to a request whose header section (p bytes) parsed. */
static enum http_parse_result request_verdict(struct http_request *req,
					      const struct req_fields *f,
					      size_t p, size_t mlen,
					      int version, bool not_allowed)
{
	/* RFC 9112 3.2: HTTP/1.1 needs exactly one Host line; more than one
	 * is a 400 in any version. Judged on the whole header section, so
	 * header_len covers it. */
	if (f->hosts > 1 || (version == 11 && !f->hosts)) {
		memset(req, 0, sizeof(*req));
		req->resp = BLITZ_RESP_400;
		req->close = true;
		req->header_len = p;
		return HTTP_ERROR;
	}
	req->version = version;
	req->header_len = p;
	req->content_length = f->cl;
	req->chunked = f->te.any;
	req->close = f->conn.close || (version == 10 && !f->conn.keep_alive);
	if (not_allowed) {
		req->resp = BLITZ_RESP_405;
		req->close = true;
		return HTTP_ERROR;
	}
	req->head = mlen == 4;
	if (req->close)
		req->resp = req->head ? BLITZ_RESP_HEAD_CLOSE
				      : BLITZ_RESP_GET_CLOSE;
	else if (version == 10)
		req->resp =
			req->head ? BLITZ_RESP_HEAD_KA10 : BLITZ_RESP_GET_KA10;
	else
		req->resp = req->head ? BLITZ_RESP_HEAD_KA : BLITZ_RESP_GET_KA;
	return HTTP_OK;
}

/* A request that stopped at step st: incomplete while the buffer can
 * still grow, else 431 (more) or 400 through the offending byte p. */
static enum http_parse_result request_stopped(enum req_step st,
					      struct http_request *req,
					      size_t len, size_t p)
{
	if (st == STEP_MORE) {
		if (len < HTTP_MAX_HEADER)
			return HTTP_INCOMPLETE;
		memset(req, 0, sizeof(*req));
		req->resp = BLITZ_RESP_431;
		req->close = true;
		req->header_len = HTTP_MAX_HEADER;
		return HTTP_ERROR;
	}
	/* header_len: through the offending byte (it is within len). */
	memset(req, 0, sizeof(*req));
	req->resp = BLITZ_RESP_400;
	req->close = true;
	req->header_len = p + 1;
	return HTTP_ERROR;
}

enum http_parse_result http_parse_request(const uint8_t *buf, size_t len,
					  struct http_request *req)
{
	size_t lim = len < HTTP_MAX_HEADER ? len : HTTP_MAX_HEADER;
	size_t p = 0, mlen = 0;
	struct req_fields f = {0};
	enum req_step st;
	bool not_allowed;
	int version;

	memset(req, 0, sizeof(*req));
	st = parse_request_line(buf, lim, &p, &mlen);
	if (st != STEP_OK)
		return request_stopped(st, req, len, p);
	if (buf[p - 5] != '1' || (buf[p - 3] != '0' && buf[p - 3] != '1')) {
		/* Well-formed, but a version we do not speak: say so now. */
		req->resp = BLITZ_RESP_505;
		req->close = true;
		req->header_len = p;
		return HTTP_ERROR;
	}
	version = buf[p - 3] == '0' ? 10 : 11;
	not_allowed = !((mlen == 3 && !memcmp(buf, "GET", 3)) ||
			(mlen == 4 && !memcmp(buf, "HEAD", 4)));

	st = parse_fields(buf, lim, &p, version, &f);
	if (st != STEP_OK)
		return request_stopped(st, req, len, p);
	return request_verdict(req, &f, p, mlen, version, not_allowed);
}

enum chunked_state {
	CH_SIZE_FIRST = 0, /* zero-initialised state starts here */
	CH_SIZE,
	CH_EXT,
	CH_SIZE_LF,
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TRAILER_START,
	CH_TRAILER_NAME,
	CH_TRAILER_VALUE,
	CH_TRAILER_LF,
	CH_FINAL_LF,
	CH_DONE,
	CH_BAD,
};

/* The chunked grammar's states that take one byte (RFC 9112 7.1): the
 * byte that ends the state and the state it leads to; bytes of the class
 * (NULL: none) lead to class_next; any other byte is an error. */
static const struct chunked_edge {
	uint8_t end, next;
	const uint8_t *class;
	uint8_t class_next;
} chunked_edges[CH_BAD] = {
	[CH_EXT] = {'\r', CH_SIZE_LF, is_fval, CH_EXT}, /* chunk-ext */
	[CH_DATA_CR] = {'\r', CH_DATA_LF, NULL, 0},
	[CH_DATA_LF] = {'\n', CH_SIZE_FIRST, NULL, 0},
	[CH_TRAILER_START] = {'\r', CH_FINAL_LF, is_tchar, CH_TRAILER_NAME},
	[CH_TRAILER_NAME] = {':', CH_TRAILER_VALUE, is_tchar, CH_TRAILER_NAME},
	[CH_TRAILER_VALUE] = {'\r', CH_TRAILER_LF, is_fval, CH_TRAILER_VALUE},
	[CH_TRAILER_LF] = {'\n', CH_TRAILER_START, NULL, 0},
	[CH_FINAL_LF] = {'\n', CH_DONE, NULL, 0},
};

/* One byte in a state of chunked_edges: 0, or -1 when it is an error. */
static int chunked_step(struct http_chunked *st, uint8_t c)
{
	const struct chunked_edge *e = &chunked_edges[st->state];

	if (c == e->end)
		st->state = e->next;
	else if (e->class && e->class[c])
		st->state = e->class_next;
	else
		return -1;
	return 0;
}

long http_chunked_skip(struct http_chunked *st, const uint8_t *buf, size_t len,
		       bool *done)
{
	size_t i = 0;

	*done = false;
	while (i < len && st->state != CH_DONE) {
		uint8_t c = buf[i];
		int h;

		switch (st->state) {
		case CH_SIZE_FIRST:
		case CH_SIZE:
			h = hex_digit(c);
			if (h >= 0) {
				if (st->remaining > (UINT64_MAX >> 4))
					goto bad;
				st->remaining =
					st->remaining << 4 | (uint64_t)h;
				st->state = CH_SIZE;
			} else if (st->state == CH_SIZE_FIRST) {
				goto bad;
			} else if (c == ';' || is_ows(c)) {
				st->state = CH_EXT; /* BWS, chunk-ext */
			} else if (c == '\r') {
				st->state = CH_SIZE_LF;
			} else {
				goto bad;
			}
			i++;
			break;
		case CH_SIZE_LF:
			if (c != '\n')
				goto bad;
			st->state = st->remaining ? CH_DATA : CH_TRAILER_START;
			i++;
			break;
		case CH_DATA: {
			size_t n = len - i;

			if (n > st->remaining)
				n = (size_t)st->remaining;
			st->remaining -= n;
			i += n;
			if (!st->remaining)
				st->state = CH_DATA_CR;
			break;
		}
		case CH_EXT:
		case CH_DATA_CR:
		case CH_DATA_LF:
		case CH_TRAILER_START:
		case CH_TRAILER_NAME:
		case CH_TRAILER_VALUE:
		case CH_TRAILER_LF:
		case CH_FINAL_LF:
			if (chunked_step(st, c))
				goto bad;
			i++;
			break;
		default:
			goto bad;
		}
	}
	*done = st->state == CH_DONE;
	return (long)i;
bad:
	st->state = CH_BAD;
	return -1;
}
