/* layer_order_declared: the application declares one cycle of its access
 * sequence and signals each chunk it consumes (resid_notify_access). A
 * chunk's next use is the distance from the cursor to its next occurrence.
 *
 * The cursor is the position last signalled. A signal for chunk c moves it to
 * c's first occurrence at or after the position following it (wrapping), so
 * a chunk that appears twice in a row advances; a chunk absent from the
 * cycle leaves it where it is. BEFORE_READ: the cursor's chunk is needed now
 * (distance 0). AFTER_READ: it was consumed, so the next position is at 1
 * and the cursor's own chunk a full cycle away. Before any signal the cursor
 * is at position 0 with nothing consumed, as if BEFORE_READ, for either
 * signal: the first chunk of the cycle is the one needed first. */
#include <stdlib.h>

#include "policy_kinds.h"

#define NONE UINT32_MAX

struct declared {
	uint32_t len;
	enum resid_signal signal;
	uint32_t next; /* where the next signal's search starts */
	uint32_t from; /* the position at distance `bias` */
	uint64_t bias;
	uint32_t *seq;   /* the cycle */
	uint32_t *first; /* occ[first[c] .. first[c + 1]) are c's positions */
	uint32_t *occ;   /* positions grouped by chunk, ascending */
};

void policy_declared_destroy(void *s)
{
	struct declared *d = s;

	free(d->seq);
	free(d->first);
	free(d->occ);
	free(d);
}

/* Groups the positions by chunk: count, prefix-sum to block ends, then fill
 * backwards so each block ends up ascending and first[c] at its start. */
static void index_occurrences(struct declared *d, uint32_t nchunks)
{
	uint32_t i, c;

	for (i = 0; i < d->len; i++)
		d->first[d->seq[i]]++;
	for (c = 1; c <= nchunks; c++)
		d->first[c] += d->first[c - 1];
	for (i = d->len; i-- > 0;)
		d->occ[--d->first[d->seq[i]]] = i;
}

void *policy_declared_create(const struct policy_params *p)
{
	struct declared *d = calloc(1, sizeof(*d));
	uint32_t i;

	if (!d)
		return NULL;
	d->len = p->declared_seq ? p->declared_len : p->nchunks;
	d->signal = p->signal;
	d->seq = malloc(d->len * sizeof(*d->seq));
	d->first = calloc((size_t)p->nchunks + 1, sizeof(*d->first));
	d->occ = malloc(d->len * sizeof(*d->occ));
	if (!d->seq || !d->first || !d->occ) {
		policy_declared_destroy(d);
		return NULL;
	}
	for (i = 0; i < d->len; i++)
		d->seq[i] = p->declared_seq ? p->declared_seq[i] : i;
	index_occurrences(d, p->nchunks);
	return d;
}

/* c's first position at or after q, wrapping; NONE when c never occurs. */
static uint32_t occurrence(const struct declared *d, uint32_t c, uint32_t q)
{
	uint32_t lo = d->first[c], hi = d->first[c + 1], a = lo, b = hi, m;

	if (lo == hi)
		return NONE;
	while (a < b) {
		m = a + (b - a) / 2;
		if (d->occ[m] < q)
			a = m + 1;
		else
			b = m;
	}
	return d->occ[a < hi ? a : lo];
}

static uint64_t ahead(const struct declared *d, uint32_t from, uint32_t to)
{
	return ((uint64_t)to + d->len - from) % d->len;
}

void policy_declared_on_access(void *s, uint32_t chunk)
{
	struct declared *d = s;
	uint32_t pos = occurrence(d, chunk, d->next);

	if (pos == NONE)
		return;
	d->next = (uint32_t)(((uint64_t)pos + 1) % d->len);
	if (d->signal == RESID_SIGNAL_AFTER_READ) {
		d->from = d->next;
		d->bias = 1;
	} else {
		d->from = pos;
		d->bias = 0;
	}
}

uint64_t policy_declared_next_use(void *s, uint32_t chunk)
{
	struct declared *d = s;
	uint32_t pos = occurrence(d, chunk, d->from);

	return pos == NONE ? POLICY_NEVER : d->bias + ahead(d, d->from, pos);
}

/* The chunk at the cursor is the one being read: its consumed bytes are
 * next used at its following occurrence (a full cycle later when it occurs
 * once). Any other chunk's are used at its next occurrence. */
uint64_t policy_declared_next_use_consumed(void *s, uint32_t chunk)
{
	struct declared *d = s;
	uint32_t pos = occurrence(d, chunk, d->from), again;

	if (pos == NONE)
		return POLICY_NEVER;
	if (pos != d->from)
		return d->bias + ahead(d, d->from, pos);
	again = occurrence(d, chunk, (uint32_t)(((uint64_t)pos + 1) % d->len));
	return d->bias + (again == pos ? d->len : ahead(d, pos, again));
}

/* At one of the positions from the cursor - before to the cursor + after. */
int policy_declared_near(void *s, uint32_t chunk, uint32_t before,
			 uint32_t after)
{
	struct declared *d = s;

	for (uint64_t i = d->from + (uint64_t)d->len - before;
	     i <= d->from + (uint64_t)d->len + after; i++)
		if (d->seq[i % d->len] == chunk)
			return 1;
	return 0;
}

/* The cycle after `chunk`'s next occurrence. A position is the first of its
 * chunk in the walk exactly when it is that chunk's next occurrence from the
 * walk's start, which keeps the output distinct without marks. */
uint32_t policy_declared_predict(void *s, uint32_t chunk, uint32_t *out,
				 uint32_t max)
{
	struct declared *d = s;
	uint32_t at = occurrence(d, chunk, d->from), start, j, x, k = 0;
	uint64_t i;

	if (at == NONE)
		return 0;
	start = (uint32_t)(((uint64_t)at + 1) % d->len);
	for (i = 0; i + 1 < d->len && k < max; i++) {
		j = (uint32_t)(((uint64_t)start + i) % d->len);
		x = d->seq[j];
		if (x != chunk && occurrence(d, x, start) == j)
			out[k++] = x;
	}
	return k;
}
