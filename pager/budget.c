/* The budget: reserve before a fetch, commit (and pin) when it lands, evict
 * by punching a hole when the reservation does not fit. Everything here runs
 * under the budget lock; a victim's chunk lock is taken inside it. */
#include <errno.h>

#include "internal.h"

static void set_resident(struct resid_region *r, uint64_t v)
{
	r->resident = v;
	if (v > r->st.resident_max)
		r->st.resident_max = v;
	INV_ASSERT(inv_budget(v, r->budget));
}

/* With the budget and chunk locks: punches [dropped, upto) of a RESIDENT
 * chunk; up to its hold, it is evicted (ABSENT). 0 or -errno. */
static int punch_locked(struct resid_region *r, struct chunk *c, uint64_t upto)
{
	uint64_t t0 = phase_clock(r), len = upto - c->dropped;
	int rc;

	INV_ASSERT(inv_punch_ok((uint32_t)(c - r->chunks),
				chunk_state(c) == CH_RESIDENT, c->pin,
				c->retained));
	rc = SEAM(r, punch, r->memfd, c->off + c->dropped, len);
	if (r->cfg.phase_timers)
		STAT_ADD(r, punch_ns, phase_clock(r) - t0);
	if (rc < 0) {
		STAT_INC(r, punch_errors);
		CODE_PROBE(1, evict_punch_failed);
		return rc;
	}
	set_resident(r, r->resident - len);
	if (upto < c->hold) {
		c->dropped = upto;
		c->drop_woken = 0;
		INV_ASSERT(inv_dropped((uint32_t)(c - r->chunks), 1, upto,
				       c->hold, r->folio));
		STAT_INC(r, drops);
		STAT_ADD(r, dropped_bytes, len);
		return 0;
	}
	c->dropped = c->consumed = c->drop_woken = 0;
	chunk_set_state(r, c, CH_ABSENT);
	STAT_INC(r, evictions);
	STAT_ADD(r, evicted_bytes, len);
	return 0;
}

/* Punches the victim up to upto (its hold: the whole chunk). Returns 0,
 * or -errno when the punch failed (the chunk then stays RESIDENT and the
 * caller gives up this round). */
static int evict_locked(struct resid_region *r, uint32_t v, uint64_t upto)
{
	struct chunk *c = &r->chunks[v];
	int rc;

	chunk_lock(r, c);
	/* After the dispatcher died a punched chunk could not come back. */
	rc = failure_dead(r) ? -EPIPE : punch_locked(r, c, upto);
	chunk_unlock(r, c);
	if (rc == 0)
		reconcile_locked(r, 1);
	return rc;
}

/* Under the budget lock a RESIDENT chunk stays RESIDENT (only an eviction
 * ends it), and its pin and dropped prefix do not change. */
int budget_evict_rest(struct resid_region *r, struct chunk *c)
{
	int rc = -EAGAIN;

	SEAM(r, lock, &r->budget_lock);
	if (chunk_state(c) == CH_RESIDENT && c->dropped && !c->pin)
		rc = evict_locked(r, (uint32_t)(c - r->chunks), c->hold);
	SEAM(r, unlock, &r->budget_lock);
	return rc;
}

/* Resident, unpinned chunks other than self. A prefetch also leaves alone
 * a chunk demand-fetched since the last fault: its faulters may not have
 * run yet, and a prefetch that evicts it again and again starves them (the
 * simulated scheduler found that livelock). fault_seq is read under the
 * policy lock, a leaf. */
static uint32_t collect_candidates(struct resid_region *r,
				   const struct chunk *self, int prefetch)
{
	uint64_t seq = 0;
	uint32_t n = 0;

	if (prefetch) {
		SEAM(r, lock, &r->policy_lock);
		seq = r->fault_seq;
		SEAM(r, unlock, &r->policy_lock);
	}
	for (uint32_t i = 0; i < r->nchunks; i++) {
		const struct chunk *c = &r->chunks[i];

		if (c == self || c->pin || chunk_state(c) != CH_RESIDENT)
			continue;
		if (prefetch &&
		    __atomic_load_n(&c->demand_seq, __ATOMIC_RELAXED) == seq) {
			CODE_PROBE(1, prefetch_spares_demand);
			continue;
		}
		r->cand[n++] = i;
	}
	return n;
}

