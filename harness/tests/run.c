/* The CUnit runner: every suite of harness/tests/, or the suites named on
 * the command line (the kernel matrix runs cgroup-live in each guest), basic
 * interface, verbose. Exit 1 when any assertion failed, 2 on an unknown
 * suite name. */
#include <CUnit/Basic.h>
#include <stdio.h>
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

int main(int argc, char **argv)
{
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: CUnit registry: %s\n", CU_get_error_msg());
		return 2;
	}
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
	suite_bugs();
	suite_misuse();
	suite_cli();
	suite_scenarios();
	suite_coverage();
	suite_conformance();
	if (CU_get_error() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: adding suites: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		puts("usage: unit-tests [SUITE...]\n"
		     "  Runs every CUnit suite, or the named ones (e.g. cgroup-live).");
		CU_cleanup_registry();
		return 0;
	}
	if (argc == 1)
		CU_basic_run_tests();
	else if (run_named(argc, argv)) {
		CU_cleanup_registry();
		return 2;
	}
	unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
