/* splitmix64: a tiny seeded generator, so a test input replays from its seed. */
#ifndef HARNESS_RNG_H
#define HARNESS_RNG_H

#include <stdint.h>

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform enough in [0, n) for test inputs; 0 when n is 0. */
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}

#endif
