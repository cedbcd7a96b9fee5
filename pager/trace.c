/* Reference tracing (resid_config.trace_fn): the chunks the application
 * reads, in the order its faults reach the dispatcher, at chunk
 * granularity. The pager sees only faults, so it keeps every chunk but the
 * one recorded last unmapped in A: at each switch of chunk it drops A's
 * entries of the chunk left behind (what the application's MADV_DONTNEED
 * does, which the dispatcher serves: a refault of a RESIDENT chunk is a
 * CONTINUE of the page, no I/O), and a fetch that lands for a chunk other
 * than the last recorded (another thread's fault overtook it) has its
 * entries dropped too; until then its waiters read it unrecorded, which
 * only threads reading different chunks at once can do. Prefetch is
 * refused (config.c): it would map a chunk before its first read. So a
 * thread's read of another chunk faults and is recorded.
 *
 * Only the previous chunk is dropped, not a set of recent ones: a read of
 * a chunk still mapped would not fault, so keeping k chunks would lose
 * each return to one of them within k switches, and the trace would be
 * exact only for an optimum of at least k chunks. With one, it is the
 * sequence of the faulting threads' chunks with repeats folded, which
 * every capacity of at least one chunk counts the same. */
#include "internal.h"

void trace_init(struct resid_region *r)
{
	if (!r->cfg.trace_fn)
		return;
	SEAM(r, mutex_init, &r->trace_lock);
	r->trace_last = RESID_NO_CHUNK;
}

void trace_destroy(struct resid_region *r)
{
	if (r->cfg.trace_fn)
		SEAM(r, mutex_destroy, &r->trace_lock);
}

/* Under the trace lock. A drop that fails leaves the chunk mapped: a
 * return to it may go unrecorded, which the counter says. */
static void drop(struct resid_region *r, uint32_t id)
{
	const struct chunk *c = &r->chunks[id];

	if (SEAM(r, drop_a, r->a + c->off, c->len) < 0)
		STAT_INC(r, trace_drop_errors);
}

void trace_fault(struct resid_region *r, uint32_t id)
{
	if (!r->cfg.trace_fn)
		return;
	SEAM(r, lock, &r->trace_lock);
	if (id != r->trace_last) {
		uint32_t left = r->trace_last;

		r->trace_last = id;
		STAT_INC(r, trace_records);
		r->cfg.trace_fn(r->cfg.trace_arg, id);
		if (left != RESID_NO_CHUNK)
			drop(r, left);
	}
	SEAM(r, unlock, &r->trace_lock);
}

void trace_landed(struct resid_region *r, uint32_t id)
{
	if (!r->cfg.trace_fn)
		return;
	SEAM(r, lock, &r->trace_lock);
	if (id != r->trace_last)
		drop(r, id);
	SEAM(r, unlock, &r->trace_lock);
}
