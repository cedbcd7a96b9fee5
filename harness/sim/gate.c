/* `residctl check --sim`: each gate scenario as a campaign of schedules on
 * the simulated kernel, half by random walk and half by PCT (depth 3), with
 * its default faults and the user's. A scenario with no kernel in it (T-5)
 * runs as it is. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bugs.h"
#include "explore.h"
#include "sim_gate.h"

static void campaign(const struct scenario *p, const struct fault_plan *faults,
		     int unequal, enum sim_strategy st, unsigned depth,
		     uint64_t seed, uint64_t n, struct scen_result *res,
		     uint64_t *dedup_f, uint64_t *dedup_r, uint64_t *distinct)
{
	struct explore_opts o = { .p = p, .strategy = st, .depth = depth,
				  .seed = seed, .schedules = n,
				  .bugs = bugs_enabled(), .unequal = unequal,
				  .faults = faults, .shrink = 1 };
	struct explore_result r;

	explore(&o, &r);
	fault_report(faults, r.fired, res);
	res->checks += r.schedules;
	res->mismatches += r.failures;
	*dedup_f += r.dedup_fetching;
	*dedup_r += r.dedup_resident;
	*distinct += r.distinct;
	coverage_merge(&res->cov, &r.cov);
	if (r.fail.p) {
		char *line = replay_encode(&r.fail);

		scen_fail(res, "%s: %s (%" PRIu64 " preemptions); replay: "
			  "residctl replay '%s'",
			  sim_verdict_name(r.outcome.verdict), r.outcome.why,
			  r.outcome.preemptions, line ? line : "?");
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
	return s->sim ? simprog_can_fire(s) : s->no_seam ? 0 : FAULT_ALL;
}

int sim_gate_run(const struct scenario *s, const struct run_opts *o,
		 uint64_t schedules, struct scen_result *res)
{
	uint64_t df = 0, dr = 0, distinct = 0;
	struct fault_plan faults;
	char err[512];

	if (!s->sim)
		return s->run(o, res);
	if (simprog_faults(s, o->faults, &faults, err, sizeof(err)) < 0) {
		scen_fail(res, "%s", err);
		return -1;
	}
	int unequal = !!(o->leg & LEG_UNEQUAL);

	campaign(s, &faults, unequal, SIM_RANDOM, 0, o->seed, schedules / 2,
		 res, &df, &dr, &distinct);
	campaign(s, &faults, unequal, SIM_PCT, 3, o->seed + 1,
		 schedules - schedules / 2, res, &df, &dr, &distinct);
	scen_count(res, "schedules", res->checks);
	scen_count(res, "interleavings", distinct);
	scen_count(res, "dedup_fetching", df);
	scen_count(res, "dedup_resident", dr);
	if (s->sim->needs_dedup && (!df || !dr))
		scen_fail(res, "dedup did not fire in %" PRIu64 " schedules: "
			  "dedup_fetching %" PRIu64 ", dedup_resident %" PRIu64,
			  res->checks, df, dr);
	return 0;
}
