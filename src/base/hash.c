// SPDX-License-Identifier: GPL-2.0-or-later
/* hash: FNV-1a for the tables keyed by DNS bytes (cache, in-flight
 * queries), and the seeds that keep an attacker who picks the keys from
 * aiming them all at one bucket. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/monotime.h"

uint32_t hash_fnv1a(const void *key, size_t len, uint32_t seed)
{
	const uint8_t *k = key;
	uint32_t h = 2166136261u ^ seed;

	for (size_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

uint64_t hash_fnv1a64(uint64_t h, const void *key, size_t len)
{
	const uint8_t *k = key;

	for (size_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 0x100000001b3ull;
	return h;
}

int hash_seed(void *out, size_t len)
{
	uint8_t *p = out;
	size_t got = 0;
	uint64_t weak;

	while (got < len) {
		ssize_t n = getrandom(p + got, len - got, GRND_NONBLOCK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got == len)
		return 0;
	weak = monotime_ns() * 0x9e3779b97f4a7c15ULL ^
	       ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)out;
	for (size_t i = 0; i < len; i++) {
		p[i] ^= (uint8_t)(weak >> (8 * (i % 8)));
		if (i % 8 == 7)
			weak = weak * 0x9e3779b97f4a7c15ULL + 1;
	}
	return -EAGAIN;
}
