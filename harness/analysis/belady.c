/* Belady's furthest-next-use rule in O(n log k): a next-use index built in
 * one backward pass, and an indexed max-heap of the k resident chunks keyed
 * by next use, so a hit re-keys its chunk in place. The same walk with
 * chunks that may stay partly resident is the lower bound (belady.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/belady.h"
#include "base/err_line.h"

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
		if (best + 1 < hp->len &&
		    above(hp, hp->h[best + 1], hp->h[best]))
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

static int check(const struct trace *t, uint64_t cap, char *err, size_t errlen)
{
	uint64_t i, max = 0;
	uint32_t c, big = 0;

	if (t->kind == TRACE_FAULT)
		return err_line(
			err, errlen,
			"a fault trace is the pager's own output; Belady needs the workload's reference trace");
	if (t->kind != TRACE_REFERENCE)
		return err_line(err, errlen,
				"unknown trace kind %d; give a reference trace",
				(int)t->kind);
	if (cap == 0)
		return err_line(
			err, errlen,
			"capacity 0; give at least the largest chunk's bytes");
	if ((t->nchunks && !t->sizes) || (t->n && !t->seq))
		return err_line(
			err, errlen,
			"trace with chunks but no sizes, or accesses but no sequence; fill both arrays");
	for (c = 0; c < t->nchunks; c++) {
		if (t->sizes[c] == 0)
			return err_line(err, errlen,
					"chunk %" PRIu32
					" has 0 bytes; every chunk needs a size > 0",
					c);
		if (t->sizes[c] > max) {
			max = t->sizes[c];
			big = c;
		}
	}
	if (max > cap)
		return err_line(err, errlen,
				"capacity %" PRIu64
				" is smaller than chunk %" PRIu32 " (%" PRIu64
				" bytes); give a capacity >= %" PRIu64,
				cap, big, max, max);
	for (i = 0; i < t->n; i++)
		if (t->seq[i] >= t->nchunks)
			return err_line(err, errlen,
					"access %" PRIu64
					" names chunk %" PRIu32
					" but the trace has %" PRIu32
					" chunks; ids run 0..chunks-1",
					i, t->seq[i], t->nchunks);
	return 0;
}

/* Frees room for `need` bytes: whole chunks in the integral rule, bytes off
 * the furthest chunk in the fractional one. Terminates: an empty cache fits
 * any chunk (check()), and the chunk being loaded, keyed at the present, is
 * the last that could be chosen and is never needed. */
static void make_room(struct heap *hp, uint64_t *held, uint64_t *resident,
		      uint64_t cap, uint64_t need, int fractional)
{
	while (cap - *resident < need) {
		uint32_t v = hp->h[0];
		uint64_t take = held[v];

		if (fractional && take > need - (cap - *resident))
			take = need - (cap - *resident);
		held[v] -= take;
		*resident -= take;
		if (!held[v])
			pop(hp);
	}
}

static int furthest_next_use(const struct trace *t, uint64_t cap,
			     int fractional, struct belady_result *out,
			     char *err, size_t errlen)
{
	struct belady_result r = { .accesses = t->n };
	struct heap hp = { 0 };
	uint64_t *next, *held, i, resident = 0;
	size_t k = (size_t)t->nchunks + 1; /* + 1: never malloc(0) */
	uint32_t c;
	int rc = -1;

	if (check(t, cap, err, errlen))
		return -1;
	if (t->n >= SIZE_MAX / sizeof(*next))
		return err_line(err, errlen,
				"trace of %" PRIu64
				" accesses is too long to index",
				t->n);
	next = malloc((t->n + 1) * sizeof(*next));
	held = calloc(k, sizeof(*held));
	hp.h = malloc(k * sizeof(*hp.h));
	hp.pos = malloc(k * sizeof(*hp.pos));
	hp.key = malloc(k * sizeof(*hp.key));
	if (!next || !held || !hp.h || !hp.pos || !hp.key) {
		err_line(err, errlen,
			 "no memory for the next-use index of %" PRIu64
			 " accesses",
			 t->n);
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
		uint64_t need;

		c = t->seq[i];
		need = t->sizes[c] - held[c];
		if (!need) {
			r.hits++;
			hp.key[c] = next[i]; /* only grows: moves up */
			sift_up(&hp, hp.pos[c]);
			continue;
		}
		r.misses++;
		if (__builtin_add_overflow(r.bytes_missed, need,
					   &r.bytes_missed)) {
			err_line(err, errlen,
				 "bytes missed overflow 64 bits at access %" PRIu64
				 "; shorten the trace",
				 i);
			goto out;
		}
		if (hp.pos[c] == ABSENT) {
			hp.key[c] = i;
			push(&hp, c);
		} else {
			hp.key[c] = i; /* the present: below every next use */
			sift_down(&hp, hp.pos[c]);
		}
		make_room(&hp, held, &resident, cap, need, fractional);
		held[c] = t->sizes[c];
		resident += need;
		hp.key[c] = next[i];
		sift_up(&hp, hp.pos[c]);
	}
	*out = r;
	rc = 0;
out:
	free(next);
	free(held);
	free(hp.h);
	free(hp.pos);
	free(hp.key);
	return rc;
}

