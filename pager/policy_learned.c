/* layer_order_learned: learns each chunk's successor from the order of
 * faults (the chunk that faulted next; the last observation wins) and ranks
 * a chunk by its distance along that chain from the chunk faulted last. */
#include <stdlib.h>
#include <string.h>

#include "policy_kinds.h"

#define NONE UINT32_MAX

struct learned {
	uint32_t n;
	uint32_t last;  /* the chunk faulted last, or NONE */
	int fresh;      /* dist[] holds the chain from `last` */
	uint32_t *succ; /* per chunk: the chunk that faulted after it, or NONE */
	uint64_t *dist; /* per chunk: next use, valid when fresh */
	uint8_t *seen;  /* predict's walk marks; all zero between calls */
};

void policy_learned_destroy(void *s)
{
	struct learned *l = s;

	free(l->succ);
	free(l->dist);
	free(l->seen);
	free(l);
}

void *policy_learned_create(const struct policy_params *p)
{
	struct learned *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->n = p->nchunks;
	l->last = NONE;
	l->succ = malloc(l->n * sizeof(*l->succ));
	l->dist = malloc(l->n * sizeof(*l->dist));
	l->seen = calloc(l->n, sizeof(*l->seen));
	if (!l->succ || !l->dist || !l->seen) {
		policy_learned_destroy(l);
		return NULL;
	}
	memset(l->succ, 0xff, l->n * sizeof(*l->succ)); /* all NONE */
	return l;
}

/* A chunk refaulting right after itself (evicted and fetched again) says
 * nothing about order; learning it would make the chunk its own successor
 * and cut it off from the chain. */
void policy_learned_on_fault(void *s, uint32_t chunk, uint64_t seq)
{
	struct learned *l = s;

	(void)seq; /* calls arrive in fault order */
	if (l->last == chunk)
		return;
	if (l->last != NONE)
		l->succ[l->last] = chunk;
	l->last = chunk;
	l->fresh = 0;
}

/* One O(n) walk serves every next_use until the next fault, so a victim
 * search over many candidates stays linear. The walk stops where the chain
 * ends or meets itself; `last` is not marked first, so if the chain returns
 * to it, it gets the cycle length. */
static void walk(struct learned *l)
{
	uint64_t d = 1;
	uint32_t i, x;

	for (i = 0; i < l->n; i++)
		l->dist[i] = POLICY_NEVER;
	x = l->last == NONE ? NONE : l->succ[l->last];
	while (x != NONE && l->dist[x] == POLICY_NEVER) {
		l->dist[x] = d++;
		x = l->succ[x];
	}
	l->fresh = 1;
}

uint64_t policy_learned_next_use(void *s, uint32_t chunk)
{
	struct learned *l = s;

	if (!l->fresh)
		walk(l);
	return l->dist[chunk];
}

/* The chain from `chunk`, up to where it returns to `chunk` or repeats. */
uint32_t policy_learned_predict(void *s, uint32_t chunk, uint32_t *out,
				uint32_t max)
{
	struct learned *l = s;
	uint32_t k = 0, i, x;

	l->seen[chunk] = 1;
	for (x = l->succ[chunk]; k < max && x != NONE && !l->seen[x];
	     x = l->succ[x]) {
		l->seen[x] = 1;
		out[k++] = x;
	}
	l->seen[chunk] = 0; /* unmark only what was walked: O(k), not O(n) */
	for (i = 0; i < k; i++)
		l->seen[out[i]] = 0;
	return k;
}
