/* Harness builds only (the Makefile leaves it out of build/libresid.a).
 * End-of-run checks at quiescence: huge pages only where the region chose
 * them (I-9), st_blocks exact (I-7), pins balance (I-12), counters are
 * conserved (I-14). Violations go to inv_report(). */
#include <stdlib.h>

#include "internal.h"

#define SMAPS_MAX (8u << 20)

static int check_thp(struct resid_region *r)
{
	char *buf = malloc(SMAPS_MAX);
	int bad = 0;

	if (!buf ||
	    SEAM(r, read_text, "/proc/self/smaps", buf, SMAPS_MAX) <= 0) {
		free(buf);
		return 0; /* no smaps (a simulated kernel): nothing to check */
	}
	bad += inv_no_thp(buf, r->a) == 0;
	if (!r->huge) /* on the huge path B may map its folios whole */
		bad += inv_no_thp(buf, r->b) == 0;
	free(buf);
	return bad;
}

int resid_folio_census(struct resid_region *r, uint64_t *large)
{
	return SEAM(r, folio_census, r->a, r->len, large);
}

/* A region on the 4 KiB path holds no page of a large folio, at any size:
 * the resident chunks are mapped in A, whose pages the census reads. */
static int check_folios(struct resid_region *r)
{
	uint64_t large = 0;

	if (resid_folio_census(r, &large) < 0)
		return 0; /* no privilege: smaps above is the check */
	return !inv_folios(r->huge, large, r->b_folios);
}

int resid_check_quiescent(struct resid_region *r)
{
	struct resid_stats s;
	uint64_t fetched = 0, blocks = 0, held = 0;
	int bad = 0;

	resid_quiesce(r);
	bad += check_thp(r);
	bad += check_folios(r);
	SEAM(r, lock, &r->budget_lock);
	for (uint32_t i = 0; i < r->nchunks; i++) {
		struct chunk *c = &r->chunks[i];

		/* A landed prefetch target keeps its retention pin until
		 * consumed; one that went back to ABSENT gave it up. */
		bad += !inv_pin(i,
				c->pin - (c->retained &&
					  chunk_state(c) == CH_RESIDENT),
				1);
		fetched += c->fetched * c->len;
		bad += !inv_dropped(i, chunk_state(c) == CH_RESIDENT,
				    c->dropped, c->hold, r->folio);
		held += chunk_state(c) == CH_RESIDENT ? c->hold - c->dropped :
							0;
	}
	bad += !inv_resident_sum(held, r->resident);
	if (SEAM(r, fstat_blocks, r->memfd, &blocks) == 0)
		bad += !inv_accounting_quiescent(blocks * 512, r->resident,
						 r->reserved);
	SEAM(r, unlock, &r->budget_lock);
	stats_snapshot(r, &s);
	bad += !inv_conservation(&s, fetched);
	bad += !inv_budget(s.resident_max, s.budget);
	return bad;
}
