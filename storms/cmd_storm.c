/* residctl storm: randomized rounds of storms on the real kernel for a given
 * duration, for a kernel or platform engineer trying a new kernel (SPEC §7).
 * The kernel probe first; each round draws chunk size, budget, threads,
 * workers, prefetch depth, policy, evict-ahead and the FETCHING time-out
 * from its seed; injected faults come from
 * --fault and RESIDCTL_FAULTS. A summary and --json at the end, also after
 * Ctrl-C. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"
#include "child.h"
#include "cli.h"
#include "commands.h"
#include "coverage.h"
#include "bugs.h"
#include "fault.h"
#include "content_file.h"
#include "probe.h"
#include "rng.h"
#include "storm.h"

#define MAX_ROUNDS 100000

static const char usage[] =
	"usage: residctl storm [--duration SECONDS | --rounds R] [--round SECONDS]\n"
	"                      [--seed N] [--shard K/N] [--report FILE]\n"
	"                      [--fault NAME=P | --fault NAME@N ...] [--json FILE]\n"
	"                      [--only ROUND_SEED] [--bug N[,N..]] [--chunk BYTES]\n"
	"                      [--backing synthetic|file] [--no-swarm]\n"
	"  Rounds of randomized storms on the real kernel (chunk size, budget\n"
	"  ratio, threads, workers, prefetch depth, policy, evict-ahead and a\n"
	"  1 ms FETCHING time-out drawn per round) until\n"
	"  --duration (default 60) has passed; each round (default 5 s) runs in\n"
	"  its own process and memory cgroup with a watchdog. --fault enables a\n"
	"  fault point with a probability or on the Nth call (all=P for every\n"
	"  point; RESIDCTL_FAULTS=spec,spec too). Prints the kernel probe, a\n"
	"  progress line once a second on a terminal, and a summary; --json\n"
	"  writes it. Exit 0 when every round passed, 1 when one failed, 2 on\n"
	"  bad input. Ctrl-C ends with the summary so far. A failed round prints\n"
	"  the line that reruns it alone (--only ROUND_SEED). --bug switches a\n"
	"  historical bug back on (1..7, all; RESIDCTL_BUGS too). --chunk fixes\n"
	"  the chunk size of every round (a multiple of 4K up to 8M). The summary\n"
	"  and the JSON name the code probes (rare paths) the rounds hit and\n"
	"  missed. --rounds runs exactly R rounds of --round seconds instead of\n"
	"  a duration; --shard K/N (with --rounds: a time-bounded storm has no\n"
	"  fixed list to split) runs round i only when i mod N = K - 1 (K from\n"
	"  1), with the seed it has in the whole storm; --report writes the\n"
	"  campaign report, every failed round with its rerun line, for\n"
	"  residctl merge. Half the rounds (drawn) read a real file of the\n"
	"  content with O_DIRECT, its size not a page multiple, written under\n"
	"  $TMPDIR or /tmp and removed; --backing makes every round one or the\n"
	"  other. Each round also draws from its seed which fault points are on\n"
	"  and at which probability (swarm testing; a --fault rule for a point\n"
	"  wins over the draw); --no-swarm injects only the --fault rules.\n";

struct totals {
	uint64_t rounds, failed, touches, bytes, mismatches, violations;
	uint64_t missing, minor, dedup_fetching, dedup_resident, evictions;
	uint64_t fetches, worst_fetch_ns, worst_touch_ns, hangs, st_lag;
	uint64_t file_rounds, direct_rounds;
	uint64_t fired[FP_COUNT];
	struct coverage cov;
};

struct run {
	struct totals t;
	uint64_t seeds[MAX_ROUNDS];
	int failed[MAX_ROUNDS];
	double start, duration;
	int tty;
	struct fault_plan faults;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* chunk: the chunk size of every round, 0 to draw it. backing: 0 synthetic,
 * 1 file (in dir), -1 drawn. */
