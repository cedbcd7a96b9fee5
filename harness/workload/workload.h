/* What a scenario's application threads do with a region: open it with the
 * harness's settings, read through mapping A and check every byte. */
#ifndef HARNESS_WORKLOAD_H
#define HARNESS_WORKLOAD_H

#include <stdint.h>

#include "base/row.h"
#include "resid_harness.h"

enum profile { PROFILE_QUICK, PROFILE_FULL };

struct fault_plan;
struct resid_seam;

/* The options of one run of a scenario. */
struct run_opts {
	uint64_t seed;
	enum profile profile;
	int verbose;
	uint64_t storm_chunk; /* the storms' chunk size; 0: 1 MiB */
	/* The leg (enum scen_leg): with LEG_FILE the region is a real file
	 * of design.md §5.1 content made in file_dir, read with O_DIRECT; with
	 * LEG_UNEQUAL the chunks come from an explicit table of unequal
	 * sizes. */
	unsigned leg;
	const char *file_dir;
	/* LEG_HUGE: the directory the scenario's child mounts a tmpfs with
	 * huge=always on, in its own mount namespace (huge_leg.c), and
	 * gives the pager as resid_config.huge_dir. */
	const char *huge_dir;
	/* The faults to inject, fitted to this scenario (never NULL), and the
	 * run's fault seam over the kernel, which every region it opens in
	 * this process uses (wl_open); a storm makes its own in its child. */
	const struct fault_plan *faults;
	const struct resid_seam *seam;
};

/* The legs a scenario runs in the default gate, beside the synthetic
 * content on equal chunks that every one runs (design.md §5.1). */
enum scen_leg {
	LEG_FILE = 1,    /* a real file, its last chunk ending unaligned */
	LEG_UNEQUAL = 2, /* an explicit table of unequal chunks */
	/* huge folios in B from a tmpfs mounted huge=always: on equal chunks
	 * of a folio multiple the huge path, on unequal ones a region that
	 * must keep 4 KiB pages though the tmpfs would give huge ones */
	LEG_HUGE = 4,
};

/* "file", "unequal", "huge": one bit of enum scen_leg as the gate's JSON
 * names it (its rows' "gate_legs"); NULL for any other value. */
const char *scen_leg_name(unsigned leg);

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
void wl_read(struct resid_region *r, uint64_t off, uint64_t len, uint64_t seed,
	     struct scen_result *res);
/* Reads chunk `id` whole, announcing it as the configured signal says; the
 * page tail past the region's end must read as zeros. */
void wl_read_chunk(struct resid_region *r, const struct resid_config *cfg,
		   uint32_t id, struct scen_result *res);

#endif
