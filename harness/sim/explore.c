#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bugs.h"
#include "explore.h"
#include "rev.h"
#include "rng.h"

/* Simulated runs a shrink may spend (a run is well under a millisecond). */
#define SHRINK_RUNS 20000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int parse_strategy(const char *s, enum sim_strategy *st, unsigned *depth)
{
	if (!strcmp(s, "random")) {
		*st = SIM_RANDOM;
		*depth = 0;
		return 0;
	}
	/* pct:D (depth 1..9) or dfs:P (preemption bound 0..9) */
	if (strlen(s) != 5 || s[3] != ':' || s[4] < '0' || s[4] > '9')
		return -1;
	if (!strncmp(s, "pct", 3) && s[4] != '0')
		*st = SIM_PCT;
	else if (!strncmp(s, "dfs", 3))
		*st = SIM_DFS;
	else
		return -1;
	*depth = (unsigned)(s[4] - '0');
	return 0;
}

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

	bugs_enable(rp->bugs);
	simprog_run(rp->p, &c, rp->ops, &rp->faults, out);
	bugs_enable(saved);
}

/* The same failure: same verdict and, for an oracle, the same oracle (the
 * reason up to its first colon, e.g. "I-4 (...)"). */
static int same_failure(const struct sim_outcome *a, const struct sim_outcome *b)
{
	if (a->verdict != b->verdict)
		return 0;
	if (a->verdict != SIM_FAILED)
		return 1;
	size_t la = strcspn(a->why, ":"), lb = strcspn(b->why, ":");

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
 * preemptions. */
static void drop_deviations(struct replay *best, struct deviation *d,
			    size_t *n, struct sim_outcome *out, int *runs)
{
	struct deviation *cand = malloc((*n + 1) * sizeof(*cand));

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
			w = 0; /* start over with single deviations */
			break;
		}
	}
	free(cand);
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
	drop_deviations(&best, d, &n, out, &runs);
	while (out->fired_complete && runs < SHRINK_RUNS &&
	       drop_faults(&best, d, n, out, &runs))
		drop_deviations(&best, d, &n, out, &runs);
	free(d);
	if (best.schedule) {
		free(rp->schedule);
		*rp = best;
	}
	/* Report the run of exactly what the line carries. */
	sim_outcome_free(out);
	replay_run(rp, out);
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

/* One schedule's bookkeeping, shared by both kinds of campaign. */
static void tally(struct explore_result *r, struct hashset *seen, uint64_t i,
		  const struct replay *rp, struct sim_outcome *out)
{
	r->schedules++;
	r->steps += out->steps;
	r->by_verdict[out->verdict]++;
	r->dedup_fetching += out->stats.dedup_fetching;
	r->dedup_resident += out->stats.dedup_resident;
	for (int p = 0; p < FP_COUNT; p++)
		r->fired[p] += out->fired[p];
	set_add(seen, out->lock_hash);
	if (out->verdict != SIM_PASS) {
		r->failures++;
		if (!r->fail.p) {
			r->fail = *rp;
			r->fail.schedule = NULL;
			r->fail.nschedule = 0;
			r->fail_index = i + 1;
			r->raw_preemptions = out->preemptions;
			r->outcome = *out;
			memset(out, 0, sizeof(*out));
			return;
		}
	}
	sim_outcome_free(out);
}

struct prefix {
	uint16_t *ids;
	size_t n;
};

/* Pushes schedule[0..i) + t. */
static int push(struct prefix **st, size_t *n, size_t *cap,
		const uint16_t *sched, size_t i, uint16_t t)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct prefix *g = realloc(*st, c * sizeof(*g));

		if (!g)
			return -1;
		*st = g;
		*cap = c;
	}
	uint16_t *ids = malloc((i + 1) * sizeof(*ids));

	if (!ids)
		return -1;
	memcpy(ids, sched, i * sizeof(*ids));
	ids[i] = t;
	(*st)[(*n)++] = (struct prefix){ ids, i + 1 };
	return 0;
}

/* The bounded exhaustive search: every schedule with at most `depth`
 * preemptions, depth first, each explored once. A run follows its forced
 * prefix, then lets the running thread go on; every other thread runnable
 * at a later step is a branch, kept when it costs no more preemptions than
 * the bound. */
