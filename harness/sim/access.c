/* The scheduler's eyes on plain memory (design.md §4). The simulation build
 * (`make simx`) compiles the pager's files with clang's -fsanitize=thread,
 * which puts a call before every load and store, and links this file
 * instead of ThreadSanitizer's runtime. Each call is one question: is this
 * access to shared memory that no common lock protects? Then it is a
 * scheduling point, as if annotated by hand, and the strategy may switch
 * there.
 *
 * "Unprotected" is Eraser's lockset rule (Savage et al., SOSP 1997), per
 * 8-byte granule: memory one thread alone has touched is its own (so what
 * thread 0 sets up before the workers start is not shared); from the first
 * access by a second thread on, the granule keeps the locks held at every
 * access since (the candidate set); once it has been written while shared
 * and the candidate set is empty, every access to it is a point. An extra
 * point only costs steps: the scheduler may switch at any instruction of a
 * real machine, so no point makes a run that the kernel could not.
 *
 * The state is kept by address for one run (sim_run to sim_run), and the
 * pager allocates at open and frees at close, so within a run an address
 * means one object and the points are the same on every replay. Atomics
 * are atomic and not points; the seam's calls already are. Outside sim_run
 * (real threads in the same binary) every call is a no-op. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/tsan_interface_atomic.h>

#include "sim/sim_internal.h"

#define LOCKSET_MAX 4 /* more held at once: the lowest ids are kept */

enum granule_state {
	G_OWN,        /* one thread only: owner */
	G_SHARED,     /* read by a second thread, not written since */
	G_SHARED_MOD, /* written while shared */
};

struct granule {
	uintptr_t key; /* address / 8 + 1; 0: a free slot */
	uint16_t owner;
	uint8_t state;
	uint8_t nlocks;
	uint32_t locks[LOCKSET_MAX]; /* the candidate set, ascending ids */
};

/* The run this OS thread drives, and its shadow table. */
static __thread struct sim *running;
static __thread struct granule *table;
static __thread size_t cap, used;

void sim_access_attach(struct sim *s)
{
	running = s;
	free(table);
	table = NULL;
	cap = used = 0;
}

static struct granule *slot(uintptr_t key)
{
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull) & (cap - 1);

	while (table[i].key && table[i].key != key)
		i = (i + 1) & (cap - 1);
	return &table[i];
}

static void grow(void)
{
	struct granule *old = table;
	size_t n = cap;

	cap = cap ? cap * 2 : 4096;
	table = calloc(cap, sizeof(*table));
	if (!table)
		sim_oom();
	for (size_t i = 0; i < n; i++)
		if (old[i].key)
			*slot(old[i].key) = old[i];
	free(old);
}

/* The granule of addr, created owned by thread me. */
static struct granule *lookup(uintptr_t addr, uint16_t me, int *fresh)
{
	uintptr_t key = addr / 8 + 1;
	struct granule *g;

	if (2 * (used + 1) > cap)
		grow();
	g = slot(key);
	*fresh = !g->key;
	if (*fresh) {
		*g = (struct granule){ .key = key, .owner = me };
		used++;
	}
	return g;
}

/* The locks thread me holds, ascending, at most LOCKSET_MAX. */
static uint8_t held_by(struct sim *s, uint16_t me, uint32_t *out)
{
	uint8_t n = 0;

	for (uint32_t i = 0; i < s->nlocks && n < LOCKSET_MAX; i++)
		if (s->locks[i].owner == me)
			out[n++] = i;
	return n;
}

/* The candidate set keeps only the locks held now. */
static void intersect(struct granule *g, const uint32_t *held, uint8_t nheld)
{
	uint8_t n = 0;

	for (uint8_t i = 0; i < g->nlocks; i++)
		for (uint8_t k = 0; k < nheld; k++)
			if (g->locks[i] == held[k])
				g->locks[n++] = g->locks[i];
	g->nlocks = n;
}

