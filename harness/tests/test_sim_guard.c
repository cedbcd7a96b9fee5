/* A crash or a spin of a controlled thread is the schedule's verdict, never
 * the end of the harness (harness/sim/guard.c): a NULL write, a division by
 * zero, an abort and a spin with no scheduling point each end their run
 * with the signal (or the spin), the thread and the function named, and the
 * next run in the same process passes; a campaign over the self-crash
 * scenario finds the SIGFPE and its replay line crashes the same way
 * (skipped under ThreadSanitizer, whose runtime owns the signals). A run
 * that steps without progress ends at the stall bound, one that never ends
 * at its step budget, and a campaign that finds a failure of hundreds of
 * thousands of steps takes no more memory than one whose failure is a few
 * steps long. */
#include <CUnit/CUnit.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "scenarios/scenario.h"
#include "sim/explore.h"
#include "sim/sim.h"
#include "sim/sim_gate.h"
#include "tests/suites.h"
#include "workload/workload.h"

static volatile uintptr_t zero;

static void null_write(void *arg)
{
	(void)arg;
	*(volatile int *)zero = 1;
}

static void divide_by_zero(void *arg)
{
	*(volatile uintptr_t *)arg = 100 / zero;
}

static void aborts(void *arg)
{
	(void)arg;
	abort();
}

static void spins(void *arg)
{
	while (!*(volatile int *)arg)
		continue;
}

static void quiet(void *arg)
{
	(void)arg;
}

/* Runs fn as the controlled thread of its own simulation. */
static enum sim_verdict run(void (*fn)(void *), void *arg, uint64_t spin_ms,
			    char *why, size_t n)
{
	struct sim_config c = { .seed = 1, .spin_limit_ms = spin_ms };
	struct sim *s = sim_create(&c);
	enum sim_verdict v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	v = sim_run(s, fn, arg);
	snprintf(why, n, "%s", sim_why(s));
	sim_destroy(s);
	return v;
}

static void crashes_are_verdicts(void)
{
	static const struct {
		void (*fn)(void *);
		const char *sig, *fn_name;
	} cases[] = {
		{ null_write, "SIGSEGV (NULL pointer access)", "null_write" },
		{ divide_by_zero, "SIGFPE (integer divide by zero)",
		  "divide_by_zero" },
		{ aborts, "SIGABRT (abort or failed assertion)", "aborts" },
	};
	uintptr_t sink = 0;
	char why[1024];

	if (!sim_guarded())
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_EQUAL(run(cases[i].fn, &sink, 0, why, sizeof(why)),
				SIM_CRASH);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, cases[i].sig));
		CU_ASSERT_PTR_NOT_NULL(strstr(why, "thread 0 (main)"));
		CU_ASSERT_PTR_NOT_NULL(strstr(why, cases[i].fn_name));
		/* The process lives on: the next run is a plain pass. */
		CU_ASSERT_EQUAL(run(quiet, NULL, 0, why, sizeof(why)),
				SIM_PASS);
	}
}

static void spin_is_a_verdict(void)
{
	int never = 0;
	char why[1024];

	if (!sim_guarded())
		return;
	CU_ASSERT_EQUAL(run(spins, &never, 50, why, sizeof(why)),
			SIM_NO_PROGRESS);
	CU_ASSERT_PTR_NOT_NULL(strstr(why,
				      "no scheduling point for 50 ms of "
				      "CPU time in thread 0 (main), in spins"));
	CU_ASSERT_EQUAL(run(quiet, NULL, 0, why, sizeof(why)), SIM_PASS);
}

/* The campaign goes on past the crash, shrinks it, and the line replays
 * to the same crash and the same event log. */
static void crash_campaign_replays(void)
{
	struct explore_opts o = { .p = simprog_find("self-crash"),
				  .strategy = SIM_PCT,
				  .depth = 3,
				  .seed = 1,
				  .schedules = 200,
				  .shrink = 1 };
	struct explore_result r;
	struct replay rp;
	struct sim_outcome again;
	char err[256], *line;

	if (!sim_guarded())
		return;
	CU_ASSERT_PTR_NOT_NULL_FATAL(o.p);
	CU_ASSERT(explore(&o, &r) > 1);
	CU_ASSERT_EQUAL(r.schedules, 200);
	CU_ASSERT_EQUAL_FATAL(r.outcome.verdict, SIM_CRASH);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.outcome.why, "SIGFPE"));
	line = replay_encode(&r.fail);
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	CU_ASSERT_EQUAL_FATAL(replay_decode(line, &rp, err, sizeof(err)), 0);
	replay_run(&rp, &again);
	CU_ASSERT_EQUAL(again.verdict, SIM_CRASH);
	CU_ASSERT_STRING_EQUAL(again.why, r.outcome.why);
	CU_ASSERT_EQUAL(again.log_hash, r.outcome.log_hash);
	sim_outcome_free(&again);
	replay_free(&rp);
	free(line);
	explore_result_free(&r);
}

