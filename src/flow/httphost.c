// SPDX-License-Identifier: GPL-2.0-or-later
/* httphost: the request line and header fields of RFC 9112, read
 * strictly, because a front end routes plain HTTP by the host the
 * request names and any leniency of ours that the server does not share
 * (or the other way round) is a way past the check. So: lines end in
 * CRLF only; no whitespace before a field's colon and no folded lines
 * (both MUST be rejected, RFC 9112 5.1 and 5.2); exactly one Host header
 * (RFC 9112 3.2). The host is the request-target's in absolute form
 * (RFC 9112 3.2.2: the server ignores Host then) or authority form
 * (CONNECT), else Host's; when a target and Host both name one, they
 * must agree, so no server that routes by the other can be steered. A
 * port is stripped; an IP literal is no name (the check refuses it, as a
 * ClientHello without SNI).
 *
 * As tlshello, the stream is read from its start on every call. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "dns/dnsmsg.h"
#include "flow/httphost.h"

#define METHOD_MAX 16

struct head {
	bool has_host;	     /* the one Host header */
	const uint8_t *host; /* its value, whitespace trimmed */
	size_t host_len;
	const uint8_t *target; /* the target's authority, if any */
	size_t target_len;
	bool has_target;
	bool has_length, has_te; /* Content-Length, Transfer-Encoding */
	uint64_t length;
};

static bool method_prefix(const uint8_t *p, size_t n);
static int read_line(struct dns_reader *r, const uint8_t **line, size_t *n);
static int request_line(const uint8_t *p, size_t n, struct head *h);
static int authority_of(const uint8_t *t, size_t n, bool connect,
			struct head *h);
static int header_line(const uint8_t *p, size_t n, struct head *h);
static int host_of(const uint8_t *p, size_t n, struct httphost *out);
static bool tchar(uint8_t c);
static int content_length(const uint8_t *p, size_t n, struct head *h);
static int parse_head(const uint8_t *stream, size_t len, struct httphost *out,
		      struct head *h, size_t *end);
static bool lower_eq(const uint8_t *a, size_t n, const char *b);

int httphost_parse(const uint8_t *stream, size_t len, struct httphost *out)
{
	struct head h = {0};
	size_t end;

	return parse_head(stream, len, out, &h, &end);
}

int httphost_flight(const uint8_t *stream, size_t len, struct httphost *out)
{
	struct httphost next;
	struct head h = {0};
	size_t end, pos;
	int rc = parse_head(stream, len, out, &h, &end);

	for (int k = 1; rc == 0; k++) {
		/* A body (its length known) is skipped; a chunked one cannot
		 * be told from a request after it: no byte may follow. */
		if (h.has_te && h.has_length)
			return -EBADMSG;
		if (h.has_te)
			return end == len ? 0 : -EBADMSG;
		if (h.length > len - end)
			return 0; /* the rest of the body comes later */
		pos = end + (size_t)h.length;
		if (pos == len)
			return 0;
		if (k == HTTPHOST_FLIGHT_HEADS)
			return -EMSGSIZE;
		memset(&h, 0, sizeof(h));
		rc = parse_head(stream + pos, len - pos, &next, &h, &end);
		if (rc == -EAGAIN || rc == -EPROTO)
			return rc == -EAGAIN ? -EAGAIN : -EBADMSG;
		if (rc == 0 && (next.has_name != out->has_name ||
				strcmp(next.name, out->name) != 0))
			return -EXDEV;
		end += pos;
	}
	return rc;
}

/* One request head at the start of stream into out and h; *end: the
 * offset past its empty line. */
static int parse_head(const uint8_t *stream, size_t len, struct httphost *out,
		      struct head *h, size_t *end)
{
	struct dns_reader r;
	const uint8_t *line;
	size_t n, start;
	int rc;

	out->has_name = false;
	out->name[0] = '\0';
	dns_reader_init(&r, stream, len > HTTPHOST_MAX ? HTTPHOST_MAX : len);
	/* RFC 9112 2.2: empty lines before the request line are ignored. */
	do {
		start = r.pos;
		rc = read_line(&r, &line, &n);
	} while (rc == 0 && n == 0);
	if (rc == -EAGAIN && !method_prefix(r.buf + start, r.len - start))
		return -EPROTO;
	if (rc == 0)
		rc = request_line(line, n, h);
	while (rc == 0) {
		rc = read_line(&r, &line, &n);
		if (rc != 0 || n == 0)
			break;
		rc = header_line(line, n, h);
	}
	if (rc == -EAGAIN && len >= HTTPHOST_MAX)
		return -EMSGSIZE;
	if (rc != 0)
		return rc;
	*end = r.pos;
	if (!h->has_target)
		return h->has_host ? host_of(h->host, h->host_len, out) : 0;
	rc = host_of(h->target, h->target_len, out);
	if (rc == 0 && h->has_host) {
		struct httphost other = {0};

		rc = host_of(h->host, h->host_len, &other);
		if (rc == 0 && (other.has_name != out->has_name ||
				strcmp(other.name, out->name) != 0))
			rc = -EBADMSG;
	}
	if (rc != 0)
		out->has_name = false;
	return rc;
}

/* Could the n bytes at p (a request line's start, not yet whole) still
 * become one: a method token, then a space? */
static bool method_prefix(const uint8_t *p, size_t n)
{
	struct dns_reader r;
	size_t m = 0;
	uint8_t c;

	dns_reader_init(&r, p, n);
	if (n == 1 && p[0] == '\r') /* an empty line's first half */
		return true;
	while (dns_read_u8(&r, &c) == 0) {
		if (c == ' ')
			return m > 0;
		if (!tchar(c) || ++m > METHOD_MAX)
			return false;
	}
	return true;
}

