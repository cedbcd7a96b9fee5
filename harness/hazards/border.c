/* Hazard 7: a CONTINUE whose range crosses a border of A that the
 * application's MADV_RANDOM on part of A made (a VMA split). */
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>

#include "hazards/hazards.h"

#define PAGES 16

int hz_border(struct hz_out *o, int arg)
{
	struct hz_region r;
	int64_t mapped;
	int split, left;

	(void)arg;
	if (hz_open(&r, o, HZ_PMD, 0,
		    UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR,
		    0) < 0 ||
	    hz_fill(&r, 0, PAGES) < 0)
		return -1;
	split = hz_advise(r.a, PAGES / 4, PAGES / 4, MADV_RANDOM);
	if (split)
		return hz_fail(o, "madvise(A, MADV_RANDOM)", split,
			       "hz_border");
	o->err = hz_continue(&r, 0, PAGES, &mapped);
	if ((left = hz_present(&r, 0, PAGES)) < 0)
		return -1;
	snprintf(o->key, sizeof(o->key),
		 "mapped %" PRId64 "; %d of %d pages "
		 "mapped",
		 mapped, left, PAGES);
	return 0;
}
