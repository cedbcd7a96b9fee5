/* The accounting oracle (design.md §2.6): at quiescence, what the pager holds
 * against what the kernel says it holds. st_blocks is exact there;
 * memory.stat lags by up to the kernel's per-CPU flush threshold, so a
 * difference within it is the one verdict the harness cannot give. T-4 on
 * the real kernel, READ_ACCOUNT on the simulated one (program.c). */
#include <inttypes.h>
#include <stdio.h>

#include "oracles/oracle.h"
#include "resid_harness.h"

enum verdict oracle_accounting(struct resid_region *r,
			       struct resid_accounting *acc, char *why,
			       size_t n)
{
	char err[RESID_ERRLEN];

	resid_quiesce(r);
	if (resid_reconcile(r, acc, err) < 0) {
		snprintf(why, n, "reconcile: %s", err);
		return VERDICT_FAIL;
	}
	return oracle_accounting_judge(acc, why, n);
}

enum verdict oracle_accounting_judge(const struct resid_accounting *acc,
				     char *why, size_t n)
{
	uint64_t want, off;

	if (acc->st_bytes != acc->resident) {
		snprintf(why, n,
			 "st_blocks*512 %" PRIu64 " != resident %" PRIu64
			 " at quiescence",
			 acc->st_bytes, acc->resident);
		return VERDICT_FAIL;
	}
	if (!acc->have_cgroup) {
		snprintf(why, n,
			 "no memory cgroup to compare memory.stat with");
		return VERDICT_UNKNOWN;
	}
	want = acc->resident + acc->shmem_baseline;
	off = acc->shmem > want ? acc->shmem - want : want - acc->shmem;
	if (!off)
		return VERDICT_PASS;
	snprintf(why, n,
		 "memory.stat shmem %" PRIu64 " is %" PRIu64 " %s "
		 "the expected %" PRIu64
		 ", %s the kernel's flush tolerance %" PRIu64,
		 acc->shmem, off, acc->shmem > want ? "above" : "below", want,
		 off > acc->tolerance ? "outside" : "within", acc->tolerance);
	return off > acc->tolerance ? VERDICT_FAIL : VERDICT_UNKNOWN;
}
