/* The CUnit runner: every suite of harness/tests/, or the suites named on
 * the command line (the kernel matrix runs cgroup-live in each guest), basic
 * interface, verbose, each test under a time limit (time_limit.c). Exit 1
 * when any assertion failed or a test ran out of time, 2 on an unknown
 * suite name or a bad RESID_TEST_SECONDS. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

/* Runs the named suites; -1 with a line on stderr when one is unknown. */
static int run_named(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!CU_get_suite(argv[i])) {
			fprintf(stderr, "unit-tests: unknown suite '%s'; the suites are the names CUnit prints in a full run\n",
				argv[i]);
			return -1;
		}
	for (int i = 1; i < argc; i++)
		CU_basic_run_suite(CU_get_suite(argv[i]));
	return 0;
}

/* Seconds a test may run: RESID_TEST_SECONDS, default 300 (a test takes
 * seconds at most, even under ThreadSanitizer on a loaded machine). 0 on a
 * bad value, after a line on stderr. */
static unsigned limit_seconds(void)
{
	const char *v = getenv("RESID_TEST_SECONDS");
	char *end;
	unsigned long s;

	if (!v)
		return 300;
	s = strtoul(v, &end, 10);
	if (!*v || *end || !s || s > 86400) {
		fprintf(stderr, "unit-tests: bad RESID_TEST_SECONDS '%s': give "
			"whole seconds, 1 to 86400\n", v);
		return 0;
	}
	return (unsigned)s;
}

static void add_suites(void)
{
	suite_content();
	suite_chunks();
	suite_config();
	suite_policy();
	suite_belady();
	suite_trace();
	suite_layout();
	suite_cgroup();
	suite_cgroup_live();
	suite_kernel_facts();
	suite_invariants();
	suite_pager();
	suite_fault();
	suite_sim();
	suite_sim_guard();
	suite_bugs();
	suite_misuse();
	suite_cli();
	suite_scenarios();
	suite_coverage();
	suite_conformance();
	suite_huge();
}

int main(int argc, char **argv)
{
	/* The time limit's own test runs alone, with a one-second limit. */
	int self_test = argc == 2 && !strcmp(argv[1], "--time-limit-self-test");
	unsigned limit = self_test ? 1 : limit_seconds();

	if (!limit)
		return 2;
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: CUnit registry: %s\n", CU_get_error_msg());
		return 2;
	}
	if (self_test)
		suite_time_limit_self_test();
	else
		add_suites();
	if (CU_get_error() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: adding suites: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 2;
	}
	if (time_limit_wrap_all(limit) < 0) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		puts("usage: unit-tests [SUITE...] | --time-limit-self-test\n"
		     "  Runs every CUnit suite, or the named ones (e.g. cgroup-live),\n"
		     "  each test under a time limit: RESID_TEST_SECONDS, default 300;\n"
		     "  a test past it fails and the run goes on. --time-limit-self-test\n"
		     "  runs only the limit's own test: one test sleeps past a 1 s limit\n"
		     "  (it must fail), the next must still pass.");
		CU_cleanup_registry();
		return 0;
	}
	if (argc == 1 || self_test)
		CU_basic_run_tests();
	else if (run_named(argc, argv)) {
		CU_cleanup_registry();
		return 2;
	}
	unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
