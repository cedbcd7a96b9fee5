/* The seam's time, threads, locks and condition variables under the
 * simulation: each call is a step first, then acts on the scheduler's state.
 * Locks and conditions get ids in order of first use, never addresses, so
 * they are the same in every replay. */
#include <errno.h>

#include "sim/sim_internal.h"

const char *sim_lock_owner(struct sim *s, uint32_t lock)
{
	int o = s->locks[lock].owner;

	return o < 0 ? "nobody" : s->threads[o]->name;
}

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
	t = coro_new(s, name, 0);
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
	sched_mix_lock(s, ((uint64_t)s->cur->id << 32) | id);
}

static int release(struct sim *s, uint32_t id, const char *what)
{
	if (s->locks[id].owner != s->cur->id) {
		sim_fail(s, "thread %u (%s) %s lock %u held by %s", s->cur->id,
			 s->cur->name, what, id, sim_lock_owner(s, id));
		return -1;
	}
	s->locks[id].owner = -1;
	sched_wake_all(s, W_LOCK, id);
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
			sim_fail(s,
				 "cond %u destroyed while thread %u waits "
				 "on it",
				 id, i);
	s->conds[id] = NULL;
	c->tag = 0;
}

void sched_cond_wait(void *ctx, resid_cond *c, resid_mutex *m)
{
	struct sim *s = ctx;
	uint32_t cid = cond_id(s, c), lid = lock_id(s, m);
	struct sim_thread *me = sched_self(s);

	sched_point(s, OP_COND_WAIT, cid);
	if (release(s, lid, "waits on a condition with") < 0)
		return;
	me->cond_seq = ++s->cond_seq;
	me->cond_lock = lid;
	sched_block(s, W_COND, cid, 0, 0);
	acquire(s, lid);
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
	static uint64_t state_change;
	uint64_t h = sim_str_hash(what);

	if (!state_change)
		state_change = sim_str_hash("chunk-state");
	/* The pager yields here before a chunk changes state: progress. */
	if (h == state_change)
		sched_progress_step(ctx);
	sched_point(ctx, OP_POINT, h);
}
