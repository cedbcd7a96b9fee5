/* T-7 no lost fault: T-3's storm under a watchdog; a reader that does not
 * join in time is dumped (wchan, state) and fails the gate. */
#include "storm_scenario.h"

static int t7_run(const struct run_opts *o, struct scen_result *res)
{
	struct storm_result sr;
	struct storm_config c;

	storm_scenario_config(o, 7, &c);
	if (storm_scenario_run(&c, res, &sr) < 0)
		return -1;
	scen_count(res, "watchdog_s", (uint64_t)c.watchdog_seconds);
	scen_count(res, "hung", (uint64_t)sr.hung);
	scen_count(res, "worst_touch_us", sr.worst_touch_ns / 1000);
	return 0;
}

/* Simulated: half the backing reads fail and half come back short, so some
 * fetches exhaust their retries and are dropped: their faulters must be
 * woken. */
const struct scenario scenario_t7 = {
	.id = "T-7",
	.title = "storm: no lost fault (watchdog; simulated: failing reads)",
	.run = t7_run,
	.legs = LEG_FILE | LEG_HUGE,
	.sim =
		&(const struct sim_sizing){
			.threads = 3,
			.chunks = 4,
			.budget_chunks = 1,
			.workers = 2,
			.prefetch = 1,
			.ops = 4,
			.pattern = READ_RANDOM,
			.faults = "backing_read/eio=0.5,backing_read/short=0.5",
		},
};
