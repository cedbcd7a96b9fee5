/* residctl run's interposer (docs/run.md, design.md §11): what it reads from
 * the environment residctl run sets, and the record each process leaves. */
#ifndef RESID_PRELOAD_H
#define RESID_PRELOAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "resid.h"

#define PRELOAD_ERRLEN 320

/* Which file is served: from RESIDCTL_RUN_FILE and RESIDCTL_RUN_ID, read
 * without allocating (the first call may come from an allocator). */
struct preload_ident {
	int set;                  /* RESIDCTL_RUN_FILE given */
	char path[4096];          /* canonical, absolute */
	int id_ok;                /* RESIDCTL_RUN_ID well formed */
	uint64_t dev, ino, size;  /* the file as residctl run saw it */
	char report[4096];        /* RESIDCTL_RUN_REPORT, "" when unset */
	char err[PRELOAD_ERRLEN]; /* why not id_ok */
};

/* The region's configuration, read at the first mapping of the file. */
struct preload_cfg {
	int ok;
	char err[PRELOAD_ERRLEN]; /* why not ok: the variable and its fix */
	uint64_t budget;
	struct resid_chunk_spec *table;
	uint32_t nchunks;
	uint32_t *order; /* NULL: 0..n-1 */
	uint32_t order_len;
	enum resid_policy policy;
	uint32_t prefetch;
	char huge_dir[4096]; /* "" when unset */
	int trace;           /* RESIDCTL_RUN_TRACE: record references */
};

void preload_ident_read(struct preload_ident *id);
/* Fills c for a file of `size` bytes; c->ok 0 with c->err otherwise. */
void preload_cfg_read(struct preload_cfg *c, uint64_t size);

#endif