int belady(const struct trace *t, uint64_t cap, struct belady_result *out,
	   char *err, size_t errlen)
{
	return furthest_next_use(t, cap, 0, out, err, errlen);
}

int belady_bound(const struct trace *t, uint64_t cap, struct belady_result *out,
		 char *err, size_t errlen)
{
	return furthest_next_use(t, cap, 1, out, err, errlen);
}

/* One state of the search: bytes missed, then misses, of the best schedule
 * that ends with this resident set. */
struct cost {
	uint64_t bytes, misses;
};

static void relax(struct cost *slot, uint64_t bytes, uint64_t misses)
{
	if (bytes < slot->bytes ||
	    (bytes == slot->bytes && misses < slot->misses))
		*slot = (struct cost){ bytes, misses };
}

/* Demand paging loses nothing (fetching early never saves a byte), so a
 * state is the resident set after each access: a hit keeps it, a miss may
 * keep any subset of it that fits beside the chunk it loads. */
int belady_exact(const struct trace *t, uint64_t cap, struct belady_result *out,
		 char *err, size_t errlen)
{
	const struct cost none = { UINT64_MAX, UINT64_MAX };
	uint32_t nsets, set, sub;
	struct cost *cur, *nxt, best = none;
	uint64_t *bytes, i;
	int rc = -1;

	if (check(t, cap, err, errlen))
		return -1;
	if (t->nchunks > BELADY_EXACT_MAX_CHUNKS)
		return err_line(
			err, errlen,
			"%" PRIu32
			" chunks; the exact search takes at most %d (3^chunks steps per access)",
			t->nchunks, BELADY_EXACT_MAX_CHUNKS);
	if (cap > UINT64_MAX / (BELADY_EXACT_MAX_CHUNKS + 1) / (t->n + 1))
		return err_line(
			err, errlen,
			"capacity %" PRIu64 " over %" PRIu64
			" accesses could overflow the byte counts; give a smaller instance",
			cap, t->n);
	nsets = 1u << t->nchunks;
	cur = malloc(nsets * sizeof(*cur));
	nxt = malloc(nsets * sizeof(*nxt));
	bytes = malloc(nsets * sizeof(*bytes));
	if (!cur || !nxt || !bytes) {
		err_line(err, errlen, "no memory for %" PRIu32 " resident sets",
			 nsets);
		goto out;
	}
	bytes[0] = 0;
	for (set = 1; set < nsets; set++)
		bytes[set] = bytes[set & (set - 1)] +
			     t->sizes[__builtin_ctz(set)];
	for (set = 0; set < nsets; set++)
		cur[set] = none;
	cur[0] = (struct cost){ 0, 0 };
	for (i = 0; i < t->n; i++) {
		uint32_t bit = 1u << t->seq[i];
		uint64_t size = t->sizes[t->seq[i]];

		for (set = 0; set < nsets; set++)
			nxt[set] = none;
		for (set = 0; set < nsets; set++) {
			struct cost at = cur[set];

			if (at.bytes == UINT64_MAX)
				continue;
			if (set & bit) {
				relax(&nxt[set], at.bytes, at.misses);
				continue;
			}
			/* Every subset of set, the empty one last. */
			for (sub = set;; sub = (sub - 1) & set) {
				if (bytes[sub] + size <= cap)
					relax(&nxt[sub | bit], at.bytes + size,
					      at.misses + 1);
				if (!sub)
					break;
			}
		}
		struct cost *swap = cur;

		cur = nxt;
		nxt = swap;
	}
	for (set = 0; set < nsets; set++)
		relax(&best, cur[set].bytes, cur[set].misses);
	*out = (struct belady_result){ .accesses = t->n,
				       .misses = best.misses,
				       .hits = t->n - best.misses,
				       .bytes_missed = best.bytes };
	rc = 0;
out:
	free(cur);
	free(nxt);
	free(bytes);
	return rc;
}