static void draw(uint64_t seed, double seconds, uint64_t chunk, int backing,
		 const char *dir, struct storm_config *c)
{
	static const uint64_t chunks[] = { 0, 64 << 10, 256 << 10, 1 << 20,
					   2 << 20, 4 << 20 };
	uint64_t rng = seed;

	*c = (struct storm_config){
		.seed = seed,
		.region_len = (8 + rng_below(&rng, 57)) << 20,
		.chunk_size = chunks[rng_below(&rng, 6)],
		.budget_ratio = 0.15 + (double)rng_below(&rng, 61) / 100,
		.threads = 1 + (uint32_t)rng_below(&rng, 16),
		.workers = 1 + (uint32_t)rng_below(&rng, 8),
		.prefetch_depth = (uint32_t)rng_below(&rng, 9),
		.policy = (enum resid_policy)rng_below(&rng, 3),
		.seconds = seconds,
		.watchdog_seconds = 30,
		.limit_bytes = 1ull << 30,
	};
	/* Drawn after the others, so that earlier seeds keep their sizes:
	 * evict-ahead in half the rounds, and in a quarter a 1 ms FETCHING
	 * time-out, so the watchdog resets fetches still queued. */
	c->evict_ahead = (int)rng_below(&rng, 2);
	c->fetching_timeout_ms = rng_below(&rng, 4) ? 0 : 1;
	int file = (int)rng_below(&rng, 2);

	if (backing >= 0)
		file = backing;
	if (file) {
		c->file_dir = dir;
		c->region_len = content_file_len(c->region_len, seed);
	}
	if (chunk)
		c->chunk_size = chunk;
}

static void progress(void *arg, double elapsed)
{
	struct run *run = arg;

	(void)elapsed;
	if (!run->tty)
		return;
	fprintf(stderr, "\r  storm %5.0f/%.0f s  round %" PRIu64 "  touches %"
		PRIu64 "  mismatches %" PRIu64 "  failed rounds %" PRIu64 "   ",
		now_s() - run->start, run->duration, run->t.rounds + 1,
		run->t.touches, run->t.mismatches, run->t.failed);
}

static void add(struct totals *t, const struct storm_result *r)
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
	t->st_lag += r->stats.st_blocks_lag;
	if (r->stats.latency_max_ns > t->worst_fetch_ns)
		t->worst_fetch_ns = r->stats.latency_max_ns;
	if (r->worst_touch_ns > t->worst_touch_ns)
		t->worst_touch_ns = r->worst_touch_ns;
	for (int p = 0; p < FP_COUNT; p++)
		t->fired[p] += r->fired[p];
}

static void summary(FILE *f, const struct run *run, const struct probe *p)
{
	const struct totals *t = &run->t;

	fprintf(f, "storm summary: kernel %s, %.0f s, %" PRIu64 " rounds, %"
		PRIu64 " failed\n", p->release, now_s() - run->start,
		t->rounds, t->failed);
	fprintf(f, "  touches %" PRIu64 ", bytes checked %" PRIu64
		", mismatches %" PRIu64 ", invariant violations %" PRIu64 "\n",
		t->touches, t->bytes, t->mismatches, t->violations);
	fprintf(f, "  faults missing %" PRIu64 ", minor %" PRIu64
		", dedup fetching %" PRIu64 ", dedup resident %" PRIu64
		", fetches %" PRIu64 ", evictions %" PRIu64 "\n", t->missing,
		t->minor, t->dedup_fetching, t->dedup_resident, t->fetches,
		t->evictions);
	fprintf(f, "  worst fetch latency %.3f ms, worst read %.3f ms\n",
		(double)t->worst_fetch_ns / 1e6, (double)t->worst_touch_ns / 1e6);
	fprintf(f, "  st_blocks lag (excess a page count disproved) %" PRIu64
		"\n", t->st_lag);
	fprintf(f, "  %" PRIu64 " rounds read a file, %" PRIu64 " of them "
		"with O_DIRECT\n", t->file_rounds, t->direct_rounds);
	fprintf(f, "  watchdog: %s\n", t->hangs ? "FIRED (lost fault or hang)" :
		"quiet: no lost fault, no hang");
	coverage_line(f, "  ", &t->cov);
	for (int i = 0; i < FP_COUNT; i++)
		if ((run->faults.on | run->faults.swarm) & 1u << i)
			fprintf(f, "  fault %-28s fired %" PRIu64 "\n",
				fault_name(i), t->fired[i]);
}

/* The faults a round injected: its swarm's draw and the --fault rules. */
static void round_faults(const struct run *run, uint64_t seed, char *buf,
			 size_t n)
{
	struct fault_plan f;

	fault_plan_swarm(&run->faults, seed, &f);
	if (fault_plan_format(&f, buf, n) < 0)
		snprintf(buf, n, "...");
}

