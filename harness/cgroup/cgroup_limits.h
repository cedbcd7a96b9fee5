/* The harness's half of the cgroup v1/v2 mapping: limits as written, and
 * a cgroup described in one line. The pager reads cgroups (cgroupfs.h);
 * only the harness writes them. */
#ifndef RESID_CGROUP_LIMITS_H
#define RESID_CGROUP_LIMITS_H

#include "cgroupfs.h"

const char *cg_version_name(int version); /* "none", "v1", "v2" */
/* A value as the kernel accepts it; CG_UNLIMITED is "max" (v2), "-1" (v1). */
int cg_format_limit(int version, uint64_t v, char *buf, size_t n);

struct cg_write {
	const char *file;
	char value[24];
};
#define CG_MAX_WRITES 2

/* The ordered writes that set `limit` with swap forbidden in a cgroup whose
 * current state is `cur` (version, swap_limit, has_swap_file). v1 keeps
 * memsw >= limit at every step: the lower of the two moves first. v2 forbids
 * swap before the limit can push pages out. Without a swap file only the
 * limit is written (I-3 then rests on SwapTotal 0). Returns the number of
 * writes, or -1 when the version is CG_NONE or limit is not a finite,
 * positive multiple of RESID_PAGE. */
int cg_limit_writes(const struct cg_memory *cur, uint64_t limit,
		    struct cg_write out[CG_MAX_WRITES]);

/* One line: version, dir, limits, swap total (probe, manifest). */
int cg_describe(const struct cg_memory *m, char *buf, size_t n);

#endif
