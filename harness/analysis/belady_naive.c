/* The naive Belady oracle and its inputs; see belady_naive.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/belady_naive.h"
#include "base/rng.h"
#include "resid.h"

static uint64_t next_use(const struct trace *t, uint64_t i, uint32_t c)
{
	uint64_t j;

	for (j = i + 1; j < t->n; j++)
		if (t->seq[j] == c)
			return j;
	return t->n;
}

int belady_naive(const struct trace *t, uint64_t cap, struct belady_result *out,
		 char *err, size_t errlen)
{
	struct belady_result r = { .accesses = t->n };
	uint64_t i, resident = 0, nu, best_nu;
	uint32_t c, v, best;
	uint8_t *in;

	if (t->kind != TRACE_REFERENCE) {
		snprintf(err, errlen,
			 "a fault trace is the pager's own output; Belady needs the workload's reference trace");
		return -1;
	}
	if (cap == 0) {
		snprintf(err, errlen, "capacity 0");
		return -1;
	}
	for (c = 0; c < t->nchunks; c++) {
		if (t->sizes[c] == 0 || t->sizes[c] > cap) {
			snprintf(err, errlen,
				 "chunk %" PRIu32
				 " is 0 bytes or larger than the capacity",
				 c);
			return -1;
		}
	}
	for (i = 0; i < t->n; i++) {
		if (t->seq[i] >= t->nchunks) {
			snprintf(err, errlen,
				 "chunk id %" PRIu32 " out of range",
				 t->seq[i]);
			return -1;
		}
	}
	in = calloc((size_t)t->nchunks + 1, 1);
	if (!in) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		c = t->seq[i];
		if (in[c]) {
			r.hits++;
			continue;
		}
		r.misses++;
		r.bytes_missed += t->sizes[c];
		while (cap - resident < t->sizes[c]) {
			best = UINT32_MAX;
			best_nu = 0;
			/* Ascending ids and a strict '>' keep the lowest id on a tie. */
			for (v = 0; v < t->nchunks; v++) {
				if (!in[v])
					continue;
				nu = next_use(t, i, v);
				if (best == UINT32_MAX || nu > best_nu) {
					best = v;
					best_nu = nu;
				}
			}
			in[best] = 0;
			resident -= t->sizes[best];
		}
		in[c] = 1;
		resident += t->sizes[c];
	}
	free(in);
	*out = r;
	return 0;
}

static uint32_t pick(uint64_t *rng, int pattern, uint32_t nc, uint32_t *cur,
		     uint64_t i)
{
	switch (pattern) {
	case 0: /* uniform */
		return (uint32_t)rng_below(rng, nc);
	case 1: /* skewed toward low ids */
		*cur = (uint32_t)rng_below(rng, nc);
		return (uint32_t)rng_below(rng, *cur + 1);
	case 2: /* cyclic with occasional jumps */
		*cur = rng_below(rng, 8) ? (*cur + 1) % nc :
					   (uint32_t)rng_below(rng, nc);
		return *cur;
	default: /* phases: a small window moves every 64 accesses */
		if (i % 64 == 0)
			*cur = (uint32_t)rng_below(rng, nc);
		return (*cur + (uint32_t)rng_below(rng, 4)) % nc;
	}
}

int belady_random_trace(uint64_t *rng, uint32_t max_chunks, uint64_t max_len,
			int unequal, struct trace *t, uint64_t *capacity)
{
	uint64_t i, total = 0, max = 0;
	uint64_t base = RESID_PAGE * (1 + rng_below(rng, 4));
	uint32_t c, cur = 0;
	int pattern = (int)rng_below(rng, 4);

	t->kind = TRACE_REFERENCE;
	t->nchunks = 1 + (uint32_t)rng_below(rng, max_chunks);
	t->n = rng_below(rng, max_len + 1);
	t->sizes = malloc(t->nchunks * sizeof(*t->sizes));
	t->seq = malloc((t->n + 1) * sizeof(*t->seq));
	if (!t->sizes || !t->seq)
		return -1;
	for (c = 0; c < t->nchunks; c++) {
		t->sizes[c] = unequal ? RESID_PAGE * (1 + rng_below(rng, 8)) :
					base;
		total += t->sizes[c];
		if (t->sizes[c] > max)
			max = t->sizes[c];
	}
	for (i = 0; i < t->n; i++)
		t->seq[i] = pick(rng, pattern, t->nchunks, &cur, i);
	/* From one chunk to past everything; not always a whole page. */
	*capacity = unequal ?
			    max + rng_below(rng, total - max + 8192) :
			    base * (1 + rng_below(rng, t->nchunks + 1)) +
				    (rng_below(rng, 4) ? 0 :
							 rng_below(rng, base));
	return 0;
}

int belady_cyclic_trace(uint32_t w, uint32_t passes, uint64_t chunk_size,
			struct trace *t)
{
	uint64_t i;
	uint32_t c;

	t->kind = TRACE_REFERENCE;
	t->nchunks = w;
	t->n = (uint64_t)w * passes;
	t->sizes = malloc(((size_t)w + 1) * sizeof(*t->sizes));
	t->seq = malloc((t->n + 1) * sizeof(*t->seq));
	if (!t->sizes || !t->seq)
		return -1;
	for (c = 0; c < w; c++)
		t->sizes[c] = chunk_size;
	for (i = 0; i < t->n; i++)
		t->seq[i] = (uint32_t)(i % w);
	return 0;
}