static int write_json(const char *path, const struct run *run,
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
	fprintf(f, "{\n  \"manifest\": %s,\n  \"seconds\": %.1f,\n  \"rounds\": %"
		PRIu64 ",\n  \"failed_rounds\": %" PRIu64 ",\n  \"touches\": %"
		PRIu64 ",\n  \"bytes_checked\": %" PRIu64 ",\n  \"mismatches\": %"
		PRIu64 ",\n  \"invariant_violations\": %" PRIu64
		",\n  \"faults_missing\": %" PRIu64 ",\n  \"faults_minor\": %"
		PRIu64 ",\n  \"dedup_fetching\": %" PRIu64
		",\n  \"dedup_resident\": %" PRIu64 ",\n  \"fetches\": %" PRIu64
		",\n  \"evictions\": %" PRIu64 ",\n  \"worst_fetch_ns\": %" PRIu64
		",\n  \"worst_read_ns\": %" PRIu64 ",\n  \"st_blocks_lag\": %"
		PRIu64 ",\n  \"file_rounds\": %" PRIu64
		",\n  \"direct_rounds\": %" PRIu64 ",\n  \"watchdog\": \"%s\",\n"
		"  \"fired\": {", manifest, now_s() - run->start, t->rounds,
		t->failed, t->touches, t->bytes, t->mismatches, t->violations,
		t->missing, t->minor, t->dedup_fetching, t->dedup_resident,
		t->fetches, t->evictions, t->worst_fetch_ns, t->worst_touch_ns,
		t->st_lag, t->file_rounds, t->direct_rounds,
		t->hangs ? "fired" : "quiet");
	for (int i = 0; i < FP_COUNT; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", fault_name(i),
			t->fired[i]);
	fputs("},\n  \"code_probes\": ", f);
	coverage_json(f, &t->cov);
	fputs(",\n  \"round_seeds\": [", f);
	for (uint64_t i = 0; i < t->rounds && i < MAX_ROUNDS; i++) {
		char drawn[1024];

		round_faults(run, run->seeds[i], drawn, sizeof(drawn));
		fprintf(f, "%s{\"seed\": %" PRIu64 ", \"passed\": %s, "
			"\"faults\": \"%s\"}", i ? ",\n    " : "",
			run->seeds[i], run->failed[i] ? "false" : "true",
			drawn);
	}
	fputs("]\n}\n", f);
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "residctl storm: cannot write %s\n", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}

static struct run run; /* large: the seeds of every round */

/* The storm as one row of a campaign report; its failed rounds were
 * added as they failed. */
static int write_report(const char *path, struct campaign *c,
			struct campaign_row *row)
{
	const struct totals *t = &run.t;

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
	row_max(row, "worst_fetch_ns", t->worst_fetch_ns);
	row_max(row, "worst_read_ns", t->worst_touch_ns);
	for (int i = 0; i < FP_COUNT; i++)
		if ((run.faults.on | run.faults.swarm) & 1u << i)
			row_count(row, fault_name(i), t->fired[i]);
	return campaign_write(c, path, now_s() - run.start);
}

/* What decides the rounds, for merge to compare shards by. */
static struct campaign *new_campaign(uint64_t seed, uint64_t rounds,
				     uint64_t round, const char *opts,
				     const char *specs, const struct shard *sh)
{
	char id[1400], bugs[24];

	bugs_format(bugs_enabled(), bugs, sizeof(bugs));
	snprintf(id, sizeof(id), "rounds=%llu round=%llu bugs=%s%s%s",
		 (unsigned long long)rounds, (unsigned long long)round, bugs,
		 opts, specs);
	return campaign_new("storm", id, seed, rounds, "rounds", sh);
}

