/* The harness's half of the cgroup v1/v2 mapping (cgroupfs.h has the
 * reading half the pager uses): the values the harness writes to give a
 * scenario's cgroup its limit with swap forbidden, and one line describing
 * a cgroup for probe and the reports. */
#include <inttypes.h>
#include <stdio.h>

#include "cgroup/cgroup_limits.h"

const char *cg_version_name(int version)
{
	switch (version) {
	case CG_V1:
		return "v1";
	case CG_V2:
		return "v2";
	default:
		return "none";
	}
}

int cg_format_limit(int version, uint64_t v, char *buf, size_t n)
{
	int w;

	if (version != CG_V1 && version != CG_V2)
		return -1;
	if (v == CG_UNLIMITED)
		w = snprintf(buf, n, "%s", version == CG_V2 ? "max" : "-1");
	else
		w = snprintf(buf, n, "%" PRIu64, v);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

int cg_limit_writes(const struct cg_memory *cur, uint64_t limit,
		    struct cg_write out[CG_MAX_WRITES])
{
	int v = cur->version, k = 0, swap_first;
	uint64_t swap_value;

	if ((v != CG_V1 && v != CG_V2) || limit == 0 || limit == CG_UNLIMITED ||
	    limit % RESID_PAGE)
		return -1;
	/* v1 refuses limit > memsw: when raising past the current memsw,
	 * memsw must move first; otherwise limit first. v2's two files are
	 * independent: forbid swap first so lowering the limit cannot swap. */
	swap_first = v == CG_V2 || limit > cur->swap_limit;
	swap_value = v == CG_V2 ? 0 : limit;
	if (cur->has_swap_file && swap_first) {
		out[k].file = cg_swap_file(v);
		if (cg_format_limit(v, swap_value, out[k].value,
				    sizeof(out[k].value)))
			return -1;
		k++;
	}
	out[k].file = cg_limit_file(v);
	if (cg_format_limit(v, limit, out[k].value, sizeof(out[k].value)))
		return -1;
	k++;
	if (cur->has_swap_file && !swap_first) {
		out[k].file = cg_swap_file(v);
		if (cg_format_limit(v, swap_value, out[k].value,
				    sizeof(out[k].value)))
			return -1;
		k++;
	}
	return k;
}

int cg_describe(const struct cg_memory *m, char *buf, size_t n)
{
	char lim[24], swp[24];
	int w;

	if (m->version == CG_NONE) {
		w = snprintf(buf, n, "cgroup none swap_total=%" PRIu64,
			     m->swap_total);
	} else {
		/* "max" on either version: a description, not a value to write */
		if (cg_format_limit(CG_V2, m->limit, lim, sizeof(lim)) ||
		    cg_format_limit(CG_V2, m->swap_limit, swp, sizeof(swp)))
			return -1;
		w = snprintf(buf, n,
			     "cgroup %s dir=%s %s=%s %s=%s swap_total=%" PRIu64,
			     cg_version_name(m->version), m->dir,
			     cg_limit_file(m->version), lim,
			     cg_swap_file(m->version),
			     m->has_swap_file ? swp : "absent", m->swap_total);
	}
	return w < 0 || (size_t)w >= n ? -1 : 0;
}
