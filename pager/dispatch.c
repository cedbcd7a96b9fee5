/* The dispatcher: drains the uffd until EAGAIN (poll is only a hint: one
 * CONTINUE can wake many faulters and empty the queue) and dispatches each
 * fault on its chunk's state, never on the fault type. It never does I/O.
 * Between drains it runs the FETCHING watchdog and pays what is owed. */
#include <errno.h>

#include "internal.h"

#define BATCH 64
#define TICK_MS 50
/* uffd reads that may fail in a row, each after a back-off doubling from
 * 1 ms, before the dispatcher gives up and fails the region (failure.c). */
#define READ_FAILURES 8
/* Maps of a lazy chunk (prefetch.c) that may fail in a row before its
 * pages are served one at a time. */
#define LAZY_TRIES 8

/* With the chunk locked and ABSENT: its fetch, asked for by a fault. */
static void start_demand(struct resid_region *r, struct chunk *c, uint32_t id)
{
	/* Bug 9: the chunk lock dropped around the policy update, to keep the
	 * policy lock from under a chunk lock. A prefetch can land the chunk
	 * meanwhile; the state decided before is applied anyway and the
	 * chunk is fetched over itself. */
	if (BUG(9))
		chunk_unlock(r, c);
	SEAM(r, lock, &r->policy_lock);
	policy_on_fault(r->policy, id, ++r->fault_seq);
	prefetch_touch_locked(r, c, id);
	SEAM(r, unlock, &r->policy_lock);
	if (BUG(9))
		chunk_lock(r, c);
	chunk_set_state(r, c, CH_FETCHING);
	c->fetching_since = SEAM(r, clock_ns);
	c->waiters = 1;
	queue_demand(r, id);
}

/* A fault on a dropped page of a RESIDENT chunk may be a message read
 * late, from before the piece was mapped (its CONTINUE woke that thread
 * long ago). The first since the last drop is answered with a wake; the
 * next, a thread really waiting or another one, is a refault. (Telling
 * pages apart would let two threads' faults wake each other for ever.) */
static int refault(struct chunk *c)
{
	if (c->drop_woken)
		return 1;
	c->drop_woken = 1;
	CODE_PROBE(1, dropped_fault_late);
	return 0;
}

/* A fault on a page of a RESIDENT chunk that B holds: a message read late
 * (its fetch's CONTINUE mapped the page and woke the thread), or A's entry
 * dropped since (the application's MADV_DONTNEED, a collapse of B in the
 * kernel), which only a CONTINUE maps again: a wake alone would make the
 * thread fault for ever. The kernel tells the two apart: EEXIST, the page
 * is mapped. One page, so that no partial progress needs resuming.
 * Returns -EFAULT when B has lost the page: the chunk must be fetched. */
static int serve_refault(struct resid_region *r, uint64_t page)
{
	for (int eagain = 0;; eagain++) {
		int64_t mapped = 0;
		/* Bug 11: every such fault taken for a message read late,
		 * answered with a wake. */
		int rc = BUG(11) ? -EEXIST :
				   SEAM(r, uffd_continue, r->uffd, page,
					RESID_PAGE, &mapped);

		if (rc == 0) {
			STAT_INC(r, refaults_served);
			CODE_PROBE(1, refault_served);
			return 0;
		}
		if (rc == -EAGAIN && eagain < READ_FAILURES) {
			STAT_INC(r, continue_eagain);
			continue;
		}
		if (rc == -EFAULT)
			return rc;
		if (rc == -EEXIST) {
			STAT_INC(r, dedup_resident);
		} else {
			/* The thread faults again and is served then. */
			STAT_INC(r, continue_errors);
			CODE_PROBE(1, refault_retried);
		}
		wake_range(r, page, RESID_PAGE);
		return 0;
	}
}

static void dispatch(struct resid_region *r, struct chunk *c, uint32_t id,
		     uint64_t addr, uint32_t tid, int again);

/* With the chunk locked and RESIDENT. A page of its dropped prefix
 * (overlap_evict) read again, or one B has lost: the chunk's rest goes and
 * the fault is dispatched again on what the chunk became. */
static void on_resident(struct resid_region *r, struct chunk *c, uint32_t id,
			uint64_t addr, uint32_t tid)
{
	uint64_t off = addr - (uint64_t)(uintptr_t)r->a - c->off;
	uint64_t page = addr & ~(RESID_PAGE - 1);

	/* A map that failed: the thread faults again and the map is tried
	 * again; past LAZY_TRIES failures in a row its pages are served one
	 * at a time below (a page mapped alone makes the whole chunk's
	 * CONTINUE fail with EEXIST from then on). */
	if (__atomic_load_n(&c->lazy, __ATOMIC_RELAXED) &&
	    c->lazy_failures < LAZY_TRIES) {
		if (prefetch_map_lazy(r, c, id) == 0)
			return;
		if (++c->lazy_failures < LAZY_TRIES) {
			CODE_PROBE(1, lazy_map_retried);
			wake_range(r, page, RESID_PAGE);
			return;
		}
	}
	if (off >= c->dropped) {
		if (serve_refault(r, page) == 0)
			return;
	} else if (!refault(c)) {
		wake_range(r, page, RESID_PAGE);
		STAT_INC(r, dedup_resident);
		return;
	}
	/* The budget lock comes before a chunk lock it may take: let go of
	 * this one meanwhile. */
	chunk_unlock(r, c);
	int rc = budget_evict_rest(r, c);

	chunk_lock(r, c);
	if (rc == 0) {
		STAT_INC(r, dropped_refaults);
		CODE_PROBE(1, dropped_refault);
	}
	dispatch(r, c, id, addr, tid, 1);
}

