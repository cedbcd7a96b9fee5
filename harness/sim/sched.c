/* The deterministic scheduler (SPEC §4). Controlled threads are coroutines
 * run one at a time on the caller's thread. Every seam call is a step: the
 * strategy picks which runnable thread takes it, from one decision stream,
 * and the running thread switches straight to the one picked. Virtual time
 * jumps to the earliest deadline only when nothing can run; when nothing
 * can run and nothing will, the run ends and classify() says why. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rng.h"
#include "sim_internal.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIM_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif
#endif

#define STACK_SIZE (256u << 10)
#define DEFAULT_MAX_STEPS 1000000ull
#define DEFAULT_IDLE_NS (120ull * 1000000000ull)
#define DEFAULT_PCT_STEPS 1000ull
#define DEFAULT_FAIR_STEPS 10000ull
/* Like CLOCK_MONOTONIC some time after boot: never 0. */
#define CLOCK_START_NS 1000000000ull
/* Initial PCT priorities lie above every change point's (1..d-1). */
#define PCT_BASE (1ull << 32)

/* ThreadSanitizer must be told which stack runs, right before the switch:
 * a wrapper's return would be booked on the new fiber's shadow stack, so
 * these are macros. */
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

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

uint64_t sim_str_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; p && *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	return h;
}

uint64_t sched_deadline(struct sim *s, uint64_t ns)
{
	return ns > UINT64_MAX - s->now ? UINT64_MAX : s->now + ns;
}

void sched_progress(struct sim *s)
{
	s->last_progress = s->now;
}

void sched_wake(struct sim_thread *t)
{
	t->wait = W_RUN;
	t->timed = 0;
	t->ready_step = t->sim->steps;
}

/* ---- coroutines ---- */

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

static void thread_free(struct sim_thread *t)
{
	if (t->fiber)
		fiber_destroy(t->fiber);
	if (t->stack && munmap(t->stack, STACK_SIZE) < 0)
		perror("sim: munmap(stack)");
	free(t);
}

static struct sim_thread *thread_new(struct sim *s, const char *name, int app)
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
	t->stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (t->stack == MAP_FAILED) {
		t->stack = NULL;
		thread_free(t);
		return NULL;
	}
	/* A guard page: an overflow faults instead of corrupting memory. */
	if (mprotect(t->stack, SIM_PAGE, PROT_NONE) < 0 ||
	    getcontext(&t->uc) < 0) {
		thread_free(t);
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
	if (s->cfg.strategy == SIM_PCT)
		t->prio = PCT_BASE + (rng_next(&s->rng) >> 32);
	s->threads[s->nthreads++] = t;
	s->apps_alive += app;
	return t;
}

static void switch_to(struct sim *s, struct sim_thread *from,
		      struct sim_thread *to)
{
	s->cur = to;
	fiber_switch(to->fiber);
	if (swapcontext(&from->uc, &to->uc) < 0) {
		perror("sim: swapcontext");
		abort();
	}
}

/* Ends the run: back to sim_run, never to resume this thread. */
static void end_run(struct sim *s, enum sim_verdict v)
	__attribute__((noreturn));
static void end_run(struct sim *s, enum sim_verdict v)
{
	s->verdict = v;
	fiber_switch(s->main_fiber);
	setcontext(&s->main_uc);
	perror("sim: setcontext");
	abort();
}

/* ---- quiescence ---- */

static const char *lock_owner_name(struct sim *s, uint32_t lock)
{
	int o = s->locks[lock].owner;

	return o < 0 ? "nobody" : s->threads[o]->name;
}

/* The thread t's wait-for edge leads to, or NULL. */
static struct sim_thread *waits_for(struct sim *s, struct sim_thread *t)
{
	if (t->wait == W_LOCK && s->locks[t->wait_obj].owner >= 0)
		return s->threads[s->locks[t->wait_obj].owner];
	if (t->wait == W_JOIN)
		return s->threads[t->wait_obj];
	return NULL;
}

/* A why that outgrows its buffer is cut short, which is fine. */
static void appendf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

/* A cycle in the wait-for graph of locks (and joins), from the first
 * thread in id order that reaches itself; s->run is free scratch here. */