/* What a campaign in a child process found, and its peak RSS. */
struct found {
	enum sim_verdict verdict;
	uint64_t steps;
	int replay_matches, unshrunk_line;
	char why[512];
	long maxrss_kb;
};

/* Runs a shrinking PCT campaign of scenario id in a child and reads back
 * its first failure and the child's peak resident memory. */
static void campaign_in_child(const char *id, struct found *f)
{
	struct explore_opts o = { .p = simprog_find(id),
				  .strategy = SIM_PCT,
				  .depth = 3,
				  .seed = 1,
				  .schedules = 200,
				  .stop_at_failure = 1,
				  .shrink = 1 };
	struct rusage ru;
	int p[2], status;
	pid_t pid;

	memset(f, 0, sizeof(*f));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o.p);
	CU_ASSERT_FATAL(pipe(p) == 0);
	fflush(NULL);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct explore_result r;
		char *line;

		close(p[0]);
		/* The first failure's line goes to a file, before shrinking. */
		o.announce = tmpfile();
		explore(&o, &r);
		f->verdict = r.outcome.verdict;
		f->steps = r.outcome.steps;
		f->replay_matches = r.replay_matches;
		snprintf(f->why, sizeof(f->why), "%s", r.outcome.why);
		line = malloc(4096);
		rewind(o.announce);
		while (line && fgets(line, 4096, o.announce))
			f->unshrunk_line |= !!strstr(line, "unshrunk: residctl "
							   "replay 'rc3/");
		_exit(write(p[1], f, sizeof(*f)) == sizeof(*f) ? 0 : 1);
	}
	close(p[1]);
	CU_ASSERT_EQUAL(read(p[0], f, sizeof(*f)), (ssize_t)sizeof(*f));
	close(p[0]);
	CU_ASSERT_EQUAL_FATAL(wait4(pid, &status, 0, &ru), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	f->maxrss_kb = ru.ru_maxrss;
}

/* A livelock (self-livelock: a poll through scheduling points for a
 * wakeup never sent) ends at the stall bound, SIM_STALL_STEPS steps
 * without progress, as no-progress; the line printed the moment it was
 * found and the shrunk one replay it. The campaign's peak memory is within 4 MiB of a campaign
 * whose failure (self-deadlock) is 11 steps: a run's record of choices is
 * bounded, the event log hashed as it goes (docs/simulation.md). Recorded
 * whole, a million steps' choices and runnable sets alone are 10 MB, and
 * shrinking copies them (measured: 41 MB against 2.4 MB). */
static void long_failure_bounded_memory(void)
{
	struct found longf, shortf;

	campaign_in_child("self-livelock", &longf);
	campaign_in_child("self-deadlock", &shortf);
	CU_ASSERT_EQUAL(longf.verdict, SIM_NO_PROGRESS);
	CU_ASSERT(longf.steps > SIM_STALL_STEPS &&
		  longf.steps < 2 * SIM_STALL_STEPS);
	CU_ASSERT(longf.steps > SIM_RECORD_STEPS);
	CU_ASSERT_PTR_NOT_NULL(strstr(longf.why, "stall bound: 200000 steps"));
	CU_ASSERT(longf.replay_matches);
	CU_ASSERT(longf.unshrunk_line);
	CU_ASSERT_EQUAL(shortf.verdict, SIM_DEADLOCK);
	CU_ASSERT(shortf.steps < 100);
	CU_ASSERT(shortf.unshrunk_line);
	/* ThreadSanitizer's runtime keeps a history of the events it saw,
	 * which grows with the steps run: its memory, not the campaign's. */
	if (UNDER_TSAN)
		return;
	if (longf.maxrss_kb - shortf.maxrss_kb >= 4096)
		fprintf(stderr,
			"\npeak RSS: %ld KiB for a %llu-step failure, "
			"%ld KiB for a %llu-step one\n",
			longf.maxrss_kb, (unsigned long long)longf.steps,
			shortf.maxrss_kb, (unsigned long long)shortf.steps);
	CU_ASSERT(longf.maxrss_kb - shortf.maxrss_kb < 4096);
}

