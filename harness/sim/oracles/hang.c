/* Hang: idle past idle_limit_ns with no fault, condition or lock to blame:
 * the threads left wait only on timers or joins, a livelock in virtual
 * time. Asked last, after every oracle that can name a culprit. */
#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"

static int explain(struct sim *s)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		if (s->threads[i]->wait != W_EXITED) {
			oracle_blame(s, s->threads[i], "hang");
			return 1;
		}
	}
	return 0;
}

const struct oracle hang_oracle = {
	.name = "step-limit",
	.caught = "hang (idle virtual time)",
	.quiescent = explain,
};
