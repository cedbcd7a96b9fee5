/* The run manifest: what a result was measured on. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"
#include "rev.h"

int resid_manifest_json(struct resid_region *r, char *buf, size_t cap)
{
	int rc = region_usable(r);

	if (rc)
		return rc;
	if (!buf)
		return -EINVAL;
	int n = snprintf(
		buf, cap,
		"{\"kernel\":\"%s\",\"uffd_features\":\"%#" PRIx64 "\","
		"\"uffd_ioctls\":\"%#" PRIx64 "\",\"cgroup_version\":%d,"
		"\"cgroup_dir\":\"%s\",\"cgroup_limit\":%" PRIu64 ","
		"\"swap_condition\":\"%s\",\"shmem_enabled\":\"%s\","
		"\"region_bytes\":%" PRIu64 ",\"chunks\":%u,"
		"\"max_chunk_bytes\":%" PRIu64 ",\"budget_bytes\":%" PRIu64 ","
		"\"policy\":\"%s\",\"prefetch_depth\":%u,\"fetch_workers\":%u,"
		"\"fetch_workers_chosen_by\":\"%s\","
		"\"backing\":\"%s\",\"o_direct\":%s,\"eager_reconcile\":%s,"
		"\"b_folios\":\"%s\",\"revision\":\"%s\"}",
		r->release, r->uffd_features, r->uffd_ioctls,
		r->have_cgroup ? r->cg.version : 0,
		r->have_cgroup ? r->cg.dir : "",
		r->have_cgroup ? r->cg.limit : 0,
		r->swap_condition < 0 ? "swap possible (allowed by caller)" :
					cg_swap_cond_name(r->swap_condition),
		r->shmem_thp, r->len, r->nchunks, r->max_chunk, r->budget,
		resid_policy_name(r->cfg.policy), r->cfg.prefetch_depth,
		r->cfg.fetch_workers, r->workers_auto ? "budget" : "cfg",
		r->cfg.backing == RESID_BACKING_FILE ? "file" : "synthetic",
		r->direct ? "true" : "false",
		r->h.eager_reconcile ? "true" : "false", r->b_folios,
		RESID_REV);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}
