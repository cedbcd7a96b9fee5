#include "base/rng.h"
#include "workload/unequal_table.h"

uint32_t unequal_table(uint64_t region_len, uint64_t min_len, uint64_t max_len,
		       uint64_t *rng, struct resid_chunk_spec *t, uint32_t cap)
{
	uint64_t off = 0, steps = (max_len - min_len) / RESID_PAGE + 1;
	uint32_t n = 0;

	while (off < region_len && n < cap) {
		uint64_t len = min_len + rng_below(rng, steps) * RESID_PAGE;

		if (len > region_len - off || n + 1 == cap)
			len = region_len - off;
		t[n].off = off;
		t[n].len = len;
		off += len;
		n++;
	}
	return n;
}

uint64_t unequal_largest(const struct resid_chunk_spec *t, uint32_t n)
{
	uint64_t max = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t pages = (t[i].len + RESID_PAGE - 1) / RESID_PAGE;

		if (pages * RESID_PAGE > max)
			max = pages * RESID_PAGE;
	}
	return max;
}
