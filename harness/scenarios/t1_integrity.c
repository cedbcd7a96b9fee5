/* T-1 data integrity: read the whole 16 MiB region (2 MiB chunks) under a
 * 25 % budget, every byte checked, for every policy; I-11 is asserted by the
 * pager at every change of `resident`. Also from a real file, on unequal
 * chunks, and both. */
#include <inttypes.h>

#include "scenarios/scenario.h"
#include "workload/budget_share.h"
#include "workload/workload.h"

#define MiB (1024ull * 1024)

static int t1_run(const struct run_opts *o, struct scen_result *res)
{
	static const enum resid_policy policies[] = {
		RESID_POLICY_LRU,
		RESID_POLICY_LEARNED,
		RESID_POLICY_DECLARED,
	};
	unsigned passes = o->profile == PROFILE_FULL ? 10 : 3;
	uint64_t fetches = 0, evictions = 0, resident_max = 0, shmem_lag = 0;

	for (unsigned p = 0; p < 3; p++) {
		struct resid_config cfg;
		struct resid_region *r;
		struct resid_stats s;
		uint64_t before = res->checks;

		resid_config_init(&cfg);
		cfg.backing = RESID_BACKING_SYNTHETIC;
		cfg.region_len = 16 * MiB;
		cfg.chunk_size = 2 * MiB;
		cfg.seed = o->seed + p;
		cfg.budget_bytes = budget_share(cfg.region_len, 0.25,
						wl_leg(&cfg, o));
		cfg.policy = policies[p];
		r = wl_open(&cfg, o, res);
		if (!r)
			return -1;
		for (unsigned pass = 0; pass < passes; pass++)
			for (uint32_t c = 0; c < resid_nchunks(r); c++)
				wl_read_chunk(r, &cfg, c, res);
		if (res->checks - before != passes * cfg.region_len)
			scen_fail(res,
				  "%s checked %" PRIu64 " bytes, not every "
				  "byte",
				  resid_policy_name(cfg.policy),
				  res->checks - before);
		wl_close(r, res, &s);
		fetches += s.fetches;
		evictions += s.evictions;
		shmem_lag += s.shmem_lag;
		if (s.resident_max > resident_max)
			resident_max = s.resident_max;
	}
	scen_count(res, "policies", 3);
	scen_count(res, "passes", passes);
	scen_count(res, "fetches", fetches);
	scen_count(res, "evictions", evictions);
	scen_count(res, "resident_max", resident_max);
	scen_count(res, "shmem_lag", shmem_lag);
	return 0;
}

/* Simulated: one thread scans 4 chunks twice under a one-chunk budget; the
 * policy is chosen by the seed. */
const struct scenario scenario_t1 = {
	.id = "T-1",
	.title = "data integrity, every policy, every byte",
	.needs_cgroup = 1,
	.run = t1_run,
	.legs = LEG_FILE | LEG_UNEQUAL | LEG_HUGE,
	.sim =
		&(const struct sim_sizing){
			.threads = 1,
			.chunks = 4,
			.budget_chunks = 1,
			.workers = 2,
			.ops = 2,
			.pattern = READ_SCAN,
		},
};
