/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hash: the one FNV-1a and the one source of hash seeds. */
#ifndef DNSFENCE_HASH_H
#define DNSFENCE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 32-bit FNV-1a of key, its offset basis xor'ed with seed (0: plain). */
uint32_t hash_fnv1a(const void *key, size_t len, uint32_t seed);

/* 64-bit FNV-1a of key continued from h (start with HASH_FNV64_BASIS), so
 * that a fingerprint can be hashed piece by piece. */
#define HASH_FNV64_BASIS 0xcbf29ce484222325ull
uint64_t hash_fnv1a64(uint64_t h, const void *key, size_t len);

/* A 64-bit finalizer (MurmurHash3's): every input bit reaches every
 * output bit, so any slice of the result may index a table. Inline: the
 * address tables (prov, recent, the never-shorten map) run it for every
 * address answered. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Fill out with random bytes for a hash seed (getrandom, retried on
 * EINTR). When the kernel cannot give them, out gets a weak seed from
 * the monotonic clock, the pid and out's address, and the return is
 * -EAGAIN so the caller may say so; otherwise 0. Correctness never
 * depends on the seed, only resistance to flooding one bucket. */
int hash_seed(void *out, size_t len);

#endif
