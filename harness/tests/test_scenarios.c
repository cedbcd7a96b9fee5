/* The scenario registry: every scenario found by its id, each with a
 * real-kernel run or a simulated sizing the simulation can run. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "scenario.h"
#include "suites.h"

static void every_scenario_is_found_and_well_formed(void)
{
	int gate = 0;

	CU_ASSERT_FATAL(nscenarios > 0);
	for (int i = 0; i < nscenarios; i++) {
		const struct scenario *s = scenarios[i];
		const struct sim_sizing *z = s->sim;

		CU_ASSERT_FATAL(s->id && s->id[0] && s->title && s->title[0]);
		CU_ASSERT(scenario_find(s->id) == s);
		CU_ASSERT(s->run || z);
		gate += s->run != NULL;
		if (!z)
			continue;
		CU_ASSERT(z->threads >= 1 && z->threads <= 8);
		CU_ASSERT(z->ops >= 1);
		if (z->pattern < READ_SELF_DEADLOCK)
			CU_ASSERT(z->budget_chunks >= 1 && z->workers >= 1 &&
				  z->chunks >= z->budget_chunks &&
				  (z->pattern != READ_ALTERNATE ||
				   z->chunks >= 2));
	}
	CU_ASSERT(gate >= 7);
}

/* Issue 12: the file rows and the unequal rows of the default gate;
 * issue 21: the huge rows. */
static void gate_legs(void)
{
	static const struct { const char *id; unsigned legs; } want[] = {
		{ "T-1", LEG_FILE | LEG_UNEQUAL | LEG_HUGE },
		{ "T-2", LEG_FILE | LEG_HUGE },
		{ "T-3", LEG_FILE | LEG_UNEQUAL | LEG_HUGE }, { "T-4", 0 },
		{ "T-5", 0 }, { "T-6", LEG_FILE | LEG_HUGE },
		{ "T-7", LEG_FILE | LEG_HUGE },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CU_ASSERT_EQUAL(scenario_find(want[i].id)->legs,
				want[i].legs);
}

static void gate_ids_have_short_names(void)
{
	CU_ASSERT_STRING_EQUAL(scenario_find("t1")->id, "T-1");
	CU_ASSERT_STRING_EQUAL(scenario_find("7")->id, "T-7");
	CU_ASSERT_PTR_NULL(scenario_find("T-9"));
	CU_ASSERT_PTR_NULL(scenario_find("self"));
}

void suite_scenarios(void)
{
	CU_pSuite s = CU_add_suite("scenarios", NULL, NULL);

	CU_add_test(s, "every scenario found, well formed",
		    every_scenario_is_found_and_well_formed);
	CU_add_test(s, "T-1 is also t1 and 1", gate_ids_have_short_names);
	CU_add_test(s, "file and huge legs of T-1,2,3,6,7; unequal of T-1,3",
		    gate_legs);
}
