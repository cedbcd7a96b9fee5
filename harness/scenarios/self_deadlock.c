/* The harness's own test, simulated only: two threads take two locks in
 * opposite orders, and the scheduler must find the deadlock (PCT, dfs:1 but
 * not dfs:0), shrink it and replay it. */
#include "scenarios/scenario.h"

const struct scenario scenario_self_deadlock = {
	.id = "self-deadlock",
	.title = "harness self-test: a lock-order inversion that must be found",
	.sim =
		&(const struct sim_sizing){
			.threads = 2,
			.ops = 1,
			.pattern = READ_SELF_DEADLOCK,
		},
};
