/* T-2 punch-refetch: two chunks under a one-chunk budget, read in turn, so
 * every read evicts the other chunk by punching it and fetches again. Also
 * from a real file, whose second chunk ends unaligned. */
#include <inttypes.h>

#include "scenarios/scenario.h"
#include "workload/huge_leg.h"
#include "workload/workload.h"

#define CHUNK (1024ull * 1024)

static int t2_run(const struct run_opts *o, struct scen_result *res)
{
	struct resid_config cfg;
	struct resid_region *r;
	struct resid_stats s;
	unsigned cycles;

	resid_config_init(&cfg);
	cfg.backing = RESID_BACKING_SYNTHETIC;
	/* The huge leg's chunks are folios: each punch frees one whole. */
	cfg.chunk_size = o->leg & LEG_HUGE ? huge_leg_folio() : CHUNK;
	cfg.region_len = 2 * cfg.chunk_size;
	/* The huge legs' 500 punches of whole folios cost the gate 7 s each. */
	cycles = o->leg & LEG_HUGE ? 250 : 1000;
	cfg.seed = o->seed;
	cfg.budget_bytes = wl_leg(&cfg, o); /* one chunk */
	cfg.policy = RESID_POLICY_LRU;
	r = wl_open(&cfg, o, res);
	if (!r)
		return -1;
	for (unsigned i = 0; i < cycles; i++) {
		wl_read_chunk(r, &cfg, 0, res);
		wl_read_chunk(r, &cfg, 1, res);
	}
	wl_close(r, res, &s);
	scen_count(res, "cycles", cycles);
	scen_count(res, "fetches", s.fetches);
	scen_count(res, "evictions", s.evictions);
	scen_count(res, "faults_missing", s.faults_missing);
	if (s.evictions < cycles - 1)
		scen_fail(res, "%" PRIu64 " evictions, expected >= %u",
			  s.evictions, cycles - 1);
	return 0;
}

const struct scenario scenario_t2 = {
	.id = "T-2",
	.title = "punch and refetch",
	.needs_cgroup = 1,
	.run = t2_run,
	.legs = LEG_FILE | LEG_HUGE,
	.sim =
		&(const struct sim_sizing){
			.threads = 1,
			.chunks = 2,
			.budget_chunks = 1,
			.workers = 1,
			.ops = 10,
			.pattern = READ_ALTERNATE,
		},
};
