/* `residctl check --sim`: each gate scenario as a campaign of schedules on
 * the simulated kernel, half by random walk and half by PCT (depth 3), with
 * its default faults and the user's. A scenario with no kernel in it (T-5)
 * runs as it is. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "fault/bugs.h"
#include "sim/explore.h"
#include "sim/explore_report.h"
#include "sim/sim_gate.h"
#include "workload/workload.h"

/* Seconds every shrink of one check --sim may spend together: under a
 * pager bug every campaign fails, and a budget each would add up. When it
 * is spent, a campaign's first failure is reported as it was found. */
#define GATE_SHRINK_SECONDS 30.0
static double shrink_spent;

/* Distinct interleavings over both halves of a scenario's campaign. */
struct hashes {
	uint64_t *v;
	size_t n;
};

static void keep_hashes(struct hashes *h, const struct explore_result *r)
{
	uint64_t *g = realloc(h->v, (h->n + r->distinct + 1) * sizeof(*g));

	if (!g) {
		fprintf(stderr, "residctl check: out of memory\n");
		exit(2);
	}
	memcpy(g + h->n, r->hashes, r->distinct * sizeof(*g));
	h->v = g;
	h->n += r->distinct;
}

static uint64_t count_distinct(struct hashes *h)
{
	uint64_t d = distinct_u64(h->v, h->n);

	free(h->v);
	return d;
}

/* What the halves of a row left undone: schedules not run, and why. */
struct undone {
	uint64_t skipped;
	int capped, out_of_time;
};

/* index0: the row's index of this half's schedule 0. */
static void campaign(const struct scenario *p, const struct fault_plan *faults,
		     int unequal, enum sim_strategy st, unsigned depth,
		     uint64_t seed, uint64_t n, uint64_t index0,
		     const struct sim_gate_part *part, struct scen_result *res,
		     uint64_t *dedup_f, uint64_t *dedup_r, struct hashes *h,
		     struct undone *u)
{
	struct explore_row er = { part ? part->row : NULL, index0 };
	struct explore_opts o = { .p = p,
				  .strategy = st,
				  .depth = depth,
				  .seed = seed,
				  .schedules = n,
				  .bugs = bugs_enabled(),
				  .unequal = unequal,
				  .faults = faults,
				  .shrink = shrink_spent < GATE_SHRINK_SECONDS,
				  .budget.seconds = GATE_SHRINK_SECONDS -
						    shrink_spent,
				  .announce = stderr };
	struct explore_result r;

	if (part) {
		o.shard = part->shard;
		o.unit0 = part->unit0 + index0;
		o.deadline = part->deadline;
		/* The cap is the row's: this half gets what the other left. */
		if (part->failures_per_row) {
			if (res->mismatches >= part->failures_per_row) {
				u->skipped += n;
				u->capped = 1;
				return;
			}
			o.max_failures = part->failures_per_row -
					 res->mismatches;
		}
	}
	if (er.row) {
		o.failed = explore_finding;
		o.failed_arg = &er;
	}
	explore(&o, &r);
	shrink_spent += r.shrunk.seconds;
	u->capped |= r.capped;
	u->out_of_time |= r.out_of_time;
	if (r.capped || r.out_of_time)
		u->skipped += n - r.schedules;
	if (er.row)
		explore_row(&er, &o, &r);
	fault_report(faults, r.fired, res);
	res->checks += r.schedules;
	res->mismatches += r.failures;
	*dedup_f += r.dedup_fetching;
	*dedup_r += r.dedup_resident;
	keep_hashes(h, &r);
	coverage_merge(&res->cov, &r.cov);
	if (r.fail.p) {
		char *line = replay_encode(&r.fail);

		scen_fail(res,
			  "%s: %s (%" PRIu64 " preemptions%s); replay: "
			  "residctl replay '%s'",
			  sim_verdict_name(r.outcome.verdict), r.outcome.why,
			  r.outcome.preemptions,
			  !o.shrink           ? ", not shrunk: "
						"the check's shrink budget was spent" :
			  r.shrunk.stopped[0] ? ", shrinking stopped at its "
						"budget" :
						"",
			  line ? line : "?");
		free(line);
	}
	explore_result_free(&r);
}

