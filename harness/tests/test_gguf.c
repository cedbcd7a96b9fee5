/* harness/bench/gguf.c: the models of `bench mkgguf` are the same bytes for
 * the same seed (a pinned hash of the tiny preset), their header reads back
 * as written, the quant blocks hold what llama.cpp's decoding expects, and
 * the reader refuses malformed files naming the byte. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/gguf.h"
#include "tests/suites.h"

/* FNV-1a 64 of the tiny preset at seed 1 (q8_0), as first written; a
 * change to the writer that changes a byte changes it. */
#define TINY_SEED1_FNV 0x4eb89ad80bd2951dull

static char path[4096];

/* Writes the tiny preset into a fresh temp path; its size. */
static uint64_t write_tiny(enum gguf_quant q, uint64_t seed)
{
	const char *dir = getenv("TMPDIR");
	struct gguf_model m;
	uint64_t size = 0;
	char err[600];
	int fd;

	snprintf(path, sizeof(path), "%s/residctl-gguf-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(gguf_preset("tiny", q, seed, &m), 0);
	if (gguf_write(path, &m, &size, err, sizeof(err))) {
		fprintf(stderr, "gguf_write: %s\n", err);
		CU_FAIL_FATAL("gguf_write failed");
	}
	return size;
}

static uint8_t *slurp(uint64_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *p;

	CU_ASSERT_FATAL(f && !fstat(fileno(f), &st));
	*len = (uint64_t)st.st_size;
	p = malloc(*len);
	CU_ASSERT_FATAL(p && fread(p, 1, *len, f) == *len);
	fclose(f);
	return p;
}

static uint64_t fnv(const uint8_t *p, uint64_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void test_same_bytes(void)
{
	uint64_t size = write_tiny(GGUF_Q8_0, 1), len, h1, h2;
	uint8_t *p = slurp(&len);

	CU_ASSERT_EQUAL(len, size);
	CU_ASSERT(len <= 32u << 20);
	h1 = fnv(p, len);
	if (h1 != TINY_SEED1_FNV)
		fprintf(stderr,
			"tiny seed 1: FNV-1a 64 %016llx, pinned %016llx\n",
			(unsigned long long)h1,
			(unsigned long long)TINY_SEED1_FNV);
	CU_ASSERT_EQUAL(h1, TINY_SEED1_FNV);
	free(p);
	unlink(path);
	write_tiny(GGUF_Q8_0, 2);
	p = slurp(&len);
	h2 = fnv(p, len);
	CU_ASSERT_EQUAL(len, size); /* the seed moves weights, not shapes */
	CU_ASSERT_NOT_EQUAL(h2, h1);
	free(p);
	unlink(path);
}

/* The header as written: 4 blocks of 12 tensors and 3 more, 21 keys, the
 * tensors ending where the file ends. */
static void header_ok(enum gguf_quant q)
{
	uint64_t size = write_tiny(q, 7);
	struct gguf_info info;
	char err[600];

	if (gguf_read_info(path, &info, err, sizeof(err))) {
		fprintf(stderr, "gguf_read_info: %s\n", err);
		CU_FAIL("the tiny model's header does not read back");
	} else {
		CU_ASSERT_EQUAL(info.version, 3);
		CU_ASSERT_EQUAL(info.n_tensors, 4 * 12 + 3);
		CU_ASSERT_EQUAL(info.n_kv, 21);
		CU_ASSERT_EQUAL(info.alignment, 32);
		CU_ASSERT_STRING_EQUAL(info.arch, "qwen2");
		CU_ASSERT_EQUAL(info.data_offset % 32, 0);
		CU_ASSERT_EQUAL(info.data_end, size);
		/* llama.cpp counts the same parameters (docs/engine.md) */
		CU_ASSERT_EQUAL(info.n_params, 16260608);
	}
	unlink(path);
}

static void test_header_q8_0(void)
{
	header_ok(GGUF_Q8_0);
}
static void test_header_q4km(void)
{
	header_ok(GGUF_Q4_KM);
}

static uint16_t u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* The first block of token_embd (rows of 512): Q8_0's scale is 2^-11
 * (1/sqrt(512)/73.6 rounded to a power of two) and no quant is -128;
 * Q4_K's d is 2^-12, dmin 7.5 x 2^-12, and its scales and mins, unpacked
 * as ggml unpacks them, are equal and in 32..63. */
static void test_blocks(void)
{
	struct gguf_info info;
	uint64_t len;
	uint8_t *p, *b;
	char err[600];

	write_tiny(GGUF_Q8_0, 1);
	CU_ASSERT_EQUAL_FATAL(gguf_read_info(path, &info, err, sizeof(err)), 0);
	p = slurp(&len);
	b = p + info.data_offset;
	CU_ASSERT_EQUAL(u16(b), 0x1000); /* half 2^-11 */
	for (int i = 0; i < 32; i++)
		CU_ASSERT_NOT_EQUAL(b[2 + i], 0x80);
	free(p);
	unlink(path);

	write_tiny(GGUF_Q4_KM, 1);
	CU_ASSERT_EQUAL_FATAL(gguf_read_info(path, &info, err, sizeof(err)), 0);
	p = slurp(&len);
	b = p + info.data_offset;
	CU_ASSERT_EQUAL(u16(b), 0x0c00);     /* half 2^-12 */
	CU_ASSERT_EQUAL(u16(b + 2), 0x1780); /* half 1.875 x 2^-10 */
	for (int j = 0; j < 8; j++) {
		const uint8_t *q = b + 4;
		int sc, mn;

		if (j < 4) {
			sc = q[j] & 63;
			mn = q[j + 4] & 63;
		} else {
			sc = (q[j + 4] & 15) | (q[j - 4] >> 6) << 4;
			mn = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
		}
		CU_ASSERT(sc >= 32 && sc <= 63);
		CU_ASSERT_EQUAL(mn, sc);
	}
	free(p);
	unlink(path);
}

/* A copy of the tiny file with len bytes, byte at `at` set to v (at <
 * len), must be refused with a line naming `want`. */
static void refused(const uint8_t *orig, uint64_t len, uint64_t at, int v,
		    const char *want)
{
	struct gguf_info info;
	char err[600] = "";
	FILE *f = fopen(path, "wb");

	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_FATAL(fwrite(orig, 1, len, f) == len);
	if (v >= 0) {
		fseek(f, (long)at, SEEK_SET);
		fputc(v, f);
	}
	fclose(f);
	CU_ASSERT_EQUAL(gguf_read_info(path, &info, err, sizeof(err)), -1);
	if (!strstr(err, want) || !strstr(err, path)) {
		fprintf(stderr, "want '%s' in: %s\n", want, err);
		CU_FAIL("the refusal does not say what and where");
	}
}

static void test_malformed(void)
{
	struct gguf_info info;
	uint64_t len;
	uint8_t *p;
	char err[600];

	write_tiny(GGUF_Q8_0, 1);
	CU_ASSERT_EQUAL_FATAL(gguf_read_info(path, &info, err, sizeof(err)), 0);
	p = slurp(&len);
	refused(p, len, 0, 'X', "byte 4: no GGUF magic");
	refused(p, len, 4, 2, "version 2");
	refused(p, 1000, 0, -1, "truncated");    /* inside the vocabulary */
	refused(p, len - 1, 0, -1, "truncated"); /* the last tensor cut */
	/* The first tensor info: name "token_embd.weight" (8 + 17 bytes),
	 * 2 dimensions, 512, 4096, type, offset 0: the offset's low byte
	 * set to 1 misaligns it. */
	const char *name = "token_embd.weight";
	uint8_t *at = memmem(p, len, name, strlen(name));

	CU_ASSERT_FATAL(at != NULL);
	uint64_t off = (uint64_t)(at - p) + strlen(name) + 4 + 16 + 4;

	refused(p, len, off, 1, "not aligned");
	refused(p, len, off - 4, 99, "type 99");
	free(p);
	unlink(path);
}

void suite_gguf(void)
{
	CU_pSuite s = CU_add_suite("gguf", NULL, NULL);

	CU_add_test(s, "tiny, seed 1: the same bytes (pinned FNV-1a 64)",
		    test_same_bytes);
	CU_add_test(s, "q8_0 header reads back as written", test_header_q8_0);
	CU_add_test(s, "q4km header reads back as written", test_header_q4km);
	CU_add_test(s, "Q8_0 and Q4_K blocks as ggml decodes them",
		    test_blocks);
	CU_add_test(s, "malformed files refused, naming the byte",
		    test_malformed);
}
