/* residctl storm: randomized rounds of storms on the real kernel for a given
 * duration, for a kernel or platform engineer trying a new kernel (design.md §7).
 * The kernel probe first; each round draws chunk size, budget, threads,
 * workers, prefetch depth, policy, evict-ahead, the FETCHING time-out and
 * whether a thread advises the mapping from its seed; injected faults come from
 * --fault and RESIDCTL_FAULTS. A summary and --json at the end, also after
 * Ctrl-C. */
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

/* A round with no progress for this long is a hang (--watchdog). */
#define WATCHDOG_S 30

static const char about[] =
	"  Rounds of randomized storms on the real kernel (chunk size, budget\n"
	"  ratio, threads, workers, prefetch depth, policy, evict-ahead, a 1 ms\n"
	"  FETCHING time-out, and a thread that advises the mapping as\n"
	"  applications do (MADV_DONTNEED, PAGEOUT, POPULATE_READ, ...) and\n"
	"  reads it again, drawn per round) until --duration has passed\n"
	"  or for --rounds R; each round runs in its own process and memory\n"
	"  cgroup with a watchdog (a round that checks no byte for --watchdog\n"
	"  seconds, default 30, hangs). Prints the kernel probe, a progress\n"
	"  line once a second on a terminal, and a summary: the code probes\n"
	"  (rare paths) the rounds hit and missed, each fault point's\n"
	"  firings. Exit 0 when\n"
	"  every round passed, 1 when one failed, 2 on bad input. Ctrl-C ends\n"
	"  with the summary so far. A failed round prints the line that reruns\n"
	"  it alone (--only ROUND_SEED). With --rounds, --shard runs round i\n"
	"  with the seed it has in the whole storm (a time-bounded storm has no\n"
	"  fixed list to split). Half the rounds (drawn) read a real file of the\n"
	"  content with O_DIRECT, its size not a page multiple, written under\n"
	"  $TMPDIR or /tmp and removed. Each round also draws from its seed which\n"
	"  fault points are on and at which probability (swarm testing; a\n"
	"  --fault rule for a point wins over the draw). --huge-dir puts every\n"
	"  round's pages in a tmpfs mounted with huge= (mount -t tmpfs -o\n"
	"  huge=always none DIR): rounds whose chunks are multiples of the huge\n"
	"  folio must take huge folios in B and hold their resident pages in\n"
	"  them, the others 4 KiB pages.\n";

struct totals {
	uint64_t rounds, failed, touches, bytes, mismatches, violations;
	uint64_t missing, minor, dedup_fetching, dedup_resident, evictions;
	uint64_t fetches, worst_fetch_ns, worst_touch_ns, hangs, st_lag;
	uint64_t file_rounds, direct_rounds, huge_rounds;
	/* Reads that raised the contract's SIGBUS, and the rounds with any. */
	uint64_t refused_reads, refused_rounds;
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
		.watchdog_seconds = WATCHDOG_S,
		.limit_bytes = 1ull << 30,
	};
	/* Drawn after the others, so that earlier seeds keep their sizes:
	 * evict-ahead in half the rounds, and in a quarter a 1 ms FETCHING
	 * time-out, so the watchdog resets fetches still queued. */
	c->evict_ahead = (int)rng_below(&rng, 2);
	c->fetching_timeout_ms = rng_below(&rng, 4) ? 0 : 1;
	int file = (int)rng_below(&rng, 2);

	/* In half the rounds a thread advises the mapping as applications
	 * do (hands.h). */
	c->hands = (int)rng_below(&rng, 2);
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
	fprintf(f, "  reads refused by contract (failed chunks): %" PRIu64
		" in %" PRIu64 " rounds\n", t->refused_reads, t->refused_rounds);
	fprintf(f, "  worst fetch latency %.3f ms, worst read %.3f ms\n",
		(double)t->worst_fetch_ns / 1e6, (double)t->worst_touch_ns / 1e6);
	fprintf(f, "  st_blocks lag (excess a page count disproved) %" PRIu64
		"\n", t->st_lag);
	fprintf(f, "  %" PRIu64 " rounds read a file, %" PRIu64 " of them "
		"with O_DIRECT; %" PRIu64 " rounds held huge folios in B\n",
		t->file_rounds, t->direct_rounds, t->huge_rounds);
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
		",\n  \"direct_rounds\": %" PRIu64 ",\n  \"huge_rounds\": %"
		PRIu64 ",\n  \"refused_reads\": %" PRIu64
		",\n  \"refused_rounds\": %" PRIu64 ",\n  \"watchdog\": \"%s\",\n"
		"  \"fired\": {", manifest, now_s() - run->start, t->rounds,
		t->failed, t->touches, t->bytes, t->mismatches, t->violations,
		t->missing, t->minor, t->dedup_fetching, t->dedup_resident,
		t->fetches, t->evictions, t->worst_fetch_ns, t->worst_touch_ns,
		t->st_lag, t->file_rounds, t->direct_rounds, t->huge_rounds,
		t->refused_reads, t->refused_rounds, t->hangs ? "fired" : "quiet");
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

