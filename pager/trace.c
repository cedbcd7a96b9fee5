/* Reference tracing (resid_config.trace_fn): the chunks the application
 * reads, in the order its faults reach the dispatcher, at chunk
 * granularity. Each fault on a chunk other than the one recorded last is
 * recorded. The pager sees only faults, so it keeps unmapped in A the
 * chunks its threads have left: when a thread's fault lands on a chunk
 * other than the one that thread was on, A's entries of the chunk it
 * left are dropped (what the application's MADV_DONTNEED does, which the
 * dispatcher serves: a refault of a RESIDENT chunk is a CONTINUE of the
 * page, no I/O). A fetch that lands for a chunk no thread is on is
 * dropped too.
 *
 * Drops follow each thread's own switches: dropping at every switch of
 * the record, two threads on two chunks drop each other's page between
 * its CONTINUE and the retried access, for ever (seen with llama.cpp's
 * two threads). A thread switches only when an access of its own has
 * finished, so each drop follows some progress; a thread whose chunk
 * another one left refaults there, recorded if the record moved on. The
 * pages beside the faulting page are kept: one load may straddle two
 * chunks' border and needs both pages mapped at once (dropping the other
 * would make it fault for ever). A return to the chunk left through that
 * page alone goes unrecorded; its next page faults. A thread's move onto
 * pages another thread mapped goes unrecorded too: a hit for any cache
 * holding the chunks the threads are on.
 *
 * Only the chunk left is dropped, not a set of recent ones: a read of a
 * chunk still mapped would not fault, so keeping k chunks would lose each
 * return to one within k switches. With one, a lone thread's sequence is
 * exact, repeats folded, which every capacity of at least one chunk
 * counts the same.
 *
 * Threads are told apart by the fault's ptid (UFFD_FEATURE_THREAD_ID);
 * the table keeps the TRACE_THREADS that faulted last. */
#include "internal.h"

/* Under the trace lock: A's entries of chunk id dropped, but for the
 * pages of [keep, keep_end). A drop that fails leaves them mapped: a
 * return to the chunk may go unrecorded, which the counter says. */
static void drop_but(struct resid_region *r, uint32_t id, uint64_t keep,
		     uint64_t keep_end)
{
	const struct chunk *c = &r->chunks[id];
	uint64_t lo = keep > c->off ? keep : c->off;
	uint64_t hi = keep_end < c->off + c->len ? keep_end : c->off + c->len;

	if (lo >= hi)
		lo = hi = c->off + c->len;
	if ((lo > c->off && SEAM(r, drop_a, r->a + c->off, lo - c->off) < 0) ||
	    (hi < c->off + c->len &&
	     SEAM(r, drop_a, r->a + hi, c->off + c->len - hi) < 0))
		STAT_INC(r, trace_drop_errors);
}

static void drop(struct resid_region *r, uint32_t id)
{
	drop_but(r, id, 0, 0);
}

/* Under the trace lock: whether a thread is on chunk id. */
static int held(const struct resid_region *r, uint32_t id)
{
	for (int i = 0; i < TRACE_THREADS; i++)
		if (r->trace_thr[i].chunk == id)
			return 1;
	return 0;
}

/* Under the trace lock: the entry of thread tid, or a new one in place of
 * the least recent. */
static struct trace_thread *entry(struct resid_region *r, uint32_t tid)
{
	struct trace_thread *e = &r->trace_thr[0];

	for (int i = 0; i < TRACE_THREADS; i++) {
		if (r->trace_thr[i].tid == tid && r->trace_thr[i].seen)
			return &r->trace_thr[i];
		if (r->trace_thr[i].seen < e->seen)
			e = &r->trace_thr[i];
	}
	e->chunk = RESID_NO_CHUNK;
	e->tid = tid;
	return e;
}

void trace_init(struct resid_region *r)
{
	if (!r->cfg.trace_fn)
		return;
	SEAM(r, mutex_init, &r->trace_lock);
	r->trace_last = RESID_NO_CHUNK;
	r->trace_clock = 0;
	for (int i = 0; i < TRACE_THREADS; i++)
		r->trace_thr[i] = (struct trace_thread){
			.chunk = RESID_NO_CHUNK
		};
}

void trace_destroy(struct resid_region *r)
{
	if (r->cfg.trace_fn)
		SEAM(r, mutex_destroy, &r->trace_lock);
}

void trace_fault(struct resid_region *r, uint32_t id, uint32_t tid,
		 uint64_t off)
{
	uint64_t page = off & ~(RESID_PAGE - 1);

	if (!r->cfg.trace_fn)
		return;
	SEAM(r, lock, &r->trace_lock);
	struct trace_thread *e = entry(r, tid);

	e->seen = ++r->trace_clock;
	if (id != r->trace_last) {
		r->trace_last = id;
		STAT_INC(r, trace_records);
		r->cfg.trace_fn(r->cfg.trace_arg, id);
	}
	if (e->chunk != id) {
		uint32_t left = e->chunk;

		e->chunk = id;
		/* The pages beside the faulting one stay: one load may
		 * straddle the border. */
		if (left != RESID_NO_CHUNK)
			drop_but(r, left, page ? page - RESID_PAGE : 0,
				 page + 2 * RESID_PAGE);
	}
	SEAM(r, unlock, &r->trace_lock);
}

void trace_landed(struct resid_region *r, uint32_t id)
{
	if (!r->cfg.trace_fn)
		return;
	SEAM(r, lock, &r->trace_lock);
	if (!held(r, id))
		drop(r, id);
	SEAM(r, unlock, &r->trace_lock);
}
