/* The bug switches (design.md §6) as the harness sees them: the --bug and
 * RESIDCTL_BUGS syntax, the replay line that carries the switches, and the
 * scheduler catching a switched-on bug that it does not see switched off.
 * The full regression (all seven, every expected detector) is ci/bugs.sh. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "fault/bugs.h"
#include "sim/explore.h"
#include "tests/suites.h"

static void parse_and_format(void)
{
	unsigned m;
	char err[160], buf[24];

	CU_ASSERT_EQUAL(bugs_parse("2", &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m, 1u << 2);
	CU_ASSERT_EQUAL(bugs_parse("1,5", &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m, (1u << 1) | (1u << 5));
	bugs_format(m, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "1+5");
	CU_ASSERT_EQUAL(bugs_parse(buf, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m, (1u << 1) | (1u << 5));
	CU_ASSERT_EQUAL(bugs_parse("8,10", &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m, (1u << 8) | (1u << 10));
	bugs_format(m, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "8+10");
	CU_ASSERT_EQUAL(bugs_parse(buf, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m, (1u << 8) | (1u << 10));
	CU_ASSERT_EQUAL(bugs_parse("all", &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m, BUGS_ALL);
	bugs_format(0, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "-");
	CU_ASSERT_EQUAL(bugs_parse(buf, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m, 0);
	static const char *const bad[] = { "0",  "12",  "13", "010", "1,",
					   ",1", "1;2", "1+", "x",   "" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(bugs_parse(bad[i], &m, err, sizeof(err)), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "bad bug list"));
	}
}

/* Hunts bug 5 (plain counters) in the simulated T-6; returns the outcome
 * of the first failure, or a pass. */
static uint64_t hunt(unsigned bugs, struct explore_result *r)
{
	struct explore_opts o = { .p = simprog_find("T-6"),
				  .strategy = SIM_PCT,
				  .depth = 3,
				  .seed = 1,
				  .schedules = 200,
				  .bugs = bugs,
				  .stop_at_failure = 1,
				  .shrink = 1 };

	return explore(&o, r);
}

static void switch_is_caught_and_replays(void)
{
	struct explore_result r;
	struct replay rp;
	struct sim_outcome o;
	char err[256];

	CU_ASSERT_EQUAL(hunt(0, &r), 0);
	explore_result_free(&r);
	CU_ASSERT_EQUAL(bugs_enabled(), 0);
	CU_ASSERT_EQUAL(hunt(1u << 5, &r), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.outcome.why, "I-14"));
	/* The campaign leaves the process's switches as they were. */
	CU_ASSERT_EQUAL(bugs_enabled(), 0);
	char *line = replay_encode(&r.fail);

	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	CU_ASSERT_PTR_NOT_NULL(strstr(line, "/5/"));
	CU_ASSERT_EQUAL_FATAL(replay_decode(line, &rp, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(rp.bugs, 1u << 5);
	replay_run(&rp, &o);
	CU_ASSERT_EQUAL(o.verdict, r.outcome.verdict);
	CU_ASSERT_EQUAL(o.log_hash, r.outcome.log_hash);
	sim_outcome_free(&o);
	/* The same schedule with the switch off passes. */
	rp.bugs = 0;
	replay_run(&rp, &o);
	CU_ASSERT_EQUAL(o.verdict, SIM_PASS);
	sim_outcome_free(&o);
	replay_free(&rp);
	free(line);
	explore_result_free(&r);
}

void suite_bugs(void)
{
	CU_pSuite s = CU_add_suite("bugs", NULL, NULL);

	if (!s)
		return;
	CU_add_test(s, "--bug syntax", parse_and_format);
	CU_add_test(s, "bug 5 caught, replayed, gone when off",
		    switch_is_caught_and_replays);
}
