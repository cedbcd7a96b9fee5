/* The pager's heap under the simulation. A run that ends early (a crash,
 * a deadlock, a stall) never closes its region, and what the pager
 * allocated in it would stay allocated: a campaign that fails thousands
 * of times, or a shrink, would grow without bound. In harness builds the
 * pager's objects call these in place of malloc and free (the Makefile
 * renames the symbols in them); while a run is on, each block it takes is
 * kept in a set, and sim_destroy frees what is left. Outside a run they
 * are malloc and free. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

/* The live blocks taken during the run in progress: open addressing,
 * linear probing, deletion by backward shift. One simulating thread at a
 * time; outside a run no pager thread frees a run's block. */
static struct {
	uintptr_t *v;
	size_t cap, n;
} live;
static __thread int attached;

static size_t slot_of(uintptr_t p)
{
	return (size_t)((p >> 4) * 0x9e3779b97f4a7c15ull) & (live.cap - 1);
}

static void put(uintptr_t p);

static void grow(void)
{
	uintptr_t *old = live.v;
	size_t ocap = live.cap;

	live.cap = ocap ? ocap * 2 : 256;
	live.v = calloc(live.cap, sizeof(*live.v));
	if (!live.v)
		sim_oom();
	live.n = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			put(old[i]);
	free(old);
}

static void put(uintptr_t p)
{
	if ((live.n + 1) * 2 > live.cap)
		grow();
	for (size_t i = slot_of(p);; i = (i + 1) & (live.cap - 1))
		if (!live.v[i]) {
			live.v[i] = p;
			live.n++;
			return;
		}
}

static void take(uintptr_t p)
{
	size_t i, j, k;

	if (!live.n || !p)
		return;
	for (i = slot_of(p); live.v[i] != p; i = (i + 1) & (live.cap - 1))
		if (!live.v[i])
			return; /* not a run's block */
	live.v[i] = 0;
	live.n--;
	/* Moves back the entries the hole would cut off from their slot. */
	for (j = (i + 1) & (live.cap - 1); live.v[j];
	     j = (j + 1) & (live.cap - 1)) {
		k = slot_of(live.v[j]);
		if ((j > i && (k <= i || k > j)) ||
		    (j < i && k <= i && k > j)) {
			live.v[i] = live.v[j];
			live.v[j] = 0;
			i = j;
		}
	}
}

static void *kept(void *p)
{
	if (p && attached)
		put((uintptr_t)p);
	return p;
}

void *sim_heap_malloc(size_t n)
{
	return kept(malloc(n));
}

void *sim_heap_calloc(size_t n, size_t size)
{
	return kept(calloc(n, size));
}

void *sim_heap_aligned_alloc(size_t align, size_t n)
{
	return kept(aligned_alloc(align, n));
}

void *sim_heap_realloc(void *p, size_t n)
{
	uintptr_t was = (uintptr_t)p;
	void *q = realloc(p, n);

	if (q) {
		take(was);
		kept(q);
	}
	return q;
}

void sim_heap_free(void *p)
{
	take((uintptr_t)p);
	free(p);
}

void heap_attach(int on)
{
	attached = on;
}

size_t heap_release(void)
{
	size_t n = live.n;

	for (size_t i = 0; i < live.cap && live.n; i++)
		if (live.v[i]) {
			free((void *)live.v[i]);
			live.v[i] = 0;
			live.n--;
		}
	return n;
}
