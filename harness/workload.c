#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "invariants.h"
#include "read_check.h"
#include "workload.h"

static void on_violation(int id, const char *msg, void *arg)
{
	struct scen_result *res = arg;

	__atomic_add_fetch(&res->mismatches, 1, __ATOMIC_RELAXED);
	scen_fail(res, "I-%d (%s): %s", id, inv_title(id), msg);
}

double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct resid_region *wl_open(struct resid_config *cfg, const struct run_opts *o,
			     struct scen_result *res)
{
	char err[RESID_ERRLEN];
	struct resid_region *r;
	struct resid_harness h;

	resid_harness_init(&h);
	h.eager_reconcile = 1;
	h.seam = o->seam;
	cfg->harness = &h;
	inv_set_handler(on_violation, res);
	r = resid_open(cfg, err);
	cfg->harness = NULL; /* h lives only here; resid_open copied it */
	if (!r) {
		inv_set_handler(NULL, NULL);
		scen_fail(res, "cannot open the region: %s", err);
	}
	return r;
}

void wl_close(struct resid_region *r, struct scen_result *res,
	      struct resid_stats *s)
{
	resid_check_quiescent(r);
	resid_get_stats(r, s);
	if (s->reconcile_failures)
		scen_fail(res, "%" PRIu64 " reconcile failures",
			  s->reconcile_failures);
	resid_close(r);
	inv_set_handler(NULL, NULL);
}

void wl_read(struct resid_region *r, uint64_t off, uint64_t len,
	     uint64_t seed, struct scen_result *res)
{
	const struct expected e = { .seed = seed, .fd = -1 };
	uint64_t bad = read_check(&e, resid_base(r) + off, off, len,
				  &res->checks, &res->mismatches);

	if (bad)
		scen_fail(res, "%" PRIu64 " bytes wrong in [%" PRIu64 ", +%"
			  PRIu64 ")", bad, off, len);
}

void wl_read_chunk(struct resid_region *r, const struct resid_config *cfg,
		   uint32_t id, struct scen_result *res)
{
	uint64_t off, len;

	resid_chunk_range(r, id, &off, &len);
	if (cfg->signal == RESID_SIGNAL_BEFORE_READ)
		resid_notify_access(r, id);
	wl_read(r, off, len, cfg->seed, res);
	if (cfg->signal == RESID_SIGNAL_AFTER_READ)
		resid_notify_access(r, id);
}
