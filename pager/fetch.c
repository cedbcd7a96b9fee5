/* The fetch-worker pool. A job holds its chunk's lock across the whole
 * fetch: reserve, read (through the worker's bounce buffer and reader)
 * into the memfd, CONTINUE over mapping A, commit and pin, RESIDENT.
 * Demand jobs go before prefetch jobs. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define IO_RETRIES 8
/* Fetches of one chunk that may fail in a row before it fails for good
 * (failure.c); each waits twice as long as the one before, from 1 ms. */
#define FETCH_FAILURES 8

void queue_demand(struct resid_region *r, uint32_t id)
{
	struct chunk *c = &r->chunks[id];

	K(r, lock, &r->q_lock);
	if (!c->queued_demand) {
		c->queued_demand = 1;
		ring_push(&r->demand, id);
		K(r, cond_signal, &r->q_cond);
	}
	K(r, unlock, &r->q_lock);
}

void queue_prefetch(struct resid_region *r, uint32_t id)
{
	struct chunk *c = &r->chunks[id];

	K(r, lock, &r->q_lock);
	if (!c->queued_prefetch && !r->stopping) {
		c->queued_prefetch = 1;
		ring_push(&r->prefetch, id);
		K(r, cond_signal, &r->q_cond);
	}
	K(r, unlock, &r->q_lock);
}

/* A failed wake or punch is retried: giving up on a wake loses a fault,
 * giving up on a punch leaves pages nobody accounts for. A wake that still
 * fails is owed: the dispatcher's tick retries it until it goes through
 * (wake_owed), and the region reports the error. */
#define OP_RETRIES 100

void wake_range(struct resid_region *r, uint64_t addr, uint64_t len)
{
	int rc = 0;

	for (int i = 0; i < OP_RETRIES; i++) {
		rc = K(r, uffd_wake, r->uffd, addr, len);
		if (rc == 0)
			return;
		STAT_INC(r, wake_errors);
		CODE_PROBE(1, wake_retried);
	}
	uint32_t id = chunks_find(r, addr - (uint64_t)(uintptr_t)r->a);

	failure_record(r, id, -rc);
	__atomic_store_n(&r->chunks[id].wake_owed, 1, __ATOMIC_RELEASE);
}

static void punch_chunk(struct resid_region *r, struct chunk *c)
{
	for (int i = 0; i < OP_RETRIES; i++) {
		if (K(r, punch, r->memfd, c->off, c->hold) == 0)
			return;
		STAT_INC(r, punch_errors);
		CODE_PROBE(1, punch_retried);
	}
}