static void explore_dfs(const struct explore_opts *o, struct explore_result *r,
			struct hashset *seen)
{
	struct prefix *st = NULL;
	size_t n = 0, cap = 0;

	st = malloc(256 * sizeof(*st));
	if (!st)
		return;
	cap = 256;
	st[n++] = (struct prefix){ NULL, 0 };
	while (n && r->schedules < o->schedules &&
	       !(o->stop_at_failure && r->failures)) {
		struct prefix pf = st[--n];
		struct replay rp = { .p = o->p, .strategy = SIM_DFS,
				     .depth = o->depth, .seed = o->seed,
				     .bugs = o->bugs, .ops = o->p->ops,
				     .faults = *o->faults, .schedule = pf.ids,
				     .nschedule = pf.n };
		struct sim_outcome out;
		unsigned pre = 0;

		replay_run(&rp, &out);
		for (size_t i = 1; i < out.nschedule; i++) {
			uint16_t prev = out.schedule[i - 1];
			int prev_runs = prev < 64 && (out.masks[i] >> prev & 1);

			if (i >= pf.n) {
				for (uint16_t t = 0; t < 64; t++) {
					if (!(out.masks[i] >> t & 1) ||
					    t == out.schedule[i])
						continue;
					if (pre + (prev_runs && t != prev) >
					    o->depth)
						continue;
					push(&st, &n, &cap, out.schedule, i, t);
				}
			}
			pre += prev_runs && out.schedule[i] != prev;
		}
		tally(r, seen, r->schedules, &rp, &out);
		free(pf.ids);
	}
	while (n)
		free(st[--n].ids);
	free(st);
}

uint64_t explore(const struct explore_opts *opts, struct explore_result *r)
{
	struct explore_opts with = *opts, *o = &with;
	struct hashset seen = { 0 };
	double t0 = now_s(), last = t0;
	char err[512];

	memset(r, 0, sizeof(*r));
	if (o->faults) {
		r->faults = *o->faults;
	} else if (simprog_faults(o->p, NULL, &r->faults, err,
				  sizeof(err)) < 0) {
		/* A scenario's own defaults must fit it: a unit test says so. */
		fprintf(stderr, "residctl: %s\n", err);
		abort();
	}
	o->faults = &r->faults;
	/* PCT's change points must fall within a run: k is the length of a
	 * random-walk run of the scenario from the campaign's seed. */
	uint64_t k = 0;

	if (o->strategy == SIM_PCT) {
		struct replay cal = { .p = o->p, .strategy = SIM_RANDOM,
				      .seed = o->seed, .bugs = o->bugs,
				      .ops = o->p->ops, .faults = *o->faults };
		struct sim_outcome out;

		replay_run(&cal, &out);
		k = out.steps ? out.steps : 1;
		sim_outcome_free(&out);
	}
	for (uint64_t i = 0; o->strategy != SIM_DFS && i < o->schedules &&
	     !(o->stop_at_failure && r->failures); i++) {
		struct replay rp = { .p = o->p, .strategy = o->strategy,
				     .depth = o->depth, .steps = k,
				     .seed = seed_of(o->seed, i),
				     .bugs = o->bugs, .ops = o->p->ops,
				     .faults = *o->faults };
		struct sim_outcome out;

		replay_run(&rp, &out);
		tally(r, &seen, i, &rp, &out);
		if (o->progress && now_s() - last >= 1) {
			last = now_s();
			fprintf(stderr, "\r  %s %" PRIu64 "/%" PRIu64 " schedules, "
				"%" PRIu64 " failures, %zu interleavings   ",
				o->p->id, i + 1, o->schedules, r->failures,
				seen.n);
		}
	}
	if (o->strategy == SIM_DFS)
		explore_dfs(o, r, &seen);
	if (o->progress && now_s() - t0 >= 1)
		fputc('\n', stderr);
	r->distinct = seen.n;
	free(seen.v);
	if (r->fail.p) {
		if (o->shrink)
			replay_shrink(&r->fail, &r->outcome);
		else if (!r->fail.schedule) {
			r->fail.schedule = r->outcome.schedule;
			r->fail.nschedule = r->outcome.nschedule;
			r->outcome.schedule = NULL;
		}
		/* Self-check: the line replays to the same event log. */
		struct sim_outcome a, b;

		replay_run(&r->fail, &a);
		replay_run(&r->fail, &b);
		r->replay_matches = a.log_hash == b.log_hash &&
			a.log_hash == r->outcome.log_hash;
		sim_outcome_free(&a);
		sim_outcome_free(&b);
	}
	r->seconds = now_s() - t0;
	return r->failures;
}

