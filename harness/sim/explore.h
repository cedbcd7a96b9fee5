/* Campaigns of schedules over a simulated scenario (explore.c), shrinking
 * of a failing schedule (shrink.c), and the replay line that reproduces it
 * (replay_line.c). */
#ifndef HARNESS_SIM_EXPLORE_H
#define HARNESS_SIM_EXPLORE_H

#include <stdint.h>
#include <stdio.h>

#include "base/coverage.h"
#include "campaign/campaign.h"
#include "sim/program.h"

/* One reproducible run: everything a replay line carries. */
struct replay {
	const struct scenario *p;
	enum sim_strategy strategy;
	unsigned depth; /* PCT depth */
	uint64_t steps; /* PCT: k, the length the change points span */
	uint64_t seed;
	unsigned bugs; /* the bug switches on (harness/fault/bugs.h) */
	uint32_t ops;
	/* The chunks come from a table of unequal sizes drawn from the seed,
	 * the last ending unaligned (program.c); "+unequal" after SCENARIO. */
	int unequal;
	/* The faults injected: the scenario's defaults and the user's, or,
	 * after shrinking, the calls that must fail. */
	struct fault_plan faults;
	uint16_t *schedule; /* malloc'd, may be NULL */
	size_t nschedule;
};

/* What a shrink may spend before the best line so far stands. */
struct shrink_budget {
	double seconds; /* wall time */
	uint64_t mb;    /* resident memory grown since it began */
	uint64_t steps; /* simulated steps over all its runs */
};
#define SHRINK_SECONDS 20
#define SHRINK_MB 256
/* A hundred runs that end at the stall bound, some 10 s. */
#define SHRINK_STEPS 20000000ull
#define EXPLORE_SECONDS 1800

/* How a shrink ended: runs made, steps and seconds spent, and when the
 * budget ran out, which part ("20 s"), else "". */
struct shrink_end {
	unsigned runs;
	uint64_t steps;
	double seconds;
	char stopped[96];
};

struct explore_opts {
	const struct scenario *p;
	enum sim_strategy strategy;
	unsigned depth;
	uint64_t seed;
	uint64_t schedules;
	unsigned bugs;
	int unequal; /* every schedule on unequal chunks */
	/* simprog_faults(): the user's on the scenario's defaults; NULL: the
	 * defaults alone. */
	const struct fault_plan *faults;
	int stop_at_failure; /* end the campaign at the first failure */
	/* Stop exploring after this many failures; 0: run every schedule. */
	uint64_t max_failures;
	/* Stop exploring at this mono_now() time, and shrink no later; 0:
	 * none (explore: EXPLORE_SECONDS from its start). */
	double deadline;
	int shrink; /* shrink the first failure */
	/* 0 fields: SHRINK_SECONDS, SHRINK_MB, SHRINK_STEPS */
	struct shrink_budget budget;
	/* Where the first failure is printed with its unshrunk replay line
	 * the moment it is found, and the best line when a shrink's budget
	 * runs out (may be NULL). */
	FILE *announce;
	int progress; /* a progress line on stderr */
	/* Schedule i runs when the shard owns unit unit0 + i (campaign.h);
	 * random and PCT only: a DFS tree has no seed space to split. */
	struct shard shard;
	uint64_t unit0;
	/* Called with each failing schedule, i its index (may be NULL). */
	void (*failed)(void *arg, uint64_t i, const struct replay *rp,
		       const struct sim_outcome *out);
	void *failed_arg;
};

struct explore_result {
	uint64_t schedules, failures, distinct, steps;
	uint64_t *hashes; /* the distinct lock-order hashes (malloc'd) */
	uint64_t by_verdict[SIM_NVERDICTS];
	uint64_t dedup_fetching, dedup_resident;
	struct coverage cov;      /* code probes, per schedule */
	struct fault_plan faults; /* what every schedule injected */
	uint64_t fired[FP_COUNT]; /* faults injected over every schedule */
	double seconds;
	/* The first failure, shrunk when asked. */
	struct replay fail;
	struct sim_outcome outcome;
	uint64_t fail_index; /* schedules run before it was found, + 1 */
	/* Why exploring ended before every schedule ran: the failure cap
	 * (max_failures) or the deadline. */
	int capped, out_of_time;
	uint64_t raw_preemptions;
	struct shrink_end shrunk;
	int replay_matches; /* the final schedule ran twice, same hash */
};

/* Runs the campaign; returns the number of failures. */
uint64_t explore(const struct explore_opts *o, struct explore_result *r);
void explore_result_free(struct explore_result *r);
/* The summary, the first failure and its replay line. */
void explore_print(FILE *f, const struct explore_opts *o,
		   const struct explore_result *r);

/* Runs rp once. */
void replay_run(const struct replay *rp, struct sim_outcome *out);
/* Shrinks rp (fewer operations, preemptions and injected faults) while it
 * still fails the way *out does, within budget b; out is updated to the
 * final run, end says what it spent. */
void replay_shrink(struct replay *rp, struct sim_outcome *out,
		   const struct shrink_budget *b, struct shrink_end *end);

/* "rc3/BUILD/SCENARIO/STRATEGY/SEED/BUGS/OPS/FAULTS/SCHEDULE": one shell
 * word; BUILD is a hash of the tool's sources (+simx in make simx); SCENARIO is an id, with "+unequal" on unequal chunks; STRATEGY is "random", "pctD-kK" or "dfsP"; BUGS "-" or e.g. "2",
 * "1+5"; FAULTS "-" or a fault spec list with ':' for '/' in the names,
 * e.g. "backing_read:eio@3+9,wake=0.1". */
char *replay_encode(const struct replay *rp);
/* -1 with one line in err on a malformed line or one from another build. */
int replay_decode(const char *line, struct replay *rp, char *err, size_t n);
void replay_free(struct replay *rp);

/* The campaign's side of two strategies (strategies/): the bounded
 * exhaustive search calls visit on each schedule until it returns
 * non-zero or the tree is done; PCT's k is a random-walk run's length. */
typedef int (*dfs_visit_fn)(void *arg, const struct replay *rp,
			    struct sim_outcome *out);
void dfs_search(const struct explore_opts *o, dfs_visit_fn visit, void *arg);
uint64_t pct_calibrate(const struct explore_opts *o);

/* "random" or "pct:D". -1 when unknown. */
int parse_strategy(const char *s, enum sim_strategy *st, unsigned *depth);

#endif
