/* Campaigns of schedules over a simulated scenario: one schedule per seed
 * (random walk, PCT) or the bounded exhaustive search (DFS), tallied by
 * verdict and by distinct interleaving; the first failure is shrunk
 * (shrink.c) and its replay line (replay_line.c) replayed to check it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/rng.h"
#include "fault/bugs.h"
#include "sim/explore.h"
#include "workload/workload.h"

void replay_run(const struct replay *rp, struct sim_outcome *out)
{
	struct sim_config c = {
		.seed = rp->seed,
		.strategy = rp->strategy,
		.pct_depth = rp->depth,
		.pct_steps = rp->steps,
		.replay = rp->schedule,
		.nreplay = rp->nschedule,
	};
	unsigned saved = bugs_enabled();
	uint64_t mark[CP_COUNT];

	bugs_enable(rp->bugs);
	coverage_mark(mark);
	simprog_run(rp->p, &c, rp->ops, rp->unequal, &rp->faults, out);
	coverage_since(mark, out->probes);
	bugs_enable(saved);
}
static uint64_t seed_of(uint64_t base, uint64_t i)
{
	uint64_t s = base ^ (i * 0x9e3779b97f4a7c15ull);

	return rng_next(&s);
}

/* Distinct interleavings: an open-addressing set of lock-order hashes. */
struct hashset {
	uint64_t *v;
	size_t cap, n;
};

static void set_add(struct hashset *h, uint64_t x)
{
	if (!x)
		x = 1;
	if ((h->n + 1) * 2 > h->cap) {
		struct hashset g = { calloc(h->cap ? h->cap * 2 : 1024,
					    sizeof(uint64_t)),
				     h->cap ? h->cap * 2 : 1024, 0 };

		if (!g.v)
			return;
		for (size_t i = 0; i < h->cap; i++)
			if (h->v[i])
				set_add(&g, h->v[i]);
		free(h->v);
		*h = g;
	}
	for (size_t i = x % h->cap;; i = (i + 1) % h->cap) {
		if (h->v[i] == x)
			return;
		if (!h->v[i]) {
			h->v[i] = x;
			h->n++;
			return;
		}
	}
}

/* The first failure, the moment it is found, or the best line when a
 * shrink's budget ran out: a campaign that hangs or dies later has said
 * it already. head says which. */
static void announce(const struct explore_opts *o, const char *head,
		     const struct replay *rp, const struct sim_outcome *out,
		     const char *which)
{
	char *line;

	if (!o->announce)
		return;
	line = replay_encode(rp);
	fprintf(o->announce,
		"%s%s%s: %s: %s: %s\n  %s: residctl replay "
		"'%s'\n",
		o->progress ? "\n" : "", o->p->id,
		o->unequal ? " (unequal chunks)" : "", head,
		sim_verdict_name(out->verdict), out->why, which,
		line ? line : "?");
	fflush(o->announce);
	free(line);
}

/* One schedule's bookkeeping, shared by both kinds of campaign. */
static void tally(const struct explore_opts *o, struct explore_result *r,
		  struct hashset *seen, uint64_t i, const struct replay *rp,
		  struct sim_outcome *out)
{
	r->schedules++;
	r->steps += out->steps;
	r->by_verdict[out->verdict]++;
	r->dedup_fetching += out->stats.dedup_fetching;
	r->dedup_resident += out->stats.dedup_resident;
	for (int p = 0; p < FP_COUNT; p++)
		r->fired[p] += out->fired[p];
	coverage_add_run(&r->cov, out->probes);
	set_add(seen, out->lock_hash);
	if (out->verdict != SIM_PASS) {
		r->failures++;
		if (o->failed)
			o->failed(o->failed_arg, i, rp, out);
		if (!r->fail.p) {
			r->fail = *rp;
			r->fail.schedule = NULL;
			if (rp->nschedule) {
				/* DFS's forced prefix; random and PCT need none. */
				size_t sz = rp->nschedule *
					    sizeof(*rp->schedule);

				if (!(r->fail.schedule = malloc(sz)))
					sim_oom();
				memcpy(r->fail.schedule, rp->schedule, sz);
			}
			char head[64];

			snprintf(head, sizeof(head),
				 "failure found after %" PRIu64 " schedules",
				 i + 1);
			announce(o, head, &r->fail, out, "unshrunk");
			r->fail_index = i + 1;
			r->raw_preemptions = out->preemptions;
			r->outcome = *out;
			memset(out, 0, sizeof(*out));
			return;
		}
	}
	sim_outcome_free(out);
}

