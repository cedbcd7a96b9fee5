/* The CUnit runner: every suite of harness/tests/, or the suites named on
 * the command line (the kernel matrix runs cgroup-live in each guest), basic
 * interface, verbose, each test in a child of its own under its suite's
 * time limit (time_limit.c, the table below). Exit 1 when any assertion
 * failed or a test crashed or ran out of time, 2 on an unknown suite name
 * or a bad RESID_TEST_SECONDS. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/suites.h"

/* Failed assertions and tests of the last run: CUnit clears them at the
 * start of each. */
static unsigned failures(void)
{
	return CU_get_number_of_failures() + CU_get_number_of_tests_failed();
}

/* Runs the named suites, adding their failures to *failed; -1 with a line
 * on stderr when one is unknown. */
static int run_named(int n, char **names, unsigned *failed)
{
	for (int i = 0; i < n; i++)
		if (!CU_get_suite(names[i])) {
			fprintf(stderr,
				"unit-tests: unknown suite '%s'; the suites are the names CUnit prints in a full run\n",
				names[i]);
			return -1;
		}
	for (int i = 0; i < n; i++) {
		CU_basic_run_suite(CU_get_suite(names[i]));
		*failed += failures();
	}
	return 0;
}

/* Seconds a test may run, by suite, with an entry per test where one test
 * takes longer than the rest of its suite: plain build, and under
 * ThreadSanitizer (3 to 35 times slower). Each is 10 to 30 times what the
 * test took on this 2-core machine under the load of parallel builds
 * (most tests: under 0.3 s plain, 2.5 s under TSan), so a hung test fails
 * in seconds and a loaded machine does not fail a working one. */
static const struct {
	const char *suite, *test; /* test NULL: every test of the suite */
	unsigned plain, tsan;
} limits[] = {
	{ NULL, NULL, 5, 45 }, /* any test not named below */
	{ "time-limit-self-test", NULL, 2, 2 },
	{ "hang-self-test", NULL, 1, 1 },
	/* They wait out memory.stat's flush period, in real time. */
	{ "pager on the kernel",
	  "memory.stat behind past the flush period "
	  "trips I-7",
	  30, 60 },
	{ "pager on the kernel",
	  "a cgroup that keeps deviating is confirmed "
	  "once",
	  30, 60 },
	{ "pager on the kernel",
	  "memory.stat behind for a few reads is lag, "
	  "not I-7",
	  10, 30 },
	/* Campaigns: 1.5 s plain, 33 s under TSan. */
	{ "sim", "pager passes 200 seeds (random)", 20, 300 },
	{ "sim", "pager passes 200 seeds (PCT d=3)", 20, 300 },
	/* A 1 s storm round and its child's setup. */
	{ "misuse", "real: storm passes its injected failed chunks", 20, 120 },
	{ "commands",
	  "real: storm twice: the second call's rounds are its "
	  "own",
	  40, 240 },
	/* 6 s plain, 215 s under TSan. */
	{ "bugs", "bug 5 caught, replayed, gone when off", 60, 1200 },
};

static unsigned override_s; /* RESID_TEST_SECONDS, 0 when unset */

/* The most specific entry: the test's, else its suite's, else the
 * default. */
static unsigned limit_of(const char *suite, const char *test)
{
	size_t best = 0;

	if (override_s)
		return override_s;
	for (size_t i = 1; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (!strcmp(limits[i].suite, suite) &&
		    (!limits[i].test || !strcmp(limits[i].test, test)) &&
		    (!best || limits[i].test))
			best = i;
	return UNDER_TSAN ? limits[best].tsan : limits[best].plain;
}

/* RESID_TEST_SECONDS, for a slow machine (an emulated guest): one limit
 * for every test. -1 on a bad value, after a line on stderr. */
static int read_override(void)
{
	const char *v = getenv("RESID_TEST_SECONDS");
	char *end;
	unsigned long s;

	if (!v)
		return 0;
	s = strtoul(v, &end, 10);
	if (!*v || *end || !s || s > 86400) {
		fprintf(stderr,
			"unit-tests: bad RESID_TEST_SECONDS '%s': give "
			"whole seconds, 1 to 86400\n",
			v);
		return -1;
	}
	override_s = (unsigned)s;
	return 0;
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
	suite_reftrace();
	suite_sim_guard();
	suite_oracles();
	suite_bugs();
	suite_misuse();
	suite_cli();
	suite_scenarios();
	suite_coverage();
	suite_conformance();
	suite_huge();
	suite_hands();
	suite_gguf();
	suite_commands();
	suite_devclass();
}

static const char usage[] =
	"usage: unit-tests [SUITE...] | --time-limit-self-test [SUITE...]\n"
	"       | --hang-self-test [SUITE...]\n"
	"  Runs every CUnit suite, or the named ones (e.g. cgroup-live), each\n"
	"  test in a child process under its suite's time limit (seconds, a\n"
	"  table in harness/tests/run.c; RESID_TEST_SECONDS sets one limit for\n"
	"  every test): a test that runs past it, or that a signal kills\n"
	"  (SIGBUS, SIGSEGV, abort), fails by name and the run goes on; once\n"
	"  3 tests have run past their limits (a pager that hangs) it stops.\n"
	"  --time-limit-self-test runs the runner's own suite first: a test\n"
	"  that hangs past its 2 s limit, one that raises SIGBUS, one that\n"
	"  writes through NULL and one that aborts must fail, the next must\n"
	"  pass; then the SUITEs named, which must pass. --hang-self-test runs\n"
	"  four tests that hang (1 s each): the run must stop after the third.";

/* The runner's own suites, each run first by its flag. */
static const struct {
	const char *flag, *suite;
	void (*add)(void);
} self_tests[] = {
	{ "--time-limit-self-test", "time-limit-self-test",
	  suite_time_limit_self_test },
	{ "--hang-self-test", "hang-self-test", suite_hang_self_test },
};

int main(int argc, char **argv)
{
	int self = -1;

	for (size_t i = 0;
	     argc >= 2 && i < sizeof(self_tests) / sizeof(self_tests[0]); i++)
		if (!strcmp(argv[1], self_tests[i].flag))
			self = (int)i;
	int self_test = self >= 0;
	int named = argc - 1 - self_test;
	char **names = argv + 1 + self_test;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		puts(usage);
		return 0;
	}
	if (read_override() < 0)
		return 2;
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: CUnit registry: %s\n",
			CU_get_error_msg());
		return 2;
	}
	if (self_test)
		self_tests[self].add();
	add_suites();
	if (CU_get_error() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: adding suites: %s\n",
			CU_get_error_msg());
		CU_cleanup_registry();
		return 2;
	}
	if (time_limit_wrap_all(limit_of) < 0) {
		CU_cleanup_registry();
		return 2;
	}
	unsigned failed = 0;

	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (self_test) {
		CU_basic_run_suite(CU_get_suite(self_tests[self].suite));
		failed += failures();
	}
	if (!self_test && !named) {
		CU_basic_run_tests();
		failed += failures();
	} else if (run_named(named, names, &failed)) {
		CU_cleanup_registry();
		return 2;
	}
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
