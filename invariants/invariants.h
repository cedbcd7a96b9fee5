/* The invariants I-1..I-14 (design.md §3) as checks callable at any point. The
 * pager's debug (harness) builds call them where they apply; the harness
 * calls them after steps and at the end. A check that fails reports through
 * inv_report(): counted per id and passed to the installed handler. */
#ifndef RESID_INVARIANTS_H
#define RESID_INVARIANTS_H

#include <stdint.h>
#include "resid_harness.h"

#define INV_MAX 14

typedef void (*inv_handler)(int id, const char *msg, void *arg);

/* The handler sees every violation; the default prints it to stderr. */
void inv_set_handler(inv_handler h, void *arg);
void inv_report(int id, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *inv_title(int id);

/* Each returns 1 when the invariant holds, else reports and returns 0. */

/* I-1: a buffer the pager writes or reads is not inside mapping A. */
int inv_not_in_a(const void *p, uint64_t len, const void *a, uint64_t alen);
/* I-2: the uffd was opened non-blocking. */
int inv_uffd_nonblock(int open_flags);
/* I-4: a punch hits only a RESIDENT chunk with pin 0 that is no prefetch
 * target. */
int inv_punch_ok(uint32_t chunk, int state_resident, int32_t pin, int retained);
/* I-5: CONTINUE only over a fully populated chunk, mapping exactly len. */
int inv_continue_ok(uint32_t chunk, uint64_t populated, uint64_t len,
		    uint64_t mapped);
/* I-6: a state change by a thread that holds the chunk lock. */
int inv_locked(uint32_t chunk, int held);
/* I-7: st_bytes within [resident, resident + reserved]; shmem within the
 * same interval shifted by the baseline, widened by the tolerance. */
int inv_accounting(const struct resid_accounting *acc, char *why, size_t n);
/* The same check without the report: a verdict for the caller to judge. */
int inv_accounting_holds(const struct resid_accounting *acc, char *why,
			 size_t n);
/* I-7 at quiescence: no lag left, st_blocks equals resident exactly. */
int inv_accounting_quiescent(uint64_t st_bytes, uint64_t resident,
			     uint64_t reserved);
/* I-9: in /proc/self/smaps text, the mapping that starts at `start` has no
 * huge pages (AnonHugePages, ShmemPmdMapped, FilePmdMapped all 0 kB).
 * Returns -1 when the mapping is not in the text. */
int inv_no_thp(const char *smaps, const void *start);
/* I-9: a region on the 4 KiB path (huge 0) holds no page of a large
 * folio; `large` is the census of its mapped pages, `why` its choice. */
int inv_folios(int huge, uint64_t large, const char *why);
/* I-11: resident <= budget, at every change. */
int inv_budget(uint64_t resident, uint64_t budget);
/* I-12: a pin count never negative; zero at quiescence. */
int inv_pin(uint32_t chunk, int32_t pin, int quiescent);
/* I-4 for eviction that overlaps consumption (overlap_evict): a chunk with
 * a dropped (punched) prefix is RESIDENT, and the prefix is whole folios
 * within what the chunk holds. */
int inv_dropped(uint32_t chunk, int state_resident, uint64_t dropped,
		uint64_t hold, uint64_t folio);
/* I-7 in the pager's own books, at quiescence: resident is what the
 * RESIDENT chunks hold, each its hold less its dropped prefix. */
int inv_resident_sum(uint64_t held_sum, uint64_t resident);
/* I-14: counter conservation. */
int inv_conservation(const struct resid_stats *s, uint64_t fetched_len_sum);

#endif
