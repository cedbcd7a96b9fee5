/* End-of-run checks at quiescence: pins balance (I-12) and counters are
 * conserved (I-14). Violations go to inv_report(). */
#include "internal.h"

int resid_check_quiescent(struct resid_region *r)
{
	struct resid_stats s;
	uint64_t fetched = 0;
	int bad = 0;

	resid_quiesce(r);
	K(r, lock, &r->budget_lock);
	for (uint32_t i = 0; i < r->nchunks; i++) {
		struct chunk *c = &r->chunks[i];

		/* A prefetch target keeps its retention pin until consumed. */
		bad += !inv_pin(i, c->pin - (c->retained ? 1 : 0), 1);
		fetched += c->fetched * c->len;
	}
	K(r, unlock, &r->budget_lock);
	stats_snapshot(r, &s);
	bad += !inv_conservation(&s, fetched);
	bad += !inv_budget(s.resident_max, s.budget);
	return bad;
}
