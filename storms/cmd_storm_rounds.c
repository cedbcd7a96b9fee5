/* residctl storm's rounds: each drawn from its seed, run in its child,
 * added to the totals; a failed one prints the line that reruns it. */
#include <inttypes.h>
#include <stdio.h>

#include "base/clock.h"
#include "base/coverage.h"
#include "base/rng.h"
#include "cmd_storm.h"
#include "fault/bugs.h"
#include "proc/child.h"
#include "workload/content_file.h"
#include "workload/workload.h"

/* chunk: the chunk size of every round, 0 to draw it. backing: 0 synthetic,
 * 1 file (in dir), -1 drawn. */
static void draw(uint64_t seed, double seconds, uint64_t chunk, int backing,
		 const char *dir, struct storm_config *c)
{
	static const uint64_t chunks[] = { 0,       64 << 10, 256 << 10,
					   1 << 20, 2 << 20,  4 << 20 };
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
	fprintf(stderr,
		"\r  storm %5.0f/%.0f s  round %" PRIu64 "  touches %" PRIu64
		"  mismatches %" PRIu64 "  failed rounds %" PRIu64 "   ",
		mono_now() - run->start, run->duration, run->t.rounds + 1,
		run->t.touches, run->t.mismatches, run->t.failed);
}

/* The faults a round injected: its swarm's draw and the --fault rules. */
void storm_round_faults(const struct run *run, uint64_t seed, char *buf,
			size_t n)
{
	struct fault_plan f;

	fault_plan_swarm(&run->faults, seed, &f);
	if (fault_plan_format(&f, buf, n) < 0)
		snprintf(buf, n, "...");
}

/* What a failed round prints, and its finding in the report. */
static void round_failed(const struct storm_args *a, uint64_t index,
			 const struct storm_config *c,
			 const struct storm_result *r)
{
	char line[256], bugs[24], rerun[2400], drawn[1024];

	storm_describe(c, line, sizeof(line));
	bugs_format(bugs_enabled(), bugs, sizeof(bugs));
	snprintf(rerun, sizeof(rerun),
		 "residctl storm --only %" PRIu64
		 " --round %.0f --duration %.0f%s%s%s%s%s",
		 c->seed, c->seconds, c->seconds + 1, a->round_opts,
		 a->backing_opt, a->specs, bugs_enabled() ? " --bug " : "",
		 bugs_enabled() ? bugs : "");
	storm_round_faults(&a->run, c->seed, drawn, sizeof(drawn));
	fprintf(stderr,
		"%sround %" PRIu64 " FAILED: %s\n  round: %s\n  "
		"faults: %s\n  rerun: %s\n",
		a->run.tty ? "\n" : "", index, r->message, line,
		drawn[0] ? drawn : "none", rerun);
	if (a->row)
		row_finding(a->row, index, 1, r->message, rerun);
}

/* Every round; -1 after one line when a storm could not run. */
int storm_rounds(struct storm_args *a)
{
	struct run *run = &a->run;
	uint64_t rng = a->seed, index = 0;

	/* With --rounds, every round's seed is drawn in order, so a shard's
	 * round i has the seed it has in the whole storm. */
	for (; !child_stop_signal() && run->t.rounds < MAX_ROUNDS &&
	       (a->rounds ? index < a->rounds :
			    mono_now() - run->start < (double)a->duration);
	     index++) {
		struct storm_config c;
		struct storm_result r;
		double left = (double)a->duration - (mono_now() - run->start);
		uint64_t rseed = a->only ? a->only : rng_next(&rng);

		if (!shard_owns(&a->shard, index))
			continue;
		draw(rseed,
		     a->rounds || left >= (double)a->round ? (double)a->round :
							     left,
		     a->chunk, a->backing, a->dir, &c);
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
		storm_totals_add(&run->t, &r);
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
	/* The seeds' room ends a time-bound storm early: said, not silent
	 * (--rounds is bounded by it at parse). */
	if (!a->rounds && !a->only && run->t.rounds == MAX_ROUNDS &&
	    !child_stop_signal() &&
	    mono_now() - run->start < (double)a->duration) {
		run->capped = 1;
		fprintf(stderr,
			"residctl storm: stopped at %d rounds, the most "
			"one storm records, %.0f s before --duration %" PRIu64
			"; run a longer --round or several storms\n",
			MAX_ROUNDS,
			(double)a->duration - (mono_now() - run->start),
			a->duration);
	}
	return 0;
}
