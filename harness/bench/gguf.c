/* residctl bench mkgguf: a GGUF v3 file that llama.cpp loads and decodes,
 * for the real-engine runs of design.md §11 (docs/engine.md). Architecture
 * qwen2: token_embd, per block attn_norm, attn_q/k/v with their biases,
 * attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down, then output_norm and
 * output, in that order (the order of a converted model), each tensor's
 * bytes aligned to 32 (general.alignment). A small SentencePiece-style
 * vocabulary (tokenizer.ggml.model "llama": specials, the 256 byte tokens,
 * ASCII, then letter strings) fills the vocabulary the shapes ask for.
 *
 * The weights are drawn in the quantized domain from a seeded splitmix64,
 * one stream per tensor: every quant uniform, every scale chosen so that a
 * row has mean about 0 and standard deviation about 1/sqrt(its length), so
 * activations stay finite through every layer and the logits spread out.
 * The same seed gives the same bytes. The block layouts are ggml's:
 *   Q8_0: 32 weights in 34 bytes, fp16 d then 32 int8; w = d q.
 *   Q4_K: 256 weights in 144 bytes, fp16 d, fp16 dmin, 12 bytes of eight
 *         6-bit scales and eight 6-bit mins, 128 bytes of 4-bit quants;
 *         w = d sc q - dmin m over sub-blocks of 32.
 *   Q6_K: 256 weights in 210 bytes, 128 bytes of low 4 bits, 64 of high 2
 *         bits, 16 int8 scales, fp16 d; w = d sc (q - 32) over 16.
 * And a reader of the header that checks it against the format and the
 * file. */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/rng.h"
#include "bench/bench.h"
#include "bench/gguf.h"

#define ALIGN 32
#define NAME 64
#define MAX_VOCAB 900000 /* the letter strings run out past this */

/* ggml's tensor types and GGUF's value types (the numbers in the file). */
enum { T_F32 = 0, T_F16 = 1, T_Q4_0 = 2, T_Q4_1 = 3, T_Q5_0 = 6,
       T_Q5_1 = 7, T_Q8_0 = 8, T_Q8_1 = 9, T_Q2_K = 10, T_Q3_K = 11,
       T_Q4_K = 12, T_Q5_K = 13, T_Q6_K = 14, T_Q8_K = 15, T_BF16 = 30 };
enum { V_U8, V_I8, V_U16, V_I16, V_U32, V_I32, V_F32, V_BOOL, V_STR,
       V_ARR, V_U64, V_I64, V_F64, V_COUNT };

/* Elements per block and bytes per block of a tensor type; 0 unknown. */
static void type_block(uint32_t type, uint32_t *elems, uint32_t *bytes)
{
	static const struct { uint32_t type, elems, bytes; } t[] = {
		{ T_F32, 1, 4 }, { T_F16, 1, 2 }, { T_BF16, 1, 2 },
		{ T_Q4_0, 32, 18 }, { T_Q4_1, 32, 20 }, { T_Q5_0, 32, 22 },
		{ T_Q5_1, 32, 24 }, { T_Q8_0, 32, 34 }, { T_Q8_1, 32, 36 },
		{ T_Q2_K, 256, 84 }, { T_Q3_K, 256, 110 }, { T_Q4_K, 256, 144 },
		{ T_Q5_K, 256, 176 }, { T_Q6_K, 256, 210 }, { T_Q8_K, 256, 292 },
	};

	*elems = *bytes = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].type == type) {
			*elems = t[i].elems;
			*bytes = t[i].bytes;
		}
}