/* dfs_search's visit: tallies, and says whether the campaign is done. */
struct campaign {
	const struct explore_opts *o;
	struct explore_result *r;
	struct hashset *seen;
};

/* Whether exploring ends before schedule i: the failure cap or the
 * deadline says so (and is noted), or the first failure with --stop. */
static int stop_before(const struct explore_opts *o, struct explore_result *r,
		       uint64_t i)
{
	if (i >= o->schedules || (o->stop_at_failure && r->failures))
		return 1;
	if (o->max_failures && r->failures >= o->max_failures)
		return r->capped = 1;
	if (o->deadline && mono_now() >= o->deadline)
		return r->out_of_time = 1;
	return 0;
}

static int visit(void *arg, const struct replay *rp, struct sim_outcome *out)
{
	struct campaign *c = arg;

	tally(c->o, c->r, c->seen, c->r->schedules, rp, out);
	return stop_before(c->o, c->r, c->r->schedules);
}

/* Random and PCT: schedule i runs with its own seed, k PCT's change
 * points, and a progress line about once a second. */
static void walk(const struct explore_opts *o, struct explore_result *r,
		 struct hashset *seen, uint64_t k, double t0)
{
	double last = t0;

	for (uint64_t i = 0; !stop_before(o, r, i); i++) {
		if (!shard_owns(&o->shard, o->unit0 + i))
			continue;
		struct replay rp = { .p = o->p,
				     .strategy = o->strategy,
				     .depth = o->depth,
				     .steps = k,
				     .seed = seed_of(o->seed, i),
				     .bugs = o->bugs,
				     .ops = o->p->sim->ops,
				     .unequal = o->unequal,
				     .faults = *o->faults };
		struct sim_outcome out;

		replay_run(&rp, &out);
		tally(o, r, seen, i, &rp, &out);
		if (o->progress && mono_now() - last >= 1) {
			last = mono_now();
			fprintf(stderr,
				"\r  %s %" PRIu64 "/%" PRIu64 " schedules, "
				"%" PRIu64 " failures, %zu interleavings   ",
				o->p->id, i + 1, o->schedules, r->failures,
				seen->n);
		}
	}
}

/* The failure kept, shrunk within its budget (and the campaign's
 * deadline); announced when the budget stopped it. */
static void shrink_failure(const struct explore_opts *o,
			   struct explore_result *r)
{
	struct shrink_budget b = o->budget;

	if (!b.seconds)
		b.seconds = SHRINK_SECONDS;
	if (!b.mb)
		b.mb = SHRINK_MB;
	if (!b.steps)
		b.steps = SHRINK_STEPS;
	if (o->deadline && o->deadline - mono_now() < b.seconds)
		b.seconds = o->deadline > mono_now() ?
				    o->deadline - mono_now() :
				    1e-9;
	replay_shrink(&r->fail, &r->outcome, &b, &r->shrunk);
	if (r->shrunk.stopped[0]) {
		char head[160];

		snprintf(head, sizeof(head),
			 "shrinking stopped at its "
			 "budget of %s after %u runs",
			 r->shrunk.stopped, r->shrunk.runs);
		announce(o, head, &r->fail, &r->outcome, "best so far");
	}
}

/* Self-check: the failure's line replays to the same event log. */
static void check_replay(struct explore_result *r)
{
	struct sim_outcome a, b;

	replay_run(&r->fail, &a);
	replay_run(&r->fail, &b);
	r->replay_matches = a.log_hash == b.log_hash &&
			    a.log_hash == r->outcome.log_hash;
	sim_outcome_free(&a);
	sim_outcome_free(&b);
}

