/* residctl pager: application-authoritative residency for a large read-only
 * region. userfaultfd on a double-mapped memfd, eviction by punching holes.
 * This is the public header of libresid.a. */
#ifndef RESID_H
#define RESID_H

#include <stddef.h>
#include <stdint.h>

struct resid_seam;
struct resid_region;

enum resid_policy {
	RESID_POLICY_LRU,
	RESID_POLICY_LEARNED,  /* layer_order_learned */
	RESID_POLICY_DECLARED, /* layer_order_declared (default) */
};

/* When the application calls resid_notify_access() for a chunk: before it
 * reads it (the cursor's chunk is needed now, distance 0) or after it has
 * consumed it (the cursor's chunk is a full cycle away). */
enum resid_signal {
	RESID_SIGNAL_BEFORE_READ,
	RESID_SIGNAL_AFTER_READ,
};

enum resid_backing {
	RESID_BACKING_FILE,      /* read `path` with O_DIRECT (buffered fallback) */
	RESID_BACKING_SYNTHETIC, /* resid_content(offset, seed), SPEC §5.1 */
};

/* One chunk of an explicit table: unequal chunks, 4096-aligned offsets. */
struct resid_chunk_spec {
	uint64_t off;
	uint64_t len;
};

struct resid_config {
	uint64_t region_len;   /* bytes; the backing store must cover it */
	uint64_t chunk_size;   /* equal chunks (multiple of 4096), or 0 with table */
	const struct resid_chunk_spec *table; /* explicit chunks, sorted, contiguous */
	uint32_t table_len;
	uint64_t budget_bytes; /* >= largest chunk */

	enum resid_backing backing;
	const char *path;      /* RESID_BACKING_FILE */
	uint64_t seed;         /* RESID_BACKING_SYNTHETIC */

	enum resid_policy policy;
	const uint32_t *declared_seq; /* RESID_POLICY_DECLARED: one cycle of chunk ids */
	uint32_t declared_len;        /* 0: chunk order 0..n-1 */
	enum resid_signal signal;

	uint32_t fetch_workers;       /* default 4 */
	uint32_t prefetch_depth;      /* 0 = off */
	uint32_t fetching_timeout_ms; /* FETCHING watchdog, default 30000 */
	uint32_t reconcile_interval;  /* fetches between reconciles, default 16 */
	int eager_reconcile;          /* reconcile after every fetch */
	uint32_t demand_retries;      /* infeasible budget retries, default 64 */
	uint32_t prefetch_backoff_ms; /* declined prefetch back-off, default 100 */
	/* Evict ahead of need: when a fetch has landed, make room at once for
	 * the chunk the policy predicts next (only chunks used later than it
	 * may go), so that its fault does not wait for a punch. Off: 0. */
	int evict_ahead;
	/* Per-phase fetch timers (the *_ns counters): clock reads per fetch. */
	int phase_timers;

	/* Where the cgroup check of I-3 may say no: refuse (default) or only
	 * record (tests of the pager outside any cgroup). */
	int allow_swap;

	const struct resid_seam *seam; /* NULL: the Linux kernel */
};

/* Fills the defaults above into cfg; callers then set what they need. */
void resid_config_init(struct resid_config *cfg);

/* Counters of a region; all monotonic except resident/reserved. */
struct resid_stats {
	uint64_t faults_missing, faults_minor;
	uint64_t dedup_resident, dedup_fetching;
	uint64_t fetches, fetch_bytes, continues_ok;
	uint64_t demand_jobs, prefetch_jobs, prefetch_declined, prefetch_stale;
	uint64_t evictions, evicted_bytes, retention_breaks;
	uint64_t infeasible, retries, abandoned, drop_wakes;
	uint64_t io_errors, io_short, io_eintr, continue_eagain, continue_errors;
	uint64_t wake_errors, punch_errors, uffd_eintr, cgroup_read_errors;
	uint64_t watchdog_resets, reconciles, reconcile_failures;
	uint64_t st_blocks_lag; /* st_blocks excesses a page count did not confirm */
	uint64_t resident, reserved, budget;
	uint64_t resident_max; /* highest `resident` ever seen (I-11) */
	uint64_t latency_count, latency_sum_ns, latency_min_ns, latency_max_ns;
	/* With phase_timers, over the fetches that landed: the whole fetch
	 * under its chunk lock, and its reserve (evictions made for it
	 * included), read and CONTINUE. punch_ns: every eviction's punch. */
	uint64_t fetch_ns, reserve_ns, read_ns, continue_ns, punch_ns;
	uint64_t evict_ahead; /* evictions made ahead of need */
};

#define RESID_ERRLEN 256

/* Creates the region and starts its threads. On failure returns NULL and
 * writes one line to err saying what was wrong and how to fix it. */
struct resid_region *resid_open(const struct resid_config *cfg,
				 char err[RESID_ERRLEN]);
/* Stops the threads, unmaps, closes. Safe on NULL. */
void resid_close(struct resid_region *r);

/* The mapping the application reads (A). */
const uint8_t *resid_base(const struct resid_region *r);
uint64_t resid_len(const struct resid_region *r);
uint32_t resid_nchunks(const struct resid_region *r);
uint32_t resid_chunk_of(const struct resid_region *r, uint64_t off);
void resid_chunk_range(const struct resid_region *r, uint32_t chunk,
		       uint64_t *off, uint64_t *len);

/* Declared-order signal (see enum resid_signal). */
void resid_notify_access(struct resid_region *r, uint32_t chunk);

void resid_get_stats(struct resid_region *r, struct resid_stats *out);

/* Accounting against the kernel (SPEC §2.6). Returns 0 when both the exact
 * st_blocks check and the memory.stat check hold; otherwise -1 and a line
 * in why. */
struct resid_accounting {
	uint64_t resident, reserved;
	uint64_t st_bytes;        /* fstat(memfd).st_blocks * 512, or the page
				   * count where that disproved an excess */
	uint64_t st_lag;          /* st_blocks*512 minus the page count then */
	int have_cgroup;
	uint64_t shmem;           /* memory.stat shmem of the region's cgroup */
	uint64_t shmem_baseline;  /* shmem at region start (known overhead) */
	uint64_t tolerance;       /* the kernel's per-CPU flush threshold */
};
int resid_reconcile(struct resid_region *r, struct resid_accounting *acc,
		    char why[RESID_ERRLEN]);

/* Writes the run manifest as one JSON object (no trailing newline). */
int resid_manifest_json(struct resid_region *r, char *buf, size_t cap);

/* Waits until no fetch is queued or in flight (tests, benchmarks). */
void resid_quiesce(struct resid_region *r);
/* At quiescence: no huge pages (I-9), pins balance (I-12), counters are conserved (I-14), the
 * budget was never exceeded (I-11). Returns the number of violations, each
 * reported through the invariants module. */
int resid_check_quiescent(struct resid_region *r);

/* SPEC §5.1: no aligned 8-byte word is zero and each encodes its offset. */
uint64_t resid_content_word(uint64_t word_off, uint64_t seed);
void resid_content_fill(uint8_t *dst, uint64_t off, uint64_t len,
			uint64_t seed);
/* Number of bytes in [buf, buf+len) that differ from the content at off. */
uint64_t resid_content_mismatches(const uint8_t *buf, uint64_t off,
				  uint64_t len, uint64_t seed);

const char *resid_policy_name(enum resid_policy p);
int resid_policy_parse(const char *name, enum resid_policy *out);

#endif