/* Frees what a fetch that did not land had taken. */
static void fetch_release(struct resid_region *r, struct chunk *c,
			  int populated, int reserved)
{
	if (populated)
		punch_chunk(r, c);
	if (reserved)
		budget_release(r, c->hold);
	budget_unretain(r, c);
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

/* A fetch that read or mapped nothing usable: abandoned, so the next fault
 * tries again after a back-off, until FETCH_FAILURES in a row fail the
 * chunk for good. */
static void fetch_failed(struct resid_region *r, struct chunk *c, int err)
{
	if (++c->fetch_failures < FETCH_FAILURES) {
		fetch_abandon(r, c, 1, 1);
		return;
	}
	fetch_release(r, c, 1, 1);
	failure_fail_chunk(r, c, err);
}

/* Before a chunk's fetch after failed ones: 1 ms, doubling. */
static void fetch_backoff(struct resid_region *r, struct chunk *c)
{
	if (c->fetch_failures)
		K(r, sleep_ns, 1000000ull << (c->fetch_failures - 1));
}

/* A fetch worker's own: its bounce buffer (NULL: reads go into B) and its
 * reader (0: none; every read then runs in series with the page work). */
struct worker {
	uint8_t *bounce;
	resid_reader rd;
};

/* read_into's first read, when the reader has not done it. */
#define NOT_STARTED LONG_MIN

/* The bytes of [at, at + len) of the chunk the backing store holds; the
 * page tail past its end reads as zeros. */
static uint64_t data_in(const struct chunk *c, uint64_t at, uint64_t len)
{
	uint64_t data = c->data_len > at ? c->data_len - at : 0;

	return data < len ? data : len;
}

/* Reads [at, at + len) of the chunk into dst until all is there; short
 * reads are legal. first: what the reader's read of it returned, or
 * NOT_STARTED. */
static int read_into(struct resid_region *r, struct chunk *c, uint8_t *dst,
		     uint64_t at, uint64_t len, long first)
{
	uint64_t data = data_in(c, at, len), got = 0;
	int errors = 0;

	INV_ASSERT(inv_not_in_a(dst, len, r->a, r->len));
	while (got < data) {
		long n = first != NOT_STARTED ? first :
			backing_read(r, dst + got, data - got,
				     c->off + at + got);

		first = NOT_STARTED;
		/* EINTR counts as a failure too: one that persists must end
		 * in the back-off below, not spin. */
		if (n == -EINTR) {
			STAT_INC(r, io_eintr);
			CODE_PROBE(1, read_eintr);
		}
		if (n <= 0) {
			STAT_INC(r, io_errors);
			/* 0: the file ended early, truncated under us. */
			if (++errors > IO_RETRIES)
				return n < 0 ? (int)n : -ENODATA;
			CODE_PROBE(1, read_retried);
			continue;
		}
		if ((uint64_t)n < data - got) {
			STAT_INC(r, io_short);
			CODE_PROBE(1, read_short);
		}
		got += (uint64_t)n;
	}
	if (data < len)
		memset(dst + data, 0, len - data);
	return 0;
}

/* Writes the bounce buffer's len bytes into the memfd at the chunk's at. */
static int write_memfd(struct resid_region *r, struct chunk *c,
		       const uint8_t *src, uint64_t at, uint64_t len)
{
	uint64_t done = 0;
	int errors = 0;

	while (done < len) {
		long n = K(r, memfd_write, r->memfd, src + done, len - done,
			   c->off + at + done);

		if (n <= 0) {
			STAT_INC(r, io_errors);
			if (++errors > IO_RETRIES)
				return n ? (int)n : -ENOSPC;
			CODE_PROBE(1, write_retried);
			continue;
		}
		CODE_PROBE((uint64_t)n < len - done, write_retried);
		done += (uint64_t)n;
	}
	return 0;
}

/* On the huge path the last chunk holds its tail up to the folio's end:
 * zeros, in before its last piece is mapped, so that the memfd holds
 * c->hold once it lands and every punch frees whole folios. No read is in
 * flight then: both bounce slots are free. */
static int fill_tail(struct resid_region *r, struct chunk *c,
		     const struct worker *w)
{
	uint64_t at = c->len;

	if (!w->bounce) {
		INV_ASSERT(inv_not_in_a(r->b + c->off + at, c->hold - at, r->a,
					r->len));
		memset(r->b + c->off + at, 0, c->hold - at);
		return 0;
	}
	/* Only as much as the tail needs: the bounce is FETCH_BOUNCE. */
	memset(w->bounce, 0, c->hold - at < FETCH_BOUNCE ? c->hold - at :
	       FETCH_BOUNCE);
	while (at < c->hold) {
		uint64_t n = c->hold - at < FETCH_BOUNCE ? c->hold - at :
			FETCH_BOUNCE;
		int rc = write_memfd(r, c, w->bounce, at, n);

		if (rc < 0)
			return rc;
		at += n;
	}
	return 0;
}

/* The bytes of the chunk mapped at once (cfg.fetch_piece; 0: all). */
static uint64_t piece_len(const struct resid_region *r, const struct chunk *c)
{
	return r->cfg.fetch_piece ? r->cfg.fetch_piece : c->len;
}

/* A fetch goes part by part: from at to the end of its piece, at most one
 * bounce slot. */
static uint64_t part_len(struct resid_region *r, const struct chunk *c,
			 const struct worker *w, uint64_t at)
{
	uint64_t piece = piece_len(r, c);
	uint64_t end = (at / piece + 1) * piece;
	uint64_t n = (end < c->len ? end : c->len) - at;

	return w->bounce && n > FETCH_SLOT ? FETCH_SLOT : n;
}

/* Where part k, at `at`, is read: bounce slot k % 2, or B itself. */
static uint8_t *part_dst(struct resid_region *r, const struct chunk *c,
			 const struct worker *w, uint64_t at, uint64_t k)
{
	return w->bounce ? w->bounce + (k & 1) * FETCH_SLOT :
		r->b + c->off + at;
}

/* Hands part k's read to the worker's reader. Returns whether it did:
 * not without a reader, nor for a part wholly past the backing store's
 * end. */
static int part_start(struct resid_region *r, const struct chunk *c,
		      const struct worker *w, uint64_t at, uint64_t k)
{
	uint64_t data = data_in(c, at, part_len(r, c, w, at));

	if (!w->rd || !data)
		return 0;
	K(r, read_start, w->rd, part_dst(r, c, w, at, k), data, c->off + at);
	return 1;
}

/* Before a fetch gives up its buffer or punches its pages: the read in
 * flight into them, if any, is waited for and dropped. */
static void part_drain(struct resid_region *r, const struct worker *w,
		       int started)
{
	if (!started)
		return;
	(void)K(r, read_wait, w->rd);
	CODE_PROBE(1, read_dropped);
}

/* CONTINUE over [at, at + len) of the chunk in A; on partial progress go
 * on from where it stopped. Returns the bytes mapped, or -errno. */
static int64_t map_a(struct resid_region *r, struct chunk *c, uint64_t at,
		     uint64_t len)
{
	uint64_t base = (uint64_t)(uintptr_t)(r->a + c->off + at), done = 0;
	int errors = 0;

	while (done < len) {
		int64_t mapped = 0;
		int rc = K(r, uffd_continue, r->uffd, base + done,
			   len - done, &mapped);

		if (rc == 0) {
			done = len;
			break;
		}
		if (rc == -EAGAIN) {
			STAT_INC(r, continue_eagain);
			CODE_PROBE(mapped > 0, continue_partial);
			CODE_PROBE(mapped <= 0, continue_eagain_none);
			if (mapped > 0)
				done += (uint64_t)mapped;
			else if (++errors > IO_RETRIES)
				return -EAGAIN;
			continue;
		}
		STAT_INC(r, continue_errors);
		CODE_PROBE(rc == -EEXIST, continue_eexist);
		CODE_PROBE(rc != -EEXIST, continue_error);
		return rc;
	}
	return (int64_t)done;
}

/* A prefetch may evict only what is used strictly later than its target;
 * a target with no forecast may evict only chunks with none either. */
static uint64_t admission_bound(struct resid_region *r, uint32_t id)
{
	uint64_t d;

	K(r, lock, &r->policy_lock);
	d = policy_next_use(r->policy, id);
	K(r, unlock, &r->policy_lock);
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

/* Maps [from, to) of the chunk, a whole piece. Before the CONTINUE of the
 * last one the chunk is marked landing: a woken faulter may take this
 * job's CPU at once. */
static int map_piece(struct resid_region *r, struct chunk *c, uint64_t t[4],
		     uint64_t from, uint64_t to)
{
	uint64_t t1 = phase_clock(r);
	int last = to == c->len;

	if (last) {
		__atomic_store_n(&c->landed_access, __atomic_load_n(
			&r->access_seq, __ATOMIC_ACQUIRE), __ATOMIC_RELAXED);
		__atomic_store_n(&c->landing, 1, __ATOMIC_RELEASE);
	}
	int64_t mapped = map_a(r, c, from, to - from);

	if (mapped < 0) {
		__atomic_store_n(&c->landing, 0, __ATOMIC_RELEASE);
		return (int)mapped;
	}
	if (!last) {
		STAT_INC(r, continue_pieces);
		CODE_PROBE(1, piece_mapped_early);
	}
	t[3] += phase_clock(r) - t1;
	return 0;
}

/* Reads, writes and maps the chunk part by part. The next part's read goes
 * to the reader before this part is written into the memfd, so the disk
 * works while the worker does the page work; a piece is mapped as
 * soon as its last part is in, and CONTINUE wakes its faulters while the
 * next is read. started: part 0's read is in flight already. Returns the
 * bytes mapped, or -errno from the read, write or CONTINUE that failed;
 * what was mapped before stays until the caller's punch. */
static int64_t fill_and_map(struct resid_region *r, struct chunk *c,
			    uint64_t t[4], const struct worker *w, int started)
{
	uint64_t piece = piece_len(r, c), from = 0;

	for (uint64_t at = 0, k = 0; at < c->len; k++) {
		uint64_t len = part_len(r, c, w, at), next = at + len;
		uint64_t t0 = phase_clock(r);
		long first = started ? K(r, read_wait, w->rd) : NOT_STARTED;
		uint8_t *dst = part_dst(r, c, w, at, k);

		started = next < c->len && part_start(r, c, w, next, k + 1);
		int rc = read_into(r, c, dst, at, len, first);

		if (rc == 0 && w->bounce)
			rc = write_memfd(r, c, dst, at, len);
		if (rc < 0) {
			CODE_PROBE(1, abandon_read_error);
			part_drain(r, w, started);
			return rc;
		}
		t[2] += phase_clock(r) - t0;
		at = next;
		if (at % piece && at < c->len)
			continue;
		if (at == c->len && c->hold > c->len)
			rc = fill_tail(r, c, w);
		if (rc == 0)
			rc = map_piece(r, c, t, from, at);
		if (rc < 0) {
			part_drain(r, w, started);
			return rc;
		}
		from = at;
	}
	return (int64_t)c->len;
}

/* Room in the budget for the chunk, or the fetch abandoned (-1). */
static int reserve_room(struct resid_region *r, struct chunk *c, uint32_t id,
			int prefetch)
{
	uint32_t attempt = 0;
	uint64_t wait_from = 0;

	for (;;) {
		uint64_t must = prefetch ? admission_bound(r, id) : POLICY_NEVER;
		/* A demand fetch waits for the job of a chunk that just
		 * landed to commit and unpin it (-EBUSY), 50 us at a time, at
		 * most landing_wait_ms (100), then evicts the next best: a
		 * job off its CPU on a loaded machine took up to a few
		 * hundred ms here, a refetch costs less than that. */
		int rc = budget_reserve(r, c, c->hold, must, !wait_from ||
					K(r, clock_ns) - wait_from <
					r->h.landing_wait_ms * 1000000ull);

		if (rc == 0)
			return 0;
		if (rc == -EBUSY) {
			if (!wait_from)
				wait_from = K(r, clock_ns);
			CODE_PROBE(1, demand_waits_landing);
			K(r, sleep_ns, 50000);
			continue;
		}
		STAT_INC(r, infeasible);
		if (prefetch) {
			__atomic_store_n(&c->declined_until, K(r, clock_ns) +
					 r->cfg.prefetch_backoff_ms * 1000000ull,
					 __ATOMIC_RELAXED);
			STAT_INC(r, prefetch_declined);
			CODE_PROBE(1, prefetch_declined);
			fetch_abandon(r, c, 0, 0);
			return -1;
		}
		if (++attempt > r->h.demand_retries) {
			CODE_PROBE(1, demand_gave_up);
			fetch_abandon(r, c, 0, 0);
			return -1;
		}
		STAT_INC(r, retries);
		CODE_PROBE(1, demand_infeasible);
		K(r, sleep_ns, 1000000);
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
	if (reserve_room(r, c, id, prefetch) < 0) {
		part_drain(r, w, started);
		return;
	}
	t[1] = phase_clock(r);
	int64_t mapped = fill_and_map(r, c, t, w, started);

	if (mapped < 0) {
		fetch_failed(r, c, (int)-mapped);
		return;
	}
	c->fetch_failures = 0;
	INV_ASSERT(inv_continue_ok(id, c->len, c->len, (uint64_t)mapped));
	STAT_INC(r, continues_ok);
	c->fetched++;
#ifdef RESID_HARNESS
	/* Bug 2: RESIDENT before the commit. An evictor holding the budget
	 * lock takes the chunk for a victim and waits for its lock, which this
	 * fetcher holds while it waits for the budget lock. */
	if (BUG(2))
		chunk_set_state(r, c, CH_RESIDENT);
#endif
	budget_commit_and_pin(r, c);
	chunk_set_state(r, c, CH_RESIDENT);
	__atomic_store_n(&c->landing, 0, __ATOMIC_RELEASE);
	K(r, lock, &r->policy_lock);
	policy_on_resident(r->policy, id);
	if (!prefetch)
		__atomic_store_n(&c->demand_seq, r->fault_seq,
				 __ATOMIC_RELAXED);
	K(r, unlock, &r->policy_lock);
	stats_record_fetch(r, c, K(r, clock_ns) - c->fetching_since);
	if (r->cfg.prefetch_depth)
		prefetch_top_up(r, id);
	record_phases(r, t);
}

static void run_job(struct resid_region *r, uint32_t id, int prefetch,
		    const struct worker *w)
{
	struct chunk *c = &r->chunks[id];

	chunk_lock(r, c);
	if (prefetch) {
		/* A target that faulted, landed or was declined meanwhile. */
		if (chunk_state(c) != CH_ABSENT ||
		    K(r, clock_ns) < __atomic_load_n(&c->declined_until,
						     __ATOMIC_RELAXED)) {
			STAT_INC(r, prefetch_stale);
			CODE_PROBE(1, prefetch_stale);
			chunk_unlock(r, c);
			return;
		}
		chunk_set_state(r, c, CH_FETCHING);
		c->fetching_since = K(r, clock_ns);
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
	struct worker w = {
		.bounce = r->fill_b ? NULL :
			aligned_alloc(FETCH_BOUNCE, FETCH_BOUNCE),
	};

	/* Best effort: on small pages the reused bounce is still far
	 * faster than fresh pages in B. Without it, reads go into B. */
	if (w.bounce)
		(void)K(r, hugepage, w.bounce, FETCH_BOUNCE);
	if (K(r, reader_open, &w.rd, backing_read_job, r) < 0)
		w.rd = 0;
	K(r, lock, &r->q_lock);
	for (;;) {
		while (!r->stopping && !r->demand.count && !r->prefetch.count)
			K(r, cond_wait, &r->q_cond, &r->q_lock);
		if (r->stopping)
			break;
		int prefetch = r->demand.count == 0;
		uint32_t id = ring_pop(prefetch ? &r->prefetch : &r->demand);

		if (prefetch)
			r->chunks[id].queued_prefetch = 0;
		else
			r->chunks[id].queued_demand = 0;
		r->inflight++;
		K(r, unlock, &r->q_lock);
		K(r, yield, "worker-job");
		run_job(r, id, prefetch, &w);
		K(r, lock, &r->q_lock);
		r->inflight--;
		if (!r->inflight && !r->draining && !r->demand.count &&
		    !r->prefetch.count)
			K(r, cond_broadcast, &r->idle_cond);
	}
	K(r, unlock, &r->q_lock);
	if (w.rd)
		K(r, reader_close, w.rd);
	free(w.bounce);
	return NULL;
}