/* Takes a block the way the pager does and touches it, then crashes: the
 * run ends with the block still taken. */
static void leaks_then_crashes(void *arg)
{
	char *b = sim_heap_malloc(1 << 16);

	memset(b, 1, 1 << 16);
	*(volatile uintptr_t *)arg = (uintptr_t)b / zero;
}

/* A run that ends before the pager frees its blocks leaves none behind:
 * 4,000 such runs (250 MiB taken) in a child grow it by under 16 MiB. */
static void failed_runs_leave_no_heap(void)
{
	struct rusage before, after;
	int status;
	pid_t pid;

	if (!sim_guarded())
		return;
	fflush(NULL);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		uintptr_t sink = 0;
		char why[256];

		getrusage(RUSAGE_SELF, &before);
		for (int i = 0; i < 4000; i++)
			if (run(leaks_then_crashes, &sink, 0, why,
				sizeof(why)) != SIM_CRASH)
				_exit(2);
		getrusage(RUSAGE_SELF, &after);
		_exit(after.ru_maxrss - before.ru_maxrss < 16384 ? 0 : 1);
	}
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Steps through scheduling points; every `every` steps (0: never) the
 * pager's chunk state change point, which is progress. */
struct poller {
	struct sim *s;
	unsigned every;
};

static void polls(void *arg)
{
	struct poller *p = arg;
	const struct resid_seam *k = sim_seam(p->s);

	for (unsigned i = 1;; i++)
		k->yield(k->ctx, p->every && i % p->every == 0 ? "chunk-state" :
								 "poll");
}

static enum sim_verdict poll_run(unsigned every, uint64_t max_steps,
				 uint64_t *steps, char *why, size_t n)
{
	struct sim_config c = { .seed = 1, .max_steps = max_steps };
	struct poller p = { sim_create(&c), every };
	enum sim_verdict v;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p.s);
	v = sim_run(p.s, polls, &p);
	*steps = sim_steps(p.s);
	snprintf(why, n, "%s", sim_why(p.s));
	sim_destroy(p.s);
	return v;
}

/* A run stepping with no progress ends at the stall bound, long before
 * its step budget; a chunk state change is progress, so a run that makes
 * one now and then steps on until the budget, the last resort. */
static void stall_bound_ends_early(void)
{
	uint64_t steps;
	char why[1024];

	CU_ASSERT_EQUAL(poll_run(0, 0, &steps, why, sizeof(why)),
			SIM_NO_PROGRESS);
	CU_ASSERT_EQUAL(steps, SIM_STALL_STEPS + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "stall bound: 200000 steps without "
					   "progress"));
	CU_ASSERT_EQUAL(poll_run(1000, 3 * SIM_STALL_STEPS, &steps, why,
				 sizeof(why)),
			SIM_NO_PROGRESS);
	CU_ASSERT_EQUAL(steps, 3 * SIM_STALL_STEPS + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "step budget: 600000 steps"));
}

/* A shrink whose budget is spent before its first run: it says so, on the
 * announce stream and in the result, and the line it leaves (the failure
 * as found) still replays to the same failure. */
static void shrink_budget_keeps_best_line(void)
{
	struct explore_opts o = { .p = simprog_find("T-7"),
				  .strategy = SIM_PCT,
				  .depth = 3,
				  .seed = 1,
				  .schedules = 500,
				  .bugs = 1u << 7,
				  .stop_at_failure = 1,
				  .shrink = 1,
				  .budget = { .seconds = 1e-9 } };
	struct explore_result r;
	char line[8192];
	int found = 0, best = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o.p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o.announce = tmpfile());
	CU_ASSERT_EQUAL(explore(&o, &r), 1);
	CU_ASSERT_EQUAL(r.outcome.verdict, SIM_LOST_WAKEUP);
	CU_ASSERT_STRING_EQUAL(r.shrunk.stopped, "0 s");
	CU_ASSERT_EQUAL(r.shrunk.runs, 0);
	CU_ASSERT(r.replay_matches);
	rewind(o.announce);
	while (fgets(line, sizeof(line), o.announce)) {
		found |= !!strstr(line, "  unshrunk: residctl replay 'rc3/");
		best |= !!strstr(line, "  best so far: residctl replay 'rc3/");
	}
	CU_ASSERT(found && best);
	fclose(o.announce);
	explore_result_free(&r);
}

