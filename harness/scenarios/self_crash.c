/* The harness's own test, simulated only: one thread divides by a divisor
 * another has zeroed for one step. The SIGFPE must end that schedule with
 * a verdict naming the signal, the thread and the function, and a replay
 * line that crashes the same way, while the campaign goes on. */
#include "scenarios/scenario.h"

const struct scenario scenario_self_crash = {
	.id = "self-crash",
	.title = "harness self-test: a division by zero that must become a "
		 "verdict",
	.sim =
		&(const struct sim_sizing){
			.threads = 2,
			.ops = 1,
			.pattern = READ_SELF_CRASH,
		},
};
