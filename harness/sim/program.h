/* A scenario's simulated form (its struct sim_sizing): the real pager runs
 * on sim_seam() with a few chunks and threads, and one schedule is one run.
 * explore.c runs campaigns of schedules, shrinks failures and replays. */
#ifndef HARNESS_SIM_PROGRAM_H
#define HARNESS_SIM_PROGRAM_H

#include <stdint.h>

#include "code_probe.h"
#include "fault/fault.h"
#include "resid.h"
#include "resid_harness.h"
#include "scenarios/scenario.h"
#include "sim/sim.h"

struct sim_outcome {
	enum sim_verdict verdict;
	char why[512];
	uint64_t steps, preemptions, log_hash, lock_hash;
	uint64_t checked;         /* bytes compared */
	uint64_t fired[FP_COUNT]; /* faults injected, per point */
	/* The calls that fired, for shrinking; fired_complete is 0 when
	 * more fired than a plan can name. */
	struct fault_plan fired_plan;
	int fired_complete;
	struct resid_stats stats; /* the pager's, when it got to close */
	/* malloc'd: the run's choices and the runnable threads at each
	 * step, the first SIM_RECORD_STEPS steps; schedule_whole: all. */
	uint16_t *schedule;
	uint64_t *masks;
	size_t nschedule;
	int schedule_whole;
	uint64_t probes[CP_COUNT]; /* code probes hit in the run */
};

/* The scenario named id when it has a simulated form, else NULL. */
const struct scenario *simprog_find(const char *id);

/* The fault points a run of p can fire: none without a pager. */
uint32_t simprog_can_fire(const struct scenario *p);
/* p's default faults with user's on top (NULL: none), fitted to p. -1
 * with one line in err when user names a fault p cannot fire. */
int simprog_faults(const struct scenario *p, const struct fault_plan *user,
		   struct fault_plan *out, char *err, size_t n);

/* One schedule of p's simulated form with these faults, decided by the
 * run's decision stream. ops overrides p->sim->ops when non-zero
 * (shrinking). unequal: the same number of chunks, of 1 to 4 pages in an
 * order the seed rotates, the last ending unaligned. */
void simprog_run(const struct scenario *p, const struct sim_config *sc,
		 uint32_t ops, int unequal, const struct fault_plan *faults,
		 struct sim_outcome *out);
void sim_outcome_free(struct sim_outcome *o);

#endif
