#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "oracles/contract.h"
#include "sim/oracles/sim_oracle.h"
#include "sim/program.h"
#include "sim/selfrace.h"
#include "workload/read_check.h"
#include "workload/unequal_table.h"

const struct scenario *simprog_find(const char *id)
{
	const struct scenario *s = scenario_find(id);

	return s && s->sim ? s : NULL;
}

#define MAX_CHUNKS 64

struct run {
	struct sim *s;
	struct fault_seam *fs;
	const struct scenario *p;
	uint32_t ops;
	uint64_t seed;
	int unequal;
	struct resid_chunk_spec table[MAX_CHUNKS];
	struct resid_config cfg;
	struct resid_harness h;
	struct resid_region *r;
	struct sim_outcome *out;
	resid_mutex m[2];
	uint64_t counter;
	volatile uint64_t ok; /* self-crash, self-spin */
};

struct app {
	struct run *run;
	uint32_t id;
};

/* Chunk c's bytes in the region: its range, cut at the region's end. */
static uint64_t chunk_bytes(struct run *run, uint32_t c)
{
	uint64_t off, len;

	if (resid_chunk_range(run->r, c, &off, &len) < 0)
		return 0;
	return off + len > run->cfg.region_len ? run->cfg.region_len - off :
						 len;
}

/* Reads [skip, skip+len) of chunk c at off into buf; with overlap_evict a
 * page at a time, each announced consumed from the chunk's start (with a
 * skip the announcement is more than was read: the pager must refetch a
 * dropped page read later, not serve a hole). */
static int app_read_bytes(struct run *run, uint32_t c, uint64_t off,
			  uint64_t skip, uint64_t len, uint8_t *buf)
{
	const uint8_t *a = resid_base(run->r) + off + skip;

	if (!run->cfg.overlap_evict)
		return sim_read(run->s, a, buf, len);
	for (uint64_t at = 0; at < len; at += RESID_PAGE) {
		uint64_t n = len - at < RESID_PAGE ? len - at : RESID_PAGE;

		if (sim_read(run->s, a + at, buf + at, n) < 0)
			return -1;
		resid_notify_consumed(run->r, c, skip + at + n);
	}
	return 0;
}

/* Reads [skip, skip+len) of chunk c; len 0: to the chunk's end. */
static void app_read(struct run *run, uint32_t c, uint64_t skip, uint64_t len)
{
	uint8_t buf[SIM_CHUNK];
	uint64_t off, clen;

	if (!len)
		len = chunk_bytes(run, c) - skip;
	if (resid_chunk_range(run->r, c, &off, &clen) < 0 ||
	    resid_notify_access(run->r, c) < 0) {
		sim_fail(run->s, "chunk %u out of range", c);
		return;
	}
	if (app_read_bytes(run, c, off, skip, len, buf) < 0) {
		char why[256];

		/* The simulated kernel fails no valid call of its own: an
		 * error beyond the injected ones is the pager's doing. */
		if (!oracle_sigbus_contract(run->r, c, run->fs, why,
					    sizeof(why)))
			sim_fail(run->s, "SIGBUS in chunk %u: %s", c, why);
		return;
	}
	oracle_content(run->s, buf, off + skip, len, run->cfg.seed, c, skip,
		       &run->out->checked);
}

static void app_main(void *arg)
{
	struct app *a = arg;
	struct run *run = a->run;
	uint32_t n = run->p->sim->chunks;
	uint64_t rng = run->seed * 31 + a->id;

	for (uint32_t i = 0; i < run->ops; i++) {
		switch (run->p->sim->pattern) {
		case READ_SCAN:
		case READ_ACCOUNT:
			for (uint32_t c = 0; c < n; c++)
				app_read(run, c, 0, 0);
			break;
		case READ_ALTERNATE:
			app_read(run, 0, 0, 0);
			app_read(run, 1, 0, 0);
			break;
		default: {
			uint32_t c = (uint32_t)rng_below(&rng, n);
			uint64_t bytes = chunk_bytes(run, c);
			uint64_t skip = rng_below(&rng, (bytes + RESID_PAGE -
							 1) / RESID_PAGE) *
					RESID_PAGE;

			app_read(run, c, skip,
				 1 + rng_below(&rng, bytes - skip));
		}
		}
	}
}

