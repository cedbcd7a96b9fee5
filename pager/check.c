/* End-of-run checks at quiescence: no huge pages (I-9), st_blocks exact
 * (I-7), pins balance (I-12), counters are conserved (I-14). Violations go to inv_report(). */
#include <stdlib.h>

#include "internal.h"

#define SMAPS_MAX (8u << 20)

static int check_thp(struct resid_region *r)
{
	char *buf = malloc(SMAPS_MAX);
	int bad = 0;

	if (!buf || K(r, read_text, "/proc/self/smaps", buf, SMAPS_MAX) <= 0) {
		free(buf);
		return 0; /* no smaps (a simulated kernel): nothing to check */
	}
	bad += inv_no_thp(buf, r->a) == 0;
	bad += inv_no_thp(buf, r->b) == 0;
	free(buf);
	return bad;
}

int resid_check_quiescent(struct resid_region *r)
{
	struct resid_stats s;
	uint64_t fetched = 0, blocks = 0;
	int bad = 0;

	resid_quiesce(r);
	bad += check_thp(r);
	K(r, lock, &r->budget_lock);
	for (uint32_t i = 0; i < r->nchunks; i++) {
		struct chunk *c = &r->chunks[i];

		/* A landed prefetch target keeps its retention pin until
		 * consumed; one that went back to ABSENT gave it up. */
		bad += !inv_pin(i, c->pin - (c->retained &&
					     chunk_state(c) == CH_RESIDENT), 1);
		fetched += c->fetched * c->len;
	}
	if (K(r, fstat_blocks, r->memfd, &blocks) == 0)
		bad += !inv_accounting_quiescent(blocks * 512, r->resident,
						 r->reserved);
	K(r, unlock, &r->budget_lock);
	stats_snapshot(r, &s);
	bad += !inv_conservation(&s, fetched);
	bad += !inv_budget(s.resident_max, s.budget);
	return bad;
}
