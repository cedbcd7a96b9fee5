/* No signal: a thread waiting on a condition variable that no runnable
 * thread, and no timer, will ever signal. */
#include "oracle.h"
#include "sim_internal.h"

int oracle_no_signal(struct sim *s)
{
	struct sim_thread *t = oracle_first_waiting(s, W_COND);

	if (!t)
		return 0;
	oracle_blame(s, t, "no signal");
	return 1;
}