static int find_cycle(struct sim *s)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i], *u = waits_for(s, t);
		uint32_t len = 1;

		s->run[0] = t;
		while (u && u != t && len < s->nthreads) {
			s->run[len++] = u;
			u = waits_for(s, u);
		}
		if (u != t)
			continue;
		s->why[0] = '\0';
		for (uint32_t k = 0; k < len; k++) {
			struct sim_thread *c = s->run[k];
			struct sim_thread *prev = s->run[(k + len - 1) % len];

			appendf(s->why, sizeof(s->why), "%sthread %u (%s) ",
				k ? "; " : "", c->id, c->name);
			/* c holds what the thread before it waits for */
			if (prev->wait == W_LOCK)
				appendf(s->why, sizeof(s->why),
					"holds lock %llu, ",
					(unsigned long long)prev->wait_obj);
			if (c->wait == W_LOCK)
				appendf(s->why, sizeof(s->why),
					"waits for lock %llu",
					(unsigned long long)c->wait_obj);
			else
				appendf(s->why, sizeof(s->why),
					"joins thread %llu",
					(unsigned long long)c->wait_obj);
		}
		return 1;
	}
	return 0;
}

static void describe_wait(struct sim *s, struct sim_thread *t, char *buf,
			  size_t n)
{
	switch (t->wait) {
	case W_LOCK:
		appendf(buf, n, "waits for lock %llu (held by %s)",
			(unsigned long long)t->wait_obj,
			lock_owner_name(s, (uint32_t)t->wait_obj));
		break;
	case W_COND:
		appendf(buf, n, "waits on cond %llu (gave up lock %u)",
			(unsigned long long)t->wait_obj, t->cond_lock);
		break;
	case W_SLEEP:
		appendf(buf, n, "sleeps");
		break;
	case W_POLL:
		appendf(buf, n, "polls fds %d,%d", t->poll_fd[0],
			t->poll_fd[1]);
		break;
	case W_JOIN:
		appendf(buf, n, "joins thread %llu",
			(unsigned long long)t->wait_obj);
		break;
	case W_APPS:
		appendf(buf, n, "waits for the application threads");
		break;
	case W_FAULT:
		appendf(buf, n, "sleeps on a fault at offset %#llx (page %llu) "
			"of memfd %d, %s",
			(unsigned long long)t->fault_off,
			(unsigned long long)(t->fault_off / SIM_PAGE),
			t->fault_mf->fd, t->queued ?
			"its message unread on the uffd" :
			"its message read and never answered");
		break;
	default:
		appendf(buf, n, "%s", t->wait == W_RUN ? "runs" : "exited");
	}
}

static struct sim_thread *first_waiting(struct sim *s, enum sim_wait w)
{
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->wait == w)
			return s->threads[i];
	return NULL;
}

static enum sim_verdict blame(struct sim *s, struct sim_thread *t,
			      enum sim_verdict v, const char *what)
{
	snprintf(s->why, sizeof(s->why), "%s: thread %u (%s) ", what, t->id,
		 t->name);
	describe_wait(s, t, s->why, sizeof(s->why));
	if (s->idle)
		appendf(s->why, sizeof(s->why), "; %llu ms of virtual time "
			"without progress",
			(unsigned long long)((s->now - s->last_progress) /
					     1000000));
	return v;
}

/* Nothing runs and nothing will (or only timers fire, idly): why. A lock
 * left held by an exited thread never gets here: thread_exit fails the run. */
static enum sim_verdict classify(struct sim *s)
{
	struct sim_thread *t;

	if (find_cycle(s))
		return SIM_DEADLOCK;
	if ((t = first_waiting(s, W_FAULT)))
		return blame(s, t, SIM_LOST_WAKEUP, "lost wakeup");
	if ((t = first_waiting(s, W_COND)))
		return blame(s, t, SIM_NO_SIGNAL, "no signal");
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->wait != W_EXITED)
			return blame(s, s->threads[i], SIM_STEP_LIMIT, "hang");
	snprintf(s->why, sizeof(s->why), "every thread exited: %u threads, "
		 "%llu steps", s->nthreads, (unsigned long long)s->steps);
	return SIM_PASS;
}

/* ---- steps ---- */

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

static struct sim_thread *pct_pick(struct sim *s, unsigned n)
{
	struct sim_thread *best = s->run[0];

	for (unsigned i = 1; i < n; i++)
		if (s->run[i]->prio > best->prio)
			best = s->run[i];
	return best;
}

