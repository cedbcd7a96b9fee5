/* Memory headroom (design.md §9): what the pager needs in its cgroup beyond the
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

/* The region's fixed structures, the uffd, eventfd and memfd, the policy. */
#define BASE_BYTES (256ull << 10)
/* A thread: its kernel stack (16 KiB, charged), task, touched user stack;
 * a fetch worker is two (itself and its reader) and its bounce buffer. */
#define WORKER_BYTES (64ull << 10)
/* Per chunk: struct chunk, its ring and candidate slots, the policy's. */
#define CHUNK_BYTES 256ull
/* Per page of the region: a PTE in A and one in B (page tables are not
 * freed by a punch), and the memfd's page-cache tree (576-byte xarray
 * nodes of 64 slots): 25 bytes. */
#define PAGE_BYTES 25ull
/* The kernel charges a memory cgroup in batches of 64 pages per CPU
 * (MEMCG_CHARGE_BATCH): usage runs up to that far ahead of the pages. */
#define CPU_STOCK_BYTES (64 * RESID_PAGE)

static uint64_t headroom_bytes(const struct resid_config *cfg, unsigned cpus)
{
	uint64_t pages = (cfg->region_len + RESID_PAGE - 1) / RESID_PAGE;
	uint64_t nchunks = cfg->table_len;

	if (!nchunks && cfg->chunk_size)
		nchunks = (cfg->region_len + cfg->chunk_size - 1) /
			  cfg->chunk_size;
	return BASE_BYTES +
	       (uint64_t)config_workers(cfg) *
		       (2 * WORKER_BYTES + 2 * config_slot(cfg)) +
	       pages * PAGE_BYTES + nchunks * CHUNK_BYTES +
	       (cpus ? cpus : 1) * CPU_STOCK_BYTES;
}

uint64_t resid_headroom(const struct resid_config *cfg)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!cfg)
		return 0;

	return headroom_bytes(cfg, cpus > 0 ? (unsigned)cpus : 1);
}

/* Against the tightest level of the tree: a limit on an ancestor (a
 * container's, a systemd slice's) binds as hard as the cgroup's own, and
 * what its other descendants use counts. */
int headroom_check(struct resid_region *r, char *err, size_t n)
{
	struct cg_room room;
	uint64_t need;

	if (!r->have_cgroup)
		return 0;
	if (cg_read_room(&r->cg_env, &r->cg, &room, err, n) < 0)
		return -EIO;
	need = r->cfg.budget_bytes + headroom_bytes(&r->cfg, r->cpus);
	if (room.room >= need)
		return 0;
	/* The numbers first: a long cgroup path may be cut. */
	snprintf(err, n,
		 "budget_bytes %" PRIu64 " + headroom %" PRIu64
		 " exceed %s cgroup's room: limit %" PRIu64 ", %" PRIu64
		 " in use; raise it to %" PRIu64 " or lower budget_bytes: %s",
		 r->cfg.budget_bytes, need - r->cfg.budget_bytes,
		 strcmp(room.dir, r->cg.dir) ? "an ancestor" : "the process's",
		 room.limit, room.usage, room.usage + need, room.dir);
	return -ENOMEM;
}
