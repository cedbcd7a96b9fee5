/* The invariants (invariants/) as an oracle of the simulation: the pager
 * reports a broken one at the step it breaks, and the run ends there with
 * the report as its reason; I-14 is also held against the simulated
 * kernel's own count, not only the pager's. */
#include <inttypes.h>

#include "invariants.h"
#include "oracle.h"

static void on_violation(int id, const char *msg, void *s)
{
	sim_fail(s, "I-%d (%s): %s", id, inv_title(id), msg);
}

void oracle_invariants_watch(struct sim *s)
{
	inv_set_handler(on_violation, s);
}

void oracle_invariants_stop(void)
{
	inv_set_handler(NULL, NULL);
}

void oracle_kernel_tally(struct sim *s, const struct resid_stats *st,
			 uint64_t partial)
{
	uint64_t kernel = sim_continues_ok(s) - partial;

	if (st->continues_ok + st->continue_pieces != kernel)
		sim_fail(s, "I-14: pager counted %" PRIu64 " CONTINUEs, the "
			 "kernel %" PRIu64, st->continues_ok +
			 st->continue_pieces, kernel);
}
