/* A storm on the real kernel: application threads read random pieces of a
 * region through the pager and check every byte, while the pager fetches,
 * prefetches and evicts under a tight budget, optionally with injected
 * faults. Every storm runs in a child process, so that a hang (a thread
 * stuck on a fault nobody wakes, pager threads in a deadlock) is caught by
 * the watchdog, dumped, and killed without taking the caller down. */
#ifndef STORMS_STORM_H
#define STORMS_STORM_H

#include <stdint.h>

#include "code_probe.h"
#include "fault/fault.h"
#include "hands.h"
#include "resid_harness.h"

struct storm_config {
	uint64_t seed;
	uint64_t region_len;
	uint64_t chunk_size; /* 0: a random table of unequal chunks */
	/* NULL: the synthetic content. Else the child writes a file of
	 * region_len bytes of the content here and reads it with O_DIRECT,
	 * the path users take; it is unlinked once the pager holds it. */
	const char *file_dir;
	/* resid_config.huge_dir, or NULL; with huge_mount the child first
	 * mounts a tmpfs with huge=always there in its own mount namespace
	 * (the gate's huge leg). */
	const char *huge_dir;
	int huge_mount;
	double budget_ratio; /* of the region, at least the largest chunk */
	uint32_t threads, workers, prefetch_depth;
	enum resid_policy policy;
	double seconds; /* how long the threads read */
	/* A hang: no byte checked and no step of the child's main thread
	 * (joins, close) for this long. */
	double watchdog_seconds;
	/* Past `seconds`, the threads keep reading until both dedup counters
	 * are > 0, for at most this long (T-6); 0: they stop at `seconds`. */
	double dedup_grace_seconds;
	uint64_t limit_bytes; /* the child cgroup's memory limit */
	int evict_ahead;      /* resid_config.evict_ahead */
	/* The FETCHING watchdog's time-out; 0: the pager's default. A short
	 * one makes the watchdog reset queued fetches (a rare path). */
	uint32_t fetching_timeout_ms;
	/* A thread does what applications and the kernel do to a mapped
	 * region (hands.h) while the readers read; the dedup grace then
	 * also waits for a refault served. */
	int hands;
	/* Faults to inject (NULL: none); the storm's seed seeds them. */
	const struct fault_plan *faults;
	/* Called about once a second while the storm runs (may be NULL). */
	void (*progress)(void *arg, double elapsed);
	void *progress_arg;
};

struct storm_result {
	uint64_t touches, bytes_checked, mismatches;
	uint64_t violations; /* invariant reports */
	/* Reads that raised SIGBUS as the contract says (design.md §9): their
	 * chunk failed for good and every error was injected. */
	uint64_t refused_reads;
	uint64_t worst_touch_ns; /* the slowest read seen by a thread */
	struct resid_stats stats;
	uint64_t fired[FP_COUNT];
	uint64_t probes[CP_COUNT]; /* code probes the child hit */
	struct hands_tally hands;
	int ran;             /* the child reported back */
	int hung;            /* the watchdog fired */
	int interrupted;     /* a signal to stop ended it */
	int direct;          /* the file was read with O_DIRECT */
	int huge;            /* the region took huge folios in B */
	uint64_t huge_bytes; /* of A's mapped pages, in large folios */
	double seconds;
	char message[1024]; /* the first failure, or the thread dump */
};

/* Runs one storm in a child process inside its own memory cgroup. Returns 0
 * when the storm ran (it may still have failed: see passed), -1 when it
 * could not start (message says why). */
int storm_run(const struct storm_config *c, struct storm_result *out);
/* Ran to its end, no mismatch, no invariant violation, no hang; reads
 * refused by the contract's SIGBUS do not fail it. */
int storm_passed(const struct storm_result *r);
/* One line that reruns this storm. */
void storm_describe(const struct storm_config *c, char *buf, size_t n);

#endif