/* Drops the oldest retention pin, for a demand fetch that found nothing else
 * to evict. */
static int break_retention(struct resid_region *r)
{
	if (r->retain.count == 0)
		return 0;
	struct chunk *c = &r->chunks[ring_pop(&r->retain)];

	c->retained = 0;
	c->pin--;
	STAT_INC(r, retention_breaks);
	CODE_PROBE(1, retention_broken);
	return 1;
}

/* I-12 between quiescent points: a pin is a retention or the one an
 * in-flight job holds on its own chunk, and the calling job holds none yet.
 * Checked where a leaked pin shows: a demand that finds nothing to evict. */
static void check_pins_explained(struct resid_region *r)
{
	uint32_t held = 0, inflight;

	for (uint32_t i = 0; i < r->nchunks; i++) {
		const struct chunk *c = &r->chunks[i];

		inv_pin(i, c->pin, 0);
		held += c->pin > c->retained ?
				(uint32_t)(c->pin - c->retained) :
				0;
	}
	inflight = queue_inflight(r);
	if (held + 1 > inflight)
		inv_report(12,
			   "%u pins beyond retention with %u other jobs in "
			   "flight: a pin was never released",
			   held, inflight - 1);
}

/* A demand fetch's best victim may be a chunk that has just landed and
 * that the application has moved on from (an access was announced since):
 * its job has yet to commit it (FETCHING, landing) or to unpin it, for a
 * moment (longer when the woken faulter took that job's CPU). Evicting the
 * next best instead reads more than the policy's choice (on a cyclic scan,
 * a chunk more per pass). Without an announcement since, its faulter may
 * still need it (one instruction can touch two chunks): no wait, or two
 * faults could evict each other's chunk for ever. True when such a chunk
 * is used later than v. */
static int victim_landing(struct resid_region *r, const struct chunk *self,
			  int64_t v)
{
	uint64_t seq = __atomic_load_n(&r->access_seq, __ATOMIC_ACQUIRE);
	uint32_t n = 0;
	int64_t w;

	for (uint32_t i = 0; i < r->nchunks; i++) {
		const struct chunk *c = &r->chunks[i];
		int st = chunk_state(c);
		int held = (st == CH_RESIDENT && c->pin > c->retained) ||
			   (st == CH_FETCHING &&
			    __atomic_load_n(&c->landing, __ATOMIC_ACQUIRE));

		if (c != self && held &&
		    __atomic_load_n(&c->landed_access, __ATOMIC_RELAXED) < seq)
			r->cand[n++] = i;
	}
	if (!n)
		return 0;
	if (v >= 0)
		r->cand[n++] = (uint32_t)v;
	SEAM(r, lock, &r->policy_lock);
	w = policy_victim(r->policy, r->cand, n, POLICY_NEVER);
	SEAM(r, unlock, &r->policy_lock);
	return w >= 0 && w != v;
}

/* Two chunks that one instruction needs at once (a load across their
 * boundary) must not evict each other for ever, as they did with one fetch
 * worker: a demand fetch of a chunk that v's fetch evicted spares v when
 * no access was announced since v landed (its faulter is likely the one
 * faulting now) and another candidate exists. An announcement means the
 * application moved on: then v is fair game, as the policy's order says. */
static uint32_t spare_partner(struct resid_region *r, const struct chunk *self,
			      uint32_t n)
{
	uint32_t v = self->evicted_for;

	if (!v-- || n < 2 ||
	    __atomic_load_n(&r->chunks[v].landed_access, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&r->access_seq, __ATOMIC_ACQUIRE))
		return n;
	for (uint32_t i = 0; i < n; i++) {
		if (r->cand[i] != v)
			continue;
		r->cand[i] = r->cand[--n];
		CODE_PROBE(1, demand_spares_partner);
		break;
	}
	return n;
}

/* A program that announces nothing (residctl run) is only seen by its
 * faults, and several threads cross a chunk's border together: one faults
 * on the next chunk while the others still read the one before. That
 * chunk is the declared order's victim (used furthest, a cycle later), and
 * evicting it fetched it again at once, a chunk more per border (the 3B
 * model read 1.45x its file per token at a quarter of it as budget). So a
 * demand fetch spares the chunk faulted before its own, and the one before
 * it in the declared order (read without a fault when it was resident),
 * while nothing was ever announced and another candidate exists: the scan
 * then streams through two chunks' room instead of one. */
