/* The work queue between the dispatcher and the fetch workers: demand and
 * prefetch rings, the jobs in flight, and quiescence (resid_quiesce). The
 * pager is idle when nothing is queued, running, read but not dispatched,
 * or owed to the kernel (a punch that failed every retry: its pages are
 * still counted, so accounting is not exact before it is paid). */
#include "internal.h"

/* With the queue lock. */
static int idle_locked(const struct resid_region *r)
{
	return !r->inflight && !r->draining && !r->demand.count &&
	       !r->prefetch.count && !r->punches_owed;
}

/* With the queue lock: after anything that may have made the pager idle. */
static void signal_idle_locked(struct resid_region *r)
{
	if (idle_locked(r))
		SEAM(r, cond_broadcast, &r->idle_cond);
}

void queue_demand(struct resid_region *r, uint32_t id)
{
	struct chunk *c = &r->chunks[id];

	SEAM(r, lock, &r->q_lock);
	if (!c->queued_demand) {
		c->queued_demand = 1;
		ring_push(&r->demand, id);
		SEAM(r, cond_signal, &r->q_cond);
	}
	SEAM(r, unlock, &r->q_lock);
}

void queue_prefetch(struct resid_region *r, uint32_t id)
{
	struct chunk *c = &r->chunks[id];

	SEAM(r, lock, &r->q_lock);
	if (!c->queued_prefetch && !r->stopping) {
		c->queued_prefetch = 1;
		ring_push(&r->prefetch, id);
		SEAM(r, cond_signal, &r->q_cond);
	}
	SEAM(r, unlock, &r->q_lock);
}

int queue_take(struct resid_region *r, uint32_t *id, int *prefetch)
{
	SEAM(r, lock, &r->q_lock);
	while (!r->stopping && !r->demand.count && !r->prefetch.count)
		SEAM(r, cond_wait, &r->q_cond, &r->q_lock);
	if (r->stopping) {
		SEAM(r, unlock, &r->q_lock);
		return 0;
	}
	*prefetch = r->demand.count == 0;
	*id = ring_pop(*prefetch ? &r->prefetch : &r->demand);
	if (*prefetch)
		r->chunks[*id].queued_prefetch = 0;
	else
		r->chunks[*id].queued_demand = 0;
	r->inflight++;
	SEAM(r, unlock, &r->q_lock);
	return 1;
}

void queue_done(struct resid_region *r)
{
	SEAM(r, lock, &r->q_lock);
	r->inflight--;
	signal_idle_locked(r);
	SEAM(r, unlock, &r->q_lock);
}

uint32_t queue_inflight(struct resid_region *r)
{
	uint32_t n;

	SEAM(r, lock, &r->q_lock);
	n = r->inflight;
	SEAM(r, unlock, &r->q_lock);
	return n;
}

void queue_set_draining(struct resid_region *r, int on)
{
	SEAM(r, lock, &r->q_lock);
	r->draining = on;
	signal_idle_locked(r);
	SEAM(r, unlock, &r->q_lock);
}

void queue_owe_punch(struct resid_region *r, int owed)
{
	SEAM(r, lock, &r->q_lock);
	r->punches_owed += owed ? 1 : -1;
	signal_idle_locked(r);
	SEAM(r, unlock, &r->q_lock);
}

int queue_stopping(struct resid_region *r)
{
	int stop;

	SEAM(r, lock, &r->q_lock);
	stop = r->stopping;
	SEAM(r, unlock, &r->q_lock);
	return stop;
}

#ifdef RESID_HARNESS
void resid_quiesce(struct resid_region *r)
{
	SEAM(r, lock, &r->q_lock);
	while (!idle_locked(r)) {
		SEAM(r, cond_wait, &r->idle_cond, &r->q_lock);
		/* Bug 8: the wait as if under `if`: a wakeup that finds the
		 * pager still busy (spurious, or work queued since the
		 * broadcast) returns anyway. */
		if (BUG(8))
			break;
	}
	SEAM(r, unlock, &r->q_lock);
}
#endif
