/* The failure contract's oracle (design.md §9): a read that raised SIGBUS is the
 * contract's outcome, not a pager bug, only when the pager reports its chunk
 * (or the region) failed for good and every error the pager met was one the
 * fault seam injected. The simulated and the real-kernel readers judge by
 * this one rule. */
#include <stdio.h>

#include "fault/fault.h"
#include "oracles/contract.h"
#include "resid_harness.h"

int oracle_errors_injected(const struct resid_stats *st,
			   const uint64_t fired[FP_COUNT])
{
	return st->io_errors <= fired[FP_READ_EIO] + fired[FP_READ_EINTR] +
					fired[FP_READ_SHORT] +
					fired[FP_WRITE_ENOMEM] +
					fired[FP_WRITE_SHORT] &&
	       st->continue_errors <=
		       fired[FP_CONT_EEXIST] + fired[FP_CONT_EFAULT] &&
	       st->continue_eagain <= fired[FP_CONT_EAGAIN];
}

int oracle_sigbus_contract(struct resid_region *r, uint32_t chunk,
			   const struct fault_seam *fs, char *why, size_t n)
{
	struct resid_stats st;
	uint64_t fired[FP_COUNT];
	uint32_t at;
	int failed = resid_chunk_failed(r, chunk);
	int err = resid_failure(r, &at);

	if (failed < 0 || resid_get_stats(r, &st) < 0) {
		snprintf(why, n, "cannot ask the pager about chunk %u (%d)",
			 chunk, failed);
		return 0;
	}
	if (!failed) {
		snprintf(why, n,
			 "the pager does not report chunk %u failed "
			 "(first failure: errno %d at chunk %d)",
			 chunk, err, at == RESID_NO_CHUNK ? -1 : (int)at);
		return 0;
	}
	fault_seam_fired_all(fs, fired);
	if (!oracle_errors_injected(&st, fired)) {
		snprintf(why, n,
			 "the region failed with errno %d at chunk %d "
			 "and not every error was injected (io %llu, "
			 "continue %llu, eagain %llu)",
			 err, at == RESID_NO_CHUNK ? -1 : (int)at,
			 (unsigned long long)st.io_errors,
			 (unsigned long long)st.continue_errors,
			 (unsigned long long)st.continue_eagain);
		return 0;
	}
	return 1;
}
