/* residctl storm's totals over its rounds and their summary. */
#include <inttypes.h>
#include <stdio.h>

#include "base/clock.h"
#include "base/coverage.h"
#include "cmd_storm.h"
#include "fault/fault.h"
#include "workload/workload.h"

void storm_totals_add(struct totals *t, const struct storm_result *r)
{
	t->touches += r->touches;
	t->bytes += r->bytes_checked;
	t->mismatches += r->mismatches;
	t->violations += r->violations;
	t->missing += r->stats.faults_missing;
	t->minor += r->stats.faults_minor;
	t->dedup_fetching += r->stats.dedup_fetching;
	t->dedup_resident += r->stats.dedup_resident;
	t->evictions += r->stats.evictions;
	t->fetches += r->stats.fetches;
	t->hangs += (uint64_t)r->hung;
	t->direct_rounds += (uint64_t)r->direct;
	t->huge_rounds += (uint64_t)r->huge;
	t->refused_reads += r->refused_reads;
	t->refused_rounds += r->refused_reads > 0;
	t->st_lag += r->stats.st_blocks_lag;
	if (r->stats.latency_max_ns > t->worst_fetch_ns)
		t->worst_fetch_ns = r->stats.latency_max_ns;
	if (r->worst_touch_ns > t->worst_touch_ns)
		t->worst_touch_ns = r->worst_touch_ns;
	for (int p = 0; p < FP_COUNT; p++)
		t->fired[p] += r->fired[p];
}

void storm_summary(FILE *f, const struct run *run, const struct probe *p)
{
	const struct totals *t = &run->t;

	fprintf(f,
		"storm summary: kernel %s, %.0f s, %" PRIu64 " rounds, %" PRIu64
		" failed\n",
		p->release, mono_now() - run->start, t->rounds, t->failed);
	fprintf(f,
		"  touches %" PRIu64 ", bytes checked %" PRIu64
		", mismatches %" PRIu64 ", invariant violations %" PRIu64 "\n",
		t->touches, t->bytes, t->mismatches, t->violations);
	fprintf(f,
		"  faults missing %" PRIu64 ", minor %" PRIu64
		", dedup fetching %" PRIu64 ", dedup resident %" PRIu64
		", fetches %" PRIu64 ", evictions %" PRIu64 "\n",
		t->missing, t->minor, t->dedup_fetching, t->dedup_resident,
		t->fetches, t->evictions);
	fprintf(f,
		"  reads refused by contract (failed chunks): %" PRIu64
		" in %" PRIu64 " rounds\n",
		t->refused_reads, t->refused_rounds);
	fprintf(f, "  worst fetch latency %.3f ms, worst read %.3f ms\n",
		(double)t->worst_fetch_ns / 1e6,
		(double)t->worst_touch_ns / 1e6);
	fprintf(f,
		"  st_blocks lag (excess a page count disproved) %" PRIu64 "\n",
		t->st_lag);
	fprintf(f,
		"  %" PRIu64 " rounds read a file, %" PRIu64 " of them "
		"with O_DIRECT; %" PRIu64 " rounds held huge folios in B\n",
		t->file_rounds, t->direct_rounds, t->huge_rounds);
	fprintf(f, "  watchdog: %s\n",
		t->hangs ? "FIRED (lost fault or hang)" :
			   "quiet: no lost fault, no hang");
	coverage_line(f, "  ", &t->cov);
	for (int i = 0; i < FP_COUNT; i++)
		if ((run->faults.on | run->faults.swarm) & 1u << i)
			fprintf(f, "  fault %-28s fired %" PRIu64 "\n",
				fault_name(i), t->fired[i]);
}
