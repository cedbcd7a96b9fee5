/* harness/workload/layout.c and safetensors.c: text tables, safetensors headers
 * (hand-written and the bench's synthetic model), the chunk table derived
 * from layers that straddle pages, and every kind of malformed file refused
 * with one line naming where and the fix. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/decode.h"
#include "bench/mkmodel.h"
#include "tests/suites.h"
#include "workload/layout.h"
#include "workload/read_order.h"

static char path[4096];

/* A fresh temp file holding len bytes of data. */
static const char *put(const void *data, size_t len)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, sizeof(path), "%s/residctl-layout-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(write(fd, data, len) == (ssize_t)len);
	CU_ASSERT_FATAL(close(fd) == 0);
	return path;
}

static const char *put_text(const char *text)
{
	return put(text, strlen(text));
}

/* Reads a text table that must be accepted; the temp file is removed. */
static void read_ok(const char *text, struct layout *l)
{
	char err[512];
	int rc;

	put_text(text);
	rc = layout_read(path, l, err, sizeof(err));
	unlink(path);
	if (rc)
		fprintf(stderr, "\n  refused: %s\n", err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
}

/* A safetensors file: the 8-byte length, the header, data_len bytes. */
static const char *put_st(const char *json, size_t data_len)
{
	size_t hlen = strlen(json);
	unsigned char *b = calloc(1, 8 + hlen + data_len);

	CU_ASSERT_FATAL(b != NULL);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(hlen >> (8 * i));
	memcpy(b + 8, json, hlen);
	put(b, 8 + hlen + data_len);
	free(b);
	return path;
}

/* Chunks are page-aligned, contiguous from 0 to the region's end, each
 * layer's first byte in its own chunk and its last in that or the next. */
static void check_derived(const struct layout *l)
{
	uint64_t at = 0;

	CU_ASSERT_FATAL(l->nchunks >= 1 && l->nchunks <= l->nlayers);
	for (uint32_t c = 0; c < l->nchunks; c++) {
		CU_ASSERT_EQUAL(l->chunks[c].off, at);
		CU_ASSERT(l->chunks[c].off % RESID_PAGE == 0);
		CU_ASSERT(l->chunks[c].len > 0);
		CU_ASSERT(c + 1 == l->nchunks ||
			  l->chunks[c].len % RESID_PAGE == 0);
		at += l->chunks[c].len;
	}
	CU_ASSERT_EQUAL(at, l->region_len);
	for (uint32_t i = 0; i < l->nlayers; i++) {
		const struct layout_layer *y = &l->layers[i];
		const struct resid_chunk_spec *c = &l->chunks[y->chunk];
		uint32_t e = layout_last_chunk(l, i);
		uint64_t last = y->off + y->len - 1;

		CU_ASSERT(y->off >= c->off && y->off < c->off + c->len);
		CU_ASSERT(e == y->chunk || e == y->chunk + 1);
		CU_ASSERT(last >= l->chunks[e].off &&
			  last < l->chunks[e].off + l->chunks[e].len);
	}
}

static void test_text_table(void)
{
	struct layout l;

	/* Comments, hex, blank lines, CR, tabs; layers 1 and 2 start in the
	 * same page (one chunk), layer 3 in the next. */
	read_ok("# a layer table\n0x10 100\n5000\t3000 # two\r\n\n8100 50\n9000 20000",
		&l);
	CU_ASSERT_EQUAL(l.nlayers, 4);
	CU_ASSERT_EQUAL(l.nchunks, 3);
	CU_ASSERT_EQUAL(l.region_len, 29000);
	CU_ASSERT_EQUAL(l.layers[0].off, 16);
	CU_ASSERT_EQUAL(l.layers[0].chunk, 0);
	CU_ASSERT_EQUAL(l.layers[1].chunk, 1);
	CU_ASSERT_EQUAL(l.layers[2].chunk, 1);
	CU_ASSERT_EQUAL(l.layers[3].chunk, 2);
	CU_ASSERT_EQUAL(l.chunks[1].off, 4096);
	CU_ASSERT_EQUAL(l.chunks[2].off, 8192);
	CU_ASSERT_EQUAL(l.chunks[2].len, 29000 - 8192);
	check_derived(&l);
	layout_free(&l);
}

/* A layer that ends inside the first page of the next layer's chunk. */
static void test_straddle(void)
{
	struct layout l;

	read_ok("0 5000\n6000 100\n", &l);
	CU_ASSERT_EQUAL(l.nchunks, 2);
	CU_ASSERT_EQUAL(l.chunks[0].len, 4096);
	CU_ASSERT_EQUAL(l.chunks[1].len, 6100 - 4096);
	CU_ASSERT_EQUAL(layout_last_chunk(&l, 0), 1);
	CU_ASSERT_EQUAL(layout_last_chunk(&l, 1), 1);
	check_derived(&l);
	layout_free(&l);
}

/* Refused, with err naming `says`, and the layout left empty. */
static void refused(const char *p, const char *says)
{
	struct layout l;
	char err[512];

	memset(&l, 0xab, sizeof(l));
	CU_ASSERT_EQUAL(layout_read(p, &l, err, sizeof(err)), -1);
	CU_ASSERT(l.layers == NULL && l.chunks == NULL && l.nlayers == 0);
	if (!strstr(err, says) || strchr(err, '\n'))
		fprintf(stderr, "\n  expected '%s' in: %s\n", says, err);
	CU_ASSERT(strstr(err, says) != NULL);
	CU_ASSERT(strchr(err, '\n') == NULL);
	unlink(p);
}

static void test_text_malformed(void)
{
	refused(put_text("0 10\n20\n"), ":2: 1 field, not 2");
	refused(put_text("0 10 30\n"), ":1: more than 2 fields");
	refused(put_text("12x 10\n"), ":1: bad offset '12x'");
	refused(put_text("0 -1\n"), ":1: bad length '-1'");
	refused(put_text("0x 10\n"), "bad offset '0x'");
	refused(put_text("0 0x1g\n"), "bad length '0x1g'");
	refused(put_text("0 99999999999999999999\n"), "bad length");
	refused(put_text("0 0\n"), "line 1: length 0");
	refused(put_text("0 100\n50 100\n"),
		"line 2: offset 50 is before the end of the previous layer (100)");
	refused(put_text("0xffffffffffffffff 2\n"), "overflows 64 bits");
	refused(put_text(""), "no layers");
	refused(put_text("# only a comment\n\n"), "no layers");
	refused("/nonexistent/residctl-layout", "cannot open the layout");
}

/* Tensors out of order in the header, metadata, escapes, zero-size
 * tensors; layers 1 and 10 kept apart; others one layer each. Data starts
 * at 8 + header length, so every offset is shifted by it. */
static void test_safetensors(void)
{
	static const char json[] =
		"{\"__metadata__\": {\"format\": \"pt\", \"nested\": {\"a\": [1, 2.5e3, true, null]}},"
		" \"model.layers.10.mlp.w\": {\"dtype\": \"F16\", \"shape\": [3000], \"data_offsets\": [13000, 19000]},"
		" \"model.embed_tokens.weight\": {\"shape\": [2, 50], \"dtype\": \"F32\", \"data_offsets\": [0, 400]},"
		" \"model.layers.1.attn.q\": {\"dtype\": \"BF16\", \"shape\": [1000, 3], \"data_offsets\": [400, 6400]},"
		" \"model.layers.1.attn.k\\u00e9\\n\": {\"dtype\": \"I8\", \"shape\": [6600], \"data_offsets\": [6400, 13000]},"
		" \"empty\": {\"dtype\": \"F16\", \"shape\": [0, 4], \"data_offsets\": [19000, 19000]},"
		" \"lm_head.weight\": {\"dtype\": \"U8\", \"shape\": [5000], \"data_offsets\": [19000, 24000]}}";
	const uint64_t base = 8 + strlen(json);
	struct layout l;
	char err[512];

	put_st(json, 24000);
	CU_ASSERT_EQUAL_FATAL(layout_read(path, &l, err, sizeof(err)), 0);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(l.nlayers, 4);
	CU_ASSERT_EQUAL(l.layers[0].off, base); /* embed */
	CU_ASSERT_EQUAL(l.layers[0].len, 400);
	CU_ASSERT_EQUAL(l.layers[1].off, base + 400); /* layer 1: q and k */
	CU_ASSERT_EQUAL(l.layers[1].len, 12600);
	CU_ASSERT_EQUAL(l.layers[2].off, base + 13000); /* layer 10 */
	CU_ASSERT_EQUAL(l.layers[3].off, base + 19000); /* lm_head */
	CU_ASSERT_EQUAL(l.region_len, base + 24000);
	CU_ASSERT_EQUAL(l.layers[0].chunk, 0); /* the header goes with it */
	check_derived(&l);
	layout_free(&l);
}

static void test_safetensors_malformed(void)
{
	static const char ok_tensor[] =
		"{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}";
	unsigned char b[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f };
	char json[512];

	refused(put(b, 16), "is over 100 MiB");
	b[0] = 200, memset(b + 1, 0, 7);
	refused(put(b, 16), "runs past the end of the file");
	b[0] = 1;
	refused(put(b, 16), "too short");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}",
		       4),
		"expected ',' or '}' after a tensor");
	refused(put_st("[1, 2]", 0), "expected '{' opening the header");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[2]}}", 4),
		"tensor 'a' has no data_offsets");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"data_offsets\":[0,4]}}",
		       4),
		"tensor 'a' has no shape");
	refused(put_st("{\"a\": {\"shape\":[2],\"data_offsets\":[0,4]}}", 4),
		"tensor 'a' has no dtype");
	refused(put_st("{\"a\": {\"dtype\":\"F17\",\"shape\":[2],\"data_offsets\":[0,4]}}",
		       4),
		"unknown dtype 'F17'");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,4]}}",
		       4),
		"is not the 4 bytes");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}",
		       3),
		"not within the 3 data bytes");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[4,0]}}",
		       4),
		"not within");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4.5]}}",
		       8),
		"not whole");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[-2],\"data_offsets\":[0,4]}}",
		       4),
		"expected a non-negative integer");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}} x",
		       4),
		"bytes after the header's object");
	refused(put_st("{\"a\\q\": {}}", 4), "bad escape");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}, \"b\": {\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[2,6]}}",
		       8),
		"tensors 'a' and 'b' overlap");
	refused(put_st("{}", 4), "no layers");
	snprintf(json, sizeof(json),
		 "{\"__metadata__\": {\"x\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}, \"a\": %s}",
		 ok_tensor);
	refused(put_st(json, 4), "nested deeper");
	refused(put_st("{\"a\": {\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]",
		       4),
		"expected ',' or '}' in a tensor");
	refused(put_st("{\"a", 4), "runs past the end of the header");
}

