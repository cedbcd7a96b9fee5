/* Private to residctl storm's files (cmd_storm*.c): the options, the
 * rounds' totals and what each file gives the others. */
#ifndef STORMS_CMD_STORM_H
#define STORMS_CMD_STORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/coverage.h"
#include "campaign/campaign.h"
#include "cli/probe.h"
#include "fault/fault.h"
#include "storm.h"

#define MAX_ROUNDS 100000

/* A round with no progress for this long is a hang (--watchdog). */
#define WATCHDOG_S 30

struct totals {
	uint64_t rounds, failed, touches, bytes, mismatches, violations;
	uint64_t missing, minor, dedup_fetching, dedup_resident, evictions;
	uint64_t fetches, worst_fetch_ns, worst_touch_ns, hangs, st_lag;
	uint64_t file_rounds, direct_rounds, huge_rounds;
	/* Reads that raised the contract's SIGBUS, and the rounds with any. */
	uint64_t refused_reads, refused_rounds;
	uint64_t fired[FP_COUNT];
	struct coverage cov;
};

struct run {
	struct totals t;
	uint64_t seeds[MAX_ROUNDS];
	int failed[MAX_ROUNDS];
	double start, duration;
	int tty;
	int capped; /* a time-bound storm stopped at MAX_ROUNDS rounds */
	struct fault_plan faults;
};

/* The storm the options describe. */
struct storm_args {
	uint64_t seed, duration, round, only, rounds, chunk, watchdog;
	struct shard shard;
	const char *report, *json, *huge_dir;
	int backing, swarm;
	/* What a rerun line and the campaign's identity repeat of them. */
	char specs[1100], round_opts[80], backing_opt[1100];
	char dir[4096];
	struct campaign *camp;
	struct campaign_row *row;
	struct probe p;
	struct run run; /* what the rounds did */
};

/* cmd_storm_options.c: the options into a (CLI_RUN, or the exit code);
 * those that go together, and what a rerun repeats of them (0, or -1
 * after one line). */
int storm_parse(struct storm_args *a, int argc, char **argv);
int storm_settle(struct storm_args *a);

/* cmd_storm_rounds.c: every round (-1 after one line when a storm could
 * not run); the faults a round of this seed injected, as --fault says
 * them. */
int storm_rounds(struct storm_args *a);
void storm_round_faults(const struct run *run, uint64_t seed, char *buf,
			size_t n);

/* cmd_storm_totals.c: a round added to the totals; their summary. */
void storm_totals_add(struct totals *t, const struct storm_result *r);
void storm_summary(FILE *f, const struct run *run, const struct probe *p);

/* cmd_storm_report.c: the --json summary and the --report campaign row
 * (0, or -1 after one line); the campaign of the rounds, NULL when out
 * of memory. */
int storm_write_json(const char *path, const struct run *run,
		     const struct probe *p);
int storm_write_report(const char *path, struct campaign *c,
		       struct campaign_row *row, const struct run *run);
struct campaign *storm_campaign_new(uint64_t seed, uint64_t rounds,
				    uint64_t round, const char *opts,
				    const char *specs, const struct shard *sh);

#endif