/* One line up to CRLF (not included). -EAGAIN when no CRLF yet, -EBADMSG
 * for a CR not before LF or an LF not after CR. */
static int read_line(struct dns_reader *r, const uint8_t **line, size_t *n)
{
	size_t start = r->pos;
	uint8_t c;

	while (dns_read_u8(r, &c) == 0) {
		if (c == '\n')
			return -EBADMSG;
		if (c != '\r')
			continue;
		if (dns_read_u8(r, &c) != 0)
			return -EAGAIN;
		if (c != '\n')
			return -EBADMSG;
		*line = r->buf + start;
		*n = r->pos - start - 2;
		return 0;
	}
	return -EAGAIN;
}

/* method SP request-target SP HTTP-version (RFC 9112 3). A line that does
 * not look like one, even before it is whole, is -EPROTO. */
static int request_line(const uint8_t *p, size_t n, struct head *h)
{
	size_t m = 0, t, v;
	bool connect;

	while (m < n && m < METHOD_MAX && tchar(p[m]))
		m++;
	if (m == 0 || m >= n || p[m] != ' ')
		return -EPROTO;
	connect = m == 7 && memcmp(p, "CONNECT", 7) == 0;
	t = m + 1;
	v = t;
	while (v < n && p[v] > ' ' && p[v] < 0x7f)
		v++;
	if (v == t || v >= n || p[v] != ' ')
		return -EPROTO;
	if (n - v - 1 != 8 || (memcmp(p + v + 1, "HTTP/1.1", 8) != 0 &&
			       memcmp(p + v + 1, "HTTP/1.0", 8) != 0))
		return -EPROTO;
	return authority_of(p + t, v - t, connect, h);
}

/* The authority of an absolute-form ("http://host:port/path") or
 * authority-form (CONNECT "host:port") target; origin and asterisk
 * forms name none. Userinfo ("user@host") is refused. */
static int authority_of(const uint8_t *t, size_t n, bool connect,
			struct head *h)
{
	size_t a = 0, e;

	if (!connect && (n == 0 || t[0] == '/' || (n == 1 && t[0] == '*')))
		return 0;
	if (!connect) {
		if (n >= 7 && lower_eq(t, 7, "http://"))
			a = 7;
		else if (n >= 8 && lower_eq(t, 8, "https://"))
			a = 8;
		else
			return -EBADMSG;
	}
	for (e = a; e < n && t[e] != '/' && t[e] != '?' && t[e] != '#'; e++)
		if (t[e] == '@')
			return -EBADMSG;
	h->has_target = true;
	h->target = t + a;
	h->target_len = e - a;
	return 0;
}

/* field-name ":" OWS field-value OWS; only Host is kept. */
static int header_line(const uint8_t *p, size_t n, struct head *h)
{
	size_t c = 0, s, e;

	if (p[0] == ' ' || p[0] == '\t') /* obs-fold */
		return -EBADMSG;
	while (c < n && tchar(p[c]))
		c++;
	if (c == 0 || c >= n || p[c] != ':')
		return -EBADMSG;
	for (s = c + 1; s < n && (p[s] == ' ' || p[s] == '\t'); s++)
		;
	for (e = n; e > s && (p[e - 1] == ' ' || p[e - 1] == '\t'); e--)
		;
	if (c == 17 && lower_eq(p, 17, "transfer-encoding")) {
		h->has_te = true;
		return 0;
	}
	if (c == 14 && lower_eq(p, 14, "content-length"))
		return content_length(p + s, e - s, h);
	if (c != 4 || !lower_eq(p, 4, "host"))
		return 0;
	if (h->has_host)
		return -EBADMSG;
	h->has_host = true;
	h->host = p + s;
	h->host_len = e - s;
	return 0;
}

/* host [":" port] (RFC 9110 7.2) into out: an IP literal (bracketed, or a
 * last label of digits only, as a dotted quad) is no name; one trailing
 * dot is dropped. An empty Host is no name. */
static int host_of(const uint8_t *p, size_t n, struct httphost *out)
{
	size_t hn = n, last;

	if (n == 0)
		return 0;
	if (p[0] == '[')
		return memchr(p, ']', n) != NULL ? 0 : -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (p[i] != ':')
			continue;
		if (i + 1 == n || n - i - 1 > 5)
			return -EBADMSG;
		for (size_t k = i + 1; k < n; k++)
			if (p[k] < '0' || p[k] > '9')
				return -EBADMSG;
		hn = i;
		break;
	}
	if (hn > 0 && p[hn - 1] == '.')
		hn--;
	if (tlshello_host_name(p, hn, out->name) != 0)
		return -EBADMSG;
	last = hn;
	while (last > 0 && p[last - 1] != '.')
		last--;
	for (size_t i = last; i < hn && !out->has_name; i++)
		out->has_name = p[i] < '0' || p[i] > '9';
	if (!out->has_name) /* 198.18.1.10 */
		out->name[0] = '\0';
	return 0;
}

/* RFC 9110 5.6.2 token characters. */
static bool tchar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c != 0 && strchr("!#$%&'*+-.^_`|~", c));
}

/* Do the n bytes at a equal b's first n, ASCII case folded? */
static bool lower_eq(const uint8_t *a, size_t n, const char *b)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t x = a[i], y = (uint8_t)b[i];

		if (x >= 'A' && x <= 'Z')
			x = (uint8_t)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (uint8_t)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return true;
}

/* Content-Length: digits only (RFC 9110 8.6), once. */
static int content_length(const uint8_t *p, size_t n, struct head *h)
{
	uint64_t v = 0;

	if (n == 0 || n > 15 || h->has_length)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EBADMSG;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	h->has_length = true;
	h->length = v;
	return 0;
}
