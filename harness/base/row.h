/* The row every run fills and every report prints (design.md §5.3): a
 * scenario's real or simulated run, a storm's, a campaign's; its verdict,
 * its counters and its code probes. */
#ifndef HARNESS_ROW_H
#define HARNESS_ROW_H

#include <stdint.h>

#include "base/coverage.h"

/* A check says pass, fail, or unknown: the harness cannot decide here
 * (memory.stat apart by less than the kernel's flush lag, no cgroup to
 * read: oracles/accounting.c). */
enum verdict { VERDICT_PASS, VERDICT_FAIL, VERDICT_UNKNOWN };

/* "pass", "fail", "unknown". */
const char *verdict_name(enum verdict v);

/* A storm row: 9 of its own, refused_reads, a fired count per point. */
#define SCEN_MAX_COUNTERS 28

struct counter {
	const char *name;
	uint64_t value;
};

struct scen_result {
	const char *id; /* "T-1" */
	/* Set by the runner (scen_verdict): fail when it could not run, a
	 * criterion failed or a byte mismatched; else unknown when one could
	 * not be judged here; else pass. passed: verdict is pass. */
	enum verdict verdict;
	int passed;
	int failed;      /* a criterion failed (scen_fail) */
	int unknown;     /* one could not be judged (scen_unknown) */
	uint64_t checks; /* bytes or comparisons checked */
	uint64_t mismatches;
	double seconds;
	struct counter counters[SCEN_MAX_COUNTERS];
	int ncounters;
	char message[512]; /* why it failed, or a short note */
	/* What the region was read from: "synthetic", "file O_DIRECT" or
	 * "file buffered" (the file system refused O_DIRECT); and its
	 * chunks, "equal" or "unequal". */
	char backing[16];
	char chunks[16];
	struct coverage cov; /* code probes: one run, or a sim campaign */
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

#endif
