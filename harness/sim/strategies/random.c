/* Random walk: a uniformly random runnable thread at every step. */
#include "base/rng.h"
#include "sim/sim_internal.h"
#include "sim/strategy.h"

static struct sim_thread *pick(struct sim *s, unsigned n)
{
	return s->run[rng_below(&s->rng, n)];
}

const struct sim_strategy_ops strategy_random = {
	.name = "random",
	.pick = pick,
};
