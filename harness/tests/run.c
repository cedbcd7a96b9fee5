/* The CUnit runner: every suite of harness/tests/, basic interface, verbose.
 * Exit 1 when any assertion failed. */
#include <CUnit/Basic.h>
#include <stdio.h>

#include "suites.h"

int main(void)
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
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
