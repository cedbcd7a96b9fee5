/* Lost wakeup (I-13): a thread asleep on a fault when nothing else can
 * run: nobody is fetching its chunk, so nothing will CONTINUE or WAKE its
 * page, whether its message is still unread or was read and dropped. */
#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"

static int explain(struct sim *s)
{
	return oracle_blame_first(s, W_FAULT, "lost wakeup");
}

const struct oracle lost_wakeup_oracle = {
	.name = "lost-wakeup",
	.caught = "lost wakeup",
	.quiescent = explain,
};
