/* Replacement policies. A policy only ranks chunks; the pager owns states,
 * pins and locks. Callers serialize every call on one policy (the pager holds
 * its policy lock), so policies keep no locks of their own. */
#ifndef RESID_POLICY_H
#define RESID_POLICY_H

#include <stdint.h>
#include "resid.h"

#define POLICY_NEVER UINT64_MAX /* next use unknown or never */

struct policy;

struct policy_params {
	enum resid_policy kind;
	uint32_t nchunks;
	const uint32_t *declared_seq; /* DECLARED; NULL means 0..nchunks-1 */
	uint32_t declared_len;
	enum resid_signal signal;
};

/* NULL with a line in err when the parameters are invalid (I-10): a
 * declared sequence that names a chunk >= nchunks, or is empty when given. */
struct policy *policy_create(const struct policy_params *p, char *err,
			     size_t errlen);
void policy_destroy(struct policy *p);

/* A fault on `chunk` that started a fetch; seq grows by one per fault. */
void policy_on_fault(struct policy *p, uint32_t chunk, uint64_t seq);
/* `chunk` became resident (demand or prefetch). */
void policy_on_resident(struct policy *p, uint32_t chunk);
/* The application signalled resid_notify_access(chunk). */
void policy_on_access(struct policy *p, uint32_t chunk);

/* Distance, in accesses from now, to the next use of `chunk`; POLICY_NEVER
 * when unknown. Smaller is sooner. LRU has no forecast: it returns the
 * chunk's age (faults since its last fault), so the oldest ranks furthest. */
uint64_t policy_next_use(struct policy *p, uint32_t chunk);

/* The distance to the next use of the bytes of `chunk` consumed in its
 * current visit: for the chunk being read, its use after this one. The
 * declared order knows it; the other kinds answer policy_next_use. */
uint64_t policy_next_use_consumed(struct policy *p, uint32_t chunk);

/* Whether `chunk` is within `before` positions before the one being read
 * and `after` positions after it, as far as the policy knows (the declared
 * order); 0 for the other kinds. */
int policy_near(struct policy *p, uint32_t chunk, uint32_t before,
		uint32_t after);

/* Chooses the victim among candidates[0..n) (resident, unpinned chunks): the
 * one with the largest policy_next_use, ties to the lowest chunk id. With
 * must_exceed != POLICY_NEVER only a candidate whose next use is strictly
 * greater than must_exceed may be chosen (prefetch admission). Returns the
 * chunk id, or -1 when no candidate qualifies. */
int64_t policy_victim(struct policy *p, const uint32_t *candidates, uint32_t n,
		      uint64_t must_exceed);

/* Up to max predicted successors of `chunk`, soonest first, none repeated
 * and none equal to `chunk`. LRU predicts nothing. Returns the count. */
uint32_t policy_predict(struct policy *p, uint32_t chunk, uint32_t *out,
			uint32_t max);

#endif
