/* The deterministic scheduler (design.md §4): every seam call is a step. The
 * strategy (strategy.h) picks which runnable thread takes it, from one
 * decision stream, the fairness bound overrides a thread starved too long,
 * and the running thread switches straight to the one picked. Virtual time
 * jumps to the earliest deadline only when nothing can run; when nothing
 * can run and nothing will, the run ends and the quiescence oracle says
 * why. A run that goes on past its step or CPU-time budget ends with
 * SIM_NO_PROGRESS. The record of choices keeps the first SIM_RECORD_STEPS
 * steps, so a run's memory does not grow with its length. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"
#include "sim/strategy.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

void sched_mix_lock(struct sim *s, uint64_t v)
{
	s->lock_hash = mix(s->lock_hash, v);
}

uint64_t sched_deadline(struct sim *s, uint64_t ns)
{
	return ns > UINT64_MAX - s->now ? UINT64_MAX : s->now + ns;
}

void sched_progress(struct sim *s)
{
	s->last_progress = s->now;
	sched_progress_step(s);
}

void sched_progress_step(struct sim *s)
{
	s->progress_step = s->steps;
}

void sched_wake(struct sim_thread *t)
{
	t->wait = W_RUN;
	t->timed = 0;
	t->ready_step = t->sim->steps;
}

void sched_wake_all(struct sim *s, enum sim_wait w, uint64_t obj)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait == w && t->wait_obj == obj)
			sched_wake(t);
	}
}

/* Wakes the expired timers and lists the runnable threads in id order. */
static unsigned runnable(struct sim *s)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait != W_RUN && t->timed && t->deadline <= s->now) {
			sched_wake(t);
			t->timed_out = 1;
		}
		if (t->wait == W_RUN)
			s->run[n++] = t;
	}
	return n;
}

/* Moves the clock to the earliest deadline; 0 when there is none, or when
 * that would pass the idle limit. */
static int advance_clock(struct sim *s)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait != W_RUN && t->wait != W_EXITED && t->timed &&
		    t->deadline < next)
			next = t->deadline;
	}
	if (next == UINT64_MAX)
		return 0;
	if (next - s->last_progress > s->cfg.idle_limit_ns) {
		s->idle = 1;
		return 0;
	}
	s->now = next;
	return 1;
}

/* The runnable thread passed over longest, when past the fairness bound:
 * the kernel's scheduler is fair, a strategy alone need not be. A recorded
 * schedule made the same choice here, so a replay is not overridden. */
static struct sim_thread *starved(struct sim *s, unsigned n)
{
	struct sim_thread *old = NULL;

	for (unsigned i = 0; i < n; i++) {
		struct sim_thread *t = s->run[i];

		if (s->steps - t->ready_step > s->cfg.fair_steps &&
		    (!old || t->ready_step < old->ready_step))
			old = t;
	}
	return old;
}

static void record(struct sim *s, struct sim_thread *t, unsigned n)
{
	uint64_t mask = 0;

	s->log_hash = mix(mix(mix(s->log_hash, t->id), (uint64_t)t->op),
			  t->op_obj);
	if (s->steps > SIM_RECORD_STEPS)
		return;
	if (s->steps > s->cap_sched) {
		uint64_t cap = s->cap_sched ? s->cap_sched * 2 : 1024;
		uint16_t *p = realloc(s->sched, cap * sizeof(*p));
		uint64_t *m = realloc(s->masks, cap * sizeof(*m));

		if (p)
			s->sched = p;
		if (m)
			s->masks = m;
		if (!p || !m)
			sim_oom();
		s->cap_sched = cap;
	}
	for (unsigned i = 0; i < n; i++)
		if (s->run[i]->id < 64)
			mask |= 1ull << s->run[i]->id;
	s->sched[s->steps - 1] = t->id;
	s->masks[s->steps - 1] = mask;
}

/* The run's CPU time so far, in ms (the simulating thread's: every
 * controlled thread runs on it). */
static uint64_t cpu_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void sched_budget_start(struct sim *s)
{
	s->cpu_start_ms = cpu_ms();
}

/* Past the step budget, or (looked at every CPU_CHECK_STEPS steps) the
 * CPU-time budget: the run ends with SIM_NO_PROGRESS. The step budget is
 * the deterministic one, a replay ends at the same step. */
#define CPU_CHECK_STEPS 4096
static void check_budget(struct sim *s)
{
	uint64_t ms;

	if (s->steps > s->cfg.max_steps) {
		snprintf(s->why, sizeof(s->why),
			 "step budget: %llu steps "
			 "passed and the run did not end",
			 (unsigned long long)s->cfg.max_steps);
		coro_end_run(s, SIM_NO_PROGRESS);
	}
	if (s->steps - s->progress_step > s->cfg.stall_steps) {
		snprintf(s->why, sizeof(s->why),
			 "stall bound: %llu steps "
			 "without progress (no byte read, no chunk state "
			 "change, no thread ended)",
			 (unsigned long long)s->cfg.stall_steps);
		coro_end_run(s, SIM_NO_PROGRESS);
	}
	if (s->steps % CPU_CHECK_STEPS)
		return;
	ms = cpu_ms() - s->cpu_start_ms;
	if (ms > s->cfg.cpu_limit_ms) {
		snprintf(s->why, sizeof(s->why),
			 "CPU budget: %llu ms of CPU "
			 "time over %llu steps and the run did not end",
			 (unsigned long long)ms, (unsigned long long)s->steps);
		coro_end_run(s, SIM_NO_PROGRESS);
	}
}

void sched_step(struct sim *s)
{
	struct sim_thread *me = s->cur, *next, *old;
	unsigned n;

	for (;;) {
		if (s->failed)
			coro_end_run(s, SIM_FAILED);
		n = runnable(s);
		if (n)
			break;
		if (!advance_clock(s))
			coro_end_run(s, oracle_quiescence(s));
	}
	++s->steps;
	check_budget(s);
	next = s->strategy->pick(s, n);
	if ((old = starved(s, n)))
		next = old;
	next->ready_step = s->steps;
	record(s, next, n);
	if (next == me)
		return;
	if (me->wait == W_RUN)
		s->preemptions++;
	coro_switch(s, me, next);
}

void sched_point(struct sim *s, int op, uint64_t obj)
{
	struct sim_thread *me = s->cur;

	if (!me)
		return; /* outside sim_run: one thread, nothing to choose */
	me->op = op;
	me->op_obj = obj;
	sched_step(s);
}

struct sim_thread *sched_self(struct sim *s)
{
	if (!s->cur) {
		fprintf(stderr, "sim: a blocking call outside sim_run\n");
		abort();
	}
	return s->cur;
}

void sched_block(struct sim *s, enum sim_wait w, uint64_t obj, int timed,
		 uint64_t deadline)
{
	struct sim_thread *me = sched_self(s);

	me->wait = w;
	me->wait_obj = obj;
	me->timed = timed;
	me->deadline = deadline;
	me->timed_out = 0;
	sched_step(s);
}