int gguf_preset(const char *name, enum gguf_quant quant, uint64_t seed,
		struct gguf_model *m)
{
	static const struct gguf_model presets[] = {
		/* A few layers for tests: under 32 MiB at either quant. */
		{ "tiny", 4, 512, 1536, 8, 2, 4096, 2048, 0, 0 },
		/* Qwen2.5-3B's shapes, its full vocabulary and a separate
		 * output matrix. */
		{ "qwen2.5-3b", 36, 2048, 11008, 16, 2, 151936, 32768, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(presets[i].name, name)) {
			*m = presets[i];
			m->quant = quant;
			m->seed = seed;
			return 0;
		}
	return -1;
}

/* ---- the tensors ---- */

enum kind { NORM, BIAS, MATRIX };

struct tensor {
	char name[NAME];
	uint64_t ne[2]; /* ne[0]: a row's length; ne[1] 1 for a vector */
	uint32_t type, ndim;
	enum kind kind;
	uint64_t offset, bytes; /* from the start of the data */
};

/* Q4_K_M's choice for attn_v and ffn_down: the more bits in the first and
 * last eighth of the blocks and in every third between. */
static int more_bits(uint32_t layer, uint32_t layers)
{
	return layer < layers / 8 || layer >= 7 * layers / 8 ||
	       (layer - layers / 8) % 3 == 2;
}

/* The tensors in file order, offsets laid out; count, 0 out of memory. */
static size_t tensor_list(const struct gguf_model *m, struct tensor **out,
			  uint64_t *data_bytes)
{
	const uint64_t h = m->hidden, kv = (uint64_t)m->kv_heads *
		(m->hidden / m->heads), f = m->ffn, v = m->vocab;
	size_t n = 0, cap = 3 + 12 * (size_t)m->layers;
	struct tensor *t = calloc(cap, sizeof(*t));
	uint64_t off = 0;

	if (!t)
		return 0;
#define ADD(kind_, ne0, ne1, q6, ...) do { \
		struct tensor *x = &t[n++]; \
		snprintf(x->name, NAME, __VA_ARGS__); \
		x->kind = kind_; \
		x->ne[0] = ne0; \
		x->ne[1] = ne1; \
		x->ndim = kind_ == MATRIX ? 2 : 1; \
		x->type = kind_ != MATRIX ? T_F32 : m->quant == GGUF_Q8_0 ? \
			T_Q8_0 : (q6) ? T_Q6_K : T_Q4_K; \
	} while (0)
	ADD(MATRIX, h, v, 0, "token_embd.weight");
	for (uint32_t l = 0; l < m->layers; l++) {
		int q6 = more_bits(l, m->layers);

		ADD(NORM, h, 1, 0, "blk.%u.attn_norm.weight", l);
		ADD(MATRIX, h, h, 0, "blk.%u.attn_q.weight", l);
		ADD(BIAS, h, 1, 0, "blk.%u.attn_q.bias", l);
		ADD(MATRIX, h, kv, 0, "blk.%u.attn_k.weight", l);
		ADD(BIAS, kv, 1, 0, "blk.%u.attn_k.bias", l);
		ADD(MATRIX, h, kv, q6, "blk.%u.attn_v.weight", l);
		ADD(BIAS, kv, 1, 0, "blk.%u.attn_v.bias", l);
		ADD(MATRIX, h, h, 0, "blk.%u.attn_output.weight", l);
		ADD(NORM, h, 1, 0, "blk.%u.ffn_norm.weight", l);
		ADD(MATRIX, h, f, 0, "blk.%u.ffn_gate.weight", l);
		ADD(MATRIX, h, f, 0, "blk.%u.ffn_up.weight", l);
		ADD(MATRIX, f, h, q6, "blk.%u.ffn_down.weight", l);
	}
	ADD(NORM, h, 1, 0, "output_norm.weight");
	ADD(MATRIX, h, v, 1, "output.weight");
#undef ADD
	for (size_t i = 0; i < n; i++) {
		uint32_t be, bb;

		type_block(t[i].type, &be, &bb);
		t[i].offset = off;
		t[i].bytes = t[i].ne[0] / be * bb * t[i].ne[1];
		off += (t[i].bytes + ALIGN - 1) / ALIGN * ALIGN;
	}
	*out = t;
	*data_bytes = off;
	return n;
}

