/* The oracle for belady() (T-5, unit tests): the same rule as pager/belady.h,
 * written the obvious way, O(n^2 k): at every eviction each resident chunk's
 * next use is found by scanning forward. Plus the inputs both tests feed it. */
#ifndef HARNESS_BELADY_NAIVE_H
#define HARNESS_BELADY_NAIVE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/belady.h"

/* Same contract and refusals as belady(). */
int belady_naive(const struct trace *t, uint64_t capacity_bytes,
		 struct belady_result *out, char *err, size_t errlen);

/* A random reference trace from *rng: 1..max_chunks chunks of 4096-multiple
 * sizes (equal ones unless `unequal`), 0..max_len accesses in a random
 * pattern, and a capacity from the largest chunk to past the total. -1 only
 * when out of memory. Release with trace_free(), after a failure too. */
int belady_random_trace(uint64_t *rng, uint32_t max_chunks, uint64_t max_len,
			int unequal, struct trace *t, uint64_t *capacity);

/* A strict cyclic scan: chunks 0..w-1 of chunk_size bytes, `passes` times.
 * -1 only when out of memory. Release with trace_free(), as above. */
int belady_cyclic_trace(uint32_t w, uint32_t passes, uint64_t chunk_size,
			struct trace *t);

#endif
