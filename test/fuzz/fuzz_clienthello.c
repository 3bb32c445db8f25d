// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_clienthello: the first bytes of a TCP stream as the name check
 * reads them. tlshello_parse must return one of its documented results,
 * a name only on success, and a name made only of lower-case letters,
 * digits, '-', '_' and single dots. Every prefix of the input must give
 * -EAGAIN or the same kind of answer as a stream that stops there (the
 * reader is re-run from the start on each segment). The same bytes are
 * also read as a whole plaintext flight (tlshello_flight: several
 * records, a second ClientHello) and as a queued IP packet (flowpkt_parse): a
 * payload inside the buffer. Any violation abort()s. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flowpkt.h"
#include "fuzz_hostname.h"
#include "flow/tlshello.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tlshello h;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flowpkt fp;
	int rc = tlshello_parse(data, size, &h);

	if (rc != 0 && rc != -EAGAIN && rc != -EPROTO && rc != -EMSGSIZE &&
	    rc != -EBADMSG)
		abort();
	if (rc == 0 && h.has_name)
		fuzz_check_host_name(h.name);
	if (rc != 0 && h.has_name && rc != -EBADMSG)
		abort();
	/* A complete answer stays complete with more bytes after it. */
	if (rc == 0 && size > 0) {
		uint8_t *more = malloc(size + 7);

		if (more == NULL)
			return 0;
		memcpy(more, data, size);
		memset(more + size, 0x16, 7);
		if (tlshello_parse(more, size + 7, &h) != 0)
			abort();
		free(more);
	}
	/* The whole flight: the same results, -EXDEV too, a name only on
	 * success or while the flight goes on after a first hello read. */
	rc = tlshello_flight(data, size, &h);
	if (rc != 0 && rc != -EAGAIN && rc != -EPROTO && rc != -EMSGSIZE &&
	    rc != -EBADMSG && rc != -EXDEV)
		abort();
	if (h.has_name)
		fuzz_check_host_name(h.name);
	if (h.first_whole && rc == -EPROTO && size > 0 && data[0] != 0x16)
		abort();
	if (flowpkt_parse(data, size, &fp) == 0 &&
	    (fp.payload < data || fp.payload + fp.payload_len > data + size))
		abort();
	return 0;
}
