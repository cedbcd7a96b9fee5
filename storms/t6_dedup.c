/* T-6 dedup fires: T-3's storm, and both kinds of fault dedup counted
 * (a fault on a chunk being fetched, a fault on one already resident).
 * Dedup needs two threads faulting on one chunk within a fetch; an emulated
 * or crowded CPU runs the threads 2 to 40 times slower (design.md §10), so a
 * 3 s storm could end before the first. The threads read on past the
 * profile's duration until both counters are > 0, for at most GRACE_S. */
#include <inttypes.h>

#include "storm_scenario.h"

#define GRACE_S 120

static int t6_run(const struct run_opts *o, struct scen_result *res)
{
	struct storm_config c;
	struct storm_result sr;

	storm_scenario_config(o, 6, &c);
	c.dedup_grace_seconds = GRACE_S;
	if (storm_scenario_run(&c, res, &sr) < 0)
		return -1;
	if (!sr.stats.dedup_fetching || !sr.stats.dedup_resident)
		scen_fail(res,
			  "dedup did not fire: dedup_fetching %" PRIu64
			  ", dedup_resident %" PRIu64,
			  sr.stats.dedup_fetching, sr.stats.dedup_resident);
	return 0;
}

/* Simulated: T-3's sizing with a two-chunk budget; the campaign as a whole
 * must see both counters. */
const struct scenario scenario_t6 = {
	.id = "T-6",
	.title = "storm: dedup of faults fires",
	.run = t6_run,
	.legs = LEG_FILE | LEG_HUGE,
	.sim =
		&(const struct sim_sizing){
			.threads = 3,
			.chunks = 4,
			.budget_chunks = 2,
			.workers = 2,
			.prefetch = 1,
			.ops = 4,
			.pattern = READ_RANDOM,
			.needs_dedup = 1,
		},
};
