/* Code probes: a campaign counts them per run, the suite's file adds them
 * up across processes, and a file from elsewhere is refused. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/coverage.h"
#include "sim/explore.h"
#include "tests/suites.h"

/* T-7 on the simulated kernel fails half its backing reads: the read
 * retry probe fires, counted once per schedule that hit it. */
static void campaign_counts_per_run(void)
{
	struct explore_opts o = { .p = simprog_find("T-7"),
				  .strategy = SIM_RANDOM,
				  .seed = 1,
				  .schedules = 20 };
	struct explore_result r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(o.p);
	explore(&o, &r);
	CU_ASSERT_EQUAL(r.failures, 0);
	CU_ASSERT_EQUAL(r.cov.runs, 20);
	CU_ASSERT(r.cov.hits[CP_read_retried] >=
		  r.cov.in_runs[CP_read_retried]);
	CU_ASSERT(r.cov.in_runs[CP_read_retried] > 0);
	CU_ASSERT(r.cov.in_runs[CP_read_retried] <= 20);
	/* Nothing in the simulation fails a punch. */
	CU_ASSERT_EQUAL(r.cov.hits[CP_punch_retried], 0);
	CU_ASSERT(coverage_missed_required(&r.cov) > 0);
	explore_result_free(&r);
}

/* Two saves add up in the file; the process's total restarts after each. */
static void file_adds_up(void)
{
	char path[] = "/tmp/residctl-coverage-XXXXXX";
	uint64_t hits[CP_COUNT] = { 0 };
	struct coverage mine = { 0 }, c;
	char err[256];
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	setenv("RESIDCTL_COVERAGE", path, 1);
	/* What earlier tests counted is saved, then thrown away. */
	CU_ASSERT_EQUAL(coverage_save_env(), 0);
	unlink(path);
	hits[CP_watchdog_reset] = 3;
	coverage_add_run(&mine, hits);
	CU_ASSERT_EQUAL(coverage_save_env(), 0);
	hits[CP_watchdog_reset] = 0;
	hits[CP_evict_ahead] = 5;
	coverage_add_run(&mine, hits);
	CU_ASSERT_EQUAL(coverage_save_env(), 0);
	CU_ASSERT_EQUAL_FATAL(coverage_load(path, &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.runs, 2);
	CU_ASSERT_EQUAL(c.hits[CP_watchdog_reset], 3);
	CU_ASSERT_EQUAL(c.in_runs[CP_watchdog_reset], 1);
	CU_ASSERT_EQUAL(c.hits[CP_evict_ahead], 5);
	CU_ASSERT_EQUAL(c.hits[CP_continue_partial], 0);
	CU_ASSERT_EQUAL(memcmp(&c, &mine, sizeof(c)), 0);
	unsetenv("RESIDCTL_COVERAGE");
	unlink(path);
}

static void foreign_file_refused(void)
{
	char path[] = "/tmp/residctl-coverage-XXXXXX";
	static const char text[] = "residctl-coverage 1\nruns 4\nno_such 1 1\n";
	struct coverage c;
	char err[256] = "";
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, sizeof(text) - 1),
			(ssize_t)sizeof(text) - 1);
	close(fd);
	CU_ASSERT_EQUAL(coverage_load(path, &c, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":3:"));
	CU_ASSERT_EQUAL(coverage_load("/nonexistent/x", &c, err, sizeof(err)),
			-1);
	unlink(path);
}

void suite_coverage(void)
{
	CU_pSuite s = CU_add_suite("code probes", NULL, NULL);

	CU_add_test(s, "a campaign counts probes per run",
		    campaign_counts_per_run);
	CU_add_test(s, "the coverage file adds up across saves", file_adds_up);
	CU_add_test(s, "a coverage file of another build is refused",
		    foreign_file_refused);
}
