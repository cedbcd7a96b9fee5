/* What residctl's test harness reaches in libresid beyond the public
 * header: the kernel seam, knobs no application needs, the synthetic
 * content, and the checks at quiescence. Not installed, and none of it is
 * exported by build/libresid.a (ci/exports.sh); the entry points marked
 * "harness builds only" are compiled only with RESID_HARNESS. */
#ifndef RESID_HARNESS_H
#define RESID_HARNESS_H

#include "resid.h"

struct resid_seam;

/* resid_config.harness; NULL means the defaults of resid_harness_init. */
struct resid_harness {
	const struct resid_seam *seam; /* NULL: the Linux kernel */
	/* Where the cgroup check of I-3 may say no: refuse (0) or only
	 * record (tests of the pager outside any cgroup). */
	int allow_swap;
	/* Skip the cgroup headroom check (a simulated kernel's cgroup). */
	int skip_headroom;
	int eager_reconcile;     /* reconcile after every fetch */
	uint32_t demand_retries; /* infeasible budget retries, default 64 */
	/* How long a demand fetch waits for a landing victim's job to unpin
	 * it, default 100 ms; a test that judges the wait's outcome makes it
	 * long enough for any machine. */
	uint32_t landing_wait_ms;
};

void resid_harness_init(struct resid_harness *h);

/* Harness builds only. Accounting against the kernel (design.md §2.6).
 * Returns 0 when both the exact st_blocks check and the memory.stat check
 * hold; otherwise -1 and a line in why. */
struct resid_accounting {
	uint64_t resident, reserved;
	uint64_t st_bytes; /* fstat(memfd).st_blocks * 512, or the page
				   * count where that disproved an excess */
	uint64_t st_lag;   /* st_blocks*512 minus the page count then */
	int have_cgroup;
	uint64_t shmem;          /* memory.stat shmem of the region's cgroup */
	uint64_t shmem_baseline; /* shmem at region start (known overhead) */
	uint64_t tolerance;      /* the kernel's per-CPU flush threshold */
};
int resid_reconcile(struct resid_region *r, struct resid_accounting *acc,
		    char why[RESID_ERRLEN]);

/* Harness builds only, as are the four below. Waits until no fetch is
 * queued or in flight (tests, benchmarks). */
void resid_quiesce(struct resid_region *r);
/* Of the region's pages mapped in A, the bytes in folios larger than a
 * page: 0, or -errno where the kernel does not tell (not root). */
int resid_folio_census(struct resid_region *r, uint64_t *large);
/* Whether B holds huge folios: the region's folio choice (resid_config
 * huge_dir; the manifest's b_folios says why). */
int resid_huge(const struct resid_region *r);
/* Whether chunk failed for good (its accesses raise SIGBUS) or the region
 * failed: 1 or 0; -EINVAL for a NULL region or a chunk out of range,
 * -ECHILD in a forked child. resid_failure() names only the first. */
int resid_chunk_failed(const struct resid_region *r, uint32_t chunk);
/* At quiescence: huge pages only where chosen (I-9), pins balance (I-12), counters are
 * conserved (I-14), the budget was never exceeded (I-11). Returns the
 * number of violations, each reported through the invariants module. */
int resid_check_quiescent(struct resid_region *r);

/* design.md §5.1: no aligned 8-byte word is zero and each encodes its offset. */
uint64_t resid_content_word(uint64_t word_off, uint64_t seed);
void resid_content_fill(uint8_t *dst, uint64_t off, uint64_t len,
			uint64_t seed);
/* Harness builds only. Number of bytes in [buf, buf+len) that differ
 * from the content at off. */
uint64_t resid_content_mismatches(const uint8_t *buf, uint64_t off,
				  uint64_t len, uint64_t seed);

#endif
