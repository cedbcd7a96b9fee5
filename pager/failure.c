/* Failure semantics (design.md §9). A chunk whose fetch keeps failing fails for
 * good and loudly, as mmap of a truncated file does: with UFFDIO_POISON
 * (Linux >= 6.6) its range in A is poisoned, so every access raises SIGBUS
 * in the kernel; without it every fault on the chunk sends SIGBUS to the
 * faulting thread (tgkill to the message's ptid). A dispatcher that cannot
 * read faults any more fails every chunk not resident, by poison or, without
 * it, by mprotect (SIGSEGV). The first error is kept for resid_failure(). */
#include <errno.h>

#include "internal.h"

#define POISON_RETRIES 8

void failure_record(struct resid_region *r, uint32_t chunk, int err)
{
	int none = 0;

	if (__atomic_compare_exchange_n(&r->fail_err, &none, err, 0,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		__atomic_store_n(&r->fail_chunk, chunk, __ATOMIC_RELEASE);
}

int resid_failure(const struct resid_region *r, uint32_t *chunk)
{
	int rc = region_usable(r);

	if (rc) {
		if (chunk)
			*chunk = RESID_NO_CHUNK;
		return rc;
	}
	int err = __atomic_load_n(&r->fail_err, __ATOMIC_ACQUIRE);

	if (chunk)
		*chunk = err ? __atomic_load_n(&r->fail_chunk,
					       __ATOMIC_ACQUIRE) :
			       RESID_NO_CHUNK;
	return err;
}

#ifdef RESID_HARNESS
int resid_chunk_failed(const struct resid_region *r, uint32_t chunk)
{
	int rc = region_usable(r);

	if (rc)
		return rc;
	if (chunk >= r->nchunks)
		return -EINVAL;
	/* A failed chunk never leaves CH_FAILED, so a yes stays true. */
	return failure_dead(r) || chunk_state(&r->chunks[chunk]) == CH_FAILED;
}
#endif

int failure_dead(const struct resid_region *r)
{
	return __atomic_load_n(&r->dead, __ATOMIC_SEQ_CST);
}

/* Poisons [addr, addr + len) of A; partial progress goes on. */
static int poison(struct resid_region *r, uint64_t addr, uint64_t len)
{
	int rc = -EAGAIN;

	for (int i = 0; i < POISON_RETRIES && rc == -EAGAIN; i++)
		rc = SEAM(r, uffd_poison, r->uffd, addr, len);
	return rc;
}

/* With the chunk locked, its fetch given up and its pages punched. The
 * poison wakes the faulters deduplicated against the fetch into their
 * SIGBUS; without poison the wake makes them fault again, and the
 * dispatcher signals each (failure_fault). */
void failure_fail_chunk(struct resid_region *r, struct chunk *c, int err)
{
	uint64_t addr = (uint64_t)(uintptr_t)(r->a + c->off);

	failure_record(r, (uint32_t)(c - r->chunks), err);
	chunk_set_state(r, c, CH_FAILED);
	STAT_INC(r, failed_chunks);
	/* Counted before the poison wakes them: a woken reader may read the
	 * stats from its SIGBUS handler at once. */
	if (r->poison)
		STAT_ADD(r, failed_faults, c->waiters);
	if (!r->poison || poison(r, addr, c->len) < 0) {
		/* They fault again and are counted then, one by one. */
		if (r->poison)
			STAT_ADD(r, failed_faults, -(uint64_t)c->waiters);
		wake_range(r, addr, c->len);
	}
	c->waiters = 0;
}

/* The dispatcher, with the chunk locked and FAILED: a fault that reached
 * the uffd before the poison, or any fault without poison. */
void failure_fault(struct resid_region *r, struct chunk *c, uint64_t addr,
		   uint32_t tid)
{
	uint64_t page = addr & ~(RESID_PAGE - 1);

	(void)c;
	STAT_INC(r, failed_faults);
	if (r->poison) {
		int rc = poison(r, page, RESID_PAGE);

		if (rc == 0)
			return;
		if (rc == -EEXIST) { /* poisoned: the retry raises SIGBUS */
			wake_range(r, page, RESID_PAGE);
			return;
		}
	}
	if (SEAM(r, sigbus_thread, tid) < 0)
		STAT_INC(r, wake_errors);
}

/* Without poison, a run of failed chunks is made inaccessible before its
 * faulters are woken: they retry into SIGSEGV instead of a fault nobody
 * will read. One mprotect a run keeps the mapping's pieces few. */
static void protect_run(struct resid_region *r, uint64_t off, uint64_t len)
{
	if (!len)
		return;
	if (SEAM(r, protect_none, r->a + off, len) < 0)
		STAT_INC(r, wake_errors);
	wake_range(r, (uint64_t)(uintptr_t)(r->a + off), len);
}

/* The dispatcher cannot learn of faults any more. Nothing may be evicted
 * (its next access could not be served) and every chunk not resident
 * fails: poisoned, or without poison made inaccessible (SIGSEGV). */
void failure_fail_region(struct resid_region *r, int err)
{
	uint64_t run_off = 0, run_len = 0;

	failure_record(r, RESID_NO_CHUNK, err);
	__atomic_store_n(&r->dead, 1, __ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < r->nchunks; i++) {
		struct chunk *c = &r->chunks[i];
		int st;

		chunk_lock(r, c);
		st = chunk_state(c);
		if (st == CH_ABSENT || st == CH_FETCHING) {
			chunk_set_state(r, c, CH_FAILED);
			STAT_INC(r, failed_chunks);
		}
		chunk_unlock(r, c);
		if (st == CH_RESIDENT) {
			protect_run(r, run_off, run_len);
			run_len = 0;
		} else if (r->poison) {
			if (st == CH_FAILED)
				continue; /* poisoned when it failed */
			if (poison(r, (uint64_t)(uintptr_t)(r->a + c->off),
				   c->len) < 0)
				wake_range(r,
					   (uint64_t)(uintptr_t)(r->a + c->off),
					   c->len);
		} else {
			/* Failed before too: no dispatcher signals it now. */
			if (!run_len)
				run_off = c->off;
			run_len += c->len;
		}
	}
	protect_run(r, run_off, run_len);
}
