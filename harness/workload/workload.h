/* What a scenario's application threads do with a region: open it with the
 * harness's settings, read through mapping A and check every byte. */
#ifndef HARNESS_WORKLOAD_H
#define HARNESS_WORKLOAD_H

#include <stdint.h>

#include "resid_harness.h"
#include "scenario.h"

/* Fits cfg (region_len and chunk_size set) to the run's leg: a file's
 * region, and an unequal table's, ends unaligned; unequal chunks come from
 * a table drawn from cfg->seed. Returns the largest chunk, the least
 * budget. */
uint64_t wl_leg(struct resid_config *cfg, const struct run_opts *o);

/* Opens a region on the run's fault seam with eager reconcile; counts every
 * invariant violation into res. On a file leg, first writes the file of
 * cfg->region_len bytes of cfg->seed's content, and unlinks it once the
 * pager holds it open; res->backing says whether it reads with O_DIRECT.
 * NULL with res->message set when it cannot. */
struct resid_region *wl_open(struct resid_config *cfg, const struct run_opts *o,
			     struct scen_result *res);
/* Checks the quiescence invariants, returns the counters, closes. */
void wl_close(struct resid_region *r, struct scen_result *res,
	      struct resid_stats *s);

/* Reads [off, off+len) through A; adds the bytes checked and mismatched. */
void wl_read(struct resid_region *r, uint64_t off, uint64_t len,
	     uint64_t seed, struct scen_result *res);
/* Reads chunk `id` whole, announcing it as the configured signal says; the
 * page tail past the region's end must read as zeros. */
void wl_read_chunk(struct resid_region *r, const struct resid_config *cfg,
		   uint32_t id, struct scen_result *res);

double wl_now(void);

#endif
