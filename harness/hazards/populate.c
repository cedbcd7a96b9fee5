/* Hazard 6: MADV_POPULATE_READ on A from a second thread. Which faults
 * does it raise, how many at once, and does it wait for each answer? */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "hazards/hazards.h"

#define PAGES 16
/* a second fault pending after this long would be one more at once */
#define SETTLE_MS 200

struct populate {
	struct hz_region *r;
	_Atomic int done;
	int err;
};

static void *populate(void *arg)
{
	struct populate *p = arg;

	p->err = madvise(p->r->a, PAGES * HZ_PAGE, MADV_POPULATE_READ) < 0 ?
			 errno :
			 0;
	atomic_store(&p->done, 1);
	return NULL;
}

int hz_populate(struct hz_out *o, int arg)
{
	struct hz_region r;
	struct populate p = { .r = &r };
	pthread_t th;
	int faults = 0, minor = 0, most = 0, blocked = 0, inorder = 1;
	int rc, zero, right;
	char kind[16];
	size_t page;

	(void)arg;
	if (hz_open(&r, o, HZ_PMD, 0,
		    UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR,
		    0) < 0 ||
	    hz_fill(&r, 0, PAGES) < 0)
		return -1;
	rc = pthread_create(&th, NULL, populate, &p);
	if (rc)
		return hz_fail(o, "pthread_create", rc,
			       "the populating thread");
	while (!atomic_load(&p.done) && faults <= 2 * PAGES) {
		int got = hz_fault(&r, 5000, kind, &page), more;
		size_t next;
		char k2[16];

		if (got < 0)
			return -1;
		if (!got)
			break;
		faults++;
		minor += !strcmp(kind, "minor");
		inorder &= page == (size_t)faults - 1;
		/* still waiting for this answer, nothing else pending? */
		more = hz_fault(&r, SETTLE_MS, k2, &next);
		if (more < 0)
			return -1;
		most = more ? 2 : most > 1 ? most : 1;
		blocked += !atomic_load(&p.done);
		if (more)
			break; /* two at once: the count says so */
		if (!strcmp(kind, "missing"))
			hz_fill(&r, page, 1);
		if (hz_continue_ok(&r, page, 1) < 0)
			return -1;
	}
	if (!atomic_load(&p.done)) {
		snprintf(o->note, sizeof(o->note),
			 "the populating thread did "
			 "not return (%d faults answered)",
			 faults);
		o->hung = 1;
		return 0;
	}
	rc = pthread_join(th, NULL);
	if (rc)
		return hz_fail(o, "pthread_join", rc, "the populating thread");
	if (hz_read_mapped(&r, 0, PAGES, &zero, &right) < 0)
		return -1;
	o->err = p.err;
	snprintf(o->fault, sizeof(o->fault), "%s",
		 minor == faults ? "minor" : "mixed");
	snprintf(o->key, sizeof(o->key),
		 "%d faults (%d minor) for %d pages, "
		 "%s, %s; %d pages right",
		 faults, minor, PAGES,
		 most > 1 ? "more than one at once" : "one at a time",
		 blocked == faults ? "each blocking until answered" :
				     "not all blocking",
		 right);
	if (!inorder)
		snprintf(o->note, sizeof(o->note), "pages out of order");
	return 0;
}
