/* What a scenario's application threads do with a region: open it with the
 * harness's settings, read through mapping A and check every byte. */
#ifndef HARNESS_WORKLOAD_H
#define HARNESS_WORKLOAD_H

#include <stdint.h>

#include "resid_harness.h"
#include "scenario.h"

/* Opens a region on the run's fault seam with eager reconcile; counts every
 * invariant violation into res. NULL with res->message set when it cannot. */
struct resid_region *wl_open(struct resid_config *cfg, const struct run_opts *o,
			     struct scen_result *res);
/* Checks the quiescence invariants, returns the counters, closes. */
void wl_close(struct resid_region *r, struct scen_result *res,
	      struct resid_stats *s);

/* Reads [off, off+len) through A; adds the bytes checked and mismatched. */
void wl_read(struct resid_region *r, uint64_t off, uint64_t len,
	     uint64_t seed, struct scen_result *res);
/* Reads chunk `id` whole, announcing it as the configured signal says. */
void wl_read_chunk(struct resid_region *r, const struct resid_config *cfg,
		   uint32_t id, struct scen_result *res);

double wl_now(void);

#endif
