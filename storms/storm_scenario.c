/* The gate's storm (design.md §5.3 T-3): 8 threads read random pieces of random
 * chunks under a 25 % budget with prefetch on and 4 fetch workers, every byte
 * checked, eager reconcile, in its own process and memory cgroup; on a
 * file leg from a real file, on an unequal leg over a table of unequal
 * chunks. */
#include <inttypes.h>
#include <stdio.h>

#include "fault/fault.h"
#include "storm_scenario.h"
#include "workload/content_file.h"
#include "workload/huge_leg.h"

void storm_scenario_config(const struct run_opts *o, uint64_t salt,
			   struct storm_config *c)
{
	int full = o->profile == PROFILE_FULL;

	*c = (struct storm_config){
		.seed = o->seed * 7919 + salt,
		.region_len = 16ull << 20,
		.chunk_size = 1ull << 20,
		.budget_ratio = 0.25,
		.threads = 8,
		.workers = 4,
		.prefetch_depth = 2,
		.policy = RESID_POLICY_DECLARED,
		.seconds = full ? 60 : 3,
		.watchdog_seconds = full ? 120 : 10,
		.limit_bytes = 512ull << 20,
	};
	/* A swarm draws the chunk size too (fault_swarm_chunk). */
	if (o->storm_chunk)
		c->chunk_size = o->storm_chunk;
	else if (o->faults->swarm)
		c->chunk_size = fault_swarm_chunk(c->seed);
	/* A file ends unaligned, as does the last of unequal layers; on the
	 * huge leg half a folio early, so that the last chunk holds a tail. */
	if (o->leg & LEG_HUGE)
		c->region_len -= huge_leg_folio() / 2;
	if (o->leg)
		c->region_len = content_file_len(c->region_len, c->seed);
	if (o->leg & LEG_FILE)
		c->file_dir = o->file_dir;
	if (o->leg & LEG_UNEQUAL)
		c->chunk_size = 0;
	/* The huge leg's equal chunks are folios, so it takes the huge path. */
	if (o->leg & LEG_HUGE) {
		c->huge_dir = o->huge_dir;
		c->huge_mount = 1;
		if (c->chunk_size)
			c->chunk_size = huge_leg_folio();
	}
	c->faults = o->faults;
}

int storm_scenario_run(const struct storm_config *c, struct scen_result *res,
		       struct storm_result *sr)
{
	char line[256];

	if (storm_run(c, sr) < 0) {
		scen_fail(res, "%s", sr->message);
		return -1;
	}
	snprintf(res->backing, sizeof(res->backing), "%s",
		 !c->file_dir ? "synthetic" :
		 sr->direct   ? "file O_DIRECT" :
				"file buffered");
	snprintf(res->chunks, sizeof(res->chunks), "%s%s",
		 c->chunk_size ? "equal" : "unequal",
		 c->huge_dir ? "+huge" : "");
	res->checks = sr->bytes_checked;
	res->mismatches = sr->mismatches + sr->violations;
	scen_count(res, "touches", sr->touches);
	scen_count(res, "fetches", sr->stats.fetches);
	scen_count(res, "evictions", sr->stats.evictions);
	scen_count(res, "prefetches", sr->stats.prefetch_jobs);
	scen_count(res, "dedup_fetching", sr->stats.dedup_fetching);
	scen_count(res, "dedup_resident", sr->stats.dedup_resident);
	scen_count(res, "st_blocks_lag", sr->stats.st_blocks_lag);
	scen_count(res, "shmem_lag", sr->stats.shmem_lag);
	if (c->huge_dir)
		scen_count(res, "huge_bytes", sr->huge_bytes);
	fault_report(c->faults, sr->fired, res);
	/* Only when some were: a row without faults keeps its counters. */
	if (sr->refused_reads)
		scen_count(res, "refused_reads", sr->refused_reads);
	if (!storm_passed(sr)) {
		storm_describe(c, line, sizeof(line));
		scen_fail(res, "%s (storm: %s)",
			  sr->message[0] ? sr->message : "failed", line);
	}
	return 0;
}