unsigned sim_gate_legs(const struct scenario *s)
{
	return s->sim && simprog_can_fire(s) ? LEG_UNEQUAL : 0;
}

uint32_t sim_gate_can_fire(const struct scenario *s)
{
	return s->sim ? simprog_can_fire(s) : s->no_seam ? 0 : FAULT_UNTRACED;
}

uint64_t sim_gate_units(const struct scenario *s, uint64_t schedules)
{
	return s->sim ? schedules : 1;
}

/* A scenario with no kernel in it, run as it is: one unit. */
static int run_plain(const struct scenario *s, const struct run_opts *o,
		     const struct sim_gate_part *part, struct scen_result *res)
{
	char line[128];
	int rc;

	if (part && !shard_owns(&part->shard, part->unit0)) {
		snprintf(res->message, sizeof(res->message),
			 "in another "
			 "shard");
		return 0;
	}
	if (part && part->deadline && mono_now() >= part->deadline) {
		scen_unknown(res,
			     "not run: the campaign's time budget ran out");
		return 0;
	}
	rc = s->run(o, res);
	if (part && part->row) {
		row_ran(part->row, 1);
		row_count(part->row, "checks", res->checks);
		row_count(part->row, "mismatches", res->mismatches);
		snprintf(line, sizeof(line),
			 "residctl check --sim %s --seed "
			 "%llu",
			 s->id, (unsigned long long)o->seed);
		if (rc || res->failed || res->mismatches)
			row_finding(part->row, 0, 1, res->message, line);
	}
	return rc;
}

int sim_gate_run(const struct scenario *s, const struct run_opts *o,
		 uint64_t schedules, const struct sim_gate_part *part,
		 struct scen_result *res)
{
	uint64_t df = 0, dr = 0, half = schedules / 2;
	struct hashes h = { 0 };
	struct undone u = { 0 };
	struct fault_plan faults;
	char err[512];

	if (!s->sim)
		return run_plain(s, o, part, res);
	if (simprog_faults(s, o->faults, &faults, err, sizeof(err)) < 0) {
		scen_fail(res, "%s", err);
		return -1;
	}
	int unequal = !!(o->leg & LEG_UNEQUAL);

	campaign(s, &faults, unequal, SIM_RANDOM, 0, o->seed, half, 0, part,
		 res, &df, &dr, &h, &u);
	campaign(s, &faults, unequal, SIM_PCT, 3, o->seed + 1, schedules - half,
		 half, part, res, &df, &dr, &h, &u);
	scen_count(res, "schedules", res->checks);
	scen_count(res, "interleavings", count_distinct(&h));
	scen_count(res, "dedup_fetching", df);
	scen_count(res, "dedup_resident", dr);
	if (u.capped)
		scen_count(res, "stopped_at_failures", res->mismatches);
	/* Schedules the deadline left unrun: a row with no failure is
	 * not judged. */
	if (u.out_of_time && !res->mismatches) {
		scen_unknown(res,
			     "not finished: the campaign's time budget ran "
			     "out after %" PRIu64 " of %" PRIu64 " schedules",
			     res->checks, schedules);
		return 0;
	}
	if (u.out_of_time)
		scen_count(res, "unfinished", u.skipped);
	if (s->sim->needs_dedup && part && part->row) {
		row_require(part->row, "dedup_fetching");
		row_require(part->row, "dedup_resident");
	}
	/* Over a whole campaign only: a shard's few schedules may miss it. */
	if (s->sim->needs_dedup && (!part || !shard_split(&part->shard)) &&
	    !u.skipped && (!df || !dr))
		scen_fail(res,
			  "dedup did not fire in %" PRIu64 " schedules: "
			  "dedup_fetching %" PRIu64 ", dedup_resident %" PRIu64,
			  res->checks, df, dr);
	return 0;
}
