/* Trace files (design.md §2.5, I-10): a text format whose header says whether it
 * is the workload's reference trace or the pager's fault trace.
 *
 *   residctl-trace 1 reference    magic, version 1, kind: reference | fault
 *   chunks 3                      chunk count, 1..TRACE_MAX_CHUNKS
 *   chunk-size 2097152            equal chunks; or, for unequal chunks, one
 *                                 line per chunk in id order instead:
 *                                   size 0 4096
 *                                   size 1 8192 ...
 *   accesses 5                    number of records that follow
 *   0                             one chunk id per line, one record per
 *   2                             access (hit or miss), in true order
 *
 * Sizes are bytes, > 0 and a multiple of 4096. Numbers are plain decimal;
 * fields are separated by one space; every line ends in '\n'; nothing follows
 * the last record. The reader refuses anything else with one line naming the
 * file and line: a missing count catches a truncated file, a missing final
 * newline a torn last line. */
#ifndef HARNESS_TRACE_H
#define HARNESS_TRACE_H

#include <stddef.h>

#include "analysis/belady.h"

#define TRACE_MAX_CHUNKS (1u << 24)

/* 0 with *out filled (release with trace_free), or -1 with one line in err
 * and *out empty. */
int trace_read(const char *path, struct trace *out, char *err, size_t errlen);

/* Writes t in the format above (chunk-size when every size is equal). -1
 * with one line in err when t would not read back, or on an I/O error. */
int trace_write(const char *path, const struct trace *t, char *err,
		size_t errlen);

/* Frees sizes and seq and empties t. Safe on an empty trace. */
void trace_free(struct trace *t);

#endif