/* The runnable thread passed over longest, when past the fairness bound. */
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

/* The running thread while it can run, else the lowest id. */
static struct sim_thread *dfs_pick(struct sim *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (s->run[i] == s->cur)
			return s->cur;
	return s->run[0];
}

static struct sim_thread *choose(struct sim *s, unsigned n)
{
	struct sim_thread *t = s->cfg.strategy == SIM_PCT ? pct_pick(s, n) :
		s->cfg.strategy == SIM_DFS ? dfs_pick(s, n) :
		s->run[rng_below(&s->rng, n)];
	struct sim_thread *old = starved(s, n);

	if (old)
		t = old;

	/* The strategy ran first, so the stream stays in step with the run
	 * that recorded the schedule. */
	if (s->steps <= s->cfg.nreplay) {
		uint16_t want = s->cfg.replay[s->steps - 1];

		for (unsigned i = 0; i < n; i++)
			if (s->run[i]->id == want)
				return s->run[i];
	}
	return t;
}

static void record(struct sim *s, struct sim_thread *t, unsigned n)
{
	uint64_t mask = 0;

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
	s->log_hash = mix(mix(mix(s->log_hash, t->id), (uint64_t)t->op),
			  t->op_obj);
}

/* The current thread is at a step, or has just blocked or exited: picks
 * the thread that takes the step and runs it. Returns when the current
 * thread is picked again. */
static void step(struct sim *s)
{
	struct sim_thread *me = s->cur, *next;
	unsigned n;

	for (;;) {
		if (s->failed)
			end_run(s, SIM_FAILED);
		n = runnable(s);
		if (n)
			break;
		if (!advance_clock(s))
			end_run(s, classify(s));
	}
	if (++s->steps > s->cfg.max_steps) {
		snprintf(s->why, sizeof(s->why), "step limit: %llu steps "
			 "passed", (unsigned long long)s->cfg.max_steps);
		end_run(s, SIM_STEP_LIMIT);
	}
	for (unsigned i = 0; i < s->nchange; i++)
		if (s->change[i] == s->steps)
			me->prio = i + 1;
	next = choose(s, n);
	next->ready_step = s->steps;
	record(s, next, n);
	if (next == me)
		return;
	if (me->wait == W_RUN)
		s->preemptions++;
	switch_to(s, me, next);
}

void sched_point(struct sim *s, int op, uint64_t obj)
{
	struct sim_thread *me = s->cur;

	if (!me)
		return; /* outside sim_run: one thread, nothing to choose */
	me->op = op;
	me->op_obj = obj;
	step(s);
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
	step(s);
}

static void wake_all(struct sim *s, enum sim_wait w, uint64_t obj)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait == w && t->wait_obj == obj)
			sched_wake(t);
	}
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
	wake_all(s, W_JOIN, t->id);
	if (t->app && --s->apps_alive == 0)
		wake_all(s, W_APPS, 0);
	sched_progress(s);
	step(s);
	abort(); /* an exited thread is never picked */
}

/* ---- the seam's threads, locks, conditions and time ---- */

uint64_t sched_clock_ns(void *ctx)
{
	struct sim *s = ctx;

	sched_point(s, OP_CLOCK, 0);
	return s->now;
}

void sched_sleep_ns(void *ctx, uint64_t ns)
{
	struct sim *s = ctx;

	sched_point(s, OP_SLEEP, ns);
	if (ns)
		sched_block(s, W_SLEEP, 0, 1, sched_deadline(s, ns));
}

int sched_thread_start(void *ctx, resid_thread *th, void *(*fn)(void *),
		       void *arg, const char *name)
{
	struct sim *s = ctx;
	struct sim_thread *t;

	sched_point(s, OP_THREAD_START, 0);
	t = thread_new(s, name, 0);
	if (!t)
		return -EAGAIN;
	t->fn = fn;
	t->arg = arg;
	*th = t->id;
	return 0;
}

int sched_thread_join(void *ctx, resid_thread th)
{
	struct sim *s = ctx;
	struct sim_thread *t;

	sched_point(s, OP_JOIN, th);
	if (th >= s->nthreads)
		return -ESRCH;
	t = s->threads[th];
	if (t == s->cur)
		return -EDEADLK;
	if (t->joined)
		return -EINVAL;
	while (t->wait != W_EXITED)
		sched_block(s, W_JOIN, th, 0, 0);
	t->joined = 1;
	return 0;
}

