/* Prefetch, and the application's announcements that steer it and the
 * evictions (resid_notify_access, resid_notify_consumed). When a chunk lands, queue up to prefetch_depth of the policy's
 * predicted successors that are absent and not backing off. Admission (a
 * prefetch may evict only what is used strictly later) and retention pins
 * are applied by the worker that runs the job. */
#include <errno.h>

#include "internal.h"

#define MAX_DEPTH 64

void prefetch_top_up(struct resid_region *r, uint32_t id)
{
	uint32_t next[MAX_DEPTH];
	uint32_t depth = r->cfg.prefetch_depth < MAX_DEPTH ?
		r->cfg.prefetch_depth : MAX_DEPTH;
	uint32_t n;
	uint64_t now = SEAM(r, clock_ns);

	SEAM(r, lock, &r->policy_lock);
	n = policy_predict(r->policy, id, next, depth);
	SEAM(r, unlock, &r->policy_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct chunk *c = &r->chunks[next[i]];

		if (chunk_state(c) == CH_ABSENT &&
		    now >= __atomic_load_n(&c->declined_until, __ATOMIC_RELAXED))
			queue_prefetch(r, next[i]);
	}
}

int resid_notify_access(struct resid_region *r, uint32_t chunk)
{
	int rc = region_usable(r);

	if (rc)
		return rc;
	if (chunk >= r->nchunks)
		return -EINVAL;
	SEAM(r, lock, &r->policy_lock);
	policy_on_access(r->policy, chunk);
	__atomic_add_fetch(&r->access_seq, 1, __ATOMIC_RELEASE);
	SEAM(r, unlock, &r->policy_lock);
	/* A consumed prefetch target gives up its retention pin. */
	budget_unretain(r, &r->chunks[chunk]);
	if (r->cfg.overlap_evict && r->cfg.signal == RESID_SIGNAL_BEFORE_READ)
		budget_forget_consumed(r, &r->chunks[chunk]);
	return 0;
}

int resid_notify_consumed(struct resid_region *r, uint32_t chunk,
			  uint64_t bytes)
{
	int rc = region_usable(r);

	if (rc)
		return rc;
	if (chunk >= r->nchunks)
		return -EINVAL;
	if (r->cfg.overlap_evict)
		budget_consumed(r, &r->chunks[chunk], bytes);
	return 0;
}
