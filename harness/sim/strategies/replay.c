/* Replay: at step i, the thread sim_config.replay[i] when it is runnable;
 * past the record's end, or when it is not, the run's own strategy
 * decides. That strategy picks at every step all the same, so its draws
 * stay in step with the run that made the record. */
#include "sim/sim_internal.h"
#include "sim/strategy.h"

static int start(struct sim *s)
{
	return s->base->start ? s->base->start(s) : 0;
}

static void admit(struct sim *s, struct sim_thread *t)
{
	if (s->base->admit)
		s->base->admit(s, t);
}

static struct sim_thread *pick(struct sim *s, unsigned n)
{
	struct sim_thread *t = s->base->pick(s, n);

	if (s->steps <= s->cfg.nreplay) {
		uint16_t want = s->cfg.replay[s->steps - 1];

		for (unsigned i = 0; i < n; i++)
			if (s->run[i]->id == want)
				return s->run[i];
	}
	return t;
}

static void stop(struct sim *s)
{
	if (s->base->stop)
		s->base->stop(s);
}

const struct sim_strategy_ops strategy_replay = {
	.name = "replay",
	.start = start,
	.admit = admit,
	.pick = pick,
	.stop = stop,
};