static uint32_t spare_current(struct resid_region *r, const struct chunk *self,
			      uint32_t n)
{
	uint32_t v = self->faulted_after;

	if (__atomic_load_n(&r->access_seq, __ATOMIC_ACQUIRE))
		return n;
	SEAM(r, lock, &r->policy_lock);
	for (uint32_t i = 0; i < n && n > 1;) {
		if (r->cand[i] + 1 != v &&
		    !policy_near(r->policy, r->cand[i], 1, 0)) {
			i++;
			continue;
		}
		r->cand[i] = r->cand[--n];
		CODE_PROBE(1, demand_spares_current);
	}
	SEAM(r, unlock, &r->policy_lock);
	return n;
}

/* The same for a prefetch of the follow mode (prefetch.c): the chunk the
 * program touched before its last one may still be read. */
static uint32_t prefetch_spare(struct resid_region *r, uint32_t n)
{
	uint32_t v;

	if (!prefetch_follows(r))
		return n;
	SEAM(r, lock, &r->policy_lock);
	v = r->prev_touch;
	SEAM(r, unlock, &r->policy_lock);
	if (!v--)
		return n;
	for (uint32_t i = 0; i < n; i++) {
		if (r->cand[i] != v)
			continue;
		r->cand[i] = r->cand[--n];
		CODE_PROBE(1, prefetch_spares_current);
		break;
	}
	return n;
}

/* overlap_evict: the resident, unpinned chunk other than self whose
 * consumed bytes not dropped yet are used furthest (for the chunk being
 * read, at its use after this one), when they are used no sooner than the
 * policy's whole victim v (Belady, page by page) and, for a prefetch,
 * strictly later than its target. -1: none. */
static int64_t drop_candidate(struct resid_region *r, const struct chunk *self,
			      int64_t v, uint64_t must_exceed)
{
	int64_t best = -1;
	uint64_t best_use = 0;

	SEAM(r, lock, &r->policy_lock);
	uint64_t floor = v >= 0 ? policy_next_use(r->policy, (uint32_t)v) : 0;
	int self_now = policy_near(r->policy, (uint32_t)(self - r->chunks), 0,
				   0);

	for (uint32_t i = 0; i < r->nchunks; i++) {
		const struct chunk *c = &r->chunks[i];

		if (c == self || c->pin || c->consumed <= c->dropped ||
		    chunk_state(c) != CH_RESIDENT)
			continue;
		uint64_t use = policy_next_use_consumed(r->policy, i);

		/* Pieces of the visit in progress only: of the chunk being
		 * read, or of the one read before once the application is at
		 * self. A chunk consumed a cycle ago goes whole or not at all
		 * (a part of it would be fetched again whole). */
		if (!policy_near(r->policy, i, 0, 0) &&
		    !(self_now && policy_near(r->policy, i, 1, 0)))
			continue;
		if (use >= floor &&
		    (must_exceed == POLICY_NEVER || use > must_exceed) &&
		    (best < 0 || use > best_use)) {
			best = i;
			best_use = use;
		}
	}
	SEAM(r, unlock, &r->policy_lock);
	return best;
}

/* The end of the consumed bytes of c to drop for `short_by` more bytes of
 * room: whole folios (pages on the 4 KiB path), at most what was consumed. */
static uint64_t drop_to(const struct resid_region *r, const struct chunk *c,
			uint64_t short_by)
{
	uint64_t to = c->dropped +
		      (short_by + r->folio - 1) / r->folio * r->folio;

	return to < c->consumed ? to : c->consumed;
}

/* With the budget lock: evicts until `need` more bytes fit or nothing may
 * go. must_exceed is POLICY_NEVER for a demand fetch, which may also break a
 * retention; otherwise only chunks used strictly later than must_exceed go.
 * A demand fetch that may wait stops, with *landing set, where its best
 * victim is still pinned by the job that fetched it (victim_landing).
 * Returns the evictions made. */