void explore_print(FILE *f, const struct explore_opts *o,
		   const struct explore_result *r)
{
	fprintf(f, "explore %s: %" PRIu64 " schedules, %" PRIu64
		" distinct interleavings, %" PRIu64 " failures, %.2f s (%.0f "
		"schedules/s, %.0f steps each)\n", o->p->id, r->schedules,
		r->distinct, r->failures, r->seconds,
		r->seconds > 0 ? (double)r->schedules / r->seconds : 0,
		r->schedules ? (double)r->steps / (double)r->schedules : 0);
	for (int v = SIM_FAILED; v <= SIM_STEP_LIMIT; v++)
		if (r->by_verdict[v])
			fprintf(f, "  %-12s %" PRIu64 "\n",
				sim_verdict_name((enum sim_verdict)v),
				r->by_verdict[v]);
	if (!r->fail.p)
		return;
	char *line = replay_encode(&r->fail);

	fprintf(f, "first failure after %" PRIu64 " schedules: %s: %s\n",
		r->fail_index, sim_verdict_name(r->outcome.verdict),
		r->outcome.why);
	fprintf(f, "  preemptions %" PRIu64 " -> %" PRIu64 " after shrinking, "
		"%" PRIu64 " steps, event log %016" PRIx64 ", replayed twice: "
		"%s\n", r->raw_preemptions, r->outcome.preemptions,
		r->outcome.steps, r->outcome.log_hash,
		r->replay_matches ? "same" : "DIFFERENT");
	fprintf(f, "  replay: residctl replay '%s'\n", line ? line : "?");
	free(line);
}

void explore_result_free(struct explore_result *r)
{
	replay_free(&r->fail);
	sim_outcome_free(&r->outcome);
}

void replay_free(struct replay *rp)
{
	free(rp->schedule);
	rp->schedule = NULL;
	rp->nschedule = 0;
}

/* The line's fault field: a spec list with ':' for '/', or "-". */
static int faults_encode(const struct fault_plan *f, char *buf, size_t n)
{
	if (fault_plan_format(f, buf, n) < 0)
		return -1;
	if (!buf[0])
		snprintf(buf, n, "-");
	for (char *c = buf; *c; c++)
		if (*c == '/')
			*c = ':';
	return 0;
}

#define FAULTS_MAX 8192

char *replay_encode(const struct replay *rp)
{
	size_t cap = 128 + FAULTS_MAX + rp->nschedule * 12, len;
	char *s = malloc(cap), *faults = malloc(FAULTS_MAX);

	if (!s || !faults || faults_encode(&rp->faults, faults, FAULTS_MAX)) {
		free(s);
		free(faults);
		return NULL;
	}
	char strat[16], bugs[24];

	if (rp->strategy == SIM_PCT)
		snprintf(strat, sizeof(strat), "pct%u-k%" PRIu64, rp->depth,
			 rp->steps);
	else if (rp->strategy == SIM_DFS)
		snprintf(strat, sizeof(strat), "dfs%u", rp->depth);
	else
		snprintf(strat, sizeof(strat), "random");
	bugs_format(rp->bugs, bugs, sizeof(bugs));
	len = (size_t)snprintf(s, cap, "rc3/%s/%s/%s/%" PRIu64 "/%s/%u/%s/",
			       RESID_REV, rp->p->id, strat, rp->seed, bugs,
			       rp->ops, faults);
	free(faults);
	/* Run-length: "thread*count" or "thread", dot-separated. */
	for (size_t i = 0; i < rp->nschedule;) {
		size_t j = i;

		while (j < rp->nschedule && rp->schedule[j] == rp->schedule[i])
			j++;
		len += (size_t)snprintf(s + len, cap - len, "%s%u", i ? "." : "",
					rp->schedule[i]);
		if (j - i > 1)
			len += (size_t)snprintf(s + len, cap - len, "*%zu", j - i);
		i = j;
	}
	return s;
}

