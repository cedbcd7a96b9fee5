#ifndef HARNESS_SIM_GATE_H
#define HARNESS_SIM_GATE_H

#include <stdint.h>

#include "scenario.h"

/* The fault points s can fire under the simulation. */
uint32_t sim_gate_can_fire(const struct scenario *s);
/* The legs of s in check --sim: LEG_UNEQUAL when it runs a pager. */
unsigned sim_gate_legs(const struct scenario *s);
/* Runs scenario s on the simulated kernel for `schedules` schedules, with
 * o->faults on its default faults, on unequal chunks when o->leg says so
 * (a table drawn from each schedule's seed); a scenario with no simulated form runs
 * as it is. */
int sim_gate_run(const struct scenario *s, const struct run_opts *o,
		 uint64_t schedules, struct scen_result *res);

#endif
