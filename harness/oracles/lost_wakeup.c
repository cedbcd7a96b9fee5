/* Lost wakeup (I-13): a thread asleep on a fault when nothing else can
 * run: nobody is fetching its chunk, so nothing will CONTINUE or WAKE its
 * page, whether its message is still unread or was read and dropped. */
#include "oracle.h"
#include "sim_internal.h"
#include "verdict.h"

static int explain(struct sim *s)
{
	struct sim_thread *t = oracle_first_waiting(s, W_FAULT);

	if (!t)
		return 0;
	oracle_blame(s, t, "lost wakeup");
	return 1;
}

const struct oracle lost_wakeup_oracle = {
	.name = "lost-wakeup",
	.caught = "lost wakeup",
	.quiescent = explain,
};