/* The hands: a chunk read, A's entries over a random range of it dropped
 * when the scheduler lets this thread take that step, the chunk read
 * again. The pager must map the dropped pages again, whatever it was
 * doing to the chunk meanwhile. */
static void hands_main(void *arg)
{
	struct app *a = arg;
	struct run *run = a->run;
	uint64_t rng = run->seed * 31 + a->id;

	for (uint32_t i = 0; i < run->p->sim->drops; i++) {
		uint32_t c = (uint32_t)rng_below(&rng, run->p->sim->chunks);
		uint64_t off, len,
			pages = (chunk_bytes(run, c) + RESID_PAGE - 1) /
				RESID_PAGE;
		uint64_t first = rng_below(&rng, pages);
		uint64_t n = 1 + rng_below(&rng, pages - first);

		app_read(run, c, 0, 0);
		if (resid_chunk_range(run->r, c, &off, &len) < 0 ||
		    sim_drop(run->s,
			     resid_base(run->r) + off + first * RESID_PAGE,
			     n * RESID_PAGE) < 0) {
			sim_fail(run->s, "a drop in chunk %u refused", c);
			return;
		}
		app_read(run, c, 0, 0);
	}
}

/* Two threads, two locks, opposite orders: the harness must say deadlock. */
static void selftest_main(void *arg)
{
	struct app *a = arg;
	const struct resid_seam *k = sim_seam(a->run->s);
	resid_mutex *first = &a->run->m[a->id], *second = &a->run->m[!a->id];

	k->lock(k->ctx, first);
	k->lock(k->ctx, second);
	k->unlock(k->ctx, second);
	k->unlock(k->ctx, first);
}

/* Two threads bump one counter, no lock, no annotation: a lost update
 * only a scheduling point between a bump's read and its write can make.
 * Between bumps each does other work under a lock of its own, a
 * scheduling point that protects nothing shared. */
static void selfrace_main(void *arg)
{
	struct app *a = arg;
	const struct resid_seam *k = sim_seam(a->run->s);

	for (uint32_t i = 0; i < a->run->ops; i++) {
		k->lock(k->ctx, &a->run->m[a->id]);
		k->unlock(k->ctx, &a->run->m[a->id]);
		selfrace_bump(&a->run->counter);
	}
}

/* Thread 0 clears `ok` for one step; thread 1 then divides by it
 * (self-crash: SIGFPE), spins until it is set, with no scheduling point
 * in the loop (self-spin: no schedule can end it), or polls through a
 * scheduling point for a wakeup nobody sends (self-livelock: the step
 * budget ends it). Each only when a preemption at thread 0's unlock lets
 * thread 1 in. */
static void selfbreak_main(void *arg)
{
	struct app *a = arg;
	struct run *run = a->run;
	const struct resid_seam *k = sim_seam(run->s);

	k->lock(k->ctx, &run->m[a->id]);
	if (a->id == 0)
		run->ok = 0;
	k->unlock(k->ctx, &run->m[a->id]);
	if (a->id == 0)
		run->ok = 1;
	else if (run->p->sim->pattern == READ_SELF_SPIN)
		while (!run->ok)
			continue;
	else if (run->p->sim->pattern == READ_SELF_LIVELOCK && !run->ok)
		for (;;)
			k->yield(k->ctx, "poll");
	else if (run->p->sim->pattern == READ_SELF_CRASH)
		run->counter += 100 / run->ok;
}

/* The harness's self-tests: two threads, two locks, no pager. */
static void selftest_run(struct run *run, struct app *apps, void (*fn)(void *))
{
	const struct resid_seam *k = sim_seam(run->s);

	run->ok = 1;
	k->mutex_init(k->ctx, &run->m[0]);
	k->mutex_init(k->ctx, &run->m[1]);
	for (uint32_t t = 0; t < 2; t++) {
		apps[t] = (struct app){ run, t };
		sim_spawn(run->s, fn, &apps[t], "self");
	}
	sim_join_apps(run->s);
}

static void selfrace_run(struct run *run, struct app *apps)
{
	uint64_t want = (uint64_t)run->p->sim->threads * run->ops;

	selftest_run(run, apps, selfrace_main);
	if (run->counter != want)
		sim_fail(run->s,
			 "lost update: the counter holds %" PRIu64
			 " after %" PRIu64 " unlocked bumps",
			 run->counter, want);
}

