/* What applications and the kernel do to a mapped region while a storm
 * reads it: advice that drops or keeps A's entries, population through the
 * pager, compaction. Each call's outcome is counted by errno; none may make
 * a reader hang or read a wrong byte. */
#ifndef STORMS_HANDS_H
#define STORMS_HANDS_H

#include <stdint.h>

#include "resid.h"

#define HANDS(X)                                                           \
	X(HAND_DONTNEED, "dontneed") /* MADV_DONTNEED on A */              \
	X(HAND_PAGEOUT, "pageout")   /* MADV_PAGEOUT on A */               \
	X(HAND_COLD, "cold")         /* MADV_COLD on A */                  \
	X(HAND_WILLNEED, "willneed") /* MADV_WILLNEED on A */              \
	X(HAND_ORDER, "order")       /* MADV_RANDOM, SEQUENTIAL, NORMAL */ \
	X(HAND_POPULATE, "populate") /* MADV_POPULATE_READ on A */         \
	X(HAND_COMPACT, "compact")   /* /proc/sys/vm/compact_memory */

#define HAND_ENUM(id, name) id,
enum hand { HANDS(HAND_ENUM) HAND_COUNT };

struct hands_tally {
	uint64_t calls[HAND_COUNT];
	uint64_t failed[HAND_COUNT]; /* the call returned an error */
	int last_errno[HAND_COUNT];
};

const char *hand_name(enum hand h);
/* One call of a hand drawn from rng, on a range of the region: mostly at
 * `hot` (where a reader read last: resident, so its entries are there to
 * drop), else anywhere; counted in t (atomically). The range goes to
 * *off and *len, for the caller to read again as applications do.
 * Returns the hand. */
enum hand hands_once(struct resid_region *r, uint64_t *rng, uint64_t hot,
		     struct hands_tally *t, uint64_t *off, uint64_t *len);

#endif
