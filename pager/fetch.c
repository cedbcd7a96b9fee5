/* The fetch-worker pool. A job holds its chunk's lock across the whole
 * fetch: reserve, read (through the worker's bounce buffer and reader)
 * into the memfd, CONTINUE over mapping A, commit and pin, RESIDENT.
 * Demand jobs go before prefetch jobs. */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* A prefetch may evict only what is used strictly later than its target;
 * a target with no forecast may evict only chunks with none either. */
static uint64_t admission_bound(struct resid_region *r, uint32_t id)
{
	uint64_t d;

	SEAM(r, lock, &r->policy_lock);
	d = policy_next_use(r->policy, id);
	SEAM(r, unlock, &r->policy_lock);
	return d == POLICY_NEVER ? POLICY_NEVER - 1 : d;
}

/* The phase timers of a fetch that landed: t[0] start, t[1] reserved,
 * t[2] and t[3] the time spent reading and mapping its pieces. */
static void record_phases(struct resid_region *r, const uint64_t t[4])
{
	if (!r->cfg.phase_timers)
		return;
	STAT_ADD(r, reserve_ns, t[1] - t[0]);
	STAT_ADD(r, read_ns, t[2]);
	STAT_ADD(r, continue_ns, t[3]);
	STAT_ADD(r, fetch_ns, phase_clock(r) - t[0]);
}

/* A prefetch that found no room: it backs off. */
static void decline(struct resid_region *r, struct chunk *c, int populated)
{
	__atomic_store_n(&c->declined_until,
			 SEAM(r, clock_ns) +
				 r->cfg.prefetch_backoff_ms * NS_PER_MS,
			 __ATOMIC_RELAXED);
	STAT_INC(r, prefetch_declined);
	CODE_PROBE(1, prefetch_declined);
	fetch_abandon(r, c, populated, 1);
}

int fetch_piece_room(struct resid_region *r, struct chunk *c, uint64_t to)
{
	uint64_t wait_from = 0;

	/* The application frees the room as it consumes the chunk it reads:
	 * wait for it, 50 us at a time, at most landing_wait_ms. */
	while (budget_reserve_piece(r, c, to - c->res,
				    admission_bound(r, (uint32_t)(c -
								  r->chunks))) <
	       0) {
		if (!wait_from)
			wait_from = SEAM(r, clock_ns);
		else if (SEAM(r, clock_ns) - wait_from >=
			 r->h.landing_wait_ms * NS_PER_MS)
			return -EBUSY;
		CODE_PROBE(1, piece_waits_room);
		SEAM(r, sleep_ns, 50000);
	}
	c->res = to;
	CODE_PROBE(1, piece_reserved);
	return 0;
}

/* Room in the budget for the rest of the chunk (c->res held already), or
 * the fetch abandoned (-1); populated: the memfd holds pages of it (an
 * owed punch taken over), punched then. */
static int reserve_room(struct resid_region *r, struct chunk *c, uint32_t id,
			int prefetch, int populated)
{
	uint32_t attempt = 0;
	uint64_t wait_from = 0;

	for (;;) {
		uint64_t must = prefetch ? admission_bound(r, id) :
					   POLICY_NEVER;
		/* A demand fetch waits for the job of a chunk that just
		 * landed to commit and unpin it (-EBUSY), 50 us at a time, at
		 * most landing_wait_ms (100), then evicts the next best: a
		 * job off its CPU on a loaded machine took up to a few
		 * hundred ms here, a refetch costs less than that. */
		int rc = budget_reserve(r, c, c->hold - c->res, must,
					!wait_from ||
						SEAM(r, clock_ns) - wait_from <
							r->h.landing_wait_ms *
								NS_PER_MS);

		if (rc == 0) {
			c->res = c->hold;
			return 0;
		}
		if (rc == -EBUSY) {
			if (!wait_from)
				wait_from = SEAM(r, clock_ns);
			CODE_PROBE(1, demand_waits_landing);
			SEAM(r, sleep_ns, 50000);
			continue;
		}
		STAT_INC(r, infeasible);
		if (prefetch) {
			decline(r, c, populated);
			return -1;
		}
		if (++attempt > r->h.demand_retries) {
			CODE_PROBE(1, demand_gave_up);
			fetch_abandon(r, c, populated, 1);
			return -1;
		}
		STAT_INC(r, retries);
		CODE_PROBE(1, demand_infeasible);
		SEAM(r, sleep_ns, NS_PER_MS);
	}
}

/* With the chunk locked and FETCHING. A demand fetch reads its first part
 * into the bounce buffer while it makes room (the victim's punch): the
 * buffer is the worker's, outside the budget. A prefetch does not: one
 * declined would have read for nothing. */
