/* Hazards 1 and 2: MADV_DONTNEED, MADV_PAGEOUT and MADV_COLD on A after
 * a CONTINUE of pages written as the pager writes them (pwrite). Does the
 * kernel drop A's entries, and what does the next touch raise? */
#include <stdio.h>
#include <sys/mman.h>

#include "hazards/hazards.h"

#define PAGES 16

int hz_advice(struct hz_out *o, int advice)
{
	struct hz_region r;
	const char *read;
	int left;

	if (hz_open(&r, o, HZ_PMD, 0,
		    UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR,
		    0) < 0 ||
	    hz_write(&r, 0, PAGES) < 0 || hz_continue_ok(&r, 0, PAGES) < 0 ||
	    (left = hz_present(&r, 0, PAGES)) < 0)
		return -1;
	if (left != PAGES)
		return hz_fail(o, "CONTINUE'd pages not mapped", 0,
			       "hz_advice");
	o->of = PAGES;
	o->err = hz_advise(r.a, 0, PAGES, advice);
	if ((left = hz_present(&r, 0, PAGES)) < 0)
		return -1;
	o->dropped = PAGES - left;
	if (hz_touch_answer(&r, 0, &read) < 0)
		return -1;
	snprintf(o->key, sizeof(o->key), "the touch read %s", read);
	return 0;
}
