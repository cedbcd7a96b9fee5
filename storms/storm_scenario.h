/* The storm as a gate scenario: T-3, T-6 and T-7 are one storm on the real
 * kernel, judged three ways, each in its own file. */
#ifndef STORMS_STORM_SCENARIO_H
#define STORMS_STORM_SCENARIO_H

#include "scenarios/scenario.h"
#include "storm.h"

/* The gate's storm for scenario `salt` (3, 6, 7): 8 threads, 16 MiB, 25 %
 * budget, prefetch on, 4 workers; the profile sets how long, the leg what
 * it reads. */
void storm_scenario_config(const struct run_opts *o, uint64_t salt,
			   struct storm_config *c);
/* Runs storm c and fills res with its checks, mismatches and counters; -1
 * when it could not start. */
int storm_scenario_run(const struct storm_config *c, struct scen_result *res,
		       struct storm_result *sr);

#endif
