/* The offline optimum (SPEC §2.5): Belady's furthest-next-use rule over the
 * workload's reference trace. Pure: no I/O, no OS calls beyond malloc.
 *
 * The rule, shared with the naive solver of the harness: walk the trace in
 * order; an access to a resident chunk is a hit; otherwise it is a miss, its
 * bytes are counted, and while the free capacity is smaller than the chunk
 * the resident chunk whose next access is furthest is evicted (never again
 * counts as furthest of all). Next uses are distinct positions, so a tie is
 * possible only among chunks never used again; it goes to the lowest id
 * (such chunks are never hit, so the choice cannot change the counts). For
 * equal chunks this is Belady's optimum; for unequal ones it is the same rule
 * scored in bytes missed. */
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
	uint64_t *sizes;     /* nchunks entries, bytes */
	uint32_t *seq;       /* n chunk ids, in true order */
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

#endif
