#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/rng.h"
#include "hands.h"

#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* A range of at most 64 pages: a chunk's whole, or a piece of it. */
#define SPAN_PAGES 64

#define HAND_NAME(id, name) [id] = name,
static const char *const names[HAND_COUNT] = { HANDS(HAND_NAME) };

const char *hand_name(enum hand h)
{
	return h < HAND_COUNT ? names[h] : "?";
}

/* Compaction moves pages between frames; written by root only, and
 * machine-wide, so drawn rarely. */
static int compact(void)
{
	int fd = open("/proc/sys/vm/compact_memory", O_WRONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		rc = -errno;
	close(fd);
	return rc;
}

static int advise(void *at, uint64_t len, int advice)
{
	return madvise(at, len, advice) < 0 ? -errno : 0;
}

enum hand hands_once(struct resid_region *r, uint64_t *rng, uint64_t hot,
		     struct hands_tally *t, uint64_t *off, uint64_t *len)
{
	static const int order[] = { MADV_RANDOM, MADV_SEQUENTIAL,
				     MADV_NORMAL };
	uint64_t pages = resid_len(r) / RESID_PAGE;
	uint64_t first = rng_below(rng, 4) && hot / RESID_PAGE < pages ?
				 hot / RESID_PAGE :
				 rng_below(rng, pages);
	uint64_t n = 1 + rng_below(rng, pages - first < SPAN_PAGES ?
						pages - first :
						SPAN_PAGES);
	void *at = (void *)(resid_base(r) + first * RESID_PAGE);
	/* Compaction one draw in 256: it scans the whole machine. */
	enum hand h = rng_below(rng, 256) == 0 ?
			      HAND_COMPACT :
			      (enum hand)rng_below(rng, HAND_COMPACT);
	int rc;

	*off = first * RESID_PAGE;
	*len = n * RESID_PAGE;
	switch (h) {
	case HAND_DONTNEED:
		rc = advise(at, *len, MADV_DONTNEED);
		break;
	case HAND_PAGEOUT:
		rc = advise(at, *len, MADV_PAGEOUT);
		break;
	case HAND_COLD:
		rc = advise(at, *len, MADV_COLD);
		break;
	case HAND_WILLNEED:
		rc = advise(at, *len, MADV_WILLNEED);
		break;
	case HAND_ORDER:
		rc = advise(at, *len, order[rng_below(rng, 3)]);
		break;
	case HAND_POPULATE:
		rc = advise(at, *len, MADV_POPULATE_READ);
		break;
	default:
		rc = compact();
		break;
	}
	__atomic_add_fetch(&t->calls[h], 1, __ATOMIC_RELAXED);
	if (rc < 0) {
		__atomic_add_fetch(&t->failed[h], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&t->last_errno[h], -rc, __ATOMIC_RELAXED);
	}
	return h;
}
