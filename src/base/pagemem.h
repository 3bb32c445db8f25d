/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pagemem: zeroed memory of its own pages, for a structure that holds a
 * large buffer (a netlink read buffer, a datagram's scratch). From
 * calloc such a structure sits on the heap, cleared and resident whole
 * from the start; mapped, a page is resident only once something is
 * written to it, so a buffer that no packet ever filled costs nothing. */
#ifndef DNSFENCE_PAGEMEM_H
#define DNSFENCE_PAGEMEM_H

#include <stddef.h>

/* size zeroed bytes (page-aligned but under AddressSanitizer); NULL when
 * they cannot be had. */
void *pagemem_new(size_t size);
/* What pagemem_new(size) gave (NULL: nothing). */
void pagemem_free(void *p, size_t size);

#endif
