/* belady() against hand-worked examples and the naive oracle; the trace file
 * reader against round trips and every kind of bad file. */
#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/belady.h"
#include "analysis/belady_naive.h"
#include "analysis/trace.h"
#include "resid.h"
#include "tests/suites.h"

#define PAGE RESID_PAGE

static struct trace mk(enum trace_kind kind, uint32_t nchunks,
		       const uint64_t *sizes, const uint32_t *seq, uint64_t n)
{
	return (struct trace){ kind, nchunks, (uint64_t *)sizes,
			       (uint32_t *)seq, n };
}

/* Both solvers must give exactly `want`. */
static void expect(const struct trace *t, uint64_t cap,
		   struct belady_result want)
{
	struct belady_result fast = { 0 }, slow = { 0 };
	char err[256];

	CU_ASSERT_EQUAL_FATAL(belady(t, cap, &fast, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(belady_naive(t, cap, &slow, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(memcmp(&fast, &want, sizeof(want)), 0);
	CU_ASSERT_EQUAL(memcmp(&slow, &want, sizeof(want)), 0);
}

/* The textbook string (Silberschatz): OPT faults 9 times with 3 frames
 * and 8 times with 4. */
static void test_textbook(void)
{
	static const uint32_t seq[] = { 7, 0, 1, 2, 0, 3, 0, 4, 2, 3,
					0, 3, 2, 1, 2, 0, 1, 7, 0, 1 };
	static const uint64_t sz[8] = { PAGE, PAGE, PAGE, PAGE,
					PAGE, PAGE, PAGE, PAGE };
	struct trace t = mk(TRACE_REFERENCE, 8, sz, seq, 20);

	expect(&t, 3 * PAGE, (struct belady_result){ 20, 11, 9, 9 * PAGE });
	expect(&t, 4 * PAGE, (struct belady_result){ 20, 12, 8, 8 * PAGE });
	expect(&t, 3 * PAGE + 100,
	       (struct belady_result){ 20, 11, 9, 9 * PAGE });
}

/* Worked by hand in bytes. */
static void test_unequal(void)
{
	/* At 2 evict 0 (next at 4, after 1 at 3); at 4 evict 1 (never). */
	static const uint64_t a[] = { 2 * PAGE, PAGE, PAGE };
	static const uint32_t sa[] = { 0, 1, 2, 1, 0, 2 };
	/* At 2 the 8K chunk needs both 4K ones out; at 3, 2 goes. */
	static const uint64_t b[] = { PAGE, PAGE, 2 * PAGE };
	static const uint32_t sb[] = { 0, 1, 2, 0 };
	struct trace ta = mk(TRACE_REFERENCE, 3, a, sa, 6);
	struct trace tb = mk(TRACE_REFERENCE, 3, b, sb, 4);

	expect(&ta, 3 * PAGE, (struct belady_result){ 6, 2, 4, 6 * PAGE });
	expect(&tb, 2 * PAGE, (struct belady_result){ 4, 0, 4, 5 * PAGE });
}

/* W=3, K=2, P=3 by hand: misses at 0 1 2 4 6 8, one over the floor 5. */
static void test_cyclic_small(void)
{
	struct trace t = { 0 };

	CU_ASSERT_EQUAL_FATAL(belady_cyclic_trace(3, 3, PAGE, &t), 0);
	expect(&t, 2 * PAGE, (struct belady_result){ 9, 3, 6, 6 * PAGE });
	trace_free(&t);
}

static void test_cyclic_floor(void)
{
	struct belady_result r, s;
	uint32_t w, p, k;
	uint64_t floor, cap;
	struct trace t;
	char err[256];

	for (w = 1; w <= 12; w++) {
		for (p = 1; p <= 4; p++) {
			memset(&t, 0, sizeof(t));
			CU_ASSERT_EQUAL_FATAL(belady_cyclic_trace(w, p, PAGE,
								  &t),
					      0);
			for (k = 1; k <= w + 1; k++) {
				cap = (uint64_t)k * PAGE;
				CU_ASSERT_EQUAL_FATAL(belady(&t, cap, &r, err,
							     sizeof(err)),
						      0);
				CU_ASSERT_EQUAL_FATAL(belady_naive(&t, cap, &s,
								   err,
								   sizeof(err)),
						      0);
				floor = w +
					(uint64_t)(p - 1) * (k < w ? w - k : 0);
				CU_ASSERT(r.misses >= floor);
				CU_ASSERT_EQUAL(memcmp(&r, &s, sizeof(r)), 0);
				if (k >= w)
					CU_ASSERT_EQUAL(r.misses, w);
				if (k == 1 && w > 1)
					CU_ASSERT_EQUAL(r.misses,
							(uint64_t)w * p);
			}
			trace_free(&t);
		}
	}
}

static void random_vs_naive(int unequal, uint64_t seed)
{
	uint64_t rng = seed, cap, differ = 0, evicting = 0;
	struct belady_result r, s;
	struct trace t;
	char err[256];
	int i;

	for (i = 0; i < 300; i++) {
		memset(&t, 0, sizeof(t));
		CU_ASSERT_EQUAL_FATAL(belady_random_trace(&rng, 40, 2000,
							  unequal, &t, &cap),
				      0);
		CU_ASSERT_EQUAL_FATAL(belady(&t, cap, &r, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL_FATAL(belady_naive(&t, cap, &s, err,
						   sizeof(err)),
				      0);
		differ += memcmp(&r, &s, sizeof(r)) != 0;
		CU_ASSERT_EQUAL(r.hits + r.misses, t.n);
		evicting += r.misses > t.nchunks;
		trace_free(&t);
	}
	CU_ASSERT_EQUAL(differ, 0);
	/* The inputs must make the solvers evict, or they prove nothing. */
	CU_ASSERT(evicting > 50);
}

static void test_random_equal(void)
{
	random_vs_naive(0, 1);
}

static void test_random_unequal(void)
{
	random_vs_naive(1, 2);
}

/* bound <= exact <= furthest-next-use on small random traces; equal chunks
 * under a whole number of chunks: all three agree. */
static void bounds_vs_exact(int unequal, uint64_t seed)
{
	uint64_t rng = seed, cap, below = 0, above = 0, equal_cap = 0;
	struct belady_result fnu, lb, ex;
	struct trace t;
	char err[256];

	for (int i = 0; i < 400; i++) {
		memset(&t, 0, sizeof(t));
		CU_ASSERT_EQUAL_FATAL(belady_random_trace(&rng, 8, 40, unequal,
							  &t, &cap),
				      0);
		CU_ASSERT_EQUAL_FATAL(belady(&t, cap, &fnu, err, sizeof(err)),
				      0);
		CU_ASSERT_EQUAL_FATAL(belady_bound(&t, cap, &lb, err,
						   sizeof(err)),
				      0);
		CU_ASSERT_EQUAL_FATAL(belady_exact(&t, cap, &ex, err,
						   sizeof(err)),
				      0);
		CU_ASSERT(lb.bytes_missed <= ex.bytes_missed);
		CU_ASSERT(ex.bytes_missed <= fnu.bytes_missed);
		below += lb.bytes_missed < ex.bytes_missed;
		above += ex.bytes_missed < fnu.bytes_missed;
		if (!unequal && cap % t.sizes[0] == 0) {
			equal_cap++;
			CU_ASSERT_EQUAL(lb.bytes_missed, fnu.bytes_missed);
			CU_ASSERT_EQUAL(ex.bytes_missed, fnu.bytes_missed);
			CU_ASSERT_EQUAL(ex.misses, fnu.misses);
		}
		trace_free(&t);
	}
	/* Unequal chunks must show the gaps, or the test proves nothing. */
	CU_ASSERT(unequal ? below > 20 && above > 5 : equal_cap > 100);
}

static void test_bounds_equal(void)
{
	bounds_vs_exact(0, 3);
}

static void test_bounds_unequal(void)
{
	bounds_vs_exact(1, 4);
}

/* By hand, in pages: sizes 1, 2, 2 under 3, accesses 1 2 0 1 2 0.
 * Furthest-next-use evicts 0 and then 2 at the second 1 (10 pages); keeping
 * 0 and evicting only 2 there misses 9, the optimum; the bound, trimming a
 * page at a time off the furthest chunk, misses 8. */
static void test_bound_by_hand(void)
{
	static const uint64_t sz[] = { PAGE, 2 * PAGE, 2 * PAGE };
	static const uint32_t seq[] = { 1, 2, 0, 1, 2, 0 };
	struct trace t = mk(TRACE_REFERENCE, 3, sz, seq, 6);
	struct belady_result r;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(belady(&t, 3 * PAGE, &r, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(r.bytes_missed, 10 * PAGE);
	CU_ASSERT_EQUAL_FATAL(belady_exact(&t, 3 * PAGE, &r, err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL(r.bytes_missed, 9 * PAGE);
	CU_ASSERT_EQUAL(r.misses, 5);
	CU_ASSERT_EQUAL_FATAL(belady_bound(&t, 3 * PAGE, &r, err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL(r.bytes_missed, 8 * PAGE);
}

/* Both solvers refuse; belady()'s line contains `says`. */
static void refused(const struct trace *t, uint64_t cap, const char *says)
{
	struct belady_result r;
	char err[256] = "";

	CU_ASSERT_EQUAL(belady(t, cap, &r, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, says));
	CU_ASSERT_EQUAL(belady_naive(t, cap, &r, err, sizeof(err)), -1);
}

static void test_refusals(void)
{
	static const uint64_t sz[] = { PAGE, 2 * PAGE };
	static const uint64_t zero[] = { PAGE, 0 };
	static const uint32_t seq[] = { 0, 1, 0 };
	static const uint32_t far[] = { 0, 5 };
	struct trace fault = mk(TRACE_FAULT, 2, sz, seq, 3);
	struct trace ok = mk(TRACE_REFERENCE, 2, sz, seq, 3);
	struct trace range = mk(TRACE_REFERENCE, 2, sz, far, 2);
	struct trace empty = mk(TRACE_REFERENCE, 2, zero, seq, 3);

	refused(&fault, 4 * PAGE, "a fault trace is the pager's own output");
	refused(&ok, 2 * PAGE - 1, "give a capacity >= 8192");
	refused(&ok, 0, "capacity 0");
	refused(&range, 4 * PAGE, "names chunk 5");
	refused(&empty, 4 * PAGE, "chunk 1 has 0 bytes");
	/* The same accesses are fine as a reference trace. */
	expect(&ok, 2 * PAGE, (struct belady_result){ 3, 0, 3, 4 * PAGE });
}

static void test_empty_trace(void)
{
	static const uint64_t sz[] = { PAGE };
	struct trace t = mk(TRACE_REFERENCE, 1, sz, NULL, 0);

	expect(&t, PAGE, (struct belady_result){ 0, 0, 0, 0 });
}

void suite_belady(void)
{
	CU_pSuite s = CU_add_suite("belady", NULL, NULL);

	CU_add_test(s, "textbook string, 3 and 4 frames", test_textbook);
	CU_add_test(s, "unequal chunks by hand", test_unequal);
	CU_add_test(s, "cyclic W=3 K=2 P=3 by hand", test_cyclic_small);
	CU_add_test(s, "cyclic scans: floor, exact ends, naive",
		    test_cyclic_floor);
	CU_add_test(s, "300 random equal traces vs naive", test_random_equal);
	CU_add_test(s, "300 random unequal traces vs naive",
		    test_random_unequal);
	CU_add_test(s, "bound <= exact <= belady, equal chunks",
		    test_bounds_equal);
	CU_add_test(s, "bound <= exact <= belady, unequal chunks",
		    test_bounds_unequal);
	CU_add_test(s, "bound, exact and belady by hand", test_bound_by_hand);
	CU_add_test(s, "refusals", test_refusals);
	CU_add_test(s, "empty trace", test_empty_trace);
}

/* A temp file holding data[0..n); the name is left in path. */
static int tmp_file(char *path, size_t len, const void *data, size_t n)
{
	int fd;

	snprintf(path, len, "/tmp/residctl-test-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, data, n) != (ssize_t)n) {
		close(fd);
		unlink(path);
		return -1;
	}
	if (close(fd)) {
		unlink(path);
		return -1;
	}
	return 0;
}

/* Writes t, checks the file says `form`, reads it back identical. */
static void round_trip(const struct trace *t, const char *form)
{
	struct trace back;
	char path[64], err[256], text[256] = "";
	FILE *f;

	CU_ASSERT_EQUAL_FATAL(tmp_file(path, sizeof(path), "", 0), 0);
	CU_ASSERT_EQUAL(trace_write(path, t, err, sizeof(err)), 0);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT(fread(text, 1, sizeof(text) - 1, f) > 0);
	CU_ASSERT_EQUAL(fclose(f), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, form));
	CU_ASSERT_EQUAL(trace_read(path, &back, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(unlink(path), 0);
	CU_ASSERT_EQUAL(back.kind, t->kind);
	CU_ASSERT_EQUAL_FATAL(back.nchunks, t->nchunks);
	CU_ASSERT_EQUAL_FATAL(back.n, t->n);
	CU_ASSERT_EQUAL(memcmp(back.sizes, t->sizes,
			       t->nchunks * sizeof(*t->sizes)),
			0);
	CU_ASSERT(t->n == 0 ||
		  memcmp(back.seq, t->seq, t->n * sizeof(*t->seq)) == 0);
	trace_free(&back);
}

static void test_round_trip(void)
{
	static const uint64_t sz[] = { PAGE, 3 * PAGE, PAGE };
	static const uint32_t seq[] = { 2, 0, 1, 1, 0 };
	struct trace un = mk(TRACE_FAULT, 3, sz, seq, 5);
	struct trace none = mk(TRACE_REFERENCE, 3, sz, NULL, 0);
	struct trace t = { 0 };
	uint64_t rng = 3, cap;

	CU_ASSERT_EQUAL_FATAL(belady_random_trace(&rng, 40, 2000, 0, &t, &cap),
			      0);
	round_trip(&t, "residctl-trace 1 reference\nchunks ");
	trace_free(&t);
	CU_ASSERT_EQUAL_FATAL(belady_cyclic_trace(5, 2, 512 * PAGE, &t), 0);
	round_trip(&t, "chunk-size 2097152\naccesses 10\n0\n1\n");
	trace_free(&t);
	round_trip(&un,
		   "residctl-trace 1 fault\nchunks 3\nsize 0 4096\nsize 1 12288\nsize 2 4096\naccesses 5\n2\n0\n");
	round_trip(&none, "accesses 0\n");
}

struct bad_file {
	const char *text;
	size_t len;
	int line;
	const char *says;
};

#define H "residctl-trace 1 reference\n"
#define C "chunks 2\nchunk-size 4096\n"
#define BAD(text, line, says)                      \
	{                                          \
		text, sizeof(text) - 1, line, says \
	}

static const struct bad_file bad_files[] = {
	BAD("", 1, "truncated: the file ends where the header"),
	BAD("hello\n", 1, "not a residctl trace"),
	BAD("residctl-trace 2 reference\n" C "accesses 0\n", 1, "version 2"),
	BAD("residctl-trace 1 banana\n", 1, "kind 'banana'"),
	BAD("residctl-trace 1\n", 1, "bad header"),
	BAD("residctl-trace 1 reference\r\n", 1, "DOS file"),
	BAD(H, 2, "the 'chunks N' line was due"),
	BAD(H "chunks 0\n", 2, "chunks 0; give 1.."),
	BAD(H "chunks 99999999\n", 2, "chunks 99999999"),
	BAD(H "chunks x\n", 2, "expected 'chunks N'"),
	BAD(H "chunks 2 \n", 2, "expected 'chunks N'"),
	BAD(H "chu\0nks 2\n", 2, "NUL byte"),
	BAD(H "chunks 2\nchunk-size 0\n", 3, "chunk size 0;"),
	BAD(H "chunks 2\nchunk-size 1000\n", 3, "chunk size 1000;"),
	BAD(H "chunks 2\nchunk-size 4k\n", 3, "expected 'chunk-size BYTES'"),
	BAD(H "chunks 2\nsize 1 4096\n", 3, "chunk 1 where chunk 0 was due"),
	BAD(H "chunks 2\nsize 0 4096\naccesses 0\n", 4,
	    "expected 'size 1 BYTES'"),
	BAD(H "chunks 2\nsize 0 4096\nsize 1 4097\n", 4, "chunk size 4097;"),
	BAD(H "chunks 2\nsize 0 4096\n", 4, "a 'size ID BYTES' line was due"),
	BAD(H C "accesses -1\n", 4, "expected 'accesses N'"),
	BAD(H C "accesses 2\n0\n2\n", 6, "chunk id 2 out of range"),
	BAD(H C "accesses 2\n0\nabc\n", 6, "record 'abc' is not a chunk id"),
	BAD(H C "accesses 2\n-1\n0\n", 5, "record '-1'"),
	BAD(H C "accesses 2\n1 \n0\n", 5, "record '1 '"),
	BAD(H C "accesses 1\n99999999999999999999999\n", 5, "not a chunk id"),
	BAD(H C "accesses 3\n0\n1\n", 7, "record 3 of 3 was due"),
	BAD(H C "accesses 999999999\n0\n", 6, "record 2 of 999999999"),
	BAD(H C "accesses 2\n0\n1", 6, "no newline"),
	BAD(H C "accesses 1\n0\n1\n", 6, "more records than the 1 declared"),
};

static void test_bad_files(void)
{
	char path[64], err[256], where[80];
	struct trace t;
	size_t i;

	for (i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		const struct bad_file *b = &bad_files[i];

		CU_ASSERT_EQUAL_FATAL(tmp_file(path, sizeof(path), b->text,
					       b->len),
				      0);
		err[0] = '\0';
		CU_ASSERT_EQUAL(trace_read(path, &t, err, sizeof(err)), -1);
		CU_ASSERT_EQUAL(unlink(path), 0);
		snprintf(where, sizeof(where), "%s:%d: ", path, b->line);
		CU_ASSERT_EQUAL(strncmp(err, where, strlen(where)), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, b->says));
		CU_ASSERT(t.seq == NULL && t.sizes == NULL && t.n == 0);
		if (strncmp(err, where, strlen(where)) || !strstr(err, b->says))
			fprintf(stderr, "\n  case %zu: got '%s'\n", i, err);
	}
}

static void test_missing_file(void)
{
	const char *path = "/nonexistent/residctl-no-such-trace";
	struct trace t;
	char err[256] = "";

	CU_ASSERT_EQUAL(trace_read(path, &t, err, sizeof(err)), -1);
	CU_ASSERT_EQUAL(strncmp(err, path, strlen(path)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open"));
}

/* trace_write refuses what would not read back, and creates nothing. */
static void test_write_refuses(void)
{
	static const uint64_t sz[] = { PAGE, 100 };
	static const uint32_t seq[] = { 0, 2 };
	struct trace odd = mk(TRACE_REFERENCE, 2, sz, seq, 1);
	struct trace range = mk(TRACE_REFERENCE, 1, sz, seq, 2);
	char path[64], err[256] = "";

	CU_ASSERT_EQUAL_FATAL(tmp_file(path, sizeof(path), "", 0), 0);
	CU_ASSERT_EQUAL_FATAL(unlink(path), 0);
	CU_ASSERT_EQUAL(trace_write(path, &odd, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "chunk 1 size 100"));
	CU_ASSERT_EQUAL(trace_write(path, &range, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "names chunk 2"));
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
}

void suite_trace(void)
{
	CU_pSuite s = CU_add_suite("trace", NULL, NULL);

	CU_add_test(s, "round trip: equal, unequal, fault, empty",
		    test_round_trip);
	CU_add_test(s, "corrupt and truncated files", test_bad_files);
	CU_add_test(s, "missing file", test_missing_file);
	CU_add_test(s, "write refuses invalid traces", test_write_refuses);
}
