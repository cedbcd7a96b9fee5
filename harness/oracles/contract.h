/* The failure contract's oracle (design.md §9), apart from oracle.h: it
 * needs the fault room's counts, which the other oracles do not. */
#ifndef HARNESS_CONTRACT_H
#define HARNESS_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "fault/fault.h"
#include "resid.h"

/* Whether every error the pager met (st) was one the fault seam injected
 * (fired, fault_seam_fired_all): then a chunk that failed for good is the
 * injector's doing. */
int oracle_errors_injected(const struct resid_stats *st,
			   const uint64_t fired[FP_COUNT]);
/* A read of chunk that raised SIGBUS (design.md §9): 1 when it is the contract's
 * outcome, the pager reporting the chunk or the region failed and every
 * error injected by fs; else 0 (a pager bug) and why (n bytes) says which
 * half failed. */
int oracle_sigbus_contract(struct resid_region *r, uint32_t chunk,
			   const struct fault_seam *fs, char *why, size_t n);

#endif
