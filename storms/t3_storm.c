/* T-3 concurrent storm: the gate's storm passes with every byte right, no
 * invariant tripped and no hang. */
#include "storm_scenario.h"

static int t3_run(const struct run_opts *o, struct scen_result *res)
{
	struct storm_config c;
	struct storm_result sr;

	storm_scenario_config(o, 3, &c);
	return storm_scenario_run(&c, res, &sr);
}

/* Simulated: 3 threads read random pieces of 4 chunks under a one-chunk
 * budget, prefetch on. */
const struct scenario scenario_t3 = {
	.id = "T-3",
	.title = "concurrent storm, every byte checked",
	.run = t3_run,
	.legs = LEG_FILE | LEG_UNEQUAL | LEG_HUGE,
	.sim =
		&(const struct sim_sizing){
			.threads = 3,
			.chunks = 4,
			.budget_chunks = 1,
			.workers = 2,
			.prefetch = 1,
			.ops = 4,
			.pattern = READ_RANDOM,
		},
};