uint64_t explore(const struct explore_opts *opts, struct explore_result *r)
{
	struct explore_opts with = *opts, *o = &with;
	struct hashset seen = { 0 };
	double t0 = mono_now();
	char err[512];

	memset(r, 0, sizeof(*r));
	if (o->faults) {
		r->faults = *o->faults;
	} else if (simprog_faults(o->p, NULL, &r->faults, err, sizeof(err)) <
		   0) {
		/* A scenario's own defaults must fit it: a unit test says so. */
		fprintf(stderr, "residctl: %s\n", err);
		abort();
	}
	o->faults = &r->faults;
	/* PCT's change points must fall within a run. */
	uint64_t k = o->strategy == SIM_PCT ? pct_calibrate(o) : 0;

	if (o->strategy == SIM_DFS) {
		struct campaign c = { o, r, &seen };

		dfs_search(o, visit, &c);
	} else {
		walk(o, r, &seen, k, t0);
	}
	if (o->progress && mono_now() - t0 >= 1)
		fputc('\n', stderr);
	/* The set, packed: a sharded campaign's union is counted by merge. */
	r->distinct = 0;
	for (size_t j = 0; j < seen.cap; j++)
		if (seen.v[j])
			seen.v[r->distinct++] = seen.v[j];
	r->hashes = seen.v;
	if (r->fail.p && o->shrink)
		shrink_failure(o, r);
	if (r->fail.p)
		check_replay(r);
	r->seconds = mono_now() - t0;
	return r->failures;
}

void explore_print(FILE *f, const struct explore_opts *o,
		   const struct explore_result *r)
{
	fprintf(f,
		"explore %s%s: %" PRIu64 " schedules, %" PRIu64
		" distinct interleavings, %" PRIu64 " failures, %.2f s (%.0f "
		"schedules/s, %.0f steps each)\n",
		o->p->id, o->unequal ? " (unequal chunks)" : "", r->schedules,
		r->distinct, r->failures, r->seconds,
		r->seconds > 0 ? (double)r->schedules / r->seconds : 0,
		r->schedules ? (double)r->steps / (double)r->schedules : 0);
	for (int v = SIM_FAILED; v < SIM_NVERDICTS; v++)
		if (r->by_verdict[v])
			fprintf(f, "  %-12s %" PRIu64 "\n",
				sim_verdict_name((enum sim_verdict)v),
				r->by_verdict[v]);
	coverage_line(f, "  ", &r->cov);
	if (r->capped)
		fprintf(f,
			"  stopped after %" PRIu64 " failures (--max-failures)"
			"\n",
			r->failures);
	if (r->out_of_time)
		fprintf(f,
			"  stopped at its time budget (--seconds): %" PRIu64
			" of %" PRIu64 " schedules run\n",
			r->schedules, o->schedules);
	if (!r->fail.p)
		return;
	char *line = replay_encode(&r->fail);

	fprintf(f, "first failure after %" PRIu64 " schedules: %s: %s\n",
		r->fail_index, sim_verdict_name(r->outcome.verdict),
		r->outcome.why);
	if (r->shrunk.stopped[0])
		fprintf(f,
			"  shrinking stopped at its budget of %s after %u "
			"runs: the line is the best so far\n",
			r->shrunk.stopped, r->shrunk.runs);
	fprintf(f,
		"  preemptions %" PRIu64 " -> %" PRIu64 " after shrinking, "
		"%" PRIu64 " steps, event log %016" PRIx64 ", replayed twice: "
		"%s\n",
		r->raw_preemptions, r->outcome.preemptions, r->outcome.steps,
		r->outcome.log_hash, r->replay_matches ? "same" : "DIFFERENT");
	fprintf(f, "  replay: residctl replay '%s'\n", line ? line : "?");
	free(line);
}

void explore_result_free(struct explore_result *r)
{
	free(r->hashes);
	replay_free(&r->fail);
	sim_outcome_free(&r->outcome);
}