/* The storm as one row of a campaign report; its failed rounds were
 * added as they failed. */
static int write_report(const char *path, struct campaign *c,
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
	return campaign_write(c, path, now_s() - run->start);
}

/* What decides the rounds, for merge to compare shards by. */
static struct campaign *new_campaign(uint64_t seed, uint64_t rounds,
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

/* The storm the options describe. */
struct storm_args {
	uint64_t seed, duration, round, only, rounds, chunk, watchdog;
	struct shard shard;
	const char *report, *json, *huge_dir;
	int backing, swarm;
	/* What a rerun line and the campaign's identity repeat of them. */
	char specs[1100], round_opts[80], backing_opt[1100];
	char dir[4096];
	struct campaign *camp;
	struct campaign_row *row;
	struct probe p;
	struct run run; /* what the rounds did */
};

static int parse(struct storm_args *a, int argc, char **argv)
{
	static const char *const backings[] = { "synthetic", "file", NULL };
	struct cli_opt opts[] = {
		{ "duration", CLI_U64, &a->duration, .arg = "SECONDS",
		  .min = 1, .fix = "give seconds >= 1",
		  .help = "run rounds until then (default 60)" },
		{ "rounds", CLI_U64, &a->rounds, .arg = "R", .min = 1,
		  .max = MAX_ROUNDS, .what = "round count",
		  .help = "run exactly R rounds instead of a duration" },
		{ "round", CLI_U64, &a->round, .arg = "SECONDS", .min = 1,
		  .max = 3600, .what = "round length",
		  .help = "each round's length (default 5)" },
		CLI_SEED(&a->seed, "the storm's seed (default: the time)"),
		CLI_SHARD(&a->shard),
		CLI_REPORT(&a->report),
		CLI_FAULT(&a->run.faults, "inject a fault with a probability or "
			  "on the Nth call (all=P: every point)"),
		{ "no-swarm", CLI_UNFLAG, &a->swarm,
		  .help = "inject only the --fault rules" },
		CLI_JSON(&a->json, "write the summary"),
		{ "only", CLI_U64, &a->only, .arg = "ROUND_SEED", .min = 1,
		  .what = "round seed",
		  .fix = "give the seed a failed round printed",
		  .help = "rerun the round of that seed alone" },
		CLI_BUG,
		{ "chunk", CLI_BYTES, &a->chunk, .arg = "BYTES",
		  .what = "chunk size", .min = 1, .max = 8 << 20,
		  .align = RESID_PAGE, .help = "every round's chunk size "
		  "(default: drawn)" },
		{ "backing", CLI_CHOICE, &a->backing, .choices = backings,
		  .help = "every round on that backing (default: drawn)" },
		{ "huge-dir", CLI_TEXT, &a->huge_dir, .arg = "DIR",
		  .help = "every round's pages in this huge tmpfs" },
		{ "watchdog", CLI_U64, &a->watchdog, .arg = "SECONDS",
		  .min = 1, .max = 3600, .what = "watchdog time",
		  .help = "a round with no progress for this long hangs "
		  "(default 30)" },
		{ 0 },
	};
	const struct cli_spec spec = { .cmd = "storm", .about = about,
				       .opts = opts };

	a->seed = (uint64_t)time(NULL);
	a->round = 5;
	a->watchdog = WATCHDOG_S;
	a->backing = -1;
	a->swarm = 1;
	return cli_parse(&spec, argc, argv);
}

/* --huge-dir: an absolute path to a directory on a tmpfs (whether it is
 * mounted with huge= the pager says at each round's open). 0, or -1 after
 * one line. */
static int huge_dir_check(const char *dir)
{
	struct statfs fs;
	struct stat st;

	if (dir[0] != '/' || strlen(dir) > 1024 || stat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode) ||
	    statfs(dir, &fs) < 0 || fs.f_type != TMPFS_MAGIC) {
		fprintf(stderr, "residctl storm: bad --huge-dir '%s': give the "
			"absolute path of a directory on a tmpfs mounted with "
			"huge= (mount -t tmpfs -o huge=always none DIR)\n", dir);
		return -1;
	}
	return 0;
}

