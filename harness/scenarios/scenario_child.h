/* Running a scenario in a child process, watched for progress. */
#ifndef HARNESS_SCENARIO_CHILD_H
#define HARNESS_SCENARIO_CHILD_H

#include "scenarios/scenario.h"

/* Runs s->run(o, res) here and adds the code probes it hit to res->cov and
 * to the process's total. */
int scen_run_counted(const struct scenario *s, const struct run_opts *o,
		     struct scen_result *res);
/* Runs it counted (scen_run_counted) in a forked child whose result res is shared with
 * this process; when neither res->checks nor res->mismatches moves for
 * stall_s seconds the child is killed and res says so. Memory the run
 * shares by MAP_SHARED (the fault seam's counts) stays readable here.
 * Returns what s->run returned, 0 after a kill, -1 when it could not run. */
int scen_run_child(const struct scenario *s, const struct run_opts *o,
		   unsigned stall_s, struct scen_result *res);

#endif
