/* H-1 the hands on a region: T-3's storm while a thread does to A what
 * applications and the kernel do to a mapping (hands.h), after a prelude
 * that drops entries of resident chunks and reads them again. Every byte
 * still right, no hang, and at least one refault served. */
#include "storm_scenario.h"

static int h1_run(const struct run_opts *o, struct scen_result *res)
{
	struct storm_config c;
	struct storm_result sr;

	storm_scenario_config(o, 11, &c);
	c.hands = 1;
	c.dedup_grace_seconds = o->profile == PROFILE_FULL ? 60 : 10;
	if (storm_scenario_run(&c, res, &sr) < 0)
		return -1;
	scen_count(res, "refaults_served", sr.stats.refaults_served);
	for (int h = 0; h < HAND_COUNT; h++)
		scen_count(res, hand_name(h), sr.hands.calls[h]);
	if (sr.ran && !sr.hung && !sr.stats.refaults_served)
		scen_fail(res, "no refault served: no page whose entry was "
			       "dropped was read again");
	return 0;
}

/* Simulated: T-3's storm and a thread that drops A's entries under it. */
const struct scenario scenario_h1 = {
	.id = "H-1",
	.title = "storm while the application advises its mapping",
	.run = h1_run,
	.legs = LEG_FILE | LEG_HUGE,
	.sim =
		&(const struct sim_sizing){
			.threads = 3,
			.chunks = 4,
			.budget_chunks = 1,
			.workers = 2,
			.prefetch = 1,
			.ops = 4,
			.pattern = READ_RANDOM,
			.drops = 4,
		},
};