static void check_accounting(struct run *run)
{
	struct resid_accounting acc;
	char why[RESID_ERRLEN + 64];

	/* memory.stat within the lag it is given (stat_lag) is no failure,
	 * as on the real kernel. */
	if (oracle_accounting(run->r, &acc, why, sizeof(why)) == VERDICT_FAIL)
		sim_fail(run->s, "%s", why);
}

static void main_thread(void *arg)
{
	struct run *run = arg;
	const struct sim_sizing *p = run->p->sim;
	struct app apps[9];
	char err[RESID_ERRLEN];

	switch (p->pattern) {
	case READ_SELF_DEADLOCK:
		selftest_run(run, apps, selftest_main);
		return;
	case READ_SELF_RACE:
		selfrace_run(run, apps);
		return;
	case READ_SELF_CRASH:
	case READ_SELF_SPIN:
	case READ_SELF_LIVELOCK:
		selftest_run(run, apps, selfbreak_main);
		return;
	default:
		break;
	}
	run->r = resid_open(&run->cfg, err);
	if (!run->r) {
		sim_fail(run->s, "resid_open: %s", err);
		return;
	}
	/* The hands first: the lowest id, which the DFS default runs first,
	 * so a drop right after its read needs no preemption. */
	if (p->drops) {
		apps[8] = (struct app){ run, p->threads };
		sim_spawn(run->s, hands_main, &apps[8], "hands");
	}
	for (uint32_t t = 0; t < p->threads && t < 8; t++) {
		apps[t] = (struct app){ run, t };
		sim_spawn(run->s, app_main, &apps[t], "app");
	}
	sim_join_apps(run->s);
	if (p->pattern == READ_ACCOUNT)
		check_accounting(run);
	resid_check_quiescent(run->r);
	resid_get_stats(run->r, &run->out->stats);
	oracle_kernel_tally(run->s, &run->out->stats,
			    fault_seam_fired(run->fs, FP_CONT_EAGAIN));
	resid_close(run->r);
	run->r = NULL;
}

/* Chunk i has 4 - (i + seed) % 4 pages, the last cut 1..4095 bytes short
 * (a separate generator: the decision stream stays the schedule's).
 * Returns the largest chunk, the unit of the budget. */
static uint64_t unequal_sim_table(struct run *run, struct resid_config *c)
{
	uint32_t n = run->p->sim->chunks < MAX_CHUNKS ? run->p->sim->chunks :
							MAX_CHUNKS;
	uint64_t off = 0, rng = run->seed;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t len = SIM_CHUNK - (i + run->seed) % 4 * RESID_PAGE;

		if (i + 1 == n)
			len -= 1 + rng_below(&rng, RESID_PAGE - 1);
		run->table[i] = (struct resid_chunk_spec){ off, len };
		off += len;
	}
	c->region_len = off;
	c->chunk_size = 0;
	c->table = run->table;
	c->table_len = n;
	return unequal_largest(run->table, n);
}

static void configure(struct run *run, const struct sim_config *sc)
{
	const struct sim_sizing *p = run->p->sim;
	struct resid_config *c = &run->cfg;

	resid_config_init(c);
	c->region_len = (uint64_t)p->chunks * SIM_CHUNK;
	c->chunk_size = SIM_CHUNK;
	c->budget_bytes = (uint64_t)p->budget_chunks *
			  (run->unequal ? unequal_sim_table(run, c) :
					  SIM_CHUNK);
	c->seed = sc->seed;
	c->policy = (enum resid_policy)(sc->seed % 3);
	c->fetch_workers = p->workers;
	c->prefetch_depth = p->prefetch;
	c->backing = RESID_BACKING_SYNTHETIC;
	c->fetching_timeout_ms = 2000;
	/* Every other policy cycle maps a chunk page by page as it is read. */
	c->fetch_piece = (sc->seed / 3) % 2 ? RESID_PAGE : 0;
	/* Every other pair of those runs on the huge tmpfs (SIM_FOLIO, the
	 * size of a chunk): equal chunks take huge folios, the last one
	 * ending unaligned so that it holds a tail up to its folio's end;
	 * an unequal table only where each of its chunks starts on a folio
	 * (else 4 KiB pages, I-9). */
	if ((sc->seed / 6) % 2) {
		c->huge_dir = SIM_HUGE_DIR;
		if (!run->unequal)
			c->region_len -= RESID_PAGE + 123;
	}
	/* Every other pair of huge cycles, the declared policy drops what
	 * the application announces consumed (overlap_evict). */
	c->overlap_evict = c->policy == RESID_POLICY_DECLARED &&
			   (sc->seed / 12) % 2;
	resid_harness_init(&run->h);
	run->h.eager_reconcile = 1;
	run->h.demand_retries = 8;
	run->h.seam = fault_seam_ops(run->fs);
	c->harness = &run->h;
}