int cmd_storm(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL), duration = 60, round = 5, only = 0;
	uint64_t rounds = 0, index = 0;
	struct shard shard = { 0 };
	struct campaign *camp = NULL;
	struct campaign_row *row = NULL;
	const char *report = NULL;
	int timed = 0;
	static const struct option opts[] = {
		CLI_HELP_OPTION,
		CLI_VALUE("duration", 'd'),
		CLI_VALUE("round", 'r'),
		CLI_VALUE("bug", 'b'),
		CLI_VALUE("seed", 's'),
		CLI_VALUE("fault", 'f'),
		CLI_VALUE("only", 'o'),
		CLI_VALUE("json", 'j'),
		CLI_VALUE("chunk", 'c'),
		CLI_VALUE("rounds", 'R'),
		CLI_VALUE("shard", 'k'),
		CLI_VALUE("report", 'p'),
		CLI_VALUE("backing", 'B'),
		CLI_FLAG("no-swarm", 'W'),
		{ 0 },
	};
	struct cli c = { .cmd = "storm", .usage = usage, .argc = argc,
			 .argv = argv, .opts = opts, .operands = 0 };
	uint64_t chunk = 0;
	const char *json = NULL, *v;
	char err[1024], specs[1024] = "", chunk_opt[32] = "", dir[4096] = "";
	char backing_opt[32] = "";
	int backing = -1;
	size_t flen = 0;
	struct probe p;
	int opt;

	if (fault_plan_option(&run.faults, "storm", NULL) < 0)
		return 2;
	run.faults.swarm = FAULT_ALL;
	while ((opt = cli_next(&c)) != CLI_END) {
		v = c.arg;
		switch (opt) {
		case CLI_EXIT:
			return c.status;
		case 'd':
			if (cli_u64(v, &duration) || !duration) {
				fprintf(stderr, "residctl storm: bad duration "
					"'%s'; give seconds >= 1\n", v);
				return 2;
			}
			timed = 1;
			break;
		case 'R':
			if (cli_u64(v, &rounds) || !rounds ||
			    rounds > MAX_ROUNDS) {
				fprintf(stderr, "residctl storm: bad round count "
					"'%s'; give 1..%d\n", v, MAX_ROUNDS);
				return 2;
			}
			break;
		case 'k':
			if (shard_parse("storm", v, &shard))
				return 2;
			break;
		case 'p':
			report = v;
			break;
		case 'r':
			if (cli_u64(v, &round) || !round || round > 3600) {
				fprintf(stderr, "residctl storm: bad round length "
					"'%s'; give 1..3600 seconds\n", v);
				return 2;
			}
			break;
		case 'b':
			if (bugs_option("storm", v))
				return 2;
			break;
		case 's':
			if (cli_u64(v, &seed)) {
				fprintf(stderr, "residctl storm: bad seed '%s'; "
					"give a decimal number\n", v);
				return 2;
			}
			break;
		case 'f':
			if (fault_plan_option(&run.faults, "storm", v) < 0)
				return 2;
			if (flen < sizeof(specs))
				flen += (size_t)snprintf(specs + flen,
						 sizeof(specs) - flen,
						 " --fault %s", v);
			break;
		case 'o':
			if (cli_u64(v, &only) || !only) {
				fprintf(stderr, "residctl storm: bad round seed "
					"'%s'; give the seed a failed round "
					"printed\n", v);
				return 2;
			}
			break;
		case 'c':
			if (cli_bytes(v, &chunk) || !chunk || chunk % RESID_PAGE ||
			    chunk > (8u << 20)) {
				fprintf(stderr, "residctl storm: bad chunk size "
					"'%s'; give a multiple of 4K up to 8M\n",
					v);
				return 2;
			}
			snprintf(chunk_opt, sizeof(chunk_opt), " --chunk %s", v);
			break;
		case 'j':
			json = v;
			break;
		case 'W':
			run.faults.swarm = 0;
			if (flen < sizeof(specs))
				flen += (size_t)snprintf(specs + flen,
						 sizeof(specs) - flen,
						 " --no-swarm");
			break;
		case 'B':
			if (strcmp(v, "synthetic") && strcmp(v, "file")) {
				fprintf(stderr, "residctl storm: unknown --backing "
					"'%s'; use synthetic or file\n", v);
				return 2;
			}
			backing = !strcmp(v, "file");
			snprintf(backing_opt, sizeof(backing_opt),
				 " --backing %s", v);
			break;
		}
	}
	if (rounds && timed) {
		fprintf(stderr, "residctl storm: --rounds %" PRIu64 " and "
			"--duration %" PRIu64 " both given; give one\n", rounds,
			duration);
		return 2;
	}
	if ((shard.n || report) && (!rounds || only)) {
		fprintf(stderr, "residctl storm: --%s needs --rounds R (and no "
			"--only): a storm bounded by time has no fixed list of "
			"rounds\n", shard.n ? "shard" : "report");
		return 2;
	}
	if (rounds)
		duration = rounds * round;
	probe_run(&p);
	char manifest[2048];

	probe_json(&p, manifest, sizeof(manifest));
	printf("kernel probe: %s\n", manifest);
	if (!p.can_run) {
		fprintf(stderr, "residctl storm: can the pager run here? %s\n",
			p.verdict);
		return 2;
	}
	char id_opts[96];

	snprintf(id_opts, sizeof(id_opts), "%s%s", chunk_opt, backing_opt);
	if (report && (!(camp = new_campaign(seed, rounds, round, id_opts, specs,
					      &shard)) ||
		       !(row = campaign_row(camp, "storm", rounds)))) {
		fprintf(stderr, "residctl storm: out of memory\n");
		return 2;
	}
	if (backing && content_dir_make(dir, sizeof(dir), err,
					sizeof(err)) < 0) {
		fprintf(stderr, "residctl storm: %s\n", err);
		return 2;
	}
	child_stop_softly(); /* Ctrl-C: the summary so far */
	run.start = now_s();
	run.duration = (double)duration;
	run.tty = isatty(STDERR_FILENO);
	printf("storm: seed %" PRIu64 ", %" PRIu64 " s, rounds of %" PRIu64
	       " s\n", seed, duration, round);
	if (shard_split(&shard))
		printf("storm: shard %" PRIu64 "/%" PRIu64 " of %" PRIu64
		       " rounds: round i runs when i mod %" PRIu64 " = %" PRIu64
		       "\n", shard.k, shard.n, rounds, shard.n, shard.k - 1);
	fflush(stdout);
	uint64_t rng = seed;

	/* With --rounds, every round's seed is drawn in order, so a shard's
	 * round i has the seed it has in the whole storm. */
	for (; !child_stop_signal() && run.t.rounds < MAX_ROUNDS &&
	     (rounds ? index < rounds : now_s() - run.start < (double)duration);
	     index++) {
		struct storm_config c;
		struct storm_result r;
		double left = (double)duration - (now_s() - run.start);
		uint64_t rseed = only ? only : rng_next(&rng);

		if (!shard_owns(&shard, index))
			continue;
		draw(rseed, rounds || left >= (double)round ? (double)round :
		     left, chunk, backing, dir, &c);
		c.progress = progress;
		c.progress_arg = &run;
		c.faults = &run.faults;
		if (storm_run(&c, &r) < 0) {
			fprintf(stderr, "residctl storm: %s\n", r.message);
			if (dir[0])
				content_dir_remove(dir);
			return 2;
		}
		if (r.interrupted)
			break;
		add(&run.t, &r);
		run.t.file_rounds += c.file_dir != NULL;
		coverage_add_run(&run.t.cov, r.probes);
		run.seeds[run.t.rounds] = c.seed;
		if (!storm_passed(&r)) {
			char line[256], bugs[24];

			storm_describe(&c, line, sizeof(line));
			bugs_format(bugs_enabled(), bugs, sizeof(bugs));
			run.failed[run.t.rounds] = 1;
			run.t.failed++;
			char rerun[1600];

			snprintf(rerun, sizeof(rerun), "residctl storm --only %"
				 PRIu64 " --round %.0f --duration %.0f%s%s%s%s%s",
				 c.seed, c.seconds, c.seconds + 1, chunk_opt,
				 backing_opt, specs, bugs_enabled() ? " --bug " : "",
				 bugs_enabled() ? bugs : "");
			char drawn[1024];

			round_faults(&run, c.seed, drawn, sizeof(drawn));
			fprintf(stderr, "%sround %" PRIu64 " FAILED: %s\n  round: "
				"%s\n  faults: %s\n  rerun: %s\n",
				run.tty ? "\n" : "", index, r.message, line,
				drawn[0] ? drawn : "none", rerun);
			if (row)
				row_finding(row, index, 1, r.message, rerun);
		}
		run.t.rounds++;
		if (only)
			break;
	}
	if (run.tty)
		fputc('\n', stderr);
	/* A killed round's file too. */
	if (dir[0] && content_dir_remove(dir) < 0)
		return 2;
	summary(stdout, &run, &p);
	if (json && write_json(json, &run, &p) < 0)
		return 2;
	if (camp) {
		int bad = write_report(report, camp, row);

		campaign_free(camp);
		if (bad)
			return 2;
	}
	return run.t.failed ? 1 : 0;
}
