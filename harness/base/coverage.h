/* Code-probe coverage (pager/code_probe.h): which rare paths a run and a
 * campaign reached. A run's hits are the probes' counters after it minus
 * before; a campaign sums its runs and counts, per probe, the runs that hit
 * it. The process keeps a total of every run it counted and, at exit, adds
 * it to the file named by RESIDCTL_COVERAGE, so that the suite's stages
 * accumulate into one file that `residctl coverage` judges. */
#ifndef HARNESS_COVERAGE_H
#define HARNESS_COVERAGE_H

#include <stdint.h>
#include <stdio.h>

#include "code_probe.h"

struct coverage {
	uint64_t runs;
	uint64_t hits[CP_COUNT];    /* times each probe fired */
	uint64_t in_runs[CP_COUNT]; /* runs in which it fired */
};

const char *coverage_name(int probe);
int coverage_required(int probe);
const char *coverage_what(int probe);

/* The counters now, and the hits since a mark. */
void coverage_mark(uint64_t mark[CP_COUNT]);
void coverage_since(const uint64_t mark[CP_COUNT], uint64_t hits[CP_COUNT]);
/* Adds another process's hits (a storm's child) to this one's counters. */
void coverage_absorb(const uint64_t hits[CP_COUNT]);

/* One run's hits: into c and into the process's total. */
void coverage_add_run(struct coverage *c, const uint64_t hits[CP_COUNT]);
/* Campaigns into a larger one (the process's total is not touched). */
void coverage_merge(struct coverage *into, const struct coverage *c);

/* {"runs": N, "probes": {NAME: {"hits", "runs", "required"}}, "missed":
 * [...], "missed_required": [...]} */
void coverage_json(FILE *f, const struct coverage *c);
/* "code probes: H of N hit in R runs; missed: ... (required: ...)" */
void coverage_line(FILE *f, const char *indent, const struct coverage *c);
/* Required probes with no hit. */
int coverage_missed_required(const struct coverage *c);

/* Adds the process's total to $RESIDCTL_COVERAGE when it is set and not
 * empty, and starts the total again. 0, or -1 after a line on stderr. */
int coverage_save_env(void);
/* Reads a file coverage_save_env wrote. -1 with one line in err. */
int coverage_load(const char *path, struct coverage *c, char *err, size_t n);

#endif
