/* T-3, T-6, T-7: one storm on the real kernel, judged three ways. 8 threads
 * read random pieces of random chunks under a 25 % budget with prefetch on
 * and 4 fetch workers, every byte checked, eager reconcile; each storm runs
 * in its own process and memory cgroup (storms/storm.h). */
#include <inttypes.h>

#include "scenario.h"
#include "storm.h"

static void configure(const struct run_opts *o, uint64_t salt,
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
		.watchdog_seconds = full ? 120 : 20,
		.limit_bytes = 512ull << 20,
	};
	if (o->storm_chunk)
		c->chunk_size = o->storm_chunk;
	c->faults = o->faults;
}

static int storm(const struct run_opts *o, uint64_t salt,
		 struct scen_result *res, struct storm_result *sr)
{
	struct storm_config c;
	char line[256];

	configure(o, salt, &c);
	if (storm_run(&c, sr) < 0) {
		scen_fail(res, "%s", sr->message);
		return -1;
	}
	res->checks = sr->bytes_checked;
	res->mismatches = sr->mismatches + sr->violations;
	scen_count(res, "touches", sr->touches);
	scen_count(res, "fetches", sr->stats.fetches);
	scen_count(res, "evictions", sr->stats.evictions);
	scen_count(res, "prefetches", sr->stats.prefetch_jobs);
	scen_count(res, "dedup_fetching", sr->stats.dedup_fetching);
	scen_count(res, "dedup_resident", sr->stats.dedup_resident);
	fault_report(o->faults, sr->fired, res);
	if (!storm_passed(sr)) {
		storm_describe(&c, line, sizeof(line));
		scen_fail(res, "%s (storm: %s)", sr->message[0] ? sr->message :
			  "failed", line);
	}
	return 0;
}

static int t3_run(const struct run_opts *o, struct scen_result *res)
{
	struct storm_result sr;

	return storm(o, 3, res, &sr);
}

static int t6_run(const struct run_opts *o, struct scen_result *res)
{
	struct storm_result sr;

	if (storm(o, 6, res, &sr) < 0)
		return -1;
	if (!sr.stats.dedup_fetching || !sr.stats.dedup_resident)
		scen_fail(res, "dedup did not fire: dedup_fetching %" PRIu64
			  ", dedup_resident %" PRIu64,
			  sr.stats.dedup_fetching, sr.stats.dedup_resident);
	return 0;
}

static int t7_run(const struct run_opts *o, struct scen_result *res)
{
	struct storm_result sr;
	struct storm_config c;

	if (storm(o, 7, res, &sr) < 0)
		return -1;
	configure(o, 7, &c);
	scen_count(res, "watchdog_s", (uint64_t)c.watchdog_seconds);
	scen_count(res, "hung", (uint64_t)sr.hung);
	scen_count(res, "worst_touch_us", sr.worst_touch_ns / 1000);
	return 0;
}

const struct scenario scenario_t3 = {
	.id = "T-3",
	.title = "concurrent storm, every byte checked",
	.run = t3_run,
};
const struct scenario scenario_t6 = {
	.id = "T-6",
	.title = "storm: dedup of faults fires",
	.run = t6_run,
};
const struct scenario scenario_t7 = {
	.id = "T-7",
	.title = "storm: no lost fault (watchdog)",
	.run = t7_run,
};
