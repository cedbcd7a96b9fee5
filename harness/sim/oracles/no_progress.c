/* No progress: a controlled thread ran spin_limit_ms of CPU time without
 * reaching a scheduling point (a spin no schedule can end; guard.c stops
 * it), the run went stall_steps steps without progress (no byte read, no
 * chunk state change, no thread ended), or it passed its step or CPU-time
 * budget (max_steps, cpu_limit_ms; sched.c). The reason says which. */
#include <stdio.h>
#include <string.h>

#include "sim/oracles/registry.h"

static void classify(const char *why, char *buf, size_t n)
{
	snprintf(buf, n, "%s",
		 strstr(why, "budget")      ? "no progress (run budget)" :
		 strstr(why, "stall bound") ? "no progress (stall bound)" :
					      "no scheduling point");
}

const struct oracle no_progress_oracle = {
	.name = "no-progress",
	.caught = "no progress",
	.classify = classify,
};
