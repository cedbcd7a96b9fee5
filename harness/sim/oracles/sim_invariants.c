/* The invariants as an oracle of the simulated run: a broken one ends it
 * with its line as the reason. I-14 is also held against the simulated
 * kernel's own count, not only the pager's. */
#include <inttypes.h>

#include "sim/oracles/sim_oracle.h"

static void sim_say(void *s, const char *line)
{
	sim_fail(s, "%s", line);
}

void oracle_invariants_watch(struct sim *s)
{
	oracle_invariants_to(NULL, sim_say, s);
}

void oracle_kernel_tally(struct sim *s, const struct resid_stats *st,
			 uint64_t partial)
{
	uint64_t kernel = sim_continues_ok(s) - partial;

	uint64_t pager = st->continues_ok - st->lazy_fetches +
			 st->continue_pieces + st->refaults_served +
			 st->lazy_maps;

	if (pager != kernel)
		sim_fail(s,
			 "I-14: pager counted %" PRIu64 " CONTINUEs, the "
			 "kernel %" PRIu64,
			 pager, kernel);
}
