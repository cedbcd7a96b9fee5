/* Controlled threads as coroutines (design.md §4): each has its own stack and
 * context and runs only when the scheduler switches to it, on the caller's
 * thread; under ThreadSanitizer each is also a fiber, so TSan sees which
 * stack runs. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "sim/sim_internal.h"
#include "sim/strategy.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIM_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif
#endif

#define STACK_SIZE (256u << 10)
/* Stacks of ended runs, kept for the next: a campaign starts thousands of
 * threads, and a fresh mapping for each cost more than the runs (page
 * faults, and munmap's TLB flush: a third of check --sim's time). */
#define POOL_MAX 64

static __thread void *pool[POOL_MAX];
static __thread unsigned pooled;

/* A stack with its guard page, from the pool or a new mapping; NULL. */
static void *stack_get(void)
{
	void *st;

	if (pooled)
		return pool[--pooled];
	st = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (st == MAP_FAILED)
		return NULL;
	/* A guard page: an overflow faults instead of corrupting memory. */
	if (mprotect(st, SIM_PAGE, PROT_NONE) < 0) {
		munmap(st, STACK_SIZE);
		return NULL;
	}
	return st;
}

static void stack_put(void *st)
{
	if (pooled < POOL_MAX)
		pool[pooled++] = st;
	else if (munmap(st, STACK_SIZE) < 0)
		perror("sim: munmap(stack)");
}

/* ThreadSanitizer must be told which stack runs, right before the switch:
 * a wrapper's return would be booked on the new fiber's shadow stack, so
 * these are macros, each followed by its switch in the same function. */
#ifdef SIM_TSAN
#define fiber_create() __tsan_create_fiber(0)
#define fiber_current() __tsan_get_current_fiber()
#define fiber_switch(f) __tsan_switch_to_fiber((f), 0)
#define fiber_destroy(f) __tsan_destroy_fiber(f)
#else
#define fiber_create() NULL
#define fiber_current() NULL
#define fiber_switch(f) ((void)(f))
#define fiber_destroy(f) ((void)(f))
#endif

static void thread_exit(struct sim_thread *t) __attribute__((noreturn));

/* makecontext passes ints: the thread's address comes in two halves. */
static void entry(unsigned hi, unsigned lo)
{
	struct sim_thread *t = (void *)(((uintptr_t)hi << 32) | lo);

	if (t->app_fn)
		t->app_fn(t->arg);
	else
		t->fn(t->arg);
	thread_exit(t);
}

void coro_free(struct sim_thread *t)
{
	if (t->fiber)
		fiber_destroy(t->fiber);
	if (t->stack)
		stack_put(t->stack);
	free(t);
}

struct sim_thread *coro_new(struct sim *s, const char *name, int app)
{
	struct sim_thread *t;
	uintptr_t p;

	if (s->nthreads == UINT16_MAX ||
	    sim_grow((void **)&s->threads, &s->cap_threads, s->nthreads + 1,
		     sizeof(*s->threads)) ||
	    sim_grow((void **)&s->run, &s->cap_run, s->nthreads + 1,
		     sizeof(*s->run)))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->stack = stack_get();
	if (!t->stack || getcontext(&t->uc) < 0) {
		coro_free(t);
		return NULL;
	}
	t->uc.uc_stack.ss_sp = t->stack;
	t->uc.uc_stack.ss_size = STACK_SIZE;
	t->uc.uc_link = NULL;
	p = (uintptr_t)t;
	makecontext(&t->uc, (void (*)(void))entry, 2, (unsigned)(p >> 32),
		    (unsigned)p);
	t->fiber = fiber_create();
	t->sim = s;
	t->id = (uint16_t)s->nthreads;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "thread");
	t->app = app;
	t->op = OP_START;
	t->ready_step = s->steps;
	t->cond_lock = UINT32_MAX;
	if (s->strategy->admit)
		s->strategy->admit(s, t);
	s->threads[s->nthreads++] = t;
	s->apps_alive += app;
	return t;
}

void coro_switch(struct sim *s, struct sim_thread *from, struct sim_thread *to)
{
	s->cur = to;
	fiber_switch(to->fiber);
	if (swapcontext(&from->uc, &to->uc) < 0) {
		perror("sim: swapcontext");
		abort();
	}
}

void coro_start(struct sim *s, struct sim_thread *t)
{
	s->main_fiber = fiber_current();
	s->cur = t;
	if (sim_access_attach)
		sim_access_attach(s);
	guard_arm(s);
	fiber_switch(t->fiber);
	if (swapcontext(&s->main_uc, &t->uc) < 0) {
		perror("sim: swapcontext");
		abort();
	}
	guard_disarm(s);
	s->cur = NULL;
	if (sim_access_attach)
		sim_access_attach(NULL);
}

void coro_end_run(struct sim *s, enum sim_verdict v)
{
	s->verdict = v;
	fiber_switch(s->main_fiber);
	setcontext(&s->main_uc);
	perror("sim: setcontext");
	abort();
}

static void thread_exit(struct sim_thread *t)
{
	struct sim *s = t->sim;

	sched_point(s, OP_EXIT, 0);
	for (uint32_t i = 0; i < s->nlocks; i++)
		if (s->locks[i].owner == t->id)
			sim_fail(s, "thread %u (%s) exited holding lock %u",
				 t->id, t->name, i);
	t->wait = W_EXITED;
	sched_wake_all(s, W_JOIN, t->id);
	if (t->app && --s->apps_alive == 0)
		sched_wake_all(s, W_APPS, 0);
	sched_progress(s);
	sched_step(s);
	abort(); /* an exited thread is never picked */
}
