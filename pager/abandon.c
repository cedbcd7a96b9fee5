/* The paths from FETCHING back to ABSENT (or FAILED), and what they owe the
 * kernel. A failed wake or punch is retried: giving up on a wake loses a
 * fault, giving up on a punch leaves pages nobody accounts for. One that
 * still fails is owed and the dispatcher's tick pays it (abandon_pay_owed):
 * a wake until it goes through (the region reports the error); a punch
 * keeps the fetch's reservation, so the budget counts its pages, until the
 * punch frees them or the chunk's next fetch writes over them. */
#include "internal.h"

#define OP_RETRIES 100
/* Fetches of one chunk that may fail in a row before it fails for good
 * (failure.c); each waits twice as long as the one before, from 1 ms. */
#define FETCH_FAILURES 8

void wake_range(struct resid_region *r, uint64_t addr, uint64_t len)
{
	int rc = 0;

	for (int i = 0; i < OP_RETRIES; i++) {
		rc = SEAM(r, uffd_wake, r->uffd, addr, len);
		if (rc == 0)
			return;
		STAT_INC(r, wake_errors);
		CODE_PROBE(1, wake_retried);
	}
	uint32_t id = chunks_find(r, addr - (uint64_t)(uintptr_t)r->a);

	failure_record(r, id, -rc);
	__atomic_store_n(&r->chunks[id].wake_owed, 1, __ATOMIC_RELEASE);
}

/* With the chunk locked: 0 once its pages are punched, else -errno. */
static int punch_chunk(struct resid_region *r, struct chunk *c)
{
	int rc = 0;

	for (int i = 0; i < OP_RETRIES; i++) {
		rc = SEAM(r, punch, r->memfd, c->off, c->hold);
		if (rc == 0)
			return 0;
		STAT_INC(r, punch_errors);
		CODE_PROBE(1, punch_retried);
	}
	return rc;
}

/* Frees what a fetch that did not land had taken; a punch that fails every
 * retry is owed, and the reservation stays until it is paid. */
static void fetch_release(struct resid_region *r, struct chunk *c,
			  int populated, int reserved)
{
	if (populated && punch_chunk(r, c) < 0) {
		CODE_PROBE(1, punch_owed);
		__atomic_store_n(&c->punch_owed, 1, __ATOMIC_RELEASE);
		queue_owe_punch(r, 1);
		reserved = 0;
	}
	if (reserved) {
		budget_release(r, c->res);
		c->res = 0;
	}
	budget_unretain(r, c);
	if (r->cfg.overlap_evict)
		budget_forget_consumed(r, c);
}

int abandon_take_owed(struct resid_region *r, struct chunk *c)
{
	if (!c->punch_owed)
		return 0;
	__atomic_store_n(&c->punch_owed, 0, __ATOMIC_RELEASE);
	queue_owe_punch(r, 0);
	return 1;
}

/* The one path from FETCHING back to ABSENT. It frees what the fetch had
 * taken and wakes the chunk's range, so that a faulter deduplicated against
 * this fetch faults again instead of sleeping forever. */
void fetch_abandon(struct resid_region *r, struct chunk *c, int populated,
		   int reserved)
{
	fetch_release(r, c, populated, reserved);
	chunk_set_state(r, c, CH_ABSENT);
#ifdef RESID_HARNESS
	/* Bug 7: back to ABSENT without a wake. */
	if (BUG(7)) {
		STAT_INC(r, abandoned);
		return;
	}
#endif
	wake_range(r, (uint64_t)(uintptr_t)(r->a + c->off), c->len);
	STAT_INC(r, drop_wakes);
	STAT_INC(r, abandoned);
}

void fetch_failed(struct resid_region *r, struct chunk *c, int err)
{
	if (++c->fetch_failures < FETCH_FAILURES) {
		fetch_abandon(r, c, 1, 1);
		return;
	}
	fetch_release(r, c, 1, 1);
	failure_fail_chunk(r, c, err);
}

void fetch_backoff(struct resid_region *r, struct chunk *c)
{
	if (c->fetch_failures)
		SEAM(r, sleep_ns, NS_PER_MS << (c->fetch_failures - 1));
}

/* An owed punch, paid where the chunk's lock is free: a fetch holding it
 * takes the debt over (abandon_take_owed). */
static void pay_punch(struct resid_region *r, struct chunk *c)
{
	if (!__atomic_load_n(&c->punch_owed, __ATOMIC_ACQUIRE) ||
	    !chunk_trylock(r, c))
		return;
	if (c->punch_owed && punch_chunk(r, c) == 0) {
		CODE_PROBE(1, punch_paid);
		budget_release(r, c->res);
		c->res = 0;
		(void)abandon_take_owed(r, c);
	}
	chunk_unlock(r, c);
}

void abandon_pay_owed(struct resid_region *r)
{
	for (uint32_t i = 0; i < r->nchunks; i++) {
		struct chunk *c = &r->chunks[i];

		if (__atomic_exchange_n(&c->wake_owed, 0, __ATOMIC_ACQ_REL))
			wake_range(r, (uint64_t)(uintptr_t)(r->a + c->off),
				   c->len);
		pay_punch(r, c);
	}
}
