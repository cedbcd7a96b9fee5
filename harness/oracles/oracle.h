/* The oracles (design.md §4) that real-kernel runs use too, and so need
 * nothing of the simulation: the invariants as a watch, the accounting at
 * quiescence, the failure contract (contract.h). Those that end a
 * simulated run are harness/sim/oracles/'s. The invariants themselves are
 * invariants/'s. */
#ifndef HARNESS_ORACLE_H
#define HARNESS_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/row.h"
#include "resid.h"

struct resid_accounting;

/* Until oracle_invariants_stop, every invariant the pager reports
 * (invariants/) is counted into *count (atomically; NULL: not counted)
 * and its line, "I-N (title): what", given to say(arg, line). One watch
 * at a time per process. */
void oracle_invariants_to(uint64_t *count,
			  void (*say)(void *arg, const char *line), void *arg);
void oracle_invariants_stop(void);

/* The accounting at quiescence (design.md §2.6, T-4): waits for the fetches in
 * flight, reconciles into acc, and judges fstat's st_blocks against the
 * pager's resident bytes, exactly, and the cgroup's memory.stat shmem
 * against them: equal, pass; apart by no more than the kernel's flush
 * tolerance, unknown (the lag hides a difference that small); no cgroup
 * to read, unknown; a reconcile that failed, fail. why (n bytes) says the
 * first failure, else what is unknown. */
enum verdict oracle_accounting(struct resid_region *r,
			       struct resid_accounting *acc, char *why,
			       size_t n);
/* Its judgement of a reconcile that succeeded. */
enum verdict oracle_accounting_judge(const struct resid_accounting *acc,
				     char *why, size_t n);

#endif
