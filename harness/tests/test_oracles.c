/* The oracle registry (oracles.def) and the verdicts it gives: every
 * entry named, so that a new one cannot print NULL, and a row's verdict
 * from its checks. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "campaign/report.h"
#include "invariants.h"
#include "resid_harness.h"
#include "scenarios/scenario.h"
#include "sim/oracles/registry.h"
#include "sim/oracles/sim_oracle.h"
#include "sim/sim.h"
#include "tests/suites.h"

static void every_oracle_named(void)
{
	CU_ASSERT_EQUAL(noracles, SIM_NVERDICTS);
	for (int v = 0; v < noracles; v++) {
		const char *name = sim_verdict_name((enum sim_verdict)v);
		char caught[128] = "";

		CU_ASSERT_PTR_NOT_NULL_FATAL(oracles[v]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(name);
		CU_ASSERT(name[0] != '\0');
		CU_ASSERT_STRING_EQUAL(name, oracles[v]->name);
		for (int w = 0; w < v; w++)
			CU_ASSERT_STRING_NOT_EQUAL(name, oracles[w]->name);
		if (v == SIM_PASS)
			continue;
		/* repro's table says what caught a bug from each. */
		CU_ASSERT(oracles[v]->caught || oracles[v]->classify);
		oracle_caught(v, "I-7 (x): y", caught, sizeof(caught));
		CU_ASSERT(caught[0] != '\0');
	}
	CU_ASSERT_STRING_EQUAL(sim_verdict_name(SIM_NVERDICTS), "unknown");
}

/* The verdicts the docs' replay lines and the campaign columns print. */
static void verdict_names_stable(void)
{
	static const char *const want[SIM_NVERDICTS] = {
		[SIM_PASS] = "pass",
		[SIM_FAILED] = "failed",
		[SIM_DEADLOCK] = "deadlock",
		[SIM_LOST_WAKEUP] = "lost-wakeup",
		[SIM_NO_SIGNAL] = "no-signal",
		[SIM_STEP_LIMIT] = "step-limit",
		[SIM_CRASH] = "crash",
		[SIM_NO_PROGRESS] = "no-progress",
		[SIM_LIVELOCK] = "livelock",
	};

	for (int v = 0; v < SIM_NVERDICTS; v++)
		if (want[v])
			CU_ASSERT_STRING_EQUAL(sim_verdict_name(
						       (enum sim_verdict)v),
					       want[v]);
}

static void caught_from_why(void)
{
	char b[128];

	oracle_caught(SIM_FAILED, "I-12 (pins balance): chunk 0", b, sizeof(b));
	CU_ASSERT_STRING_EQUAL(b, "I-12");
	oracle_caught(SIM_FAILED, "3 bytes wrong in chunk 1", b, sizeof(b));
	CU_ASSERT_STRING_EQUAL(b, "content check");
	oracle_caught(SIM_CRASH, "SIGSEGV (NULL pointer access) in thread 1", b,
		      sizeof(b));
	CU_ASSERT_STRING_EQUAL(b, "crash SIGSEGV");
	oracle_caught(SIM_DEADLOCK, "thread 2 holds lock 4", b, sizeof(b));
	CU_ASSERT_STRING_EQUAL(b, "deadlock cycle");
}

/* Fail wins over unknown, unknown over a note; the first of each kept. */
static void row_verdicts(void)
{
	struct scen_result r = { 0 };

	CU_ASSERT_EQUAL(scen_verdict(&r, 1), VERDICT_PASS);
	CU_ASSERT_EQUAL(scen_verdict(&r, 0), VERDICT_FAIL);
	scen_note(&r, "a note");
	CU_ASSERT_EQUAL(scen_verdict(&r, 1), VERDICT_PASS);
	scen_unknown(&r, "cannot tell");
	scen_unknown(&r, "second");
	scen_note(&r, "late note");
	CU_ASSERT_EQUAL(scen_verdict(&r, 1), VERDICT_UNKNOWN);
	CU_ASSERT_STRING_EQUAL(r.message, "cannot tell");
	scen_fail(&r, "broke");
	scen_unknown(&r, "after");
	CU_ASSERT_EQUAL(scen_verdict(&r, 1), VERDICT_FAIL);
	CU_ASSERT_STRING_EQUAL(r.message, "broke");
	r = (struct scen_result){ .mismatches = 1 };
	CU_ASSERT_EQUAL(scen_verdict(&r, 1), VERDICT_FAIL);
	CU_ASSERT_STRING_EQUAL(verdict_name(VERDICT_UNKNOWN), "unknown");
}