static uint32_t lock_new(struct sim *s, resid_mutex *m)
{
	if (sim_grow((void **)&s->locks, &s->cap_locks, s->nlocks + 1,
		     sizeof(*s->locks)))
		sim_oom();
	s->locks[s->nlocks].key = m;
	s->locks[s->nlocks].owner = -1;
	m->tag = ++s->nlocks;
	return s->nlocks - 1;
}

/* Ids in order of first use (init or lock), never addresses: the same in
 * every replay. A stale tag from another sim is not trusted. */
static uint32_t lock_id(struct sim *s, resid_mutex *m)
{
	if (m->tag && m->tag <= s->nlocks && s->locks[m->tag - 1].key == m)
		return (uint32_t)m->tag - 1;
	return lock_new(s, m);
}

void sched_mutex_init(void *ctx, resid_mutex *m)
{
	struct sim *s = ctx;

	sched_point(s, OP_MUTEX_INIT, lock_new(s, m));
}

void sched_mutex_destroy(void *ctx, resid_mutex *m)
{
	struct sim *s = ctx;
	uint32_t id = lock_id(s, m);

	sched_point(s, OP_MUTEX_DESTROY, id);
	if (s->locks[id].owner >= 0)
		sim_fail(s, "lock %u destroyed while thread %d holds it", id,
			 s->locks[id].owner);
	s->locks[id].key = NULL;
	m->tag = 0;
}

static void acquire(struct sim *s, uint32_t id)
{
	while (s->locks[id].owner >= 0)
		sched_block(s, W_LOCK, id, 0, 0);
	s->locks[id].owner = s->cur->id;
	s->lock_hash = mix(s->lock_hash, ((uint64_t)s->cur->id << 32) | id);
}

static int release(struct sim *s, uint32_t id, const char *what)
{
	if (s->locks[id].owner != s->cur->id) {
		sim_fail(s, "thread %u (%s) %s lock %u held by %s",
			 s->cur->id, s->cur->name, what, id,
			 lock_owner_name(s, id));
		return -1;
	}
	s->locks[id].owner = -1;
	wake_all(s, W_LOCK, id);
	return 0;
}

void sched_lock(void *ctx, resid_mutex *m)
{
	struct sim *s = ctx;
	uint32_t id = lock_id(s, m);

	sched_point(s, OP_LOCK, id);
	acquire(s, id);
}

int sched_trylock(void *ctx, resid_mutex *m)
{
	struct sim *s = ctx;
	uint32_t id = lock_id(s, m);

	sched_point(s, OP_TRYLOCK, id);
	if (s->locks[id].owner >= 0)
		return -EBUSY;
	acquire(s, id);
	return 0;
}

void sched_unlock(void *ctx, resid_mutex *m)
{
	struct sim *s = ctx;
	uint32_t id = lock_id(s, m);

	sched_point(s, OP_UNLOCK, id);
	release(s, id, "unlocks");
}

static uint32_t cond_new(struct sim *s, resid_cond *c)
{
	if (sim_grow((void **)&s->conds, &s->cap_conds, s->nconds + 1,
		     sizeof(*s->conds)))
		sim_oom();
	s->conds[s->nconds] = c;
	c->tag = ++s->nconds;
	return s->nconds - 1;
}

static uint32_t cond_id(struct sim *s, resid_cond *c)
{
	if (c->tag && c->tag <= s->nconds && s->conds[c->tag - 1] == c)
		return (uint32_t)c->tag - 1;
	return cond_new(s, c);
}

void sched_cond_init(void *ctx, resid_cond *c)
{
	struct sim *s = ctx;

	sched_point(s, OP_COND_INIT, cond_new(s, c));
}

void sched_cond_destroy(void *ctx, resid_cond *c)
{
	struct sim *s = ctx;
	uint32_t id = cond_id(s, c);

	sched_point(s, OP_COND_DESTROY, id);
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->wait == W_COND &&
		    s->threads[i]->wait_obj == id)
			sim_fail(s, "cond %u destroyed while thread %u waits "
				 "on it", id, i);
	s->conds[id] = NULL;
	c->tag = 0;
}

