/* A scenario (design.md §5.3), the harness's unit: its real-kernel run, which
 * fills a result and passes only with mismatches == 0 and every criterion
 * met, and its sizing on the simulated kernel. */
#ifndef HARNESS_SCENARIO_H
#define HARNESS_SCENARIO_H

#include <stdint.h>

#include "base/row.h"
#include "workload/workload.h"

/* How the application threads of a simulated run pick what to read
 * (harness/sim/program.c); a new way of reading is a new case there. */
enum sim_pattern {
	READ_SCAN,      /* every chunk in order, `ops` passes */
	READ_ALTERNATE, /* chunk 0, chunk 1, `ops` times */
	READ_RANDOM,    /* `ops` random pieces of random chunks */
	READ_ACCOUNT,   /* a scan, then st_blocks against the pager, exact */
	/* The harness's self-tests, last (no pager, no fault can fire). */
	READ_SELF_DEADLOCK, /* no pager: two locks taken in opposite orders */
	READ_SELF_RACE,     /* no pager: a counter bumped with no lock */
	READ_SELF_CRASH,    /* no pager: a division by a divisor zeroed */
	READ_SELF_SPIN,     /* no pager: a spin on a flag not yet set */
	READ_SELF_LIVELOCK, /* no pager: a poll for a wakeup never sent */
};

/* A scenario sized down for the simulated kernel: the real pager on a few
 * chunks of SIM_CHUNK bytes, one schedule a run. */
#define SIM_CHUNK (16ull << 10)
struct sim_sizing {
	uint32_t threads; /* application threads, at most 8 */
	uint32_t chunks;
	uint32_t budget_chunks;
	uint32_t workers, prefetch;
	uint32_t ops; /* reads (passes for READ_SCAN) per thread */
	enum sim_pattern pattern;
	/* Faults every run of it injects unless a run says otherwise: a
	 * spec list (harness/fault/fault.h), or NULL. */
	const char *faults;
	uint64_t stat_lag; /* memory.stat lags by this many bytes */
	int needs_dedup;   /* the campaign must see both dedup counters */
	/* CPU ms a thread may run without a scheduling point (0: the
	 * simulation's default, sim_config.spin_limit_ms). */
	uint64_t spin_ms;
	/* A "hands" thread beside the readers (0: none): this many times it
	 * reads a random chunk, drops A's entries over a random range of it
	 * (sim_drop: MADV_DONTNEED, a collapse of B) and reads the chunk
	 * again. */
	uint32_t drops;
};

/* The unit of the harness: one file defines one `const struct scenario
 * scenario_NAME` and tool/scenarios.def lists NAME. */
struct scenario {
	const char *id;
	const char *title;
	/* Whether it needs the real kernel's memory cgroup (runs in a child). */
	int needs_cgroup;
	/* The real-kernel run (NULL: simulated only, not in the gate).
	 * Returns 0 when it ran (passed or not), -1 when it could not run;
	 * either way res->message says why it did not pass. */
	int (*run)(const struct run_opts *o, struct scen_result *res);
	/* The simulated form (NULL: none; `check --sim` runs `run`). */
	const struct sim_sizing *sim;
	/* Runs no pager, so no fault point can fire in it (T-5). */
	int no_seam;
	/* Its legs in the default gate: a bit per enum scen_leg, each bit
	 * alone and, when both, together. */
	unsigned legs;
	/* What its rows read when not synthetic content on equal chunks
	 * (NULL: that), for the gate's progress lines. */
	const char *reads;
	/* Runs programs on the real kernel only: no simulated form, and
	 * check --sim leaves it out (T-8). */
	int real_only;
};

/* "T-1", "t1" and "1" all name T-1; NULL when none is. */
const struct scenario *scenario_find(const char *id);
/* Every scenario, in the order of tool/scenarios.def (tool/registry.c). */
extern const struct scenario *const scenarios[];
extern const int nscenarios;

#endif
