/* No signal: a thread waiting on a condition variable that no runnable
 * thread, and no timer, will ever signal. */
#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"

static int explain(struct sim *s)
{
	return oracle_blame_first(s, W_COND, "no signal");
}

const struct oracle no_signal_oracle = {
	.name = "no-signal",
	.caught = "waiter never signalled",
	.quiescent = explain,
};