/* Eraser's step for one access; 1 when it is unprotected. */
static int unprotected(struct sim *s, uint16_t me, uintptr_t addr, int write)
{
	uint32_t held[LOCKSET_MAX];
	int fresh;
	struct granule *g = lookup(addr, me, &fresh);

	if (fresh || (g->state == G_OWN && g->owner == me))
		return 0;
	uint8_t nheld = held_by(s, me, held);

	if (g->state == G_OWN) {
		g->nlocks = nheld;
		memcpy(g->locks, held, nheld * sizeof(*held));
		g->state = write ? G_SHARED_MOD : G_SHARED;
	} else {
		intersect(g, held, nheld);
		if (write)
			g->state = G_SHARED_MOD;
	}
	return g->state == G_SHARED_MOD && g->nlocks == 0;
}

static void access_hook(const volatile void *p, int write)
{
	struct sim *s = running;

	if (!s || !s->cur)
		return;
	if (unprotected(s, s->cur->id, (uintptr_t)p, write))
		sched_point(s, OP_POINT, write ? 2 : 1);
}

/* The entry points -fsanitize=thread calls (compiler-rt's tsan interface:
 * __tsan_{read,write}{1,2,4,8,16}, the unaligned ones, function entry and
 * exit, the module constructor's __tsan_init). */
#define ACCESS(n)                                \
	void __tsan_read##n(void *p);            \
	void __tsan_write##n(void *p);           \
	void __tsan_unaligned_read##n(void *p);  \
	void __tsan_unaligned_write##n(void *p); \
	void __tsan_read##n(void *p)             \
	{                                        \
		access_hook(p, 0);               \
	}                                        \
	void __tsan_write##n(void *p)            \
	{                                        \
		access_hook(p, 1);               \
	}                                        \
	void __tsan_unaligned_read##n(void *p)   \
	{                                        \
		access_hook(p, 0);               \
	}                                        \
	void __tsan_unaligned_write##n(void *p)  \
	{                                        \
		access_hook(p, 1);               \
	}
ACCESS(1)
ACCESS(2)
ACCESS(4)
ACCESS(8)
ACCESS(16)

void __tsan_init(void);
void __tsan_func_entry(void *pc);
void __tsan_func_exit(void);
void __tsan_init(void)
{
}
void __tsan_func_entry(void *pc)
{
	(void)pc;
}
void __tsan_func_exit(void)
{
}

/* Atomics, as the instrumentation rewrites them: done for real (the same
 * binary runs the pager on real threads too), always sequentially
 * consistent, which is at least as strong as any order asked for. */
#define SC __ATOMIC_SEQ_CST
#define RMW(n, T, op, builtin)                                                \
	T __tsan_atomic##n##_##op(volatile T *a, T v, __tsan_memory_order mo) \
	{                                                                     \
		(void)mo;                                                     \
		return builtin(a, v, SC);                                     \
	}
#define ATOMICS(n, T)                                                          \
	T __tsan_atomic##n##_load(const volatile T *a, __tsan_memory_order mo) \
	{                                                                      \
		(void)mo;                                                      \
		return __atomic_load_n(a, SC);                                 \
	}                                                                      \
	void __tsan_atomic##n##_store(volatile T *a, T v,                      \
				      __tsan_memory_order mo)                  \
	{                                                                      \
		(void)mo;                                                      \
		__atomic_store_n(a, v, SC);                                    \
	}                                                                      \
	RMW(n, T, exchange, __atomic_exchange_n)                               \
	RMW(n, T, fetch_add, __atomic_fetch_add)                               \
	RMW(n, T, fetch_sub, __atomic_fetch_sub)                               \
	int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c,    \
						       T v,                    \
						       __tsan_memory_order mo, \
						       __tsan_memory_order     \
							       fail)           \
	{                                                                      \
		(void)mo;                                                      \
		(void)fail;                                                    \
		return __atomic_compare_exchange_n(a, c, v, 0, SC, SC);        \
	}                                                                      \
	/* The form returning the old value (a CAS whose expected value \
	 * is a constant, as failure_record's). */      \
	T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v,     \
						  __tsan_memory_order mo,      \
						  __tsan_memory_order fail)    \
	{                                                                      \
		(void)mo;                                                      \
		(void)fail;                                                    \
		__atomic_compare_exchange_n(a, &c, v, 0, SC, SC);              \
		return c;                                                      \
	}
ATOMICS(8, __tsan_atomic8)
ATOMICS(16, __tsan_atomic16)
ATOMICS(32, __tsan_atomic32)
ATOMICS(64, __tsan_atomic64)