/* A campaign stops exploring at its failure cap: self-deadlock fails in
 * about one schedule of four, and with a cap of 3 only three are found.
 * In check --sim the cap is the row's: the random half takes it, the PCT
 * half is not run. */
static void failure_cap_stops_exploring(void)
{
	struct explore_opts o = { .p = simprog_find("self-deadlock"),
				  .strategy = SIM_RANDOM,
				  .seed = 1,
				  .schedules = 400,
				  .max_failures = 3 };
	const struct scenario *s = scenario_find("self-deadlock");
	struct sim_gate_part part = { .failures_per_row = 3 };
	struct run_opts ro = { .seed = 1 };
	struct scen_result res = { 0 };
	struct explore_result r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o.p);
	CU_ASSERT_EQUAL(explore(&o, &r), 3);
	CU_ASSERT(r.capped);
	CU_ASSERT(r.schedules < 100);
	explore_result_free(&r);
	o.max_failures = 0;
	CU_ASSERT(explore(&o, &r) > 50);
	CU_ASSERT_EQUAL(r.schedules, 400);
	CU_ASSERT(!r.capped);
	explore_result_free(&r);

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(sim_gate_run(s, &ro, 400, &part, &res), 0);
	CU_ASSERT_EQUAL(res.mismatches, 3);
	CU_ASSERT(res.checks < 100);
	CU_ASSERT(res.failed);
}

/* The campaign's time budget: past its deadline a campaign runs no more
 * schedules and says so; in check --sim a row it cut short with no
 * failure is UNKNOWN, not PASS. A deadline 0.2 s away stops a campaign of
 * a million T-3 schedules (some 10 minutes) within a second. */
static void deadline_stops_the_campaign(void)
{
	struct explore_opts o = { .p = simprog_find("T-3"),
				  .strategy = SIM_PCT,
				  .depth = 3,
				  .seed = 1,
				  .schedules = 1000000 };
	const struct scenario *s = scenario_find("T-2");
	struct sim_gate_part part = { .deadline = mono_now() - 1 };
	struct run_opts ro = { .seed = 1 };
	struct scen_result res = { 0 };
	struct explore_result r;
	double t0 = mono_now();

	CU_ASSERT_PTR_NOT_NULL_FATAL(o.p);
	o.deadline = t0 + 0.2;
	CU_ASSERT_EQUAL(explore(&o, &r), 0);
	CU_ASSERT(r.out_of_time);
	CU_ASSERT(r.schedules > 0 && r.schedules < o.schedules);
	CU_ASSERT(mono_now() - t0 < 1.5);
	explore_result_free(&r);

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(sim_gate_run(s, &ro, 400, &part, &res), 0);
	CU_ASSERT_EQUAL(res.checks, 0);
	CU_ASSERT(res.unknown);
	CU_ASSERT(!res.failed);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.message, "not finished"));
}

void suite_sim_guard(void)
{
	CU_pSuite s = CU_add_suite("sim-guard", NULL, NULL);

	CU_add_test(s, "a crash is the run's verdict, the harness lives on",
		    crashes_are_verdicts);
	CU_add_test(s, "a spin without a scheduling point is a verdict",
		    spin_is_a_verdict);
	CU_add_test(s, "a campaign goes on past a crash and replays it",
		    crash_campaign_replays);
	CU_add_test(s, "a stall-bound failure: no-progress, memory bounded",
		    long_failure_bounded_memory);
	CU_add_test(s, "no progress ends a run at the stall bound",
		    stall_bound_ends_early);
	CU_add_test(s, "a run that ends early leaves no pager heap behind",
		    failed_runs_leave_no_heap);
	CU_add_test(s, "a campaign stops exploring at its failure cap",
		    failure_cap_stops_exploring);
	CU_add_test(s,
		    "a campaign stops at its deadline, unfinished rows "
		    "unknown",
		    deadline_stops_the_campaign);
	CU_add_test(s, "a spent shrink budget leaves the best line so far",
		    shrink_budget_keeps_best_line);
}
