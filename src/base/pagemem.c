// SPDX-License-Identifier: GPL-2.0-or-later
/* pagemem: zeroed memory of its own pages (see pagemem.h). Under
 * AddressSanitizer it is calloc's, so that the sanitizer (and the fuzz
 * targets that parse into these buffers) still sees their bounds. */
#include <stdlib.h>
#include <sys/mman.h>

#include "base/pagemem.h"

#if defined(__SANITIZE_ADDRESS__)
#define PAGEMEM_CALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAGEMEM_CALLOC 1
#endif
#endif

void *pagemem_new(size_t size)
{
#ifdef PAGEMEM_CALLOC
	return calloc(1, size);
#else
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p != MAP_FAILED ? p : NULL;
#endif
}

void pagemem_free(void *p, size_t size)
{
#ifdef PAGEMEM_CALLOC
	(void)size;
	free(p);
#else
	if (p != NULL)
		munmap(p, size);
#endif
}
