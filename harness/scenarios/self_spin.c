/* The harness's own test, simulated only: one thread spins, with no
 * scheduling point, on a flag another clears for one step. When that one
 * is preempted there, the spin never ends: the schedule must end with "no scheduling
 * point" and a replay line that spins the same way. A short limit keeps
 * its campaigns quick. */
#include "scenarios/scenario.h"

const struct scenario scenario_self_spin = {
	.id = "self-spin",
	.title = "harness self-test: a spin without a scheduling point that "
		 "must become a verdict",
	.sim =
		&(const struct sim_sizing){
			.threads = 2,
			.ops = 1,
			.pattern = READ_SELF_SPIN,
			.spin_ms = 100,
		},
};