/* The bench's synthetic model: a header padded to 8 bytes, tensors packed
 * back to back, so layers straddle pages; 1 + 3 + 2 layers. */
static void test_synthetic_model(void)
{
	struct mkmodel m = {
		.layers = 3, .hidden = 200, .ffn = 300, .vocab = 100, .seed = 5
	};
	struct layout l;
	uint64_t size, straddle = 0;
	char err[512];

	put_text("");
	CU_ASSERT_EQUAL_FATAL(mkmodel_write(path, &m, &size, err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL_FATAL(layout_read(path, &l, err, sizeof(err)), 0);
	unlink(path);
	CU_ASSERT_EQUAL(l.nlayers, 6);
	CU_ASSERT_EQUAL(l.region_len, size);
	/* A layer: 2 norms of 400 bytes, q and o 80000, k and v 20000, gate,
	 * up and down 120000: 560800 bytes. */
	CU_ASSERT_EQUAL(l.layers[1].len, 560800);
	CU_ASSERT_EQUAL(l.layers[0].len, 2 * 100 * 200);
	CU_ASSERT_EQUAL(l.layers[5].len, 2 * 100 * 200);
	for (uint32_t i = 0; i < l.nlayers; i++)
		straddle += layout_last_chunk(&l, i) != l.layers[i].chunk;
	CU_ASSERT(straddle >= 3);
	check_derived(&l);
	layout_free(&l);
}

/* The bench's scan over a layout of unaligned layers: its reference trace
 * enters each chunk once per pass, in order, and every byte is checked,
 * also in the partial words at a layer's ends. */
static void test_scan_trace(void)
{
	struct layout l;
	uint32_t trace[3 * 2 * 4];
	uint8_t *buf;
	char err[512];
	struct scan s = { .passes = 3, .threads = 2, .seed = 9, .trace = trace };

	read_ok("0x100 4000\n5200 3\n0x1454 70000\n75500 12345\n", &l);
	CU_ASSERT_EQUAL_FATAL(l.nchunks, 3);
	buf = malloc(l.region_len);
	CU_ASSERT_FATAL(buf != NULL);
	resid_content_fill(buf, 0, l.region_len, 9);
	s.base = buf;
	s.lay = &l;
	CU_ASSERT_EQUAL_FATAL(scan_run(&s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(s.mismatches, 0);
	CU_ASSERT_EQUAL(s.accesses, 9);
	for (uint64_t i = 0; i < s.accesses; i++)
		CU_ASSERT_EQUAL(trace[i], i % 3);
	/* One wrong byte in the partial last word of layer 1 (5200..5203),
	 * none in the bytes no layer covers. */
	buf[5202] ^= 1;
	buf[5000] ^= 1;
	CU_ASSERT_EQUAL(scan_run(&s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(s.mismatches, 3); /* once a pass */
	free(buf);
	layout_free(&l);
}

/* The decode workload on an F32 model: the outputs of a scan by one or two
 * threads match the reference computed from pread of the file, and one
 * flipped bit of one weight (its lowest) is a wrong output once a pass. */
static void test_decode_outputs(void)
{
	struct mkmodel m = { .layers = 2,
			     .hidden = 96,
			     .ffn = 200,
			     .vocab = 50,
			     .seed = 3,
			     .f32 = 1 };
	uint32_t trace[3 * 2 * 5], cols = 70;
	uint64_t size, ref[5];
	float x[70], w;
	struct layout l;
	struct decode_job dec = { cols, x, ref };
	struct scan s = { .passes = 3, .trace = trace, .dec = &dec };
	char err[512];
	uint8_t *buf;
	FILE *f;

	put_text("");
	CU_ASSERT_EQUAL_FATAL(mkmodel_write(path, &m, &size, err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL_FATAL(layout_read(path, &l, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(l.nlayers, 5);
	decode_x(x, cols);
	CU_ASSERT_EQUAL_FATAL(decode_reference(path, &l, cols, x, ref, err,
					       sizeof(err)),
			      0);
	buf = malloc(size);
	f = fopen(path, "rb");
	CU_ASSERT_FATAL(buf && f && fread(buf, 1, size, f) == size);
	fclose(f);
	unlink(path);
	for (uint64_t i = l.layers[0].off; i < size; i += 4) {
		memcpy(&w, buf + i, 4);
		CU_ASSERT(w >= -0.5f && w < 0.5f);
	}
	for (uint32_t j = 0; j < cols; j++)
		CU_ASSERT(x[j] != 0);
	s.base = buf;
	s.lay = &l;
	for (s.threads = 1; s.threads <= 2; s.threads++) {
		CU_ASSERT_EQUAL(scan_run(&s, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(s.mismatches, 0);
	}
	buf[l.layers[2].off + 4 * 1001] ^= 1;
	CU_ASSERT_EQUAL(scan_run(&s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(s.mismatches, 3);
	free(buf);
	layout_free(&l);
}

/* The read order of a decoder's file cut for a budget: with a head of its
 * own, the embedding table (read a row a token) is cut into pieces of the
 * rows size and left out of the order; tied (no head), the table is the
 * head, read whole and last. */
static void order_of(int tied, struct read_order *o)
{
	static const char *const t[] = {
		"\"model.embed_tokens.weight\": {\"dtype\": \"F32\", \"shape\": [20480], \"data_offsets\": [0, 81920]}",
		"\"model.layers.0.w\": {\"dtype\": \"F32\", \"shape\": [2048], \"data_offsets\": [81920, 90112]}",
		"\"model.layers.1.w\": {\"dtype\": \"F32\", \"shape\": [2048], \"data_offsets\": [90112, 98304]}",
		"\"model.norm.weight\": {\"dtype\": \"F32\", \"shape\": [1024], \"data_offsets\": [98304, 102400]}",
		"\"lm_head.weight\": {\"dtype\": \"F32\", \"shape\": [6144], \"data_offsets\": [102400, 126976]}",
	};
	char json[1024], err[512];
	uint64_t size;
	int rc;

	snprintf(json, sizeof(json), "{%s, %s, %s, %s%s%s}", t[0], t[1], t[2],
		 t[3], tied ? "" : ", ", tied ? "" : t[4]);
	size = 8 + strlen(json) + (tied ? 102400 : 126976);
	put_st(json, size - 8 - strlen(json));
	rc = read_order_make(path, size, NULL, 0, o, err, sizeof(err));
	unlink(path);
	if (rc)
		fprintf(stderr, "\n  refused: %s\n", err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(o->source, "safetensors");
	CU_ASSERT_EQUAL_FATAL(read_order_split(o, 16384, 8192, err,
					       sizeof(err)),
			      0);
}

static void test_read_order_rows(void)
{
	static const uint32_t untied[] = { 10, 11, 12, 13, 14 };
	static const uint32_t tied[] = { 5, 6, 7, 0, 1, 2, 3, 4 };
	struct read_order o;

	order_of(0, &o);
	CU_ASSERT_EQUAL(o.lay.nchunks, 15);
	CU_ASSERT_EQUAL(o.lay.chunks[9].off, 9 * 8192);
	CU_ASSERT_EQUAL(o.lay.chunks[9].len, 8192);
	CU_ASSERT_EQUAL_FATAL(o.nseq, 5);
	CU_ASSERT_EQUAL(memcmp(o.seq, untied, sizeof(untied)), 0);
	CU_ASSERT_EQUAL(o.largest, 16384);
	read_order_free(&o);
	order_of(1, &o);
	CU_ASSERT_EQUAL(o.lay.nchunks, 8);
	CU_ASSERT_EQUAL(o.lay.chunks[4].len, 16384);
	CU_ASSERT_EQUAL_FATAL(o.nseq, 8);
	CU_ASSERT_EQUAL(memcmp(o.seq, tied, sizeof(tied)), 0);
	read_order_free(&o);
}

/* Aligned to 16 KiB folios: starts that meet make one chunk, in the order
 * where the first of them was; the rows' pieces stay out of it. */
static void test_read_order_align(void)
{
	static const uint32_t seq[] = { 5, 6, 7 };
	struct read_order o;
	char err[256];

	order_of(0, &o);
	CU_ASSERT_EQUAL_FATAL(read_order_align(&o, 16384, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(o.lay.nchunks, 8);
	for (uint32_t c = 0; c < o.lay.nchunks; c++)
		CU_ASSERT_EQUAL(o.lay.chunks[c].off, c * 16384);
	CU_ASSERT_EQUAL(o.lay.chunks[7].off + o.lay.chunks[7].len,
			o.lay.region_len);
	CU_ASSERT_EQUAL_FATAL(o.nseq, 3);
	CU_ASSERT_EQUAL(memcmp(o.seq, seq, sizeof(seq)), 0);
	CU_ASSERT_EQUAL(o.lay.layers[1].chunk, 5); /* layers 0 and 1 */
	CU_ASSERT_EQUAL(o.lay.layers[2].chunk, 5);
	CU_ASSERT_EQUAL(o.lay.layers[4].chunk, 6); /* lm_head, after the norm */
	read_order_free(&o);
}

void suite_layout(void)
{
	CU_pSuite s = CU_add_suite("layout", NULL, NULL);

	CU_add_test(s, "text table: comments, hex, shared pages",
		    test_text_table);
	CU_add_test(s, "a layer running into the next chunk", test_straddle);
	CU_add_test(s, "malformed text tables", test_text_malformed);
	CU_add_test(s, "safetensors header grouped into layers",
		    test_safetensors);
	CU_add_test(s, "malformed safetensors files",
		    test_safetensors_malformed);
	CU_add_test(s,
		    "the read order: embedding rows apart, a tied table last",
		    test_read_order_rows);
	CU_add_test(s, "the read order aligned to folios",
		    test_read_order_align);
	CU_add_test(s, "the synthetic model straddles pages",
		    test_synthetic_model);
	CU_add_test(s, "the bench's scan over a layout", test_scan_trace);
	CU_add_test(s, "the decode workload's outputs checked",
		    test_decode_outputs);
}
