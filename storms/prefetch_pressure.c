/* Prefetch under pressure: the gate's storm with prefetch depth 6 under a
 * 15 % budget (two 1 MiB chunks of 16), so that prefetch admission declines
 * all the time; every byte checked, and declines must have happened. */
#include <inttypes.h>

#include "storm_scenario.h"

static int run(const struct run_opts *o, struct scen_result *res)
{
	struct storm_config c;
	struct storm_result sr;

	storm_scenario_config(o, 8, &c);
	c.prefetch_depth = 6;
	c.budget_ratio = 0.15;
	if (storm_scenario_run(&c, res, &sr) < 0)
		return -1;
	scen_count(res, "retention_breaks", sr.stats.retention_breaks);
	scen_count(res, "prefetch_declined", sr.stats.prefetch_declined);
	if (!sr.stats.prefetch_declined)
		scen_fail(res, "no prefetch was declined: the pressure did not "
			  "show (prefetch_jobs %" PRIu64 ")",
			  sr.stats.prefetch_jobs);
	return 0;
}

/* Simulated: 3 threads on 6 chunks, prefetch depth 3, two-chunk budget. */
const struct scenario scenario_prefetch_pressure = {
	.id = "prefetch-pressure",
	.title = "storm: deep prefetch under a tight budget",
	.run = run,
	.sim = &(const struct sim_sizing){
		.threads = 3, .chunks = 6, .budget_chunks = 2, .workers = 2,
		.prefetch = 3, .ops = 4, .pattern = READ_RANDOM,
	},
};