static void fetch_locked(struct resid_region *r, uint32_t id, int prefetch,
			 const struct worker *w)
{
	struct chunk *c = &r->chunks[id];
	uint64_t t[4] = { phase_clock(r) };
	int started = 0;

	if (prefetch)
		budget_retain(r, c);
	fetch_backoff(r, c);
	if (!prefetch && w->bounce)
		started = part_start(r, c, w, 0, 0);
	/* A punch owed for the chunk leaves its reservation to this fetch,
	 * which writes over the pages the punch would have freed. A prefetch
	 * under overlap_evict reserves piece by piece as it fills. */
	int owed = abandon_take_owed(r, c);

	if (c->res < c->hold && !(prefetch && r->cfg.overlap_evict) &&
	    reserve_room(r, c, id, prefetch, owed) < 0) {
		part_drain(r, w, started);
		return;
	}
	t[1] = phase_clock(r);
	if (prefetch && prefetch_follows(r))
		__atomic_store_n(&c->lazy, 1, __ATOMIC_RELAXED);
	int64_t mapped = fill_and_map(r, c, t, w, started);

	if (mapped == -EBUSY) {
		decline(r, c, 1);
		return;
	}
	if (mapped < 0) {
		fetch_failed(r, c, (int)-mapped);
		return;
	}
	c->fetch_failures = 0;
	INV_ASSERT(inv_continue_ok(id, c->len, c->len, (uint64_t)mapped));
	STAT_INC(r, continues_ok);
	/* Landed without its CONTINUE, which its first touch makes. */
	if (__atomic_load_n(&c->lazy, __ATOMIC_RELAXED))
		STAT_INC(r, lazy_fetches);
	c->fetched++;
#ifdef RESID_HARNESS
	/* Bug 2: RESIDENT before the commit. An evictor holding the budget
	 * lock takes the chunk for a victim and waits for its lock, which this
	 * fetcher holds while it waits for the budget lock. */
	if (BUG(2))
		chunk_set_state(r, c, CH_RESIDENT);
#endif
	budget_commit_and_pin(r, c);
	c->res = 0;
	chunk_set_state(r, c, CH_RESIDENT);
	__atomic_store_n(&c->landing, 0, __ATOMIC_RELEASE);
	SEAM(r, lock, &r->policy_lock);
	policy_on_resident(r->policy, id);
	if (!prefetch)
		__atomic_store_n(&c->demand_seq, r->fault_seq,
				 __ATOMIC_RELAXED);
	SEAM(r, unlock, &r->policy_lock);
	stats_record_fetch(r, c, SEAM(r, clock_ns) - c->fetching_since);
	if (r->cfg.prefetch_depth)
		prefetch_top_up(r, id);
	record_phases(r, t);
}

/* overlap_evict: a prefetch takes its room from the chunk being read, so
 * it runs only for the chunk read next (or now): one queued long ago
 * would take room Belady keeps. */
static int overlap_target(struct resid_region *r, uint32_t id)
{
	int near;

	if (!r->cfg.overlap_evict)
		return 1;
	SEAM(r, lock, &r->policy_lock);
	near = policy_near(r->policy, id, 0, 1);
	SEAM(r, unlock, &r->policy_lock);
	return near;
}

static void run_job(struct resid_region *r, uint32_t id, int prefetch,
		    const struct worker *w)
{
	struct chunk *c = &r->chunks[id];

	chunk_lock(r, c);
	if (prefetch) {
		/* A target that faulted, landed or was declined meanwhile,
		 * or that the application is no longer about to read. */
		if (chunk_state(c) != CH_ABSENT ||
		    SEAM(r, clock_ns) < __atomic_load_n(&c->declined_until,
							__ATOMIC_RELAXED) ||
		    !overlap_target(r, id)) {
			STAT_INC(r, prefetch_stale);
			CODE_PROBE(1, prefetch_stale);
			chunk_unlock(r, c);
			return;
		}
		chunk_set_state(r, c, CH_FETCHING);
		c->fetching_since = SEAM(r, clock_ns);
		c->waiters = 0;
		STAT_INC(r, prefetch_jobs);
	} else {
		/* The watchdog may have reset it, or another job landed it. */
		if (chunk_state(c) != CH_FETCHING) {
			CODE_PROBE(1, demand_job_stale);
			chunk_unlock(r, c);
			return;
		}
		STAT_INC(r, demand_jobs);
	}
	fetch_locked(r, id, prefetch, w);
	int landed = chunk_state(c) == CH_RESIDENT;

	chunk_unlock(r, c);
	if (!landed)
		return;
	trace_landed(r, id);
#ifdef RESID_HARNESS
	/* Bug 6: the prefetch path's unpin after the fetch, bare. */
	if (BUG(6) && prefetch) {
		PLAIN_ADD(r, c->pin, -1);
		return;
	}
#endif
	budget_unpin(r, c);
	if (r->cfg.evict_ahead)
		budget_evict_ahead(r, id);
}

void *worker_main(void *arg)
{
	struct resid_region *r = arg;
	uint64_t slot = config_slot(&r->cfg);
	struct worker w = {
		.bounce = r->fill_b ? NULL : aligned_alloc(2 * slot, 2 * slot),
		.slot = slot,
	};
	int prefetch;

	/* Best effort: on small pages the reused bounce is still far
	 * faster than fresh pages in B. Without it, reads go into B. */
	if (w.bounce)
		(void)SEAM(r, hugepage, w.bounce, 2 * slot);
	if (SEAM(r, reader_open, &w.rd, backing_read_job, r) < 0)
		w.rd = 0;
	for (uint32_t id; queue_take(r, &id, &prefetch);) {
		SEAM(r, yield, "worker-job");
		run_job(r, id, prefetch, &w);
		queue_done(r);
	}
	if (w.rd)
		SEAM(r, reader_close, w.rd);
	free(w.bounce);
	return NULL;
}
