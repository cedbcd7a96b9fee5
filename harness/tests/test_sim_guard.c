/* A crash or a spin of a controlled thread is the schedule's verdict, never
 * the end of the harness (harness/sim/guard.c): a NULL write, a division by
 * zero, an abort and a spin with no scheduling point each end their run
 * with the signal (or the spin), the thread and the function named, and the
 * next run in the same process passes; a campaign over the self-crash
 * scenario finds the SIGFPE and its replay line crashes the same way.
 * Skipped under ThreadSanitizer, whose runtime owns the signals. */
#include <CUnit/CUnit.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore.h"
#include "sim.h"
#include "suites.h"

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
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no scheduling point for 50 ms of "
				      "CPU time in thread 0 (main), in spins"));
	CU_ASSERT_EQUAL(run(quiet, NULL, 0, why, sizeof(why)), SIM_PASS);
}

/* The campaign goes on past the crash, shrinks it, and the line replays
 * to the same crash and the same event log. */
static void crash_campaign_replays(void)
{
	struct explore_opts o = { .p = simprog_find("self-crash"),
				  .strategy = SIM_PCT, .depth = 3, .seed = 1,
				  .schedules = 200, .shrink = 1 };
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

void suite_sim_guard(void)
{
	CU_pSuite s = CU_add_suite("sim-guard", NULL, NULL);

	CU_add_test(s, "a crash is the run's verdict, the harness lives on",
		    crashes_are_verdicts);
	CU_add_test(s, "a spin without a scheduling point is a verdict",
		    spin_is_a_verdict);
	CU_add_test(s, "a campaign goes on past a crash and replays it",
		    crash_campaign_replays);
}
