/* A bounded FIFO of chunk ids. Its owner guarantees an id is in it at most
 * once, so a ring of nchunks slots never overflows. */
#include <stdlib.h>

#include "internal.h"

int ring_init(struct ring *q, uint32_t cap)
{
	q->ids = calloc(cap ? cap : 1, sizeof(*q->ids));
	q->head = q->count = 0;
	q->cap = cap;
	return q->ids ? 0 : -1;
}

void ring_free(struct ring *q)
{
	free(q->ids);
	q->ids = NULL;
}

void ring_push(struct ring *q, uint32_t id)
{
	q->ids[(q->head + q->count++) % q->cap] = id;
}

uint32_t ring_pop(struct ring *q)
{
	uint32_t id = q->ids[q->head];

	q->head = (q->head + 1) % q->cap;
	q->count--;
	return id;
}

/* Removes id, keeping the order of the rest; 0 when absent. */
int ring_remove(struct ring *q, uint32_t id)
{
	for (uint32_t i = 0; i < q->count; i++) {
		if (q->ids[(q->head + i) % q->cap] != id)
			continue;
		for (uint32_t j = i; j + 1 < q->count; j++)
			q->ids[(q->head + j) % q->cap] =
				q->ids[(q->head + j + 1) % q->cap];
		q->count--;
		return 1;
	}
	return 0;
}
