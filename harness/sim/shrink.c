/* Shrinking a failing schedule (SPEC §4): fewer operations, then the run
 * as its deviations from the DFS default with the faults that fired named
 * by their calls, then without each deviation and each fault it does not
 * need, while it still fails the same way with no more preemptions. */
#include <stdlib.h>
#include <string.h>

#include "explore.h"

/* Simulated runs a shrink may spend (a run is well under a millisecond). */
#define SHRINK_RUNS 20000

/* The same failure: same verdict and, for an oracle, the same oracle (the
 * reason up to its first colon, e.g. "I-4 (...)"); for a crash, the same
 * signal ("SIGFPE (...)"). */
static int same_failure(const struct sim_outcome *a, const struct sim_outcome *b)
{
	const char *cut = a->verdict == SIM_CRASH ? "(" : ":";

	if (a->verdict != b->verdict)
		return 0;
	if (a->verdict != SIM_FAILED && a->verdict != SIM_CRASH)
		return 1;
	size_t la = strcspn(a->why, cut), lb = strcspn(b->why, cut);

	return la == lb && !strncmp(a->why, b->why, la);
}

/* A schedule as its deviations from the DFS default (the running thread
 * goes on while it can, else the lowest id): the steps where another
 * thread was chosen. Shrinking removes deviations. */
struct deviation {
	size_t step;
	uint16_t thread;
};

static size_t deviations_of(const struct sim_outcome *o, struct deviation *d)
{
	size_t n = 0;

	for (size_t i = 1; i < o->nschedule; i++) {
		uint64_t m = o->masks[i];
		uint16_t prev = o->schedule[i - 1], def;

		def = prev < 64 && (m >> prev & 1) ? prev :
			(uint16_t)(m ? __builtin_ctzll(m) : prev);
		if (o->schedule[i] != def)
			d[n++] = (struct deviation){ i, o->schedule[i] };
	}
	return n;
}

/* Runs rp (a DFS replay) with deviations d[0..n), each applied at its step
 * of the run the earlier ones made; rp's schedule becomes the forced
 * prefix. out is the final run. */
static void run_deviations(struct replay *rp, const struct deviation *d,
			   size_t n, struct sim_outcome *out)
{
	free(rp->schedule);
	rp->schedule = NULL;
	rp->nschedule = 0;
	replay_run(rp, out);
	for (size_t k = 0; k < n; k++) {
		size_t at = d[k].step < out->nschedule ? d[k].step :
			out->nschedule;
		uint16_t *pre = malloc((at + 1) * sizeof(*pre));

		if (!pre)
			return;
		memcpy(pre, out->schedule, at * sizeof(*pre));
		pre[at] = d[k].thread;
		free(rp->schedule);
		rp->schedule = pre;
		rp->nschedule = at + 1;
		sim_outcome_free(out);
		replay_run(rp, out);
	}
}

/* Tries best without each window of 1, 2 or 3 neighbouring deviations
 * (some only go together: a preemption and the switch back), latest
 * first; keeps a removal while the run fails the same way with no more
 * preemptions. Returns whether one was removed. */
static int drop_deviations(struct replay *best, struct deviation *d,
			   size_t *n, struct sim_outcome *out, int *runs)
{
	struct deviation *cand = malloc((*n + 1) * sizeof(*cand));
	int dropped = 0;

	for (size_t w = 1; cand && w <= 3 && w <= *n; w++) {
		for (size_t k = *n - w + 1; k-- > 0 && *runs < SHRINK_RUNS;) {
			struct replay t = *best;
			struct sim_outcome o;

			memcpy(cand, d, k * sizeof(*d));
			memcpy(cand + k, d + k + w, (*n - k - w) * sizeof(*d));
			t.schedule = NULL;
			*runs += (int)(*n - w + 1);
			run_deviations(&t, cand, *n - w, &o);
			if (!same_failure(&o, out) ||
			    o.preemptions > out->preemptions) {
				free(t.schedule);
				sim_outcome_free(&o);
				continue;
			}
			*n -= w;
			memcpy(d, cand, *n * sizeof(*d));
			free(best->schedule);
			*best = t;
			sim_outcome_free(out);
			*out = o;
			dropped = 1;
			w = 0; /* start over with single deviations */
			break;
		}
	}
	free(cand);
	return dropped;
}

/* Tries best without each injected fault, latest call first; keeps a
 * removal while the run fails the same way with no more preemptions.
 * Returns whether one was removed. */
static int drop_faults(struct replay *best, const struct deviation *d,
		       size_t n, struct sim_outcome *out, int *runs)
{
	int dropped = 0;

	for (int p = FP_COUNT; p-- > 0;) {
		for (int i = best->faults.rule[p].ncalls;
		     i-- > 0 && *runs < SHRINK_RUNS;) {
			struct replay t = *best;
			struct fault_rule *r = &t.faults.rule[p];
			struct sim_outcome o;

			if (r->prob[0])
				break;
			memmove(&r->calls[i], &r->calls[i + 1],
				(size_t)(r->ncalls - i - 1) * sizeof(r->calls[0]));
			if (!--r->ncalls)
				t.faults.on &= ~(1u << p);
			t.schedule = NULL;
			*runs += (int)n + 1;
			run_deviations(&t, d, n, &o);
			if (!same_failure(&o, out) ||
			    o.preemptions > out->preemptions) {
				free(t.schedule);
				sim_outcome_free(&o);
				continue;
			}
			free(best->schedule);
			*best = t;
			sim_outcome_free(out);
			*out = o;
			dropped = 1;
		}
	}
	return dropped;
}

void replay_shrink(struct replay *rp, struct sim_outcome *out)
{
	int runs = 0;

	if (!rp->schedule) {
		rp->schedule = malloc(out->nschedule * sizeof(*rp->schedule) + 1);
		if (!rp->schedule)
			return;
		memcpy(rp->schedule, out->schedule,
		       out->nschedule * sizeof(*rp->schedule));
		rp->nschedule = out->nschedule;
	}
	/* Fewer operations: halve while the strategy alone still fails. */
	while (rp->ops > 1 && runs++ < SHRINK_RUNS) {
		struct replay t = *rp;
		struct sim_outcome o;

		t.ops = rp->ops / 2;
		t.schedule = NULL;
		t.nschedule = 0;
		replay_run(&t, &o);
		if (!same_failure(&o, out)) {
			sim_outcome_free(&o);
			break;
		}
		/* The strategy alone replays it: no schedule needed. */
		free(rp->schedule);
		*rp = t;
		sim_outcome_free(out);
		*out = o;
	}
	/* The same run as a DFS replay with the faults that fired named by
	 * their calls; then without each deviation and each fault it does
	 * not need, until none can go. */
	struct deviation *d = malloc((out->nschedule + 1) * sizeof(*d));

	if (!d)
		return;
	size_t n = deviations_of(out, d);
	struct replay best = *rp;

	best.strategy = SIM_DFS;
	best.depth = 0;
	best.steps = 0;
	best.schedule = NULL;
	if (out->fired_complete)
		best.faults = out->fired_plan;
	int shrunk = drop_deviations(&best, d, &n, out, &runs);

	while (out->fired_complete && runs < SHRINK_RUNS &&
	       drop_faults(&best, d, n, out, &runs)) {
		shrunk = 1;
		drop_deviations(&best, d, &n, out, &runs);
	}
	free(d);
	/* Unshrunk, the line keeps the strategy and the whole schedule. */
	if (shrunk) {
		free(rp->schedule);
		*rp = best;
	}
	/* Report the run of exactly what the line carries. */
	sim_outcome_free(out);
	replay_run(rp, out);
}
