/* Tables of unequal chunks, as a real model's layers are (design.md §2.1 step
 * 7): page-multiple lengths drawn between two bounds, the last entry taking
 * what is left, so it ends unaligned when the region does (the one entry
 * the pager lets end so). */
#ifndef HARNESS_UNEQUAL_TABLE_H
#define HARNESS_UNEQUAL_TABLE_H

#include <stdint.h>

#include "resid.h"

/* Fills t (cap entries) over [0, region_len) with lengths in [min_len,
 * max_len] (page multiples) drawn from *rng; returns the entry count. */
uint32_t unequal_table(uint64_t region_len, uint64_t min_len, uint64_t max_len,
		       uint64_t *rng, struct resid_chunk_spec *t, uint32_t cap);

/* The largest entry in whole pages: the least budget the pager takes. */
uint64_t unequal_largest(const struct resid_chunk_spec *t, uint32_t n);

#endif
