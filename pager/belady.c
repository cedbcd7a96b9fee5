/* Belady's furthest-next-use rule in O(n log k): a next-use index built in
 * one backward pass, and an indexed max-heap of the k resident chunks keyed
 * by next use, so a hit re-keys its chunk in place. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "belady.h"

#define ABSENT UINT32_MAX

struct heap {
	uint32_t *h;   /* resident chunk ids, heap-ordered */
	uint32_t *pos; /* index of each chunk in h, or ABSENT */
	uint64_t *key; /* next use of each resident chunk */
	uint64_t len;
};

/* Whether chunk a is evicted before chunk b: later next use, then lower id. */
static int above(const struct heap *hp, uint32_t a, uint32_t b)
{
	return hp->key[a] > hp->key[b] || (hp->key[a] == hp->key[b] && a < b);
}

static void place(struct heap *hp, uint64_t i, uint32_t c)
{
	hp->h[i] = c;
	hp->pos[c] = (uint32_t)i;
}

static void sift_up(struct heap *hp, uint64_t i)
{
	uint32_t c = hp->h[i];

	while (i > 0 && above(hp, c, hp->h[(i - 1) / 2])) {
		place(hp, i, hp->h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(hp, i, c);
}

static void sift_down(struct heap *hp, uint64_t i)
{
	uint32_t c = hp->h[i];

	for (;;) {
		uint64_t best = 2 * i + 1;

		if (best >= hp->len)
			break;
		if (best + 1 < hp->len && above(hp, hp->h[best + 1], hp->h[best]))
			best++;
		if (!above(hp, hp->h[best], c))
			break;
		place(hp, i, hp->h[best]);
		i = best;
	}
	place(hp, i, c);
}

static void push(struct heap *hp, uint32_t c)
{
	place(hp, hp->len++, c);
	sift_up(hp, hp->len - 1);
}

static uint32_t pop(struct heap *hp)
{
	uint32_t top = hp->h[0];

	hp->pos[top] = ABSENT;
	if (--hp->len > 0) {
		hp->h[0] = hp->h[hp->len];
		sift_down(hp, 0);
	}
	return top;
}

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int check(const struct trace *t, uint64_t cap, char *err, size_t errlen)
{
	uint64_t i, max = 0;
	uint32_t c, big = 0;

	if (t->kind == TRACE_FAULT)
		return fail(err, errlen, "a fault trace is the pager's own output; Belady needs the workload's reference trace");
	if (t->kind != TRACE_REFERENCE)
		return fail(err, errlen, "unknown trace kind %d; give a reference trace", (int)t->kind);
	if (cap == 0)
		return fail(err, errlen, "capacity 0; give at least the largest chunk's bytes");
	if ((t->nchunks && !t->sizes) || (t->n && !t->seq))
		return fail(err, errlen, "trace with chunks but no sizes, or accesses but no sequence; fill both arrays");
	for (c = 0; c < t->nchunks; c++) {
		if (t->sizes[c] == 0)
			return fail(err, errlen, "chunk %" PRIu32 " has 0 bytes; every chunk needs a size > 0", c);
		if (t->sizes[c] > max) {
			max = t->sizes[c];
			big = c;
		}
	}
	if (max > cap)
		return fail(err, errlen, "capacity %" PRIu64 " is smaller than chunk %" PRIu32 " (%" PRIu64 " bytes); give a capacity >= %" PRIu64,
			    cap, big, max, max);
	for (i = 0; i < t->n; i++)
		if (t->seq[i] >= t->nchunks)
			return fail(err, errlen, "access %" PRIu64 " names chunk %" PRIu32 " but the trace has %" PRIu32 " chunks; ids run 0..chunks-1",
				    i, t->seq[i], t->nchunks);
	return 0;
}

int belady(const struct trace *t, uint64_t cap, struct belady_result *out,
	   char *err, size_t errlen)
{
	struct belady_result r = { .accesses = t->n };
	struct heap hp = { 0 };
	uint64_t *next, i, resident = 0;
	size_t k = (size_t)t->nchunks + 1; /* + 1: never malloc(0) */
	uint32_t c;
	int rc = -1;

	if (check(t, cap, err, errlen))
		return -1;
	if (t->n >= SIZE_MAX / sizeof(*next))
		return fail(err, errlen, "trace of %" PRIu64 " accesses is too long to index", t->n);
	next = malloc((t->n + 1) * sizeof(*next));
	hp.h = malloc(k * sizeof(*hp.h));
	hp.pos = malloc(k * sizeof(*hp.pos));
	hp.key = malloc(k * sizeof(*hp.key));
	if (!next || !hp.h || !hp.pos || !hp.key) {
		fail(err, errlen, "no memory for the next-use index of %" PRIu64 " accesses", t->n);
		goto out;
	}

	/* Backward pass; key[] holds each chunk's nearest later access. */
	for (c = 0; c < t->nchunks; c++) {
		hp.key[c] = t->n;
		hp.pos[c] = ABSENT;
	}
	for (i = t->n; i-- > 0;) {
		next[i] = hp.key[t->seq[i]];
		hp.key[t->seq[i]] = i;
	}

	for (i = 0; i < t->n; i++) {
		c = t->seq[i];
		if (hp.pos[c] != ABSENT) {
			r.hits++;
			hp.key[c] = next[i]; /* only grows: moves up */
			sift_up(&hp, hp.pos[c]);
			continue;
		}
		r.misses++;
		if (__builtin_add_overflow(r.bytes_missed, t->sizes[c], &r.bytes_missed)) {
			fail(err, errlen, "bytes missed overflow 64 bits at access %" PRIu64 "; shorten the trace", i);
			goto out;
		}
		/* Terminates: an empty cache fits any chunk (check()). */
		while (cap - resident < t->sizes[c])
			resident -= t->sizes[pop(&hp)];
		resident += t->sizes[c];
		hp.key[c] = next[i];
		push(&hp, c);
	}
	*out = r;
	rc = 0;
out:
	free(next);
	free(hp.h);
	free(hp.pos);
	free(hp.key);
	return rc;
}