static uint32_t make_room_locked(struct resid_region *r,
				 const struct chunk *self, uint64_t need,
				 uint64_t must_exceed, int *landing,
				 int drops_only)
{
	uint32_t evicted = 0;

	while (r->resident + r->reserved + need > r->budget) {
		uint32_t n = collect_candidates(r, self,
						must_exceed != POLICY_NEVER);
		int64_t v;

		if (must_exceed == POLICY_NEVER)
			n = spare_current(r, self, spare_partner(r, self, n));
		else
			n = prefetch_spare(r, n);
		SEAM(r, lock, &r->policy_lock);
		v = policy_victim(r->policy, r->cand, n, must_exceed);
		SEAM(r, unlock, &r->policy_lock);
		int64_t d = r->cfg.overlap_evict ?
				    drop_candidate(r, self, v, must_exceed) :
				    -1;

		if (d >= 0) {
			struct chunk *c = &r->chunks[d];

			if (evict_locked(r, (uint32_t)d,
					 drop_to(r, c,
						 r->resident + r->reserved +
							 need - r->budget)) < 0)
				break;
			CODE_PROBE(1, consumed_dropped);
			evicted++;
			continue;
		}
		if (drops_only)
			break;
		if (landing && victim_landing(r, self, v)) {
			*landing = 1;
			break;
		}
		if (v >= 0) {
			if (evict_locked(r, (uint32_t)v, r->chunks[v].hold) < 0)
				break;
			r->chunks[v].evicted_for = (uint32_t)(self -
							      r->chunks) +
						   1;
			evicted++;
			continue;
		}
		if (must_exceed == POLICY_NEVER && break_retention(r))
			continue;
		break;
	}
	return evicted;
}

/* Makes room for `need` bytes and reserves them (see make_room_locked for
 * must_exceed). -EAGAIN: infeasible. -EBUSY: a demand fetch with may_wait
 * whose best victim has just landed and is still pinned by its job; try
 * again in a moment. */
int budget_reserve(struct resid_region *r, struct chunk *self, uint64_t need,
		   uint64_t must_exceed, int may_wait)
{
	int landing = 0;

	SEAM(r, lock, &r->budget_lock);
	make_room_locked(r, self, need, must_exceed,
			 may_wait && must_exceed == POLICY_NEVER ? &landing :
								   NULL,
			 0);
	if (landing) {
		SEAM(r, unlock, &r->budget_lock);
		return -EBUSY;
	}
	if (r->resident + r->reserved + need > r->budget) {
		if (must_exceed == POLICY_NEVER)
			INV_ASSERT(check_pins_explained(r));
		SEAM(r, unlock, &r->budget_lock);
		return -EAGAIN;
	}
	r->reserved += need;
	SEAM(r, unlock, &r->budget_lock);
	return 0;
}

void budget_release(struct resid_region *r, uint64_t need)
{
	SEAM(r, lock, &r->budget_lock);
	r->reserved -= need;
	SEAM(r, unlock, &r->budget_lock);
}

/* One critical section: a committed chunk is pinned before any evictor can
 * see it (bug 3 split these two). */
void budget_commit_and_pin(struct resid_region *r, struct chunk *c)
{
	SEAM(r, lock, &r->budget_lock);
	r->reserved -= c->hold;
	set_resident(r, r->resident + c->hold);
#ifdef RESID_HARNESS
	/* Bug 3: commit and pin in two critical sections, the chunk RESIDENT
	 * between them, where an evictor can take it for a victim. */
	if (BUG(3)) {
		SEAM(r, unlock, &r->budget_lock);
		chunk_set_state(r, c, CH_RESIDENT);
		SEAM(r, lock, &r->budget_lock);
	}
#endif
	c->pin++;
	reconcile_locked(r, ++r->since_reconcile >= r->cfg.reconcile_interval ||
				    r->h.eager_reconcile);
	SEAM(r, unlock, &r->budget_lock);
}

void budget_unpin(struct resid_region *r, struct chunk *c)
{
	SEAM(r, lock, &r->budget_lock);
	c->pin--;
	INV_ASSERT(inv_pin((uint32_t)(c - r->chunks), c->pin, 0));
	SEAM(r, unlock, &r->budget_lock);
}

