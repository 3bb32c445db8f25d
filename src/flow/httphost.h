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
 *             a Host that is not host[:port], userinfo in the target, or
 *             an absolute-form target whose host differs from Host. */
int httphost_parse(const uint8_t *stream, size_t len, struct httphost *out);

#endif
