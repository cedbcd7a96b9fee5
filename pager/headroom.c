/* Memory headroom (SPEC §9): what the pager needs in its cgroup beyond the
 * budget. A cgroup limit equal to the budget gets the process OOM-killed, so
 * resid_open refuses a region whose cgroup cannot hold budget + headroom.
 * The figures are measured (scripts/headroom.sh, docs/core.md): the peak of
 * the cgroup's usage while a region is read, less the usage before
 * resid_open and less the budget. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define PAGE 4096ull
/* The threads' touched stacks, the uffd, eventfd and memfd, the policy and
 * the region's fixed structures. */
#define BASE_BYTES (256ull << 10)
#define WORKER_BYTES (32ull << 10)
/* Per chunk: struct chunk, its ring and candidate slots, the policy's. */
#define CHUNK_BYTES 256ull
/* The kernel charges a memory cgroup in batches of 64 pages per CPU
 * (MEMCG_CHARGE_BATCH): usage runs up to that far ahead of the pages. */
#define CPU_STOCK_BYTES (64 * PAGE)

static uint64_t headroom_bytes(const struct resid_config *cfg, unsigned cpus)
{
	uint64_t len = (cfg->region_len + PAGE - 1) & ~(PAGE - 1);
	uint64_t nchunks = cfg->table_len;

	if (!nchunks && cfg->chunk_size)
		nchunks = (cfg->region_len + cfg->chunk_size - 1) /
			cfg->chunk_size;
	/* Page tables of A and B: 8 bytes a page each, in whole pages, and
	 * one table page per 2 MiB for the partly filled ends. */
	uint64_t ptes = 2 * ((len / PAGE * 8 + PAGE - 1) & ~(PAGE - 1)) +
		2 * PAGE;

	return BASE_BYTES + cfg->fetch_workers * WORKER_BYTES + ptes +
		nchunks * CHUNK_BYTES + (cpus ? cpus : 1) * CPU_STOCK_BYTES;
}

uint64_t resid_headroom(const struct resid_config *cfg)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return headroom_bytes(cfg, cpus > 0 ? (unsigned)cpus : 1);
}

int headroom_check(struct resid_region *r, char *err, size_t n)
{
	uint64_t usage, need;
	int rc;

	if (!r->have_cgroup || r->cg.limit == CG_UNLIMITED)
		return 0;
	rc = cg_read_usage(&r->cg_env, &r->cg, &usage);
	if (rc < 0) {
		snprintf(err, n, "cannot read %s/%s: %s", r->cg.dir,
			 cg_usage_file(r->cg.version), strerror(-rc));
		return rc;
	}
	need = r->cfg.budget_bytes + headroom_bytes(&r->cfg, r->cpus);
	if (usage <= r->cg.limit && r->cg.limit - usage >= need)
		return 0;
	snprintf(err, n, "memory cgroup %s: limit %" PRIu64 " with %" PRIu64
		 " in use leaves less than budget_bytes %" PRIu64 " + %" PRIu64
		 " of pager headroom: raise the limit to at least %" PRIu64
		 " or lower budget_bytes", r->cg.dir, r->cg.limit, usage,
		 r->cfg.budget_bytes, need - r->cfg.budget_bytes,
		 usage + need);
	return -ENOMEM;
}
