/* residctl run's account of a run (docs/run.md): the records the preload
 * left, one per process that mapped the file, added up into the summary
 * line and --json. */
#ifndef HARNESS_RUN_REPORT_H
#define HARNESS_RUN_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "resid.h"

struct run_totals {
	uint64_t regions, served, kernel, refused, populate, ignored;
	uint64_t fetch_bytes, faults, fetches, refaults, resident_max;
	uint64_t prefetches;
	/* Chunks failed for good (resid.h, "Failures after open"); the first
	 * process's first error and chunk (RESID_NO_CHUNK: none, or the
	 * whole region); the offset of the file its SIGBUS hit (UINT64_MAX:
	 * none caught, or sent without an address). */
	uint64_t failed, fail_errno, fail_chunk, sigbus_off;
	uint64_t trace_errors; /* --trace: drops refused, records lost */
	uint32_t processes, unfinished;
	char reason[320]; /* the first reason a mapping went to the kernel */
};

/* What residctl run set up, for the summary and --json. */
struct run_setup {
	const char *path, *program, *policy, *order_source;
	uint64_t size, budget, headroom, margin, limit;
	uint32_t nchunks, prefetch;
	const struct resid_chunk_spec *chunks;
	const uint32_t *seq; /* the read order; nseq ids, each chunk once */
	uint32_t nseq;       /* less the pieces of a table read by rows */
	/* --kernel-mmap: the advice given (arm A, no pager); NULL: the pager */
	const char *advice;
	const char *device_class;
	uint64_t read_bytes; /* the block layer's, of the program's processes */
};

/* Adds up the records of dir (one file per pid). -1 with a line in err
 * when dir cannot be read or a record is malformed. json_procs, when not
 * NULL, receives a jansson array of the records. */
int run_totals_read(const char *dir, struct run_totals *t, void **json_procs,
		    char *err, size_t n);

/* The one summary line on stderr. */
void run_summary(const struct run_setup *s, const struct run_totals *t,
		 int status);

/* --json: written to path.tmp and renamed, so nothing half-written is
 * left. Takes json_procs. 0, or -1 with a line in err. */
int run_json(const char *path, const struct run_setup *s,
	     const struct run_totals *t, void *json_procs, int status,
	     char *err, size_t n);

#endif
