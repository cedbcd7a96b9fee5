/* Shrinking a failing schedule (design.md §4): fewer operations, then the run
 * as its deviations from the DFS default with the faults that fired named
 * by their calls, then without each deviation and each fault it does not
 * need, while it still fails the same way with no more preemptions. Within
 * a budget of runs, seconds, simulated steps and memory: when it is spent,
 * the best line so far stands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "sim/explore.h"
#include "workload/workload.h"

/* Simulated runs a shrink may spend (a run is well under a millisecond). */
#define SHRINK_RUNS 20000

struct shrinker {
	const struct shrink_budget *b;
	struct shrink_end *end;
	double t0;
	uint64_t rss0;
};

/* The process's resident memory in MiB, from /proc/self/statm; 0 when it
 * cannot be read. */
static uint64_t rss_mb(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%*u %llu", &pages) != 1)
		pages = 0;
	fclose(f);
	return pages * (uint64_t)sysconf(_SC_PAGESIZE) >> 20;
}

/* Whether the budget is spent; the first time, says which part. Asked
 * before every run. */
static int spent(struct shrinker *k)
{
	struct shrink_end *e = k->end;
	uint64_t rss;

	if (e->stopped[0])
		return 1;
	if (e->runs >= SHRINK_RUNS)
		snprintf(e->stopped, sizeof(e->stopped), "%d runs",
			 SHRINK_RUNS);
	else if (mono_now() - k->t0 > k->b->seconds)
		snprintf(e->stopped, sizeof(e->stopped), "%.0f s",
			 k->b->seconds);
	else if (k->b->steps && e->steps >= k->b->steps)
		snprintf(e->stopped, sizeof(e->stopped), "%llu steps",
			 (unsigned long long)k->b->steps);
	else if ((rss = rss_mb()) > k->rss0 + k->b->mb)
		snprintf(e->stopped, sizeof(e->stopped),
			 "%llu MiB of memory "
			 "(%llu MiB resident)",
			 (unsigned long long)k->b->mb, (unsigned long long)rss);
	else
		return 0;
	return 1;
}

/* One run of the shrink: -1, and nothing run, when the budget is spent. */
static int run(struct shrinker *k, const struct replay *rp,
	       struct sim_outcome *out)
{
	if (spent(k))
		return -1;
	k->end->runs++;
	replay_run(rp, out);
	k->end->steps += out->steps;
	return 0;
}

/* The same failure: same verdict and, for an oracle, the same oracle (the
 * reason up to its first colon, e.g. "I-4 (...)"); for a crash, the same
 * signal ("SIGFPE (...)"). */
static int same_failure(const struct sim_outcome *a,
			const struct sim_outcome *b)
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

		def = prev < 64 && (m >> prev & 1) ?
			      prev :
			      (uint16_t)(m ? __builtin_ctzll(m) : prev);
		if (o->schedule[i] != def)
			d[n++] = (struct deviation){ i, o->schedule[i] };
	}
	return n;
}

/* Runs rp (a DFS replay) with deviations d[0..n), each applied at its step
 * of the run the earlier ones made; rp's schedule becomes the forced
 * prefix. out is the final run. -1 (out freed) when the budget ran out
 * before it. */
static int run_deviations(struct shrinker *sk, struct replay *rp,
			  const struct deviation *d, size_t n,
			  struct sim_outcome *out)
{
	free(rp->schedule);
	rp->schedule = NULL;
	rp->nschedule = 0;
	if (run(sk, rp, out) < 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		size_t at = d[k].step < out->nschedule ? d[k].step :
							 out->nschedule;
		uint16_t *pre = malloc((at + 1) * sizeof(*pre));

		if (!pre)
			sim_oom();
		memcpy(pre, out->schedule, at * sizeof(*pre));
		pre[at] = d[k].thread;
		free(rp->schedule);
		rp->schedule = pre;
		rp->nschedule = at + 1;
		sim_outcome_free(out);
		if (run(sk, rp, out) < 0)
			return -1;
	}
	return 0;
}

/* Tries best without each window of 1, 2 or 3 neighbouring deviations
 * (some only go together: a preemption and the switch back), latest
 * first; keeps a removal while the run fails the same way with no more
 * preemptions. Returns whether one was removed. */
static int drop_deviations(struct shrinker *sk, struct replay *best,
			   struct deviation *d, size_t *n,
			   struct sim_outcome *out)
{
	struct deviation *cand = malloc((*n + 1) * sizeof(*cand));
	int dropped = 0;

	for (size_t w = 1; cand && w <= 3 && w <= *n; w++) {
		for (size_t k = *n - w + 1; k-- > 0 && !spent(sk);) {
			struct replay t = *best;
			struct sim_outcome o;

			memcpy(cand, d, k * sizeof(*d));
			memcpy(cand + k, d + k + w, (*n - k - w) * sizeof(*d));
			t.schedule = NULL;
			if (run_deviations(sk, &t, cand, *n - w, &o) < 0) {
				free(t.schedule);
				break;
			}
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
static int drop_faults(struct shrinker *sk, struct replay *best,
		       const struct deviation *d, size_t n,
		       struct sim_outcome *out)
{
	int dropped = 0;

	for (int p = FP_COUNT; p-- > 0;) {
		for (int i = best->faults.rule[p].ncalls;
		     i-- > 0 && !spent(sk);) {
			struct replay t = *best;
			struct fault_rule *r = &t.faults.rule[p];
			struct sim_outcome o;

			if (r->prob[0])
				break;
			memmove(&r->calls[i], &r->calls[i + 1],
				(size_t)(r->ncalls - i - 1) *
					sizeof(r->calls[0]));
			if (!--r->ncalls)
				t.faults.on &= ~(1u << p);
			t.schedule = NULL;
			if (run_deviations(sk, &t, d, n, &o) < 0) {
				free(t.schedule);
				break;
			}
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

void replay_shrink(struct replay *rp, struct sim_outcome *out,
		   const struct shrink_budget *b, struct shrink_end *end)
{
	struct shrinker sk = { b, end, mono_now(), rss_mb() };

	memset(end, 0, sizeof(*end));
	/* Fewer operations: halve while the strategy alone still fails. */
	while (rp->ops > 1) {
		struct replay t = *rp;
		struct sim_outcome o;

		t.ops = rp->ops / 2;
		t.schedule = NULL;
		t.nschedule = 0;
		if (run(&sk, &t, &o) < 0)
			break;
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
	 * not need, until none can go. Deviations are known only for a run
	 * recorded whole. */
	if (!out->schedule_whole || spent(&sk))
		goto done;
	struct deviation *d = malloc((out->nschedule + 1) * sizeof(*d));

	if (!d)
		sim_oom();
	size_t n = deviations_of(out, d);
	struct replay best = *rp;

	best.strategy = SIM_DFS;
	best.depth = 0;
	best.steps = 0;
	best.schedule = NULL;
	if (out->fired_complete)
		best.faults = out->fired_plan;
	int shrunk = drop_deviations(&sk, &best, d, &n, out);

	while (out->fired_complete && drop_faults(&sk, &best, d, n, out)) {
		shrunk = 1;
		drop_deviations(&sk, &best, d, &n, out);
	}
	free(d);
	/* Unshrunk, the line keeps the strategy and its schedule. */
	if (shrunk) {
		free(rp->schedule);
		*rp = best;
	} else {
		free(best.schedule);
	}
done:
	/* Report the run of exactly what the line carries. */
	sim_outcome_free(out);
	replay_run(rp, out);
	end->seconds = mono_now() - sk.t0;
}
