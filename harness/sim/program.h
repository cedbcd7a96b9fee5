/* A scenario's simulated form (its struct sim_sizing): the real pager runs
 * on sim_seam() with a few chunks and threads, and one schedule is one run.
 * explore.c runs campaigns of schedules, shrinks failures and replays. */
#ifndef HARNESS_SIM_PROGRAM_H
#define HARNESS_SIM_PROGRAM_H

#include <stdint.h>

#include "resid_harness.h"
#include "code_probe.h"
#include "resid.h"
#include "scenario.h"
#include "sim.h"

struct sim_outcome {
	enum sim_verdict verdict;
	char why[512];
	uint64_t steps, preemptions, log_hash, lock_hash;
	uint64_t checked;            /* bytes compared */
	struct resid_stats stats;    /* the pager's, when it got to close */
	uint16_t *schedule;          /* malloc'd; the run's choices */
	uint64_t *masks;             /* malloc'd; runnable threads per step */
	size_t nschedule;
	uint64_t probes[CP_COUNT];   /* code probes hit in the run */
};

/* The scenario named id when it has a simulated form, else NULL. */
const struct scenario *simprog_find(const char *id);

/* One schedule of p's simulated form. ops overrides p->sim->ops when
 * non-zero (shrinking). */
void simprog_run(const struct scenario *p, const struct sim_config *sc,
		 uint32_t ops, struct sim_outcome *out);
void sim_outcome_free(struct sim_outcome *o);

#endif
