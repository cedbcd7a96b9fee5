/* PCT (Burckhardt et al., ASPLOS 2010): every thread gets a random
 * priority when it is created, the highest runnable one runs, and at d-1
 * change points drawn in [1, k] the thread at the step drops below every
 * initial priority. A bug of depth d is hit with probability at least
 * 1/(n k^(d-1)) per run. k is the length of a random-walk run of the
 * scenario, measured once per campaign (pct_calibrate). */
#include <errno.h>
#include <stdlib.h>

#include "base/rng.h"
#include "sim/explore.h"
#include "sim/sim_internal.h"
#include "sim/strategy.h"

/* Initial priorities lie above every change point's (1..d-1). */
#define PCT_BASE (1ull << 32)

struct pct {
	unsigned n;
	uint64_t change[]; /* the steps where priorities change */
};

static int start(struct sim *s)
{
	unsigned n = s->cfg.pct_depth > 1 ? s->cfg.pct_depth - 1 : 0;
	struct pct *p = calloc(1, sizeof(*p) + n * sizeof(p->change[0]));

	if (!p)
		return -ENOMEM;
	p->n = n;
	for (unsigned i = 0; i < n; i++)
		p->change[i] = 1 + rng_below(&s->rng, s->cfg.pct_steps);
	s->strat_state = p;
	return 0;
}

static void admit(struct sim *s, struct sim_thread *t)
{
	t->prio = PCT_BASE + (rng_next(&s->rng) >> 32);
}

static struct sim_thread *pick(struct sim *s, unsigned n)
{
	const struct pct *p = s->strat_state;
	struct sim_thread *best = s->run[0];

	for (unsigned i = 0; i < p->n; i++)
		if (p->change[i] == s->steps)
			s->cur->prio = i + 1;
	for (unsigned i = 1; i < n; i++)
		if (s->run[i]->prio > best->prio)
			best = s->run[i];
	return best;
}

static void stop(struct sim *s)
{
	free(s->strat_state);
	s->strat_state = NULL;
}

const struct sim_strategy_ops strategy_pct = {
	.name = "pct",
	.start = start,
	.admit = admit,
	.pick = pick,
	.stop = stop,
};

uint64_t pct_calibrate(const struct explore_opts *o)
{
	struct replay cal = { .p = o->p,
			      .strategy = SIM_RANDOM,
			      .seed = o->seed,
			      .bugs = o->bugs,
			      .ops = o->p->sim->ops,
			      .unequal = o->unequal,
			      .faults = *o->faults };
	struct sim_outcome out;
	uint64_t k;

	replay_run(&cal, &out);
	k = out.steps ? out.steps : 1;
	sim_outcome_free(&out);
	return k;
}