uint32_t simprog_can_fire(const struct scenario *p)
{
	return p->sim->pattern >= READ_SELF_DEADLOCK ? 0 : FAULT_UNTRACED;
}

int simprog_faults(const struct scenario *p, const struct fault_plan *user,
		   struct fault_plan *out, char *err, size_t n)
{
	struct fault_plan u = { 0 };

	if (user)
		u = *user; /* out may be user */
	memset(out, 0, sizeof(*out));
	if (p->sim->faults &&
	    fault_plan_add(out, p->id, p->sim->faults, err, n) < 0)
		return -1;
	for (int f = 0; f < FP_COUNT; f++) {
		if (u.on & 1u << f) {
			out->rule[f] = u.rule[f];
			out->on |= 1u << f;
		}
	}
	out->all = u.all;
	out->swarm = u.swarm;
	return fault_plan_fit(out, simprog_can_fire(p), p->id, err, n);
}

/* The fault seam's draws come from the run's one decision stream. */
static uint64_t draw(void *s)
{
	return sim_draw(s);
}

void simprog_run(const struct scenario *p, const struct sim_config *sc,
		 uint32_t ops, int unequal, const struct fault_plan *faults,
		 struct sim_outcome *out)
{
	struct sim_config c = *sc;
	struct run run = { .p = p,
			   .ops = ops ? ops : p->sim->ops,
			   .seed = sc->seed,
			   .unequal = unequal,
			   .out = out };
	const uint16_t *sched;

	memset(out, 0, sizeof(*out));
	c.stat_lag_bytes = p->sim->stat_lag;
	/* A punch inside a large folio (which the pager must never make)
	 * frees nothing in half the runs, splits it in the other half. */
	c.split_fails = (sc->seed / 12) % 2;
	c.spin_limit_ms = p->sim->spin_ms;
	run.s = sim_create(&c);
	if (run.s)
		run.fs = fault_seam_new(sim_seam(run.s), faults, sc->seed, draw,
					run.s);
	if (!run.fs) {
		sim_destroy(run.s);
		out->verdict = SIM_FAILED;
		snprintf(out->why, sizeof(out->why),
			 "out of memory for the "
			 "simulation");
		return;
	}
	configure(&run, &c);
	oracle_invariants_watch(run.s);
	out->verdict = sim_run(run.s, main_thread, &run);
	oracle_invariants_stop();
	snprintf(out->why, sizeof(out->why), "%s", sim_why(run.s));
	out->steps = sim_steps(run.s);
	out->preemptions = sim_preemptions(run.s);
	out->log_hash = sim_log_hash(run.s);
	out->lock_hash = sim_lock_order_hash(run.s);
	sched = sim_schedule(run.s, &out->nschedule);
	out->schedule_whole = sim_schedule_whole(run.s);
	const uint64_t *masks = sim_runnable_masks(run.s, &out->nschedule);

	out->schedule = malloc(out->nschedule * sizeof(*sched) + 1);
	out->masks = malloc(out->nschedule * sizeof(*masks) + 1);
	if (out->schedule && out->masks) {
		memcpy(out->schedule, sched, out->nschedule * sizeof(*sched));
		memcpy(out->masks, masks, out->nschedule * sizeof(*masks));
	} else {
		out->nschedule = 0;
	}
	fault_seam_fired_all(run.fs, out->fired);
	out->fired_complete = fault_seam_fired_plan(run.fs, &out->fired_plan) ==
			      0;
	/* A run that ended early (deadlock, lost wakeup) never closed its
	 * region: the simulated kernel goes, the pager's heap blocks of that
	 * run are left (a few KiB per failing schedule). */
	fault_seam_free(run.fs);
	sim_destroy(run.s);
}

void sim_outcome_free(struct sim_outcome *o)
{
	free(o->schedule);
	free(o->masks);
	o->schedule = NULL;
	o->masks = NULL;
	o->nschedule = 0;
}
