/* The scenario registry: every scenario found by its id, each with a
 * real-kernel run or a simulated sizing the simulation can run. */
#include <CUnit/CUnit.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign/report.h"
#include "scenarios/scenario.h"
#include "tests/suites.h"

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

/* The legs are stated once, in each scenario's .legs: the gate's JSON
 * carries them on every row, named, for ci/gate-legs.sh to check the rows
 * against; a bit without a name would vanish from it. */
static void gate_json_carries_each_scenarios_legs(void)
{
	char path[] = "/tmp/resid-legs-XXXXXX";
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	for (int i = 0; i < nscenarios; i++) {
		const struct scenario *s = scenarios[i];
		struct scen_result r = { .id = s->id,
					 .backing = "synthetic",
					 .chunks = "equal" };
		json_t *doc, *legs, *v;
		unsigned named = 0;
		size_t k;

		if (!s->run)
			continue;
		CU_ASSERT_FATAL(report_json(path, &r, 1, NULL, 1) == 0);
		doc = json_load_file(path, 0, NULL);
		CU_ASSERT_FATAL(doc != NULL);
		legs = json_object_get(json_array_get(json_object_get(doc,
								      "scenarios"),
						      0),
				       "gate_legs");
		CU_ASSERT(json_is_array(legs));
		json_array_foreach(legs, k, v)
			for (unsigned leg = 1; leg; leg <<= 1)
				if (scen_leg_name(leg) && json_is_string(v) &&
				    !strcmp(scen_leg_name(leg),
					    json_string_value(v)))
					named |= leg;
		CU_ASSERT_EQUAL(named, s->legs);
		CU_ASSERT_EQUAL(json_array_size(legs),
				(size_t)__builtin_popcount(s->legs));
		json_decref(doc);
	}
	unlink(path);
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
	CU_add_test(s, "the gate's JSON carries each scenario's legs",
		    gate_json_carries_each_scenarios_legs);
}