/* With the chunk locked: the fault by the chunk's state. again: after its
 * rest was evicted, a chunk still RESIDENT is pinned or fetched anew, and
 * the thread is woken to fault again and find out which. */
static void dispatch(struct resid_region *r, struct chunk *c, uint32_t id,
		     uint64_t addr, uint32_t tid, int again)
{
	switch (chunk_state(c)) {
	case CH_FAILED:
		failure_fault(r, c, addr, tid);
		break;
	case CH_RESIDENT:
		if (again)
			wake_range(r, addr & ~(RESID_PAGE - 1), RESID_PAGE);
		else
			on_resident(r, c, id, addr, tid);
		break;
	case CH_FETCHING:
		/* The in-flight CONTINUE will wake it. */
		STAT_INC(r, dedup_fetching);
		c->waiters++;
		break;
	default:
		start_demand(r, c, id);
		break;
	}
}

static void on_fault(struct resid_region *r, const struct uffd_msg *m)
{
	uint64_t addr = m->arg.pagefault.address;
	uint64_t off = addr - (uint64_t)(uintptr_t)r->a;

	if (m->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_MINOR)
		STAT_INC(r, faults_minor);
	else
		STAT_INC(r, faults_missing);
	if (off >= r->len)
		return;

	uint32_t id = chunks_find(r, off);
	struct chunk *c = &r->chunks[id];

	trace_fault(r, id, m->arg.pagefault.feat.ptid, off);
	chunk_lock(r, c);
	dispatch(r, c, id, addr, m->arg.pagefault.feat.ptid, 0);
	chunk_unlock(r, c);
}

/* Returns 0 when the queue is empty, -errno when reads keep failing. */
static int drain(struct resid_region *r)
{
	struct uffd_msg msgs[BATCH];
	int rc = 0, failures = 0;

	queue_set_draining(r, 1);
	for (;;) {
		long n = SEAM(r, uffd_read, r->uffd, msgs, BATCH);

		if (n == -EAGAIN)
			break;
		if (n == -EINTR) {
			STAT_INC(r, uffd_eintr);
			CODE_PROBE(1, uffd_read_eintr);
			continue;
		}
		if (n < 0) {
			STAT_INC(r, uffd_errors);
			if (++failures >= READ_FAILURES) {
				rc = (int)n;
				break;
			}
			SEAM(r, sleep_ns, NS_PER_MS << (failures - 1));
			continue;
		}
		failures = 0;
		for (long i = 0; i < n; i++)
			if (msgs[i].event == UFFD_EVENT_PAGEFAULT)
				on_fault(r, &msgs[i]);
	}
	queue_set_draining(r, 0);
	return rc;
}

/* A chunk FETCHING for longer than the time-out whose lock nobody holds was
 * orphaned: no fetch is running for it. Reset it and wake its waiters. */
static void watchdog(struct resid_region *r)
{
	uint64_t now = SEAM(r, clock_ns);
	uint64_t limit = (uint64_t)r->cfg.fetching_timeout_ms * NS_PER_MS;

	for (uint32_t i = 0; i < r->nchunks; i++) {
		struct chunk *c = &r->chunks[i];

		if (chunk_state(c) != CH_FETCHING || !chunk_trylock(r, c))
			continue;
		if (chunk_state(c) == CH_FETCHING &&
		    now - c->fetching_since > limit) {
			STAT_INC(r, watchdog_resets);
			CODE_PROBE(1, watchdog_reset);
			fetch_abandon(r, c, 0, 0);
		}
		chunk_unlock(r, c);
	}
}

void *dispatch_main(void *arg)
{
	struct resid_region *r = arg;
	uint64_t last_scan = SEAM(r, clock_ns);

	for (;;) {
		int ready = SEAM(r, wait_readable, r->uffd, r->stopfd, TICK_MS);

		if (ready < 0) {
			/* poll is only a hint: drain after a tick instead. */
			if (ready != -EINTR) {
				STAT_INC(r, poll_errors);
				SEAM(r, sleep_ns, TICK_MS * NS_PER_MS);
			}
			if (queue_stopping(r))
				break;
		} else if (ready & 2) {
			break;
		}
		int rc = drain(r);

		if (rc < 0) {
			failure_fail_region(r, -rc);
			break;
		}
		uint64_t now = SEAM(r, clock_ns);

		if (now - last_scan >= TICK_MS * NS_PER_MS) {
			watchdog(r);
			abandon_pay_owed(r);
			last_scan = now;
		}
	}
	return NULL;
}
