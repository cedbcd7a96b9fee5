#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oracles/oracle.h"
#include "workload/content_file.h"
#include "workload/huge_leg.h"
#include "workload/read_check.h"
#include "workload/unequal_table.h"
#include "workload/workload.h"

#define MAX_TABLE 4096

static void fail(void *res, const char *line)
{
	scen_fail(res, "%s", line);
}

const char *scen_leg_name(unsigned leg)
{
	switch (leg) {
	case LEG_FILE:
		return "file";
	case LEG_UNEQUAL:
		return "unequal";
	case LEG_HUGE:
		return "huge";
	}
	return NULL;
}

uint64_t wl_leg(struct resid_config *cfg, const struct run_opts *o)
{
	/* One region at a time per process; the pager reads it at open. */
	static struct resid_chunk_spec table[MAX_TABLE];
	uint64_t rng = cfg->seed;

	/* A file ends unaligned, as does the last of unequal layers; on the
	 * huge leg half a folio early, so that the last chunk holds a tail. */
	if (o->leg & LEG_HUGE)
		cfg->region_len -= huge_leg_folio() / 2;
	if (o->leg)
		cfg->region_len = content_file_len(cfg->region_len, cfg->seed);
	if (!(o->leg & LEG_UNEQUAL))
		return (cfg->chunk_size + RESID_PAGE - 1) & ~(RESID_PAGE - 1);
	/* A quarter to twice the equal chunk, as layers vary. */
	cfg->table_len = unequal_table(cfg->region_len, cfg->chunk_size / 4,
				       2 * cfg->chunk_size, &rng, table,
				       MAX_TABLE);
	cfg->table = table;
	cfg->chunk_size = 0;
	return unequal_largest(table, cfg->table_len);
}

/* The file leg's backing: the file, made for this region. 0, or -1 with
 * res failed. */
static int make_file(struct resid_config *cfg, const struct run_opts *o,
		     struct scen_result *res, char *path, size_t n)
{
	char name[64], err[4400];

	snprintf(name, sizeof(name), "%s-%" PRIu64 ".bin",
		 res->id ? res->id : "region", cfg->seed);
	if (content_file_make(o->file_dir, name, cfg->region_len, cfg->seed,
			      path, n, err, sizeof(err)) < 0) {
		scen_fail(res, "%s", err);
		return -1;
	}
	cfg->backing = RESID_BACKING_FILE;
	cfg->path = path;
	return 0;
}

struct resid_region *wl_open(struct resid_config *cfg, const struct run_opts *o,
			     struct scen_result *res)
{
	static char path[4200]; /* one region at a time, as the table */
	char err[RESID_ERRLEN];
	struct resid_region *r;
	struct resid_harness h;
	int file = o->leg & LEG_FILE;

	snprintf(res->backing, sizeof(res->backing), "synthetic");
	snprintf(res->chunks, sizeof(res->chunks), "%s%s",
		 cfg->table ? "unequal" : "equal",
		 o->leg & LEG_HUGE ? "+huge" : "");
	if (file && make_file(cfg, o, res, path, sizeof(path)) < 0)
		return NULL;
	if (o->leg & LEG_HUGE)
		cfg->huge_dir = o->huge_dir;
	resid_harness_init(&h);
	h.eager_reconcile = 1;
	h.seam = o->seam;
	cfg->harness = &h;
	oracle_invariants_to(&res->mismatches, fail, res);
	r = resid_open(cfg, err);
	cfg->harness = NULL; /* h lives only here; resid_open copied it */
	/* The pager holds it open: nothing is left behind if this dies. */
	if (file && unlink(path) < 0)
		scen_fail(res, "cannot remove %s: %s", path, strerror(errno));
	if (!r) {
		oracle_invariants_stop();
		scen_fail(res, "cannot open the region: %s", err);
		return NULL;
	}
	if (file)
		snprintf(res->backing, sizeof(res->backing), "file %s",
			 content_file_direct(r) ? "O_DIRECT" : "buffered");
	/* On the huge leg equal chunks of the folio take the huge path and
	 * unequal ones must not (I-9). */
	if (o->leg & LEG_HUGE && resid_huge(r) != !cfg->table) {
		char m[1024];

		resid_manifest_json(r, m, sizeof(m));
		scen_fail(res,
			  "the huge leg's region chose %s folios in B, "
			  "not %s: %s",
			  resid_huge(r) ? "huge" : "4 KiB",
			  cfg->table ? "4 KiB" : "huge", m);
	}
	return r;
}

/* A region on the huge path proves it: its resident pages sit in large
 * folios (the census of /proc/kpageflags; skipped where not root). */
static void count_folios(struct resid_region *r, struct scen_result *res)
{
	uint64_t large = 0;

	if (!resid_huge(r) || resid_folio_census(r, &large) < 0)
		return;
	scen_add(res, "huge_bytes", large);
	if (!large)
		scen_fail(res, "a region on the huge path held no page in a "
			       "large folio at its end");
}

void wl_close(struct resid_region *r, struct scen_result *res,
	      struct resid_stats *s)
{
	resid_check_quiescent(r);
	count_folios(r, res);
	resid_get_stats(r, s);
	if (s->reconcile_failures)
		scen_fail(res, "%" PRIu64 " reconcile failures",
			  s->reconcile_failures);
	resid_close(r);
	oracle_invariants_stop();
}

void wl_read(struct resid_region *r, uint64_t off, uint64_t len, uint64_t seed,
	     struct scen_result *res)
{
	const struct expected e = { .seed = seed, .fd = -1 };
	uint64_t bad = read_check(&e, resid_base(r) + off, off, len,
				  &res->checks, &res->mismatches);

	if (bad)
		scen_fail(res,
			  "%" PRIu64 " bytes wrong in [%" PRIu64 ", +%" PRIu64
			  ")",
			  bad, off, len);
}

void wl_read_chunk(struct resid_region *r, const struct resid_config *cfg,
		   uint32_t id, struct scen_result *res)
{
	uint64_t off, len, tail = 0, nonzero = 0;

	resid_chunk_range(r, id, &off, &len);
	if (off + len > cfg->region_len) {
		tail = off + len - cfg->region_len;
		len -= tail;
	}
	if (cfg->signal == RESID_SIGNAL_BEFORE_READ)
		resid_notify_access(r, id);
	wl_read(r, off, len, cfg->seed, res);
	for (uint64_t i = 0; i < tail; i++)
		nonzero += resid_base(r)[off + len + i] != 0;
	if (nonzero) {
		__atomic_add_fetch(&res->mismatches, nonzero, __ATOMIC_RELAXED);
		scen_fail(res,
			  "%" PRIu64 " of the %" PRIu64 " bytes past the "
			  "region's end in its last page are not zero",
			  nonzero, tail);
	}
	if (cfg->signal == RESID_SIGNAL_AFTER_READ)
		resid_notify_access(r, id);
}
