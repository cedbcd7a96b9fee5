/* A gate scenario (SPEC §5.3): runs with the options given, fills a result,
 * and passes only with mismatches == 0 and every criterion met. */
#ifndef HARNESS_SCENARIO_H
#define HARNESS_SCENARIO_H

#include <stdint.h>

enum profile { PROFILE_QUICK, PROFILE_FULL };

struct fault_plan;
struct resid_seam;

struct run_opts {
	uint64_t seed;
	enum profile profile;
	int verbose;
	uint64_t storm_chunk; /* the storms' chunk size; 0: 1 MiB */
	/* The faults to inject, fitted to this scenario (never NULL), and the
	 * run's fault seam over the kernel, which every region it opens in
	 * this process uses (wl_open); a storm makes its own in its child. */
	const struct fault_plan *faults;
	const struct resid_seam *seam;
};

#define SCEN_MAX_COUNTERS 24

struct counter {
	const char *name;
	uint64_t value;
};

struct scen_result {
	const char *id;          /* "T-1" */
	int passed;              /* set by the runner: ran, !failed, 0 mismatches */
	int failed;              /* a criterion failed (scen_fail) */
	uint64_t checks;         /* bytes or comparisons checked */
	uint64_t mismatches;
	double seconds;
	struct counter counters[SCEN_MAX_COUNTERS];
	int ncounters;
	char message[512];       /* why it failed, or a short note */
};

struct scenario {
	const char *id;
	const char *title;
	/* Whether it needs the real kernel's memory cgroup (runs in a child). */
	int needs_cgroup;
	/* Returns 0 when it ran (passed or not), -1 when it could not run;
	 * either way res->message says why it did not pass. */
	int (*run)(const struct run_opts *o, struct scen_result *res);
	/* Runs no pager, so no fault point can fire in it (T-5). */
	int no_seam;
};

void scen_count(struct scen_result *r, const char *name, uint64_t value);
/* Marks the scenario failed with a reason; the first reason is kept.
 * Safe from any thread. */
void scen_fail(struct scen_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

const struct scenario *scenario_find(const char *id);
extern const struct scenario *const scenarios[];
extern const int nscenarios;

#endif
