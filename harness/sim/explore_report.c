/* A campaign of schedules (or one shard of it) as a row of the campaign
 * report (campaign.h): every failing schedule with the line that replays
 * it as it ran, the first failure shrunk, the counters and the set of
 * interleavings. */
#include <stdio.h>
#include <stdlib.h>

#include "sim/explore.h"
#include "sim/explore_report.h"

void explore_finding(void *arg, uint64_t i, const struct replay *rp,
		     const struct sim_outcome *out)
{
	struct explore_row *er = arg;
	char *line = replay_encode(rp), what[600], cmd[10240];

	snprintf(what, sizeof(what), "%s: %s", sim_verdict_name(out->verdict),
		 out->why);
	snprintf(cmd, sizeof(cmd), "residctl replay '%s'", line ? line : "?");
	row_finding(er->row, er->index0 + i, 1, what, cmd);
	free(line);
}

void explore_row(const struct explore_row *er, const struct explore_opts *o,
		 const struct explore_result *r)
{
	struct campaign_row *row = er->row;

	row_ran(row, r->schedules);
	row_count(row, "schedules", r->schedules);
	row_count(row, "failures", r->failures);
	row_count(row, "steps", r->steps);
	row_count(row, "dedup_fetching", r->dedup_fetching);
	row_count(row, "dedup_resident", r->dedup_resident);
	for (int v = SIM_FAILED; v < SIM_NVERDICTS; v++)
		row_count(row, sim_verdict_name((enum sim_verdict)v),
			  r->by_verdict[v]);
	for (int p = 0; p < FP_COUNT; p++)
		if (o->faults->on & 1u << p)
			row_count(row, fault_name(p), r->fired[p]);
	row_hashes(row, r->hashes, r->distinct);
	if (!r->fail.p)
		return;
	char *line = replay_encode(&r->fail), what[600], cmd[10240];

	snprintf(what, sizeof(what),
		 "%s: %s (%llu preemptions after "
		 "shrinking)",
		 sim_verdict_name(r->outcome.verdict), r->outcome.why,
		 (unsigned long long)r->outcome.preemptions);
	snprintf(cmd, sizeof(cmd), "residctl replay '%s'", line ? line : "?");
	row_first(row, er->index0 + r->fail_index - 1, what, cmd);
	free(line);
}
