/* residctl run --trace (docs/run.md): the references each process's
 * preload wrote into the records' directory (REPORT/<pid>.trace, one chunk
 * id a line) made into FILE, the format of harness/analysis/trace.h. */
#ifndef HARNESS_RUN_TRACE_H
#define HARNESS_RUN_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "resid.h"

struct run_trace_info {
	uint64_t records;   /* in FILE */
	uint32_t processes; /* that recorded any */
	long pid;           /* whose references FILE holds; 0: none */
};

/* Writes FILE (path) from dir's references over the chunk table: the
 * process with the most records when several recorded (their regions are
 * separate, so their sequences are not one). 0 with *info filled, or -1
 * with one line in err (nothing recorded, a malformed id, an I/O error). */
int run_trace_write(const char *dir, const char *path,
		    const struct resid_chunk_spec *chunks, uint32_t nchunks,
		    struct run_trace_info *info, char *err, size_t n);

#endif
