/* The gate's scenarios sized for the simulated kernel: the real pager runs
 * on sim_seam() with a few chunks and threads, and one schedule is one run.
 * explore.c runs campaigns of schedules, shrinks failures and replays. */
#ifndef HARNESS_SIM_PROGRAM_H
#define HARNESS_SIM_PROGRAM_H

#include <stdint.h>

#include "fault.h"
#include "resid.h"
#include "sim.h"

struct simprog {
	const char *id;      /* "T-1" .. "T-7", or a self-test */
	const char *title;
	uint32_t threads;    /* application threads */
	uint32_t chunks;     /* of 16 KiB */
	uint32_t budget_chunks;
	uint32_t workers, prefetch;
	uint32_t ops;        /* reads per thread (a pass over the chunks for T-1) */
	int pattern;         /* enum in program.c: how threads pick what to read */
	/* Faults every run of it injects unless a run says otherwise: a
	 * spec list (harness/fault.h), or NULL. */
	const char *faults;
	uint64_t stat_lag;   /* memory.stat lag in bytes */
	/* The whole-campaign criterion T-6 adds: both dedup counters seen. */
	int needs_dedup;
};

struct sim_outcome {
	enum sim_verdict verdict;
	char why[512];
	uint64_t steps, preemptions, log_hash, lock_hash;
	uint64_t checked;            /* bytes compared */
	uint64_t fired[FP_COUNT];    /* faults injected, per point */
	/* The calls that fired, for shrinking; fired_complete is 0 when
	 * more fired than a plan can name. */
	struct fault_plan fired_plan;
	int fired_complete;
	struct resid_stats stats;    /* the pager's, when it got to close */
	uint16_t *schedule;          /* malloc'd; the run's choices */
	uint64_t *masks;             /* malloc'd; runnable threads per step */
	size_t nschedule;
};

extern const struct simprog *const simprogs[];
extern const int nsimprogs;
const struct simprog *simprog_find(const char *id);

/* The fault points a run of p can fire: none without a pager. */
uint32_t simprog_can_fire(const struct simprog *p);
/* p's default faults with user's on top (NULL: none), fitted to p. -1
 * with one line in err when user names a fault p cannot fire. */
int simprog_faults(const struct simprog *p, const struct fault_plan *user,
		   struct fault_plan *out, char *err, size_t n);

/* One schedule of p with these faults, decided by the run's decision
 * stream. ops overrides p->ops when non-zero (shrinking). */
void simprog_run(const struct simprog *p, const struct sim_config *sc,
		 uint32_t ops, const struct fault_plan *faults,
		 struct sim_outcome *out);
void sim_outcome_free(struct sim_outcome *o);

#endif
