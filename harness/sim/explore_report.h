/* A campaign of schedules as a row of a campaign report (explore_report.c). */
#ifndef HARNESS_SIM_EXPLORE_REPORT_H
#define HARNESS_SIM_EXPLORE_REPORT_H

#include "campaign/campaign.h"
#include "sim/explore.h"

struct explore_row {
	struct campaign_row *row;
	uint64_t index0; /* the row's index of the campaign's schedule 0 */
};

/* explore_opts.failed: the failing schedule's finding, with its line. */
void explore_finding(void *arg, uint64_t i, const struct replay *rp,
		     const struct sim_outcome *out);
/* The campaign's counters, interleavings and shrunk first failure. */
void explore_row(const struct explore_row *er, const struct explore_opts *o,
		 const struct explore_result *r);

#endif