/* ---- the header, built in memory ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
	int oom;
};

static void put(struct buf *b, const void *src, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

/* Little-endian integers of n bytes. */
static void put_le(struct buf *b, uint64_t v, int n)
{
	uint8_t le[8];

	for (int i = 0; i < n; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	put(b, le, (size_t)n);
}

static void put_str(struct buf *b, const char *s)
{
	put_le(b, strlen(s), 8);
	put(b, s, strlen(s));
}

static void put_f32(struct buf *b, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	put_le(b, u, 4);
}

static void kv_u32(struct buf *b, const char *key, uint32_t v)
{
	put_str(b, key);
	put_le(b, V_U32, 4);
	put_le(b, v, 4);
}

static void kv_f32(struct buf *b, const char *key, float v)
{
	put_str(b, key);
	put_le(b, V_F32, 4);
	put_f32(b, v);
}

static void kv_str(struct buf *b, const char *key, const char *v)
{
	put_str(b, key);
	put_le(b, V_STR, 4);
	put_str(b, v);
}

static void kv_arr(struct buf *b, const char *key, uint32_t type, uint64_t n)
{
	put_str(b, key);
	put_le(b, V_ARR, 4);
	put_le(b, type, 4);
	put_le(b, n, 8);
}

/* Token i's text: <unk> <s> </s>, <0x00>..<0xFF>, the space mark U+2581,
 * the printable ASCII characters alone and after the mark, then strings
 * of 2, 3, 4 lowercase letters, each after the mark and alone. */
static void token_text(uint32_t i, char *out)
{
	static const char mark[] = "\xe2\x96\x81";
	static const char *const special[] = { "<unk>", "<s>", "</s>" };

	if (i < 3) {
		strcpy(out, special[i]);
	} else if (i < 259) {
		sprintf(out, "<0x%02X>", i - 3);
	} else if (i == 259) {
		strcpy(out, mark);
	} else if (i < 260 + 2 * 94) {
		uint32_t k = i - 260;

		sprintf(out, "%s%c", k < 94 ? "" : mark, (char)(0x21 + k % 94));
	} else {
		uint32_t k = i - 448, p = k / 2, len = 2, span = 26 * 26;
		char *o = out;

		while (p >= span) {
			p -= span;
			span *= 26;
			len++;
		}
		if (k % 2 == 0)
			o += sprintf(o, "%s", mark);
		for (uint32_t d = len; d-- > 0; p /= 26)
			o[d] = (char)('a' + p % 26);
		o[len] = '\0';
	}
}

static uint32_t token_type(uint32_t i)
{
	return i == 0 ? 2 /* unknown */ : i < 3 ? 3 /* control */ :
	       i < 259 ? 6 /* byte */ : 1 /* normal */;
}

static void header(struct buf *b, const struct gguf_model *m,
		   const struct tensor *t, size_t nt)
{
	char name[96], tok[32];
	const uint64_t n_kv = 21;

	put(b, "GGUF", 4);
	put_le(b, 3, 4);
	put_le(b, nt, 8);
	put_le(b, n_kv, 8);
	kv_str(b, "general.architecture", "qwen2");
	snprintf(name, sizeof(name), "residctl %s seed %" PRIu64, m->name,
		 m->seed);
	kv_str(b, "general.name", name);
	/* llama.cpp's LLAMA_FTYPE_MOSTLY_Q8_0 and _Q4_K_M */
	kv_u32(b, "general.file_type", m->quant == GGUF_Q8_0 ? 7 : 15);
	kv_u32(b, "general.quantization_version", 2);
	kv_u32(b, "general.alignment", ALIGN);
	kv_u32(b, "qwen2.block_count", m->layers);
	kv_u32(b, "qwen2.context_length", m->ctx);
	kv_u32(b, "qwen2.embedding_length", m->hidden);
	kv_u32(b, "qwen2.feed_forward_length", m->ffn);
	kv_u32(b, "qwen2.attention.head_count", m->heads);
	kv_u32(b, "qwen2.attention.head_count_kv", m->kv_heads);
	kv_f32(b, "qwen2.rope.freq_base", 1000000.0f);
	kv_f32(b, "qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
	kv_str(b, "tokenizer.ggml.model", "llama");
	kv_arr(b, "tokenizer.ggml.tokens", V_STR, m->vocab);
	for (uint32_t i = 0; i < m->vocab; i++) {
		token_text(i, tok);
		put_str(b, tok);
	}
	kv_arr(b, "tokenizer.ggml.scores", V_F32, m->vocab);
	for (uint32_t i = 0; i < m->vocab; i++)
		put_f32(b, i < 259 ? 0.0f : -(float)(i - 259));
	kv_arr(b, "tokenizer.ggml.token_type", V_I32, m->vocab);
	for (uint32_t i = 0; i < m->vocab; i++)
		put_le(b, token_type(i), 4);
	kv_u32(b, "tokenizer.ggml.bos_token_id", 1);
	kv_u32(b, "tokenizer.ggml.eos_token_id", 2);
	kv_u32(b, "tokenizer.ggml.unknown_token_id", 0);
	put_str(b, "tokenizer.ggml.add_bos_token");
	put_le(b, V_BOOL, 4);
	put_le(b, 1, 1);
	for (size_t i = 0; i < nt; i++) {
		put_str(b, t[i].name);
		put_le(b, t[i].ndim, 4);
		for (uint32_t d = 0; d < t[i].ndim; d++)
			put_le(b, t[i].ne[d], 8);
		put_le(b, t[i].type, 4);
		put_le(b, t[i].offset, 8);
	}
	while (b->len % ALIGN)
		put_le(b, 0, 1);
}

/* ---- the weights ---- */

/* IEEE half of f, rounded to nearest even (normal and subnormal; the
 * scales here are powers of two and 7.5 times one, so exact). */
static uint16_t half(float f)
{
	uint32_t u, sign, mant;
	int exp;

	memcpy(&u, &f, 4);
	sign = (u >> 16) & 0x8000;
	exp = (int)((u >> 23) & 0xff) - 127 + 15;
	mant = u & 0x7fffff;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) { /* subnormal: shift the implicit bit in */
		uint32_t shift = (uint32_t)(14 - exp), m = mant | 0x800000, r;

		if (shift > 24)
			return (uint16_t)sign;
		r = m >> shift;
		if ((m & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
		    ((m & ((1u << shift) - 1)) == (1u << (shift - 1)) && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	uint32_t r = (uint32_t)exp << 10 | mant >> 13, rest = mant & 0x1fff;

	if (rest > 0x1000 || (rest == 0x1000 && (r & 1)))
		r++;
	return (uint16_t)(sign | r);
}

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* The power of two nearest target. */
static float pow2_near(double target)
{
	return (float)ldexp(1.0, (int)lround(log2(target)));
}

static void random_bytes(uint64_t *s, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t r = rng_next(s);

		for (size_t k = 0; k < 8 && i + k < n; k++)
			p[i + k] = (uint8_t)(r >> (8 * k));
	}
}

/* One block of a matrix of rows of `row` weights: scales for a standard
 * deviation of 1/sqrt(row). The spread of a quant is about 73.6 for Q8_0
 * (int8 but -128), 4.61 for Q4_K (0..15 about 7.5), 18.5 for Q6_K
 * (0..63 less 32); the 6-bit and 8-bit scales drawn from 32..63 add a
 * factor of 48.5. */
static void matrix_block(uint32_t type, uint64_t row, uint64_t *s, uint8_t *p)
{
	const double sigma = 1.0 / sqrt((double)row);

	if (type == T_Q8_0) {
		le16(p, half(pow2_near(sigma / 73.6)));
		random_bytes(s, p + 2, 32);
		for (int i = 2; i < 34; i++)
			if (p[i] == 0x80)
				p[i] = 0;
	} else if (type == T_Q4_K) {
		/* mins equal to the scales and dmin = 7.5 d:
		 * w = d sc (q - 7.5), mean 0. */
		float d = pow2_near(sigma / (4.61 * 48.5));
		uint8_t sc[8], mn[8], *k = p + 4;

		le16(p, half(d));
		le16(p + 2, half(7.5f * d));
		random_bytes(s, sc, 8);
		for (int j = 0; j < 8; j++)
			mn[j] = sc[j] = (uint8_t)(32 + (sc[j] & 31));
		/* Sub-blocks 0-3: the low 6 bits of bytes 0-3 (scales) and
		 * 4-7 (mins); 4-7: their low 4 bits in bytes 8-11, their
		 * high 2 in the top bits of bytes 0-3 and 4-7. */
		for (int j = 0; j < 4; j++) {
			k[j] = (uint8_t)(sc[j] | (sc[j + 4] >> 4) << 6);
			k[j + 4] = (uint8_t)(mn[j] | (mn[j + 4] >> 4) << 6);
			k[j + 8] = (uint8_t)((sc[j + 4] & 15) | (mn[j + 4] & 15) << 4);
		}
		random_bytes(s, p + 16, 128);
	} else { /* T_Q6_K: ql, qh, then the scales and d */
		random_bytes(s, p, 208);
		for (int j = 192; j < 208; j++)
			p[j] = (uint8_t)(32 + (p[j] & 31));
		le16(p + 208, half(pow2_near(sigma / (18.5 * 48.5))));
	}
}

/* A vector element: norms 1 +- 1/8, biases within +-1/8, in steps of
 * 1/1024 (exact in a float). */
static float vector_elem(enum kind kind, uint64_t *s)
{
	float x = (float)((int)(rng_next(s) % 257) - 128) / 1024.0f;

	return kind == NORM ? 1.0f + x : x;
}

/* Writes tensor i's bytes and its padding to f. 0, or -1 on a write error
 * or a stop signal. */
static int write_tensor(FILE *f, const struct tensor *t, size_t i,
			uint64_t seed, uint8_t *buf, size_t cap)
{
	uint64_t s = seed ^ (0xd1b54a32d192ed03ull * (i + 1)), left;
	uint32_t be, bb;
	size_t k = 0;

	rng_next(&s);
	type_block(t->type, &be, &bb);
	left = t->ne[0] * t->ne[1] / be;
	while (left--) {
		if (t->kind == MATRIX) {
			matrix_block(t->type, t->ne[0], &s, buf + k);
		} else {
			float x = vector_elem(t->kind, &s);

			memcpy(buf + k, &x, 4);
		}
		k += bb;
		if (cap - k < 256 || !left) {
			if (fwrite(buf, 1, k, f) != k || child_stop_signal())
				return -1;
			k = 0;
		}
	}
	for (uint64_t pad = (ALIGN - t->bytes % ALIGN) % ALIGN; pad; pad--)
		if (fputc(0, f) == EOF)
			return -1;
	return 0;
}

int gguf_write(const char *path, const struct gguf_model *m, uint64_t *size,
	       char *err, size_t n)
{
	struct tensor *t = NULL;
	struct buf b = { 0 };
	uint64_t data_bytes = 0;
	size_t nt = tensor_list(m, &t, &data_bytes);
	const size_t cap = 8 * MiB;
	uint8_t *buf = malloc(cap);
	struct bench_out o;
	int rc = -1, ok;

	if (nt)
		header(&b, m, t, nt);
	if (!nt || !buf || b.oom) {
		snprintf(err, n, "no memory for the model's header");
		goto out;
	}
	if (bench_out_open(&o, path, err, n))
		goto out;
	ok = fwrite(b.p, 1, b.len, o.f) == b.len;
	for (size_t i = 0; ok && i < nt; i++)
		ok = !write_tensor(o.f, &t[i], i, m->seed, buf, cap);
	if (bench_out_close(&o, ok, err, n))
		goto out;
	*size = b.len + data_bytes;
	rc = 0;
out:
	free(t);
	free(b.p);
	free(buf);
	return rc;
}

/* ---- the reader ---- */

struct rd {
	FILE *f;
	const char *path;
	uint64_t pos, size;
	char *err;
	size_t n;
};

__attribute__((format(printf, 2, 3)))
static int rd_bad(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(r->err, r->n, "%s: byte %" PRIu64 ": ", r->path,
			 r->pos);

	if (k >= 0 && (size_t)k < r->n) {
		va_start(ap, fmt);
		vsnprintf(r->err + k, r->n - k, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int rd_bytes(struct rd *r, void *dst, uint64_t len, const char *what)
{
	if (len > r->size - r->pos || fread(dst, 1, len, r->f) != len)
		return rd_bad(r, "the file ends inside %s; it is truncated", what);
	r->pos += len;
	return 0;
}

static int rd_le(struct rd *r, int len, uint64_t *v, const char *what)
{
	uint8_t le[8];

	if (rd_bytes(r, le, (uint64_t)len, what))
		return -1;
	*v = 0;
	for (int i = 0; i < len; i++)
		*v |= (uint64_t)le[i] << (8 * i);
	return 0;
}

/* A string; its first cap-1 bytes into out (when out), the rest skipped. */
static int rd_str(struct rd *r, char *out, size_t cap, const char *what)
{
	uint64_t len;
	char tmp[256];

	if (rd_le(r, 8, &len, what))
		return -1;
	if (len > r->size - r->pos)
		return rd_bad(r, "%s of %" PRIu64 " bytes runs past the end; it is truncated or corrupt", what, len);
	for (uint64_t done = 0; done < len;) {
		uint64_t k = len - done < sizeof(tmp) ? len - done : sizeof(tmp);

		if (rd_bytes(r, tmp, k, what))
			return -1;
		if (out && done < cap - 1)
			memcpy(out + done, tmp, done + k < cap - 1 ? k : cap - 1 - done);
		done += k;
	}
	if (out)
		out[len < cap - 1 ? len : cap - 1] = '\0';
	return 0;
}

/* Bytes of one value of a fixed-size type; 0 for strings and arrays. */
static int value_size(uint64_t type)
{
	static const int size[V_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

	return size[type];
}

/* One value of type `type` (not an array); u32 gets an integer's value. */
static int rd_value(struct rd *r, uint64_t type, uint64_t *u, char *s,
		    size_t cap)
{
	if (type == V_STR)
		return rd_str(r, s, cap, "a string value");
	if (type >= V_COUNT || type == V_ARR)
		return rd_bad(r, "value type %" PRIu64 " is not one GGUF v3 knows", type);
	return rd_le(r, value_size(type), u, "a value");
}

static int rd_kv(struct rd *r, struct gguf_info *info)
{
	char key[256], s[64];
	uint64_t type, v = 0;

	if (rd_str(r, key, sizeof(key), "a key") || rd_le(r, 4, &type, "a value type"))
		return -1;
	if (type == V_ARR) {
		uint64_t et, count;

		if (rd_le(r, 4, &et, "an array's type") || rd_le(r, 8, &count, "an array's length"))
			return -1;
		if (et == V_ARR || et >= V_COUNT)
			return rd_bad(r, "array '%s' of type %" PRIu64 "; GGUF v3 has no such element type", key, et);
		if (count > r->size - r->pos)
			return rd_bad(r, "array '%s' of %" PRIu64 " elements cannot fit in the file; it is truncated or corrupt", key, count);
		if (et != V_STR) {
			uint64_t len = count * (uint64_t)value_size(et);

			if (len > r->size - r->pos)
				return rd_bad(r, "array '%s' runs past the end; it is truncated or corrupt", key);
			r->pos += len;
			return fseeko(r->f, (off_t)r->pos, SEEK_SET) ?
			       rd_bad(r, "cannot seek: %s", strerror(errno)) : 0;
		}
		for (uint64_t i = 0; i < count; i++)
			if (rd_str(r, NULL, 0, "a string of an array"))
				return -1;
		return 0;
	}
	if (rd_value(r, type, &v, s, sizeof(s)))
		return -1;
	if (!strcmp(key, "general.architecture")) {
		if (type != V_STR)
			return rd_bad(r, "general.architecture is not a string");
		snprintf(info->arch, sizeof(info->arch), "%s", s);
	} else if (!strcmp(key, "general.alignment")) {
		if (type != V_U32 || !v || (v & (v - 1)))
			return rd_bad(r, "general.alignment must be a u32 power of two, not type %" PRIu64 " value %" PRIu64, type, v);
		info->alignment = (uint32_t)v;
	}
	return 0;
}

int gguf_read_info(const char *path, struct gguf_info *info, char *err,
		   size_t n)
{
	struct rd r = { .path = path, .err = err, .n = n };
	struct stat st;
	uint8_t magic[4];
	uint64_t v, prev_end = 0;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	info->alignment = 32; /* GGUF's default */
	if (!(r.f = fopen(path, "rb")) || fstat(fileno(r.f), &st)) {
		snprintf(err, n, "cannot open %s: %s", path, strerror(errno));
		if (r.f)
			fclose(r.f);
		return -1;
	}
	r.size = (uint64_t)st.st_size;
	if (rd_bytes(&r, magic, 4, "the magic"))
		goto out;
	if (memcmp(magic, "GGUF", 4)) {
		rd_bad(&r, "no GGUF magic; not a GGUF file");
		goto out;
	}
	if (rd_le(&r, 4, &v, "the version") || rd_le(&r, 8, &info->n_tensors, "the tensor count") ||
	    rd_le(&r, 8, &info->n_kv, "the key count"))
		goto out;
	info->version = (uint32_t)v;
	if (v != 3) {
		rd_bad(&r, "version %" PRIu64 "; this reader knows GGUF v3", v);
		goto out;
	}
	if (info->n_tensors > r.size || info->n_kv > r.size) {
		rd_bad(&r, "%" PRIu64 " tensors and %" PRIu64 " keys cannot fit in the file; it is truncated or corrupt",
		       info->n_tensors, info->n_kv);
		goto out;
	}
	for (uint64_t i = 0; i < info->n_kv; i++)
		if (rd_kv(&r, info))
			goto out;
	/* The tensor infos; their data begins at the next aligned byte. */
	struct { uint64_t off, bytes; } *ti = calloc(info->n_tensors + 1, sizeof(*ti));

	if (!ti) {
		snprintf(err, n, "%s: no memory for %" PRIu64 " tensors", path, info->n_tensors);
		goto out;
	}
	for (uint64_t i = 0; i < info->n_tensors; i++) {
		char name[NAME * 4];
		uint64_t ndim, type, ne = 1, d;
		uint32_t be, bb;

		if (rd_str(&r, name, sizeof(name), "a tensor's name") ||
		    rd_le(&r, 4, &ndim, "a tensor's dimensions"))
			goto free;
		if (!ndim || ndim > 4) {
			rd_bad(&r, "tensor '%s' has %" PRIu64 " dimensions; GGUF allows 1 to 4", name, ndim);
			goto free;
		}
		for (uint64_t k = 0; k < ndim; k++) {
			if (rd_le(&r, 8, &d, "a tensor's shape"))
				goto free;
			if (!d || d > (1ull << 40) || ne > (1ull << 48) / d) {
				rd_bad(&r, "tensor '%s' has dimension %" PRIu64 " of %" PRIu64 "; out of range", name, k, d);
				goto free;
			}
			ne *= d;
			if (!k)
				v = d;
		}
		if (rd_le(&r, 4, &type, "a tensor's type") || rd_le(&r, 8, &ti[i].off, "a tensor's offset"))
			goto free;
		type_block((uint32_t)type, &be, &bb);
		if (!be || type > UINT32_MAX) {
			rd_bad(&r, "tensor '%s' has type %" PRIu64 ", one this reader does not know", name, type);
			goto free;
		}
		if (v % be) {
			rd_bad(&r, "tensor '%s': rows of %" PRIu64 " are not whole blocks of %u", name, v, be);
			goto free;
		}
		if (ti[i].off % info->alignment || ti[i].off < prev_end) {
			rd_bad(&r, "tensor '%s' at data offset %" PRIu64 ": not aligned to %u or overlapping the one before",
			       name, ti[i].off, info->alignment);
			goto free;
		}
		ti[i].bytes = ne / be * bb;
		prev_end = ti[i].off + ti[i].bytes;
		info->n_params += ne;
	}
	info->data_offset = (r.pos + info->alignment - 1) / info->alignment * info->alignment;
	info->data_end = info->data_offset + prev_end;
	if (info->data_end > r.size) {
		snprintf(err, n, "%s: the tensors end at byte %" PRIu64 ", past the file's %" PRIu64 "; it is truncated",
			 path, info->data_end, r.size);
		goto free;
	}
	rc = 0;
free:
	free(ti);
out:
	fclose(r.f);
	return rc;
}

/* ---- the command ---- */

static const char about[] =
	"  Writes a GGUF v3 model that llama.cpp loads and decodes (docs/engine.md):\n"
	"  architecture qwen2, weights drawn in the quantized domain from seed S,\n"
	"  a small SentencePiece-style vocabulary. Presets: tiny (4 layers,\n"
	"  hidden 512, FFN 1536, 8 heads, 2 KV heads, vocabulary 4096; about\n"
	"  17 MiB at q8_0) and qwen2.5-3b (Qwen2.5-3B's shapes: 36 layers,\n"
	"  hidden 2048, FFN 11008, 16 heads, 2 KV heads, vocabulary 151936, an\n"
	"  output matrix of its own). --quant q8_0: every matrix Q8_0; q4km:\n"
	"  Q4_K with Q6_K for the output and for attn_v/ffn_down in some\n"
	"  layers, as llama.cpp's Q4_K_M. The same seed gives the same bytes.\n"
	"  Written through FILE.tmp, renamed when complete. Exit 0, 1 on a\n"
	"  write error, 2 on bad input.\n";

int bench_mkgguf(int argc, char **argv)
{
	static const char *const presets[] = { "tiny", "qwen2.5-3b", NULL };
	static const char *const quants[] = { "q8_0", "q4km", NULL };
	int preset = -1, quant = -1, quant_seen = 0;
	uint64_t seed = 1, size = 0;
	const char *out = NULL;
	struct gguf_model m;
	char err[600], copy[4200], dir[4200];
	struct statvfs vfs;
	struct stat st;
	struct cli_opt opts[] = {
		{ "preset", CLI_CHOICE, &preset, .help = "the model's shapes (required)" },
		{ "quant", CLI_CHOICE, &quant, .seen = &quant_seen,
		  .help = "the matrices' types (default q8_0 for tiny, q4km for qwen2.5-3b)" },
		CLI_SEED(&seed, "the weights' seed (default 1)"),
		{ "out", CLI_TEXT, &out, .arg = "FILE", .help = "the model to write (required)" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "bench mkgguf", .synopsis = "", .about = about, .opts = opts,
	};
	int rc;

	opts[0].choices = presets;
	opts[1].choices = quants;
	rc = cli_parse(&spec, argc, argv);
	if (rc != CLI_RUN)
		return rc;
	if (preset < 0 || !out || !*out) {
		fprintf(stderr, "residctl bench mkgguf: no %s given; give %s\n",
			preset < 0 ? "--preset" : "--out", preset < 0 ?
			"--preset tiny or --preset qwen2.5-3b" : "--out FILE");
		return 2;
	}
	if (!quant_seen)
		quant = preset == 0 ? GGUF_Q8_0 : GGUF_Q4_KM;
	if (gguf_preset(presets[preset], (enum gguf_quant)quant, seed, &m))
		return bench_bad("mkgguf", "preset", presets[preset], "give tiny or qwen2.5-3b");
	snprintf(copy, sizeof(copy), "%s", out);
	snprintf(dir, sizeof(dir), "%s", dirname(copy));
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK))
		return bench_bad("mkgguf", "--out", out, "its directory must exist and be writable");
	if (!stat(out, &st) && !S_ISREG(st.st_mode))
		return bench_bad("mkgguf", "--out", out, "it exists and is not a regular file");

	struct tensor *t;
	uint64_t need;

	if (!tensor_list(&m, &t, &need)) {
		fprintf(stderr, "residctl bench mkgguf: no memory\n");
		return 1;
	}
	free(t);
	need += 8 * MiB; /* the header, with room to spare */
	if (!statvfs(dir, &vfs) && (uint64_t)vfs.f_bavail * vfs.f_frsize < need) {
		fprintf(stderr, "residctl bench mkgguf: %s has %" PRIu64 " MiB free, the model needs %" PRIu64
			" MiB; free space or give another --out\n", dir,
			(uint64_t)vfs.f_bavail * vfs.f_frsize / MiB, need / MiB);
		return 2;
	}
	child_stop_softly();
	if (gguf_write(out, &m, &size, err, sizeof(err))) {
		fprintf(stderr, "residctl bench mkgguf: %s\n", err);
		return 1;
	}
	printf("mkgguf: %s, %" PRIu64 " bytes, preset %s, %s, seed %" PRIu64 "\n",
	       out, size, m.name, quants[quant], seed);
	return 0;
}
