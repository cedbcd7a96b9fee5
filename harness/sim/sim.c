/* The simulation's public face (sim.h): create a run, start it, read what
 * happened. The pieces: coro.c (threads as coroutines), sched.c (steps),
 * sync.c (the seam's locks, conditions, threads and time), kernel_*.c (the
 * simulated kernel), strategies/ (who runs next), oracles/ (why a run
 * ended). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "sim/oracles/registry.h"
#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"
#include "sim/strategy.h"

#define DEFAULT_MAX_STEPS 1000000ull
#define DEFAULT_CPU_MS 20000ull
#define DEFAULT_IDLE_NS (120ull * 1000000000ull)
#define DEFAULT_PCT_STEPS 1000ull
#define DEFAULT_FAIR_STEPS 10000ull
/* Like CLOCK_MONOTONIC some time after boot: never 0. */
#define CLOCK_START_NS 1000000000ull

void sim_oom(void)
{
	fprintf(stderr, "sim: out of memory\n");
	abort();
}

int sim_grow(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, (size_t)n * size);
	if (!p)
		return -ENOMEM;
	memset((char *)p + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
	*arr = p;
	*cap = n;
	return 0;
}

uint64_t sim_str_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; p && *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	return h;
}

static const struct sim_strategy_ops *strategy_of(enum sim_strategy st)
{
	return st == SIM_PCT ? &strategy_pct :
	       st == SIM_DFS ? &strategy_dfs :
			       &strategy_random;
}

struct sim *sim_create(const struct sim_config *c)
{
	struct sim *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *c;
	if (!s->cfg.max_steps)
		s->cfg.max_steps = DEFAULT_MAX_STEPS;
	if (!s->cfg.stall_steps)
		s->cfg.stall_steps = SIM_STALL_STEPS;
	if (!s->cfg.cpu_limit_ms)
		s->cfg.cpu_limit_ms = DEFAULT_CPU_MS;
	if (!s->cfg.idle_limit_ns)
		s->cfg.idle_limit_ns = DEFAULT_IDLE_NS;
	if (!s->cfg.pct_steps)
		s->cfg.pct_steps = DEFAULT_PCT_STEPS;
	if (!s->cfg.fair_steps)
		s->cfg.fair_steps = DEFAULT_FAIR_STEPS;
	if (!s->cfg.replay)
		s->cfg.nreplay = 0;
	s->rng = c->seed;
	s->now = s->last_progress = CLOCK_START_NS;
	s->seam = sim_seam_ops;
	s->seam.ctx = s;
	s->base = strategy_of(s->cfg.strategy);
	s->strategy = s->cfg.replay ? &strategy_replay : s->base;
	if (s->strategy->start && s->strategy->start(s) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

void sim_destroy(struct sim *s)
{
	if (!s)
		return;
	/* Threads left blocked are freed, never resumed. */
	for (uint32_t i = 0; i < s->nthreads; i++)
		coro_free(s->threads[i]);
	if (s->strategy->stop)
		s->strategy->stop(s);
	kernel_destroy(s);
	/* What the pager took in a run that ended before it closed. */
	heap_release();
	free(s->threads);
	free(s->run);
	free(s->locks);
	free(s->conds);
	free(s->sched);
	free(s->masks);
	free(s);
}

const struct resid_seam *sim_seam(struct sim *s)
{
	return &s->seam;
}

enum sim_verdict sim_run(struct sim *s, void (*fn)(void *arg), void *arg)
{
	struct sim_thread *t;

	if (s->started) {
		snprintf(s->why, sizeof(s->why), "sim_run: one run per sim");
		return SIM_FAILED;
	}
	s->started = 1;
	t = coro_new(s, "main", 0);
	if (!t) {
		snprintf(s->why, sizeof(s->why),
			 "sim_run: cannot create "
			 "thread 0");
		return SIM_FAILED;
	}
	t->app_fn = fn;
	t->arg = arg;
	sched_budget_start(s);
	heap_attach(1);
	coro_start(s, t);
	heap_attach(0);
	if (s->crash.caught)
		oracle_crash(s);
	return s->verdict;
}

int sim_spawn(struct sim *s, void (*fn)(void *arg), void *arg, const char *name)
{
	struct sim_thread *t;

	sched_point(s, OP_SPAWN, 0);
	t = coro_new(s, name, 1);
	if (!t)
		return -EAGAIN;
	t->app_fn = fn;
	t->arg = arg;
	return t->id;
}

void sim_join_apps(struct sim *s)
{
	sched_point(s, OP_JOIN_APPS, 0);
	while (s->apps_alive)
		sched_block(s, W_APPS, 0, 0, 0);
}

const char *sim_build(void)
{
	return sim_access_attach ? "+simx" : "";
}

uint64_t sim_draw(struct sim *s)
{
	return rng_next(&s->rng);
}

void sim_fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	s->failed = 1;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

const char *sim_why(const struct sim *s)
{
	return s->why;
}

const char *sim_verdict_name(enum sim_verdict v)
{
	return (unsigned)v < SIM_NVERDICTS ? oracles[v]->name : "unknown";
}

uint64_t sim_steps(const struct sim *s)
{
	return s->steps;
}

uint64_t sim_preemptions(const struct sim *s)
{
	return s->preemptions;
}

uint64_t sim_log_hash(const struct sim *s)
{
	return s->log_hash;
}

uint64_t sim_lock_order_hash(const struct sim *s)
{
	return s->lock_hash;
}

const uint16_t *sim_schedule(const struct sim *s, size_t *n)
{
	uint64_t kept = s->steps < s->cfg.max_steps ? s->steps :
						      s->cfg.max_steps;

	*n = (size_t)(kept < SIM_RECORD_STEPS ? kept : SIM_RECORD_STEPS);
	return s->sched;
}

int sim_schedule_whole(const struct sim *s)
{
	return s->steps <= SIM_RECORD_STEPS;
}

const uint64_t *sim_runnable_masks(const struct sim *s, size_t *n)
{
	sim_schedule(s, n); /* the same steps as the schedule */
	return s->masks;
}

uint64_t sim_continues_ok(const struct sim *s)
{
	return s->continues_ok;
}