/* The options that go together, and what a rerun repeats of them. 0, or
 * -1 after one line. */
static int settle(struct storm_args *a)
{
	char spec[1024];

	if (a->rounds && a->duration) {
		fprintf(stderr, "residctl storm: --rounds %" PRIu64 " and "
			"--duration %" PRIu64 " both given; give one\n",
			a->rounds, a->duration);
		return -1;
	}
	if ((a->shard.n || a->report) && (!a->rounds || a->only)) {
		fprintf(stderr, "residctl storm: --%s needs --rounds R (and no "
			"--only): a storm bounded by time has no fixed list of "
			"rounds\n", a->shard.n ? "shard" : "report");
		return -1;
	}
	a->duration = a->rounds ? a->rounds * a->round :
		a->duration ? a->duration : 60;
	if (fault_plan_format(&a->run.faults, spec, sizeof(spec)) < 0)
		snprintf(spec, sizeof(spec), "...");
	snprintf(a->specs, sizeof(a->specs), "%s%s%s", spec[0] ? " --fault " :
		 "", spec, a->swarm ? "" : " --no-swarm");
	a->run.faults.swarm = a->swarm ? FAULT_ALL : 0;
	if (a->chunk)
		snprintf(a->round_opts, sizeof(a->round_opts), " --chunk %" PRIu64,
			 a->chunk);
	if (a->watchdog != WATCHDOG_S)
		snprintf(a->round_opts + strlen(a->round_opts),
			 sizeof(a->round_opts) - strlen(a->round_opts),
			 " --watchdog %" PRIu64, a->watchdog);
	if (a->huge_dir && huge_dir_check(a->huge_dir) < 0)
		return -1;
	snprintf(a->backing_opt, sizeof(a->backing_opt), "%s%s%s%.1024s",
		 a->backing < 0 ? "" : " --backing ", a->backing < 0 ? "" :
		 a->backing ? "file" : "synthetic", a->huge_dir ?
		 " --huge-dir " : "", a->huge_dir ? a->huge_dir : "");
	return 0;
}

/* The kernel probe, the campaign report and the files' directory. 0, or
 * -1 after one line. */
static int prepare(struct storm_args *a)
{
	char manifest[2048], id_opts[1200], err[1024];

	probe_run(&a->p);
	probe_json(&a->p, manifest, sizeof(manifest));
	printf("kernel probe: %s\n", manifest);
	if (!a->p.can_run) {
		fprintf(stderr, "residctl storm: can the pager run here? %s\n",
			a->p.verdict);
		return -1;
	}
	snprintf(id_opts, sizeof(id_opts), "%s%s", a->round_opts,
		 a->backing_opt);
	if (a->report && (!(a->camp = new_campaign(a->seed, a->rounds,
						   a->round, id_opts, a->specs,
						   &a->shard)) ||
			  !(a->row = campaign_row(a->camp, "storm",
						  a->rounds)))) {
		fprintf(stderr, "residctl storm: out of memory\n");
		return -1;
	}
	if (a->backing && content_dir_make(a->dir, sizeof(a->dir), err,
					   sizeof(err)) < 0) {
		fprintf(stderr, "residctl storm: %s\n", err);
		return -1;
	}
	return 0;
}

