/* The offline optimum (design.md §2.5, §8) over the workload's reference trace:
 * Belady's furthest-next-use rule, a lower bound, and the exact optimum of
 * small instances. Pure: no I/O, no OS calls beyond malloc.
 *
 * The rule, shared with the naive solver of the harness: walk the trace in
 * order; an access to a resident chunk is a hit; otherwise it is a miss, its
 * bytes are counted, and while the free capacity is smaller than the chunk
 * the resident chunk whose next access is furthest is evicted (never again
 * counts as furthest of all). Next uses are distinct positions, so a tie is
 * possible only among chunks never used again; it goes to the lowest id
 * (such chunks are never hit, so the choice cannot change the counts). For
 * equal chunks this is Belady's optimum. For unequal ones it is only a
 * heuristic scored in bytes missed (the problem is NP-hard): a pager can
 * beat it, so it is no bound.
 *
 * The bound: the same walk where a chunk may stay partly resident and
 * eviction takes bytes off the chunk used furthest ahead. That is Belady's
 * rule on the trace with every chunk split into bytes requested together,
 * optimal there (unit sizes); any whole-chunk schedule is one of its
 * schedules, so its bytes missed are a true lower bound. */
#ifndef RESID_BELADY_H
#define RESID_BELADY_H

#include <stddef.h>
#include <stdint.h>

enum trace_kind {
	TRACE_REFERENCE = 1, /* the workload's accesses, hit or miss */
	TRACE_FAULT = 2,     /* the pager's faults: its own output */
};

struct trace {
	enum trace_kind kind;
	uint32_t nchunks;
	uint64_t *sizes; /* nchunks entries, bytes */
	uint32_t *seq;   /* n chunk ids, in true order */
	uint64_t n;
};

struct belady_result {
	uint64_t accesses, hits, misses, bytes_missed;
};

/* 0 and *out filled, or -1 with one line in err: a fault trace, a chunk id
 * out of range, a chunk of 0 bytes or larger than the capacity, capacity 0,
 * or no memory for the next-use index. */
int belady(const struct trace *t, uint64_t capacity_bytes,
	   struct belady_result *out, char *err, size_t errlen);

/* The fractional lower bound above; misses counts the accesses that missed
 * any byte. Refuses what belady() refuses. */
int belady_bound(const struct trace *t, uint64_t capacity_bytes,
		 struct belady_result *out, char *err, size_t errlen);

/* The exact optimum (fewest bytes missed) by search over the resident sets,
 * for instances up to BELADY_EXACT_MAX_CHUNKS chunks; more is refused. */
#define BELADY_EXACT_MAX_CHUNKS 12
int belady_exact(const struct trace *t, uint64_t capacity_bytes,
		 struct belady_result *out, char *err, size_t errlen);

#endif
