/* residctl storm's files: the --json summary and the --report campaign
 * row, with what decides the rounds for merge to compare shards by. */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/coverage.h"
#include "campaign/campaign.h"
#include "cli/probe.h"
#include "cmd_storm.h"
#include "fault/bugs.h"
#include "fault/fault.h"
#include "workload/workload.h"

int storm_write_json(const char *path, const struct run *run,
		     const struct probe *p)
{
	const struct totals *t = &run->t;
	char manifest[2048], tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "residctl storm: cannot write %s\n", path);
		return -1;
	}
	probe_json(p, manifest, sizeof(manifest));
	fprintf(f,
		"{\n  \"manifest\": %s,\n  \"seconds\": %.1f,\n  \"rounds\": %" PRIu64
		",\n  \"stopped_at_max_rounds\": %s"
		",\n  \"failed_rounds\": %" PRIu64 ",\n  \"touches\": %" PRIu64
		",\n  \"bytes_checked\": %" PRIu64
		",\n  \"mismatches\": %" PRIu64
		",\n  \"invariant_violations\": %" PRIu64
		",\n  \"faults_missing\": %" PRIu64
		",\n  \"faults_minor\": %" PRIu64
		",\n  \"dedup_fetching\": %" PRIu64
		",\n  \"dedup_resident\": %" PRIu64 ",\n  \"fetches\": %" PRIu64
		",\n  \"evictions\": %" PRIu64
		",\n  \"worst_fetch_ns\": %" PRIu64
		",\n  \"worst_read_ns\": %" PRIu64
		",\n  \"st_blocks_lag\": %" PRIu64
		",\n  \"file_rounds\": %" PRIu64
		",\n  \"direct_rounds\": %" PRIu64
		",\n  \"huge_rounds\": %" PRIu64
		",\n  \"refused_reads\": %" PRIu64
		",\n  \"refused_rounds\": %" PRIu64
		",\n  \"watchdog\": \"%s\",\n"
		"  \"fired\": {",
		manifest, mono_now() - run->start, t->rounds,
		run->capped ? "true" : "false", t->failed, t->touches, t->bytes,
		t->mismatches, t->violations, t->missing, t->minor,
		t->dedup_fetching, t->dedup_resident, t->fetches, t->evictions,
		t->worst_fetch_ns, t->worst_touch_ns, t->st_lag, t->file_rounds,
		t->direct_rounds, t->huge_rounds, t->refused_reads,
		t->refused_rounds, t->hangs ? "fired" : "quiet");
	/* The points this storm's plan can fire, as its summary lists them:
	 * a point only traced runs reach would read as never fired. */
	for (int i = 0, first = 1; i < FP_COUNT; i++)
		if ((run->faults.on | run->faults.swarm) & 1u << i) {
			fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ",
				fault_name(i), t->fired[i]);
			first = 0;
		}
	fputs("},\n  \"code_probes\": ", f);
	coverage_json(f, &t->cov);
	fputs(",\n  \"round_seeds\": [", f);
	for (uint64_t i = 0; i < t->rounds && i < MAX_ROUNDS; i++) {
		char drawn[1024];

		storm_round_faults(run, run->seeds[i], drawn, sizeof(drawn));
		fprintf(f,
			"%s{\"seed\": %" PRIu64 ", \"passed\": %s, "
			"\"faults\": \"%s\"}",
			i ? ",\n    " : "", run->seeds[i],
			run->failed[i] ? "false" : "true", drawn);
	}
	fputs("]\n}\n", f);
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "residctl storm: cannot write %s\n", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The storm as one row of a campaign report; its failed rounds were
 * added as they failed. */
int storm_write_report(const char *path, struct campaign *c,
		       struct campaign_row *row, const struct run *run)
{
	const struct totals *t = &run->t;

	row_ran(row, t->rounds);
	row_count(row, "rounds", t->rounds);
	row_count(row, "failed_rounds", t->failed);
	row_count(row, "touches", t->touches);
	row_count(row, "bytes_checked", t->bytes);
	row_count(row, "mismatches", t->mismatches);
	row_count(row, "invariant_violations", t->violations);
	row_count(row, "faults_missing", t->missing);
	row_count(row, "faults_minor", t->minor);
	row_count(row, "dedup_fetching", t->dedup_fetching);
	row_count(row, "dedup_resident", t->dedup_resident);
	row_count(row, "fetches", t->fetches);
	row_count(row, "evictions", t->evictions);
	row_count(row, "hangs", t->hangs);
	row_count(row, "st_blocks_lag", t->st_lag);
	row_count(row, "refused_reads", t->refused_reads);
	row_count(row, "refused_rounds", t->refused_rounds);
	row_max(row, "worst_fetch_ns", t->worst_fetch_ns);
	row_max(row, "worst_read_ns", t->worst_touch_ns);
	for (int i = 0; i < FP_COUNT; i++)
		if ((run->faults.on | run->faults.swarm) & 1u << i)
			row_count(row, fault_name(i), t->fired[i]);
	return campaign_write(c, path, mono_now() - run->start);
}

/* What decides the rounds, for merge to compare shards by. */
struct campaign *storm_campaign_new(uint64_t seed, uint64_t rounds,
				    uint64_t round, const char *opts,
				    const char *specs, const struct shard *sh)
{
	char id[2400], bugs[24];

	bugs_format(bugs_enabled(), bugs, sizeof(bugs));
	snprintf(id, sizeof(id), "rounds=%llu round=%llu bugs=%s%s%s",
		 (unsigned long long)rounds, (unsigned long long)round, bugs,
		 opts, specs);
	return campaign_new("storm", id, seed, rounds, "rounds", sh);
}
