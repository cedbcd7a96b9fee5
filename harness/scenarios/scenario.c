/* Finding a scenario of the registry (tool/registry.c). */
#include <string.h>

#include "scenarios/scenario.h"

/* "T-1", or short: "t1", "1" (the first with that number). */
const struct scenario *scenario_find(const char *id)
{
	const char *digits = id;

	while (*digits && (*digits < '0' || *digits > '9'))
		digits++;
	for (int i = 0; i < nscenarios; i++)
		if (!strcasecmp(scenarios[i]->id, id))
			return scenarios[i];
	for (int i = 0; i < nscenarios; i++)
		if (*digits && !strcmp(scenarios[i]->id + 2, digits) &&
		    (digits == id ||
		     (digits - id <= 2 &&
		      (id[0] | 32) == (scenarios[i]->id[0] | 32))))
			return scenarios[i];
	return NULL;
}
