/* The harness's own test, simulated only: a thread that saw a flag cleared
 * polls, through a scheduling point each time, for a wakeup nobody will
 * send. When it is preempted into the one step the flag is clear, the run
 * never ends and never stops stepping: it must end at the step budget
 * (a million steps) with "no-progress" and a replay line, and a campaign
 * that finds it must not grow with the run's length (docs/simulation.md). */
#include "scenarios/scenario.h"

const struct scenario scenario_self_livelock = {
	.id = "self-livelock",
	.title = "harness self-test: a poll with scheduling points that never "
		 "ends, a million-step failure",
	.sim =
		&(const struct sim_sizing){
			.threads = 2,
			.ops = 1,
			.pattern = READ_SELF_LIVELOCK,
		},
};
