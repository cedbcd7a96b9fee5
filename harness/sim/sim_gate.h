#ifndef HARNESS_SIM_GATE_H
#define HARNESS_SIM_GATE_H

#include <stdint.h>

#include "campaign/campaign.h"
#include "scenarios/scenario.h"

/* The fault points s can fire under the simulation. */
uint32_t sim_gate_can_fire(const struct scenario *s);
/* The legs of s in check --sim: LEG_UNEQUAL when it runs a pager. */
unsigned sim_gate_legs(const struct scenario *s);
/* One scenario's part of a sharded `check --sim` (campaign.h): its units
 * are the campaign's unit0.. (its schedules, or 1 when it runs as it is);
 * row, when not NULL, gets its findings and counters. */
struct sim_gate_part {
	struct shard shard;
	uint64_t unit0;
	struct campaign_row *row;
	/* A row stops exploring after this many failures (0: never), and
	 * every row at the campaign's deadline (a mono_now() time; 0: none). */
	uint64_t failures_per_row;
	double deadline;
};
/* The defaults of check --sim: failures a row explores to, and seconds
 * the whole campaign may take. */
#define SIM_GATE_FAILURES_PER_ROW 3
#define SIM_GATE_SECONDS 1800
/* The units scenario s is in a campaign of `schedules` schedules each. */
uint64_t sim_gate_units(const struct scenario *s, uint64_t schedules);
/* Runs scenario s on the simulated kernel for `schedules` schedules (those
 * of them part's shard owns), with o->faults on its default faults, on
 * unequal chunks when o->leg says so (a table drawn from each schedule's
 * seed); a scenario with no simulated form runs as it is. */
int sim_gate_run(const struct scenario *s, const struct run_opts *o,
		 uint64_t schedules, const struct sim_gate_part *part,
		 struct scen_result *res);

#endif
