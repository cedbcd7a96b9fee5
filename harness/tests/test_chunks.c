/* Chunk table construction and lookup. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "internal.h"
#include "tests/suites.h"
#include "workload/unequal_table.h"

static struct resid_region *fake(uint64_t region, uint64_t chunk,
				 uint64_t backing)
{
	struct resid_region *r = calloc(1, sizeof(*r));

	resid_config_init(&r->cfg);
	r->cfg.region_len = region;
	r->cfg.chunk_size = chunk;
	r->seam = &resid_seam_linux;
	r->backing_size = backing;
	return r;
}

static void drop(struct resid_region *r)
{
	free(r->chunks);
	free(r);
}

static void equal_chunks_cover_region(void)
{
	char err[256];
	struct resid_region *r = fake(10 << 20, 4 << 20, 10 << 20);

	CU_ASSERT_EQUAL_FATAL(chunks_build(r, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(r->nchunks, 3);
	CU_ASSERT_EQUAL(r->chunks[2].off, 8 << 20);
	CU_ASSERT_EQUAL(r->chunks[2].len, 2 << 20);
	CU_ASSERT_EQUAL(r->max_chunk, 4 << 20);
	for (uint64_t off = 0; off < (10 << 20); off += 4096) {
		uint32_t i = chunks_find(r, off);

		CU_ASSERT_FATAL(off >= r->chunks[i].off &&
				off < r->chunks[i].off + r->chunks[i].len);
	}
	drop(r);
}

static void unaligned_tail_reads_zeros(void)
{
	char err[256];
	/* A 10000-byte file in 8 KiB chunks: the last chunk is one page
	 * holding 1808 bytes of data. */
	struct resid_region *r = fake(10000, 8192, 10000);

	CU_ASSERT_EQUAL_FATAL(chunks_build(r, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(r->nchunks, 2);
	CU_ASSERT_EQUAL(r->chunks[0].data_len, 8192);
	CU_ASSERT_EQUAL(r->chunks[1].len, 4096);
	CU_ASSERT_EQUAL(r->chunks[1].data_len, 1808);
	drop(r);
}

static void explicit_table(void)
{
	static const struct resid_chunk_spec t[] = {
		{ 0, 8192 },
		{ 8192, 1 << 20 },
		{ 8192 + (1 << 20), 4096 },
	};
	char err[256];
	struct resid_region *r = fake(8192 + (1 << 20) + 4096, 0, 1 << 30);

	r->cfg.table = t;
	r->cfg.table_len = 3;
	CU_ASSERT_EQUAL_FATAL(chunks_build(r, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(r->nchunks, 3);
	CU_ASSERT_EQUAL(r->max_chunk, 1 << 20);
	CU_ASSERT_EQUAL(chunks_find(r, 8191), 0);
	CU_ASSERT_EQUAL(chunks_find(r, 8192), 1);
	CU_ASSERT_EQUAL(chunks_find(r, 8192 + (1 << 20)), 2);
	drop(r);
}

static void bad_tables_refused(void)
{
	static const struct resid_chunk_spec gap[] = { { 0, 4096 },
						       { 8192, 4096 } };
	static const struct resid_chunk_spec odd[] = { { 0, 1000 },
						       { 1000, 3096 } };
	char err[256];
	struct resid_region *r;

	r = fake(8192, 0, 8192);
	r->cfg.table = gap;
	r->cfg.table_len = 2;
	CU_ASSERT(chunks_build(r, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "table[1]") != NULL);
	drop(r);
	r = fake(4096, 0, 4096);
	r->cfg.table = odd;
	r->cfg.table_len = 2;
	CU_ASSERT(chunks_build(r, err, sizeof(err)) < 0);
	drop(r);
	r = fake(8192, 3000, 8192);
	CU_ASSERT(chunks_build(r, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "4096") != NULL);
	drop(r);
	r = fake(8192, 16384, 8192);
	CU_ASSERT(chunks_build(r, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "larger than region_len") != NULL);
	drop(r);
}

/* The gate's unequal tables: page multiples in bounds, the last entry
 * taking the rest (unaligned when the region is), and the pager takes
 * them as they are, each chunk found at every one of its pages. */
static void unequal_tables_build(void)
{
	static struct resid_chunk_spec t[4096];
	char err[256];

	for (uint64_t seed = 1; seed <= 50; seed++) {
		uint64_t rng = seed, region = (16ull << 20) - seed * 97;
		uint32_t n = unequal_table(region, 512 << 10, 4 << 20, &rng, t,
					   4096);
		struct resid_region *r = fake(region, 0, region);
		uint64_t end = 0, max = 0;

		CU_ASSERT_FATAL(n >= 2);
		for (uint32_t i = 0; i < n; i++) {
			CU_ASSERT_EQUAL(t[i].off, end);
			if (i + 1 < n)
				CU_ASSERT(t[i].len % 4096 == 0 &&
					  t[i].len >= (512 << 10) &&
					  t[i].len <= (4 << 20));
			if (t[i].len > max)
				max = t[i].len;
			end += t[i].len;
		}
		CU_ASSERT_EQUAL(end, region);
		CU_ASSERT_EQUAL(unequal_largest(t, n), (max + 4095) & ~4095ull);
		r->cfg.table = t;
		r->cfg.table_len = n;
		CU_ASSERT_EQUAL_FATAL(chunks_build(r, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(r->chunks[n - 1].data_len, t[n - 1].len);
		for (uint32_t i = 0; i < n; i++)
			for (uint64_t o = t[i].off; o < t[i].off + t[i].len;
			     o += 4096)
				CU_ASSERT_EQUAL(chunks_find(r, o), i);
		drop(r);
	}
}

static void ring_keeps_order(void)
{
	struct ring q;

	CU_ASSERT_EQUAL_FATAL(ring_init(&q, 4), 0);
	for (uint32_t i = 0; i < 4; i++)
		ring_push(&q, i);
	CU_ASSERT_EQUAL(ring_pop(&q), 0);
	ring_push(&q, 9);
	CU_ASSERT(ring_remove(&q, 2));
	CU_ASSERT(!ring_remove(&q, 2));
	CU_ASSERT_EQUAL(ring_pop(&q), 1);
	CU_ASSERT_EQUAL(ring_pop(&q), 3);
	CU_ASSERT_EQUAL(ring_pop(&q), 9);
	CU_ASSERT_EQUAL(q.count, 0);
	ring_free(&q);
}

void suite_chunks(void)
{
	CU_pSuite s = CU_add_suite("chunks", NULL, NULL);

	CU_add_test(s, "equal chunks cover the region",
		    equal_chunks_cover_region);
	CU_add_test(s, "unaligned tail", unaligned_tail_reads_zeros);
	CU_add_test(s, "explicit table", explicit_table);
	CU_add_test(s, "bad tables refused", bad_tables_refused);
	CU_add_test(s, "ring keeps order", ring_keeps_order);
	CU_add_test(s, "unequal tables build", unequal_tables_build);
}
