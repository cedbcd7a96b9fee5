/* Hazard 8: compaction (page migration) while A's entries are mapped:
 * are they still mapped, with the right bytes, after the pages moved? */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "hazards/hazards.h"

#define PAGES HZ_PMD_PAGES

/* The page frames of A's pages (root reads them in pagemap). */
static int frames(struct hz_region *r, uint64_t *pfn)
{
	for (size_t i = 0; i < PAGES; i++) {
		uint64_t e;
		off_t at = ((uintptr_t)r->a / HZ_PAGE + i) * sizeof(e);

		if (pread(r->pagemap, &e, sizeof(e), at) != sizeof(e))
			return hz_fail(r->o, "pread /proc/self/pagemap", errno,
				       "frames");
		pfn[i] = e & ((1ull << 55) - 1);
	}
	return 0;
}

int hz_compaction(struct hz_out *o, int arg)
{
	static uint64_t before[PAGES], after[PAGES];
	struct hz_region r;
	int fd, left, zero, right, moved = 0;

	(void)arg;
	if (hz_open(&r, o, HZ_PMD, 0,
		    UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR,
		    0) < 0 ||
	    hz_fill(&r, 0, PAGES) < 0 || hz_continue_ok(&r, 0, PAGES) < 0 ||
	    frames(&r, before) < 0)
		return -1;
	o->of = PAGES;
	fd = open("/proc/sys/vm/compact_memory", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return hz_fail(o, "open /proc/sys/vm/compact_memory", errno,
			       "hz_compaction");
	o->err = write(fd, "1", 1) == 1 ? 0 : errno;
	close(fd);
	if ((left = hz_present(&r, 0, PAGES)) < 0 || frames(&r, after) < 0 ||
	    hz_read_mapped(&r, 0, PAGES, &zero, &right) < 0)
		return -1;
	o->dropped = PAGES - left;
	for (size_t i = 0; i < PAGES; i++)
		moved += before[i] && after[i] && before[i] != after[i];
	snprintf(o->key, sizeof(o->key), "%d of %d mapped pages right", right,
		 left);
	snprintf(o->note, sizeof(o->note), "%d of %d pages moved", moved,
		 PAGES);
	return 0;
}
