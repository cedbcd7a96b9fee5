/* A scheduling strategy (design.md §4): at every step, which of the runnable
 * threads goes next. One file each in harness/sim/strategies/: random
 * walk, PCT, the DFS default (with its bounded exhaustive search), and
 * replay of a recorded schedule, which defers to another strategy where
 * the record says nothing. The scheduler asks pick at every step, then
 * lets a thread starved past the fairness bound go first. */
#ifndef HARNESS_SIM_STRATEGY_H
#define HARNESS_SIM_STRATEGY_H

#include "sim/sim.h"

struct sim_thread;

struct sim_strategy_ops {
	const char *name;
	/* At sim_create, the config set: 0, or -ENOMEM. NULL: nothing. */
	int (*start)(struct sim *s);
	/* A thread was created, before it is runnable. NULL: nothing. */
	void (*admit)(struct sim *s, struct sim_thread *t);
	/* One of s->run[0..n) (n >= 1, in id order); s->cur is the thread
	 * at the step, s->steps the step's number. Draws come from s->rng,
	 * the run's one decision stream. */
	struct sim_thread *(*pick)(struct sim *s, unsigned n);
	/* At sim_destroy. NULL: nothing. */
	void (*stop)(struct sim *s);
};

extern const struct sim_strategy_ops strategy_random, strategy_pct,
	strategy_dfs, strategy_replay;

#endif