/* Returns -ETIMEDOUT when the deadline woke it. */
static int cond_wait(struct sim *s, resid_cond *c, resid_mutex *m,
		     int timed, uint64_t deadline)
{
	uint32_t cid = cond_id(s, c), lid = lock_id(s, m);
	struct sim_thread *me = sched_self(s);

	sched_point(s, OP_COND_WAIT, cid);
	if (release(s, lid, "waits on a condition with") < 0)
		return 0;
	me->cond_seq = ++s->cond_seq;
	me->cond_lock = lid;
	sched_block(s, W_COND, cid, timed, deadline);
	int rc = me->timed_out ? -ETIMEDOUT : 0;

	acquire(s, lid);
	return rc;
}

void sched_cond_wait(void *ctx, resid_cond *c, resid_mutex *m)
{
	cond_wait(ctx, c, m, 0, 0);
}

int sched_cond_timedwait(void *ctx, resid_cond *c, resid_mutex *m,
			 uint64_t deadline_ns)
{
	return cond_wait(ctx, c, m, 1, deadline_ns);
}

/* Wakes the longest waiter; all of them with `all`. */
static void cond_wake(struct sim *s, resid_cond *c, int all)
{
	uint32_t id = cond_id(s, c);
	struct sim_thread *first = NULL;

	sched_point(s, all ? OP_BROADCAST : OP_SIGNAL, id);
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait != W_COND || t->wait_obj != id)
			continue;
		if (all)
			sched_wake(t);
		else if (!first || t->cond_seq < first->cond_seq)
			first = t;
	}
	if (first)
		sched_wake(first);
}

void sched_cond_signal(void *ctx, resid_cond *c)
{
	cond_wake(ctx, c, 0);
}

void sched_cond_broadcast(void *ctx, resid_cond *c)
{
	cond_wake(ctx, c, 1);
}

void sched_yield_op(void *ctx, const char *what)
{
	sched_point(ctx, OP_POINT, sim_str_hash(what));
}

/* ---- the public interface ---- */

struct sim *sim_create(const struct sim_config *c)
{
	struct sim *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *c;
	if (!s->cfg.max_steps)
		s->cfg.max_steps = DEFAULT_MAX_STEPS;
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
	if (s->cfg.strategy == SIM_PCT && s->cfg.pct_depth > 1) {
		s->nchange = s->cfg.pct_depth - 1;
		s->change = calloc(s->nchange, sizeof(*s->change));
		if (!s->change) {
			free(s);
			return NULL;
		}
		for (unsigned i = 0; i < s->nchange; i++)
			s->change[i] = 1 + rng_below(&s->rng,
						     s->cfg.pct_steps);
	}
	return s;
}

void sim_destroy(struct sim *s)
{
	if (!s)
		return;
	/* Threads left blocked are freed, never resumed. */
	for (uint32_t i = 0; i < s->nthreads; i++)
		thread_free(s->threads[i]);
	kernel_destroy(s);
	free(s->threads);
	free(s->run);
	free(s->locks);
	free(s->conds);
	free(s->sched);
	free(s->masks);
	free(s->change);
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
	t = thread_new(s, "main", 0);
	if (!t) {
		snprintf(s->why, sizeof(s->why), "sim_run: cannot create "
			 "thread 0");
		return SIM_FAILED;
	}
	t->app_fn = fn;
	t->arg = arg;
	s->main_fiber = fiber_current();
	s->cur = t;
	fiber_switch(t->fiber);
	if (swapcontext(&s->main_uc, &t->uc) < 0) {
		perror("sim: swapcontext");
		abort();
	}
	s->cur = NULL;
	return s->verdict;
}

int sim_spawn(struct sim *s, void (*fn)(void *arg), void *arg,
	      const char *name)
{
	struct sim_thread *t;

	sched_point(s, OP_SPAWN, 0);
	t = thread_new(s, name, 1);
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
	static const char *const names[] = {
		[SIM_PASS] = "pass",
		[SIM_FAILED] = "failed",
		[SIM_DEADLOCK] = "deadlock",
		[SIM_LOST_WAKEUP] = "lost-wakeup",
		[SIM_NO_SIGNAL] = "no-signal",
		[SIM_STEP_LIMIT] = "step-limit",
	};

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] :
		"unknown";
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
	*n = (size_t)(s->steps < s->cfg.max_steps ? s->steps :
		      s->cfg.max_steps);
	return s->sched;
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

