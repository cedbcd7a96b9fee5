/* The gate's scenarios sized for the simulated kernel: the real pager runs
 * on sim_seam() with a few chunks and threads, and one schedule is one run.
 * explore.c runs campaigns of schedules, shrinks failures and replays. */
#ifndef HARNESS_SIM_PROGRAM_H
#define HARNESS_SIM_PROGRAM_H

#include <stdint.h>

#include "code_probe.h"
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
	int short_reads;     /* backing reads may be short */
	int read_errors;     /* backing reads fail half the time */
	uint64_t stat_lag;   /* memory.stat lag in bytes */
	/* The whole-campaign criterion T-6 adds: both dedup counters seen. */
	int needs_dedup;
};

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

extern const struct simprog *const simprogs[];
extern const int nsimprogs;
const struct simprog *simprog_find(const char *id);

/* One schedule of p. ops overrides p->ops when non-zero (shrinking). */
void simprog_run(const struct simprog *p, const struct sim_config *sc,
		 uint32_t ops, struct sim_outcome *out);
void sim_outcome_free(struct sim_outcome *o);

#endif
