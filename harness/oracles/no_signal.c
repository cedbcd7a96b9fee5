/* No signal: a thread waiting on a condition variable that no runnable
 * thread, and no timer, will ever signal. */
#include "oracle.h"
#include "sim_internal.h"
#include "verdict.h"

static int explain(struct sim *s)
{
	struct sim_thread *t = oracle_first_waiting(s, W_COND);

	if (!t)
		return 0;
	oracle_blame(s, t, "no signal");
	return 1;
}

const struct oracle no_signal_oracle = {
	.name = "no-signal",
	.caught = "waiter never signalled",
	.quiescent = explain,
};
