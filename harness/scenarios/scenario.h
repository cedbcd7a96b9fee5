/* A scenario (design.md §5.3), the harness's unit: its real-kernel run, which
 * fills a result and passes only with mismatches == 0 and every criterion
 * met, and its sizing on the simulated kernel. */
#ifndef HARNESS_SCENARIO_H
#define HARNESS_SCENARIO_H

#include <stdint.h>

#include "coverage.h"
#include "verdict.h"

enum profile { PROFILE_QUICK, PROFILE_FULL };

struct fault_plan;
struct resid_seam;

struct run_opts {
	uint64_t seed;
	enum profile profile;
	int verbose;
	uint64_t storm_chunk; /* the storms' chunk size; 0: 1 MiB */
	/* The leg (enum scen_leg): with LEG_FILE the region is a real file
	 * of design.md §5.1 content made in file_dir, read with O_DIRECT; with
	 * LEG_UNEQUAL the chunks come from an explicit table of unequal
	 * sizes. */
	unsigned leg;
	const char *file_dir;
	/* LEG_HUGE: the directory the scenario's child mounts a tmpfs with
	 * huge=always on, in its own mount namespace (huge_leg.c), and
	 * gives the pager as resid_config.huge_dir. */
	const char *huge_dir;
	/* The faults to inject, fitted to this scenario (never NULL), and the
	 * run's fault seam over the kernel, which every region it opens in
	 * this process uses (wl_open); a storm makes its own in its child. */
	const struct fault_plan *faults;
	const struct resid_seam *seam;
};

/* The legs a scenario runs in the default gate, beside the synthetic
 * content on equal chunks that every one runs (design.md §5.1). */
enum scen_leg {
	LEG_FILE = 1,    /* a real file, its last chunk ending unaligned */
	LEG_UNEQUAL = 2, /* an explicit table of unequal chunks */
	/* huge folios in B from a tmpfs mounted huge=always: on equal chunks
	 * of a folio multiple the huge path, on unequal ones a region that
	 * must keep 4 KiB pages though the tmpfs would give huge ones */
	LEG_HUGE = 4,
};

/* "file", "unequal", "huge": one bit of enum scen_leg as the gate's JSON
 * names it (its rows' "gate_legs"); NULL for any other value. */
const char *scen_leg_name(unsigned leg);

/* A storm row: 9 of its own, refused_reads, a fired count per point. */
#define SCEN_MAX_COUNTERS 28

struct counter {
	const char *name;
	uint64_t value;
};

struct scen_result {
	const char *id;          /* "T-1" */
	/* Set by the runner (scen_verdict): fail when it could not run, a
	 * criterion failed or a byte mismatched; else unknown when one could
	 * not be judged here; else pass. passed: verdict is pass. */
	enum verdict verdict;
	int passed;
	int failed;              /* a criterion failed (scen_fail) */
	int unknown;             /* one could not be judged (scen_unknown) */
	uint64_t checks;         /* bytes or comparisons checked */
	uint64_t mismatches;
	double seconds;
	struct counter counters[SCEN_MAX_COUNTERS];
	int ncounters;
	char message[512];       /* why it failed, or a short note */
	/* What the region was read from: "synthetic", "file O_DIRECT" or
	 * "file buffered" (the file system refused O_DIRECT); and its
	 * chunks, "equal" or "unequal". */
	char backing[16];
	char chunks[16];
	struct coverage cov;     /* code probes: one run, or a sim campaign */
};

/* How the application threads of a simulated run pick what to read
 * (harness/sim/program.c); a new way of reading is a new case there. */
enum sim_pattern {
	READ_SCAN,         /* every chunk in order, `ops` passes */
	READ_ALTERNATE,    /* chunk 0, chunk 1, `ops` times */
	READ_RANDOM,       /* `ops` random pieces of random chunks */
	READ_ACCOUNT,      /* a scan, then st_blocks against the pager, exact */
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
	uint32_t threads;       /* application threads, at most 8 */
	uint32_t chunks;
	uint32_t budget_chunks;
	uint32_t workers, prefetch;
	uint32_t ops;           /* reads (passes for READ_SCAN) per thread */
	enum sim_pattern pattern;
	/* Faults every run of it injects unless a run says otherwise: a
	 * spec list (harness/fault/fault.h), or NULL. */
	const char *faults;
	uint64_t stat_lag;      /* memory.stat lags by this many bytes */
	int needs_dedup;        /* the campaign must see both dedup counters */
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

void scen_count(struct scen_result *r, const char *name, uint64_t value);
/* Adds value to the counter (0 before the first). */
void scen_add(struct scen_result *r, const char *name, uint64_t value);
/* Marks the scenario failed with a reason; the first reason is kept.
 * Safe from any thread. */
void scen_fail(struct scen_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same for a criterion the harness cannot judge here (design.md §9: it
 * says so); a failure's reason wins over it. */
void scen_unknown(struct scen_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A short note in the message of a row that has no reason yet. */
void scen_note(struct scen_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The row's verdict once the run returned (ran: it returned 0). */
enum verdict scen_verdict(const struct scen_result *r, int ran);

/* "T-1", "t1" and "1" all name T-1; NULL when none is. */
const struct scenario *scenario_find(const char *id);
/* Every scenario, in the order of tool/scenarios.def (tool/registry.c). */
extern const struct scenario *const scenarios[];
extern const int nscenarios;

#endif