/* What a failed round prints, and its finding in the report. */
static void round_failed(const struct storm_args *a, uint64_t index,
			 const struct storm_config *c,
			 const struct storm_result *r)
{
	char line[256], bugs[24], rerun[2400], drawn[1024];

	storm_describe(c, line, sizeof(line));
	bugs_format(bugs_enabled(), bugs, sizeof(bugs));
	snprintf(rerun, sizeof(rerun), "residctl storm --only %" PRIu64
		 " --round %.0f --duration %.0f%s%s%s%s%s", c->seed, c->seconds,
		 c->seconds + 1, a->round_opts, a->backing_opt, a->specs,
		 bugs_enabled() ? " --bug " : "", bugs_enabled() ? bugs : "");
	round_faults(&a->run, c->seed, drawn, sizeof(drawn));
	fprintf(stderr, "%sround %" PRIu64 " FAILED: %s\n  round: %s\n  "
		"faults: %s\n  rerun: %s\n", a->run.tty ? "\n" : "", index,
		r->message, line, drawn[0] ? drawn : "none", rerun);
	if (a->row)
		row_finding(a->row, index, 1, r->message, rerun);
}

/* Every round; -1 after one line when a storm could not run. */
static int rounds(struct storm_args *a)
{
	struct run *run = &a->run;
	uint64_t rng = a->seed, index = 0;

	/* With --rounds, every round's seed is drawn in order, so a shard's
	 * round i has the seed it has in the whole storm. */
	for (; !child_stop_signal() && run->t.rounds < MAX_ROUNDS &&
	     (a->rounds ? index < a->rounds : now_s() - run->start <
	      (double)a->duration); index++) {
		struct storm_config c;
		struct storm_result r;
		double left = (double)a->duration - (now_s() - run->start);
		uint64_t rseed = a->only ? a->only : rng_next(&rng);

		if (!shard_owns(&a->shard, index))
			continue;
		draw(rseed, a->rounds || left >= (double)a->round ?
		     (double)a->round : left, a->chunk, a->backing, a->dir, &c);
		c.huge_dir = a->huge_dir;
		c.watchdog_seconds = (double)a->watchdog;
		c.progress = progress;
		c.progress_arg = run;
		c.faults = &run->faults;
		if (storm_run(&c, &r) < 0) {
			fprintf(stderr, "residctl storm: %s\n", r.message);
			return -1;
		}
		if (r.interrupted)
			break;
		add(&run->t, &r);
		run->t.file_rounds += c.file_dir != NULL;
		coverage_add_run(&run->t.cov, r.probes);
		run->seeds[run->t.rounds] = c.seed;
		if (!storm_passed(&r)) {
			run->failed[run->t.rounds] = 1;
			run->t.failed++;
			round_failed(a, index, &c, &r);
		}
		run->t.rounds++;
		if (a->only)
			break;
	}
	return 0;
}

/* One storm on a, fresh for this call. */
static int storm(struct storm_args *a, int argc, char **argv)
{
	struct run *run = &a->run;
	int rc = parse(a, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	if (settle(a) < 0 || prepare(a) < 0)
		return 2;
	child_stop_softly(); /* Ctrl-C: the summary so far */
	run->start = now_s();
	run->duration = (double)a->duration;
	run->tty = isatty(STDERR_FILENO);
	printf("storm: seed %" PRIu64 ", %" PRIu64 " s, rounds of %" PRIu64
	       " s\n", a->seed, a->duration, a->round);
	if (shard_split(&a->shard))
		printf("storm: shard %" PRIu64 "/%" PRIu64 " of %" PRIu64
		       " rounds: round i runs when i mod %" PRIu64 " = %" PRIu64
		       "\n", a->shard.k, a->shard.n, a->rounds, a->shard.n,
		       a->shard.k - 1);
	fflush(stdout);
	rc = rounds(a);
	if (run->tty)
		fputc('\n', stderr);
	/* A killed round's file too. */
	if ((a->dir[0] && content_dir_remove(a->dir) < 0) || rc < 0)
		return 2;
	summary(stdout, run, &a->p);
	if (a->json && write_json(a->json, run, &a->p) < 0)
		return 2;
	if (a->camp) {
		int bad = write_report(a->report, a->camp, a->row, run);

		campaign_free(a->camp);
		if (bad)
			return 2;
	}
	return run->t.failed ? 1 : 0;
}

int cmd_storm(int argc, char **argv)
{
	/* On the heap (the seeds of every round), per call: a second call
	 * in one process starts from nothing of the first. */
	struct storm_args *a = calloc(1, sizeof(*a));
	int rc;

	if (!a) {
		fprintf(stderr, "residctl storm: out of memory\n");
		return 2;
	}
	rc = storm(a, argc, argv);
	free(a);
	return rc;
}
