/* SPDX-License-Identifier: GPL-2.0-or-later */
/* httphost: the host a plain HTTP/1.x request names, read from the
 * request head at the start of a TCP stream (which may arrive in several
 * segments). Pure; every byte through dns_reader. */
#ifndef DNSFENCE_HTTPHOST_H
#define DNSFENCE_HTTPHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow/tlshello.h"

/* A request head (request line and headers) longer than this is refused
 * (nginx's default buffers take 1 KiB, then 8 KiB lines). */
#define HTTPHOST_MAX 16384

struct httphost {
	bool has_name;
	char name[TLSHELLO_NAME_MAX + 1]; /* lower case, no port, no dot */
};

/* Read the request head at the start of stream (len bytes so far).
 *  0:         complete; out->has_name says whether it named a host by a
 *             name (no Host header, or an IP literal: has_name false);
 *  -EAGAIN:   a prefix of what could be a request head: wait for more;
 *  -EPROTO:   not an HTTP/1.0 or HTTP/1.1 request line;
 *  -EMSGSIZE: a head longer than HTTPHOST_MAX;
 *  -EBADMSG:  malformed: a bare CR or LF, a header line without a colon
 *             or with space before it, a folded line, two Host headers,
 *             a Host that is not host[:port], userinfo in the target,
 *             an absolute-form target whose host differs from Host, or
 *             a Content-Length given twice or not all digits. */
int httphost_parse(const uint8_t *stream, size_t len, struct httphost *out);

/* Request heads read in one first flight at most (pipelined). */
#define HTTPHOST_FLIGHT_HEADS 16

/* Every request head at the start of stream (len bytes so far: what
 * arrived before the verdict), out naming the first's host: after a head
 * and its Content-Length body, the bytes that follow must be another
 * whole head naming the same host (or none when the first named none).
 * Results as httphost_parse, and -EAGAIN also for a later head not yet
 * whole; -EXDEV: a later head names another host; -EBADMSG also for
 * bytes after a head with Transfer-Encoding (a chunked body cannot be
 * told from a request after it), for both Content-Length and
 * Transfer-Encoding, a Content-Length given twice or not all digits, or
 * bytes after a head that are no request line; -EMSGSIZE: more than
 * HTTPHOST_FLIGHT_HEADS heads. */
int httphost_flight(const uint8_t *stream, size_t len, struct httphost *out);

#endif
