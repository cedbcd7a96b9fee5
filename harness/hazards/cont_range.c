/* Hazard 5: one 2 MiB UFFDIO_CONTINUE over a range whose middle page is
 * already mapped (arg 0) or a hole (arg 1), then again from where the
 * kernel stopped: what a fetch of a whole chunk meets. */
#include <inttypes.h>
#include <stdio.h>

#include "hazards/hazards.h"

#define MID (HZ_PMD_PAGES / 2)

int hz_cont_range(struct hz_out *o, int hole)
{
	struct hz_region r;
	int64_t mapped, again;
	int err2, left;

	if (hz_open(&r, o, HZ_PMD, 0,
		    UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR,
		    0) < 0 ||
	    hz_fill(&r, 0, HZ_PMD_PAGES) < 0 ||
	    (hole ? hz_punch(&r, MID, 1) : hz_continue_ok(&r, MID, 1)) < 0)
		return -1;
	o->err = hz_continue(&r, 0, HZ_PMD_PAGES, &mapped);
	if (mapped < 0 || mapped % HZ_PAGE || mapped >= HZ_PMD)
		again = 0, err2 = -1;
	else
		err2 = hz_continue(&r, mapped / HZ_PAGE,
				   HZ_PMD_PAGES - mapped / HZ_PAGE, &again);
	if ((left = hz_present(&r, 0, HZ_PMD_PAGES)) < 0)
		return -1;
	snprintf(o->key, sizeof(o->key),
		 "mapped %" PRId64 " (bytes before "
		 "the middle: %u); from there: %s, mapped %" PRId64 "; %d of "
		 "%u pages mapped",
		 mapped, MID * HZ_PAGE,
		 err2 < 0 ? "not retried" : hz_errname(err2), again, left,
		 HZ_PMD_PAGES);
	return 0;
}
