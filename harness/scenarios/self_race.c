/* The harness's own test, simulated only: two threads bump one counter with
 * no lock and no annotation. Only the simulation build (make simx), where
 * unprotected shared accesses are scheduling points, can find the lost
 * update. */
#include "scenarios/scenario.h"

const struct scenario scenario_self_race = {
	.id = "self-race",
	.title = "harness self-test: an unannotated lost update that only the "
		 "simulation build (make simx) can find",
	.sim =
		&(const struct sim_sizing){
			.threads = 2,
			.ops = 2,
			.pattern = READ_SELF_RACE,
		},
};
