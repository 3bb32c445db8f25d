/* SPDX-License-Identifier: GPL-2.0-or-later */
/* failmem: the upstream questions that failed a moment ago (RFC 9520).
 *
 * Contract: the resolver notes a question's key (dnsmsg_question_key:
 * name, type, class, DO, CD) when its upstream question fails, and asks
 * before sending the same question again; a key is remembered for the
 * ttl given at the note, in seconds of the monotonic clock. The memory is
 * bounded (entries and bytes): when full, the least recently used notes
 * go first, so a flood of failing names costs at most a repeated upstream
 * question. */
#ifndef DNSFENCE_FAILMEM_H
#define DNSFENCE_FAILMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct failmem;

/* NULL on allocation failure. */
struct failmem *failmem_new(void);
void failmem_free(struct failmem *f);
/* Remember key as failed for ttl seconds from now_ms; ttl 0 does nothing.
 * A note that does not fit is dropped (the question is asked again). */
void failmem_note(struct failmem *f, const uint8_t *key, size_t keylen,
		  uint32_t ttl, uint64_t now_ms);
/* Did key fail within its ttl before now_ms? */
bool failmem_recent(struct failmem *f, const uint8_t *key, size_t keylen,
		    uint64_t now_ms);

#endif
