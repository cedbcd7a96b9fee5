/* The checks a simulated run makes as it goes, each of which ends it with
 * SIM_FAILED and its reason (sim_fail): the invariants (invariants.c), the
 * content of every byte read (content.c), the accounting against the
 * simulated kernel (accounting.c), and the simulation's own rules for
 * locks, conditions and threads (sync.c, coro.c). The reason says which. */
#include <stdio.h>
#include <string.h>

#include "sim/oracles/registry.h"

static void classify(const char *why, char *buf, size_t n)
{
	if (strstr(why, "false RECONCILE"))
		snprintf(buf, n, "reconcile false alarm (I-7 exact)");
	else if (!strncmp(why, "I-", 2))
		snprintf(buf, n, "%.*s", (int)strcspn(why, " :"), why);
	else if (strstr(why, "bytes wrong"))
		snprintf(buf, n, "content check");
	else
		snprintf(buf, n, "failed");
}

const struct oracle checks_oracle = {
	.name = "failed",
	.caught = "a check as the run went",
	.classify = classify,
};
