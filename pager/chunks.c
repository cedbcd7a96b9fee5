/* The chunk table: equal chunks or the caller's table, 4096-aligned so that a
 * chunk's region offset and file offset agree modulo the page size. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static uint64_t page_up(uint64_t x)
{
	return (x + RESID_PAGE - 1) & ~(RESID_PAGE - 1);
}

static int add_chunk(struct resid_region *r, uint32_t i, uint64_t off,
		     uint64_t len)
{
	struct chunk *c = &r->chunks[i];

	c->off = off;
	c->len = page_up(len);
	c->hold = c->len;
	/* The backing may end inside the last chunk: the rest reads as zeros. */
	c->data_len = off >= r->backing_size ? 0 :
					       (off + len <= r->backing_size ?
							len :
							r->backing_size - off);
	c->state = CH_ABSENT;
	SEAM(r, mutex_init, &c->lock);
	if (c->len > r->max_chunk)
		r->max_chunk = c->len;
	return 0;
}

static int build_equal(struct resid_region *r, char *err, size_t n)
{
	uint64_t cs = r->cfg.chunk_size;

	if (cs == 0) {
		snprintf(err, n,
			 "chunk_size is 0 and there is no table: set "
			 "chunk_size (a multiple of 4096, e.g. 2 MiB) or table "
			 "and table_len");
		return -EINVAL;
	}
	if (cs % RESID_PAGE) {
		snprintf(err, n,
			 "chunk_size %" PRIu64 " is not a multiple of "
			 "4096: round it, e.g. to %" PRIu64,
			 cs, page_up(cs));
		return -EINVAL;
	}
	if (cs > r->cfg.region_len) {
		snprintf(err, n,
			 "chunk_size %" PRIu64 " is larger than "
			 "region_len (%" PRIu64 "): use a smaller chunk",
			 cs, r->cfg.region_len);
		return -EINVAL;
	}
	uint64_t count = (r->cfg.region_len + cs - 1) / cs;

	if (count > UINT32_MAX / 2) {
		snprintf(err, n,
			 "%" PRIu64 " chunks are too many: use a "
			 "larger chunk_size",
			 count);
		return -EINVAL;
	}
	r->nchunks = (uint32_t)count;
	r->chunks = calloc(r->nchunks, sizeof(*r->chunks));
	if (!r->chunks) {
		snprintf(err, n, "out of memory for %u chunks", r->nchunks);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < r->nchunks; i++) {
		uint64_t off = (uint64_t)i * cs;
		uint64_t len = off + cs <= r->cfg.region_len ?
				       cs :
				       r->cfg.region_len - off;

		add_chunk(r, i, off, len);
	}
	return 0;
}

/* Entry i of the table, against the end of the one before it. */
static int table_entry_ok(const struct resid_region *r, uint32_t i,
			  uint64_t expect, char *err, size_t n)
{
	const struct resid_chunk_spec *t = &r->cfg.table[i];
	const char *what = NULL;

	if (t->off < expect)
		what = "overlaps the entry before it";
	else if (t->off > expect)
		what = "leaves a gap after the entry before it: entries must "
		       "be contiguous";
	else if (t->len == 0)
		what = "is empty";
	else if (t->off % RESID_PAGE)
		what = "does not start on a 4096-byte boundary";
	else if (t->len % RESID_PAGE && i + 1 != r->cfg.table_len)
		what = "has a length that is not a multiple of 4096 (only the "
		       "last entry may end unaligned)";
	if (!what)
		return 1;
	snprintf(err, n,
		 "table[%u] (off %" PRIu64 ", len %" PRIu64 ") %s; "
		 "expected off %" PRIu64,
		 i, t->off, t->len, what, expect);
	return 0;
}

static int build_table(struct resid_region *r, char *err, size_t n)
{
	const struct resid_chunk_spec *t = r->cfg.table;
	uint64_t expect = 0;

	/* Order first: an unsorted table also shows gaps and overlaps. */
	for (uint32_t i = 1; i < r->cfg.table_len; i++) {
		if (t[i].off < t[i - 1].off) {
			snprintf(err, n,
				 "table[%u] (off %" PRIu64 ") is out "
				 "of order after off %" PRIu64 ": sort the "
				 "table by offset",
				 i, t[i].off, t[i - 1].off);
			return -EINVAL;
		}
	}
	for (uint32_t i = 0; i < r->cfg.table_len; i++) {
		if (!table_entry_ok(r, i, expect, err, n))
			return -EINVAL;
		expect += t[i].len;
	}
	if (expect != r->cfg.region_len) {
		snprintf(err, n,
			 "table covers %" PRIu64 " bytes but "
			 "region_len is %" PRIu64 ": make them equal",
			 expect, r->cfg.region_len);
		return -EINVAL;
	}
	r->nchunks = r->cfg.table_len;
	r->chunks = calloc(r->nchunks, sizeof(*r->chunks));
	if (!r->chunks) {
		snprintf(err, n, "out of memory for %u chunks", r->nchunks);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < r->nchunks; i++)
		add_chunk(r, i, t[i].off, t[i].len);
	return 0;
}

int chunks_build(struct resid_region *r, char *err, size_t n)
{
	if (!r->cfg.table != !r->cfg.table_len) {
		snprintf(err, n,
			 "table is %s but table_len is %u: pass both "
			 "(a table of table_len entries), or NULL and 0 with "
			 "chunk_size",
			 r->cfg.table ? "set" : "NULL", r->cfg.table_len);
		return -EINVAL;
	}
	if (r->cfg.table) {
		if (r->cfg.chunk_size) {
			snprintf(err, n,
				 "both chunk_size and table are set: "
				 "set one, chunk_size 0 with a table");
			return -EINVAL;
		}
		return build_table(r, err, n);
	}
	return build_equal(r, err, n);
}

uint32_t chunks_find(const struct resid_region *r, uint64_t off)
{
	uint32_t lo = 0, hi = r->nchunks;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->chunks[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void chunk_lock(struct resid_region *r, struct chunk *c)
{
	SEAM(r, lock, &c->lock);
	c->locked = 1;
}

int chunk_trylock(struct resid_region *r, struct chunk *c)
{
	if (SEAM(r, trylock, &c->lock))
		return 0;
	c->locked = 1;
	return 1;
}

void chunk_unlock(struct resid_region *r, struct chunk *c)
{
	c->locked = 0;
	SEAM(r, unlock, &c->lock);
}

/* A state change is a point where another thread may run: the simulated
 * scheduler interleaves here (a no-op on the kernel). */
void chunk_set_state(struct resid_region *r, struct chunk *c, int state)
{
	INV_ASSERT(inv_locked((uint32_t)(c - r->chunks), c->locked));
	SEAM(r, yield, "chunk-state");
	if (state == CH_ABSENT) {
		__atomic_store_n(&c->lazy, 0, __ATOMIC_RELAXED);
		c->lazy_failures = 0;
	}
	__atomic_store_n(&c->state, state, __ATOMIC_RELEASE);
}