/* check exits 0 when every row passed, 1 on a failure, 2 (the harness
 * cannot decide here) on an unknown row and no failure. */
static void exit_codes(void)
{
	struct scen_result rows[3] = {
		{ .verdict = VERDICT_PASS },
		{ .verdict = VERDICT_UNKNOWN },
		{ .verdict = VERDICT_FAIL },
	};

	CU_ASSERT_EQUAL(report_exit(rows, 1), 0);
	CU_ASSERT_EQUAL(report_exit(rows, 2), 2);
	CU_ASSERT_EQUAL(report_exit(rows, 3), 1);
}

static void keep_line(void *arg, const char *line)
{
	snprintf(arg, 128, "%s", line);
}

/* Every kind of run hears an invariant the same way: counted, one line. */
static void invariants_to_a_sink(void)
{
	uint64_t count = 0;
	char line[128] = "";

	oracle_invariants_to(&count, keep_line, line);
	inv_report(12, "chunk %d pin count %d at quiescence", 0, 1);
	oracle_invariants_stop();
	CU_ASSERT_EQUAL(count, 1);
	CU_ASSERT_STRING_EQUAL(line, "I-12 (pins balance): chunk 0 pin count "
				     "1 at quiescence");
}

/* T-4's verdicts: st_blocks exact, memory.stat exact or unknown within
 * the kernel's flush tolerance, no cgroup unknown. */
static void accounting_verdicts(void)
{
	struct resid_accounting a = {
		.resident = 1 << 20,
		.st_bytes = 1 << 20,
		.have_cgroup = 1,
		.shmem = (1 << 20) + 4096,
		.shmem_baseline = 4096,
		.tolerance = 1 << 20,
	};
	char why[256];

	CU_ASSERT_EQUAL(oracle_accounting_judge(&a, why, sizeof(why)),
			VERDICT_PASS);
	a.shmem -= 65536;
	CU_ASSERT_EQUAL(oracle_accounting_judge(&a, why, sizeof(why)),
			VERDICT_UNKNOWN);
	CU_ASSERT_STRING_EQUAL(why, "memory.stat shmem 987136 is 65536 below "
				    "the expected 1052672, within the kernel's "
				    "flush tolerance 1048576");
	a.shmem += 3 << 20;
	CU_ASSERT_EQUAL(oracle_accounting_judge(&a, why, sizeof(why)),
			VERDICT_FAIL);
	a.have_cgroup = 0;
	CU_ASSERT_EQUAL(oracle_accounting_judge(&a, why, sizeof(why)),
			VERDICT_UNKNOWN);
	a.st_bytes += 4096;
	CU_ASSERT_EQUAL(oracle_accounting_judge(&a, why, sizeof(why)),
			VERDICT_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "st_blocks*512 1052672 != "
					   "resident 1048576"));
}

void suite_oracles(void)
{
	CU_pSuite s = CU_add_suite("oracles", NULL, NULL);

	if (!s)
		return;
	CU_add_test(s, "every oracle has a name and a classification",
		    every_oracle_named);
	CU_add_test(s, "the verdicts' names are the ones lines print",
		    verdict_names_stable);
	CU_add_test(s, "repro's classification comes from the oracle",
		    caught_from_why);
	CU_add_test(s, "a row's verdict: fail, unknown, pass", row_verdicts);
	CU_add_test(s, "check's exit: pass 0, fail 1, unknown 2", exit_codes);
	CU_add_test(s, "an invariant reaches the run's sink",
		    invariants_to_a_sink);
	CU_add_test(s, "accounting: pass, unknown in the tolerance, fail",
		    accounting_verdicts);
}
