/* DFS: no preemption of its own. The running thread goes on while it can,
 * else the lowest id; the bounded exhaustive search forces the
 * alternatives through replay prefixes. */
#include <stdlib.h>
#include <string.h>

#include "sim/explore.h"
#include "sim/sim_internal.h"
#include "sim/strategy.h"

static struct sim_thread *pick(struct sim *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (s->run[i] == s->cur)
			return s->cur;
	return s->run[0];
}

const struct sim_strategy_ops strategy_dfs = {
	.name = "dfs",
	.pick = pick,
};

struct prefix {
	uint16_t *ids;
	size_t n;
};

/* Pushes schedule[0..i) + t. */
static int push(struct prefix **st, size_t *n, size_t *cap,
		const uint16_t *sched, size_t i, uint16_t t)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct prefix *g = realloc(*st, c * sizeof(*g));

		if (!g)
			return -1;
		*st = g;
		*cap = c;
	}
	uint16_t *ids = malloc((i + 1) * sizeof(*ids));

	if (!ids)
		return -1;
	memcpy(ids, sched, i * sizeof(*ids));
	ids[i] = t;
	(*st)[(*n)++] = (struct prefix){ ids, i + 1 };
	return 0;
}

/* The bounded exhaustive search: every schedule with at most `depth`
 * preemptions, depth first, each explored once. A run follows its forced
 * prefix, then lets the running thread go on; every other thread runnable
 * at a later step is a branch, kept when it costs no more preemptions than
 * the bound. */
void dfs_search(const struct explore_opts *o, dfs_visit_fn visit, void *arg)
{
	struct prefix *st = NULL;
	size_t n = 0, cap = 0;

	st = malloc(256 * sizeof(*st));
	if (!st)
		sim_oom();
	cap = 256;
	st[n++] = (struct prefix){ NULL, 0 };
	for (int done = 0; n && !done;) {
		struct prefix pf = st[--n];
		struct replay rp = { .p = o->p,
				     .strategy = SIM_DFS,
				     .depth = o->depth,
				     .seed = o->seed,
				     .bugs = o->bugs,
				     .ops = o->p->sim->ops,
				     .unequal = o->unequal,
				     .faults = *o->faults,
				     .schedule = pf.ids,
				     .nschedule = pf.n };
		struct sim_outcome out;
		unsigned pre = 0;

		replay_run(&rp, &out);
		for (size_t i = 1; i < out.nschedule; i++) {
			uint16_t prev = out.schedule[i - 1];
			int prev_runs = prev < 64 && (out.masks[i] >> prev & 1);

			if (i >= pf.n) {
				for (uint16_t t = 0; t < 64; t++) {
					if (!(out.masks[i] >> t & 1) ||
					    t == out.schedule[i])
						continue;
					if (pre + (prev_runs && t != prev) >
					    o->depth)
						continue;
					if (push(&st, &n, &cap, out.schedule, i,
						 t) < 0)
						sim_oom();
				}
			}
			pre += prev_runs && out.schedule[i] != prev;
		}
		done = visit(arg, &rp, &out);
		free(pf.ids);
	}
	while (n)
		free(st[--n].ids);
	free(st);
}