static int bad(char *err, size_t n, const char *what)
{
	snprintf(err, n, "malformed replay line: %s; paste the line residctl "
		 "printed, in quotes", what);
	return -1;
}

int replay_decode(const char *line, struct replay *rp, char *err, size_t n)
{
	char rev[64], id[64], strat[32], bugs[32], why[400];
	char faults[FAULTS_MAX];
	unsigned long long seed;
	unsigned ops;
	int used = 0;

	memset(rp, 0, sizeof(*rp));
	if (sscanf(line, "rc3/%63[^/]/%63[^/]/%31[^/]/%llu/%31[^/]/%u/%8191[^/]/%n",
		   rev, id, strat, &seed, bugs, &ops, faults, &used) != 7 ||
	    !used)
		return bad(err, n, "expected rc3/REV/SCENARIO/STRATEGY/SEED/"
			   "BUGS/OPS/FAULTS/SCHEDULE");
	if (bugs_parse(bugs, &rp->bugs, why, sizeof(why)) < 0)
		return bad(err, n, why);
	for (char *c = faults; *c; c++)
		if (*c == ':')
			*c = '/';
	if (strcmp(faults, "-") &&
	    fault_plan_add(&rp->faults, "faults", faults, why,
			   sizeof(why)) < 0)
		return bad(err, n, why);
	if (strcmp(rev, RESID_REV)) {
		snprintf(err, n, "replay line is from build %s, this is %s: "
			 "check out %s and rebuild", rev, RESID_REV, rev);
		return -1;
	}
	rp->p = simprog_find(id);
	if (!rp->p)
		return bad(err, n, "unknown scenario");
	if (fault_plan_fit(&rp->faults, simprog_can_fire(rp->p), rp->p->id,
			   why, sizeof(why)) < 0)
		return bad(err, n, why);
	if (!strcmp(strat, "random")) {
		rp->strategy = SIM_RANDOM;
	} else if (!strncmp(strat, "dfs", 3) && strat[3] >= '0' &&
		   strat[3] <= '9' && !strat[4]) {
		rp->strategy = SIM_DFS;
		rp->depth = (unsigned)(strat[3] - '0');
	} else if (!strncmp(strat, "pct", 3) && strat[3] >= '1' &&
		   strat[3] <= '9' && !strncmp(strat + 4, "-k", 2) &&
		   strat[6] >= '1' && strat[6] <= '9') {
		char *end;

		rp->strategy = SIM_PCT;
		rp->depth = (unsigned)(strat[3] - '0');
		rp->steps = strtoull(strat + 6, &end, 10);
		if (*end)
			return bad(err, n, "bad PCT step count");
	} else {
		return bad(err, n, "unknown strategy");
	}
	if (!ops || ops > 1000000)
		return bad(err, n, "operation count out of range");
	rp->seed = seed;
	rp->ops = ops;
	const char *p = line + used;
	size_t cap = 0;

	while (*p) {
		char *end;
		unsigned long t = strtoul(p, &end, 10), count = 1;

		if (end == p || t > 65535)
			return replay_free(rp), bad(err, n, "bad thread id");
		if (*end == '*') {
			p = end + 1;
			count = strtoul(p, &end, 10);
			if (end == p || !count || count > 10000000)
				return replay_free(rp), bad(err, n, "bad count");
		}
		if (rp->nschedule + count > cap) {
			cap = (rp->nschedule + count) * 2;
			uint16_t *g = realloc(rp->schedule, cap * sizeof(*g));

			if (!g)
				return replay_free(rp), bad(err, n, "too long");
			rp->schedule = g;
		}
		while (count--)
			rp->schedule[rp->nschedule++] = (uint16_t)t;
		if (*end == '.')
			end++;
		else if (*end)
			return replay_free(rp), bad(err, n, "bad separator");
		p = end;
	}
	return 0;
}
