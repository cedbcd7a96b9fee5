/* lru: the kernel's own rule run through the pager, the control arm. It has
 * no forecast; a chunk's "next use" is its age in faults, so the chunk that
 * faulted longest ago ranks furthest. It predicts nothing. */
#include <stdlib.h>

#include "policy_kinds.h"

#define UNSEEN UINT64_MAX /* never faulted: the greatest age */

struct lru {
	uint64_t now;    /* seq of the latest fault */
	uint64_t last[]; /* per chunk: seq of its latest fault, or UNSEEN */
};

void *policy_lru_create(const struct policy_params *p)
{
	struct lru *l;
	uint32_t i;

	l = malloc(sizeof(*l) + (size_t)p->nchunks * sizeof(l->last[0]));
	if (!l)
		return NULL;
	l->now = 0;
	for (i = 0; i < p->nchunks; i++)
		l->last[i] = UNSEEN;
	return l;
}

void policy_lru_destroy(void *s)
{
	free(s);
}

void policy_lru_on_fault(void *s, uint32_t chunk, uint64_t seq)
{
	struct lru *l = s;

	l->now = seq;
	l->last[chunk] = seq;
}

uint64_t policy_lru_next_use(void *s, uint32_t chunk)
{
	struct lru *l = s;

	if (l->last[chunk] == UNSEEN)
		return POLICY_NEVER;
	return l->now - l->last[chunk];
}
