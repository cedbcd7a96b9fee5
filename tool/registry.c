/* The scenario registry as a table (scenarios.def). It lives with main,
 * at the link step, because its lines name both rooms: harness/scenarios/
 * and storms/; the harness reads it through scenario.h and needs no storm
 * to link. */
#include "scenarios/scenario.h"

#define SCENARIO(x) extern const struct scenario scenario_##x;
#include "scenarios.def"
#undef SCENARIO

const struct scenario *const scenarios[] = {
#define SCENARIO(x) &scenario_##x,
#include "scenarios.def"
#undef SCENARIO
};
const int nscenarios = sizeof(scenarios) / sizeof(scenarios[0]);
