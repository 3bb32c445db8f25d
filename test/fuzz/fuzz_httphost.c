// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_httphost: the first bytes of a plain HTTP flow as the name check
 * reads them. httphost_parse must return one of its documented results,
 * a name only on success, and a name made only of lower-case letters,
 * digits, '-', '_' and single dots that is not all digits in its last
 * label (an IP literal is no name). A complete answer stays the same
 * with more bytes after it (the body, a pipelined request), and every
 * prefix of a complete stream waits (-EAGAIN) or gives the same answer
 * (the stream is re-read on each segment). Any violation
 * abort()s. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow/httphost.h"
#include "fuzz_hostname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const struct httphost *h);

static struct httphost h, again;

/* A name, and not an IP literal (its last label all digits). */
static void check_name(const struct httphost *t)
{
	size_t n = strlen(t->name), last;
	bool digits = true;

	fuzz_check_host_name(t->name);
	last = n;
	while (last > 0 && t->name[last - 1] != '.')
		last--;
	for (size_t i = last; i < n; i++)
		digits = digits && t->name[i] >= '0' && t->name[i] <= '9';
	if (digits)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int rc = httphost_flight(data, size, &h);
	uint8_t *more;

	/* The whole first flight (pipelined heads, bodies): its results. */
	if (rc != 0 && rc != -EAGAIN && rc != -EPROTO && rc != -EMSGSIZE &&
	    rc != -EBADMSG && rc != -EXDEV)
		abort();
	if (h.has_name)
		check_name(&h);
	rc = httphost_parse(data, size, &h);

	if (rc != 0 && rc != -EAGAIN && rc != -EPROTO && rc != -EMSGSIZE &&
	    rc != -EBADMSG)
		abort();
	if (h.has_name && rc != 0)
		abort();
	if (h.has_name)
		check_name(&h);
	if (rc != 0 || size == 0 || size > HTTPHOST_MAX)
		return 0;
	more = malloc(size + 7);
	if (more == NULL)
		return 0;
	memcpy(more, data, size);
	memcpy(more + size, "\r\nX\n\r\n\x16", 7);
	if (httphost_parse(more, size + 7, &again) != 0 ||
	    again.has_name != h.has_name || strcmp(again.name, h.name) != 0)
		abort();
	free(more);
	/* A prefix waits, or is the head already whole (bytes follow it). */
	for (size_t n = 0; n < size; n += 1 + size / 16) {
		int p = httphost_parse(data, n, &again);

		if (p != -EAGAIN && (p != 0 || again.has_name != h.has_name ||
				     strcmp(again.name, h.name) != 0))
			abort();
	}
	return 0;
}