/* A prefetch target holds a retention pin until consumed or until
 * prefetch_depth newer targets are pinned. */
void budget_retain(struct resid_region *r, struct chunk *c)
{
	SEAM(r, lock, &r->budget_lock);
	if (!c->retained) {
		if (r->retain.count == r->retain.cap) {
			struct chunk *old = &r->chunks[ring_pop(&r->retain)];

			old->retained = 0;
			old->pin--;
			CODE_PROBE(1, retention_rotated);
		}
		ring_push(&r->retain, (uint32_t)(c - r->chunks));
		c->retained = 1;
#ifdef RESID_HARNESS
		/* Bug 6: the prefetch path's pin before the fetch, bare. */
		if (BUG(6)) {
			SEAM(r, unlock, &r->budget_lock);
			PLAIN_ADD(r, c->pin, 1);
			return;
		}
#endif
		c->pin++;
	}
	SEAM(r, unlock, &r->budget_lock);
}

void budget_unretain(struct resid_region *r, struct chunk *c)
{
	SEAM(r, lock, &r->budget_lock);
	if (c->retained && ring_remove(&r->retain, (uint32_t)(c - r->chunks))) {
		c->retained = 0;
#ifdef RESID_HARNESS
		/* Bug 6: the prefetch path's unpin on abandon, bare. */
		if (BUG(6)) {
			SEAM(r, unlock, &r->budget_lock);
			PLAIN_ADD(r, c->pin, -1);
			return;
		}
#endif
		c->pin--;
	}
	SEAM(r, unlock, &r->budget_lock);
}

/* Evict ahead of need (cfg.evict_ahead): after chunk id landed and its
 * faulters were woken, make room for the chunk the policy predicts next, so
 * that its fetch finds the budget free instead of punching on the fault's
 * critical path. Only chunks used strictly later than that chunk may go (the
 * prefetch admission rule), never one demand-fetched since the last fault. */
void budget_evict_ahead(struct resid_region *r, uint32_t id)
{
	uint32_t next = id;
	uint64_t must = POLICY_NEVER;

	SEAM(r, lock, &r->policy_lock);
	if (policy_predict(r->policy, id, &next, 1) == 1)
		must = policy_next_use(r->policy, next);
	SEAM(r, unlock, &r->policy_lock);
	if (must == POLICY_NEVER || chunk_state(&r->chunks[next]) != CH_ABSENT)
		return;
	SEAM(r, lock, &r->budget_lock);
	uint32_t evicted = make_room_locked(r, &r->chunks[next],
					    r->chunks[next].hold, must, NULL,
					    0);

	STAT_ADD(r, evict_ahead, evicted);
	CODE_PROBE(evicted > 0, evict_ahead);
	SEAM(r, unlock, &r->budget_lock);
}

int budget_reserve_piece(struct resid_region *r, struct chunk *c, uint64_t need,
			 uint64_t must_exceed)
{
	int rc = -EAGAIN;

	SEAM(r, lock, &r->budget_lock);
	make_room_locked(r, c, need, must_exceed, NULL, 1);
	if (r->resident + r->reserved + need <= r->budget) {
		r->reserved += need;
		rc = 0;
	}
	SEAM(r, unlock, &r->budget_lock);
	return rc;
}

/* The consumed prefix, whole folios (pages on the 4 KiB path), recorded
 * while the chunk is RESIDENT or FETCHING (its early pieces are read
 * while the rest is fetched). A smaller prefix than the one recorded
 * starts a new visit; so does budget_forget_consumed (an eviction too). */
void budget_consumed(struct resid_region *r, struct chunk *c, uint64_t bytes)
{
	uint64_t to = bytes >= c->len ? c->hold : bytes / r->folio * r->folio;
	int st;

	SEAM(r, lock, &r->budget_lock);
	st = chunk_state(c);
	if (st == CH_RESIDENT || st == CH_FETCHING)
		c->consumed = to > c->dropped ? to : c->dropped;
	SEAM(r, unlock, &r->budget_lock);
}

void budget_forget_consumed(struct resid_region *r, struct chunk *c)
{
	SEAM(r, lock, &r->budget_lock);
	c->consumed = c->dropped;
	SEAM(r, unlock, &r->budget_lock);
}
