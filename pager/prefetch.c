/* Prefetch, and the application's announcements that steer it and the
 * evictions (resid_notify_access, resid_notify_consumed). When a chunk lands, queue up to prefetch_depth of the policy's
 * predicted successors that are absent and not backing off. Admission (a
 * prefetch may evict only what is used strictly later) and retention pins
 * are applied by the worker that runs the job.
 *
 * The follow mode: a program that announces nothing (residctl run) under
 * the declared policy with prefetch on is followed by its faults (the
 * cursor follows them with prefetch off too: cursor_follows). A
 * prefetch lands without mapping the chunk in A (lazy), so the program's
 * first touch of it faults like a demand fault does; either moves the
 * declared cursor there (the program is reading that chunk), gives up the
 * chunk's retention pin, and tops up prefetch_depth chunks ahead of the
 * cursor, passing over those resident and mapped. Without it the cursor
 * stayed at the start of the cycle, every chunk ahead ranked nearer than
 * the ones behind, and no prefetch could evict anything: the 3B model's
 * reads ran in series with its compute. The map of a whole chunk is one
 * CONTINUE (milliseconds for 100 MiB), not I/O. */
#include <errno.h>

#include "internal.h"

#define MAX_DEPTH 64

/* The declared cursor follows the faults of a program that announces
 * nothing, prefetch or not: left at the start of the cycle it ranks the
 * last chunks furthest for ever, and the 3B model's output head, the last
 * 255 MB, was read again every token at 0.9 of the file as budget. */
static int cursor_follows(struct resid_region *r)
{
	return !r->cfg.overlap_evict &&
	       r->cfg.policy == RESID_POLICY_DECLARED &&
	       !__atomic_load_n(&r->access_seq, __ATOMIC_ACQUIRE);
}

int prefetch_follows(struct resid_region *r)
{
	return r->cfg.prefetch_depth && cursor_follows(r);
}

void prefetch_touch_locked(struct resid_region *r, struct chunk *c, uint32_t id)
{
	c->faulted_after = r->last_touch;
	if (r->last_touch != id + 1) {
		r->prev_touch = r->last_touch;
		r->last_touch = id + 1;
	}
	if (cursor_follows(r))
		policy_on_access(r->policy, id);
}

int prefetch_map_lazy(struct resid_region *r, struct chunk *c, uint32_t id)
{
	int64_t mapped = fill_map(r, c, 0, c->len);

	if (mapped < 0)
		return (int)mapped;
	__atomic_store_n(&c->lazy, 0, __ATOMIC_RELAXED);
	c->lazy_failures = 0;
	STAT_INC(r, lazy_maps);
	CODE_PROBE(1, lazy_chunk_mapped);
	SEAM(r, lock, &r->policy_lock);
	prefetch_touch_locked(r, c, id);
	SEAM(r, unlock, &r->policy_lock);
	budget_unretain(r, c);
	prefetch_top_up(r, id);
	return 0;
}

/* In the follow mode the chunks ahead of the program's last touch, not
 * of the chunk that landed; a chunk resident and mapped (kept) does not
 * count against the depth. */
void prefetch_top_up(struct resid_region *r, uint32_t id)
{
	uint32_t next[MAX_DEPTH];
	uint32_t depth = r->cfg.prefetch_depth < MAX_DEPTH ?
				 r->cfg.prefetch_depth :
				 MAX_DEPTH;
	uint32_t n;
	uint64_t now = SEAM(r, clock_ns);
	int follow = prefetch_follows(r);

	SEAM(r, lock, &r->policy_lock);
	if (follow && r->last_touch)
		id = r->last_touch - 1;
	n = policy_predict(r->policy, id, next, follow ? MAX_DEPTH : depth);
	SEAM(r, unlock, &r->policy_lock);
	for (uint32_t i = 0; i < n && depth; i++) {
		struct chunk *c = &r->chunks[next[i]];
		int st = chunk_state(c);

		if (follow && st == CH_RESIDENT &&
		    !__atomic_load_n(&c->lazy, __ATOMIC_RELAXED))
			continue;
		depth -= follow;
		if (st == CH_ABSENT &&
		    now >= __atomic_load_n(&c->declined_until,
					   __ATOMIC_RELAXED))
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
