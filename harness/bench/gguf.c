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
 * And the check of a written file's header, on the one GGUF reader
 * (harness/workload/gguf_reader.h). */
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
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
#include "workload/gguf_reader.h"

#define ALIGN 32
#define NAME 64
#define MAX_VOCAB 900000 /* the letter strings run out past this */

/* ggml's tensor types and GGUF's value types (the numbers in the file). */
enum {
	T_F32 = 0,
	T_F16 = 1,
	T_Q4_0 = 2,
	T_Q4_1 = 3,
	T_Q5_0 = 6,
	T_Q5_1 = 7,
	T_Q8_0 = 8,
	T_Q8_1 = 9,
	T_Q2_K = 10,
	T_Q3_K = 11,
	T_Q4_K = 12,
	T_Q5_K = 13,
	T_Q6_K = 14,
	T_Q8_K = 15,
	T_BF16 = 30
};
enum {
	V_U8,
	V_I8,
	V_U16,
	V_I16,
	V_U32,
	V_I32,
	V_F32,
	V_BOOL,
	V_STR,
	V_ARR,
	V_U64,
	V_I64,
	V_F64,
	V_COUNT
};

/* Elements per block and bytes per block of a tensor type; 0 unknown. */
static void type_block(uint32_t type, uint32_t *elems, uint32_t *bytes)
{
	static const struct {
		uint32_t type, elems, bytes;
	} t[] = {
		{ T_F32, 1, 4 },      { T_F16, 1, 2 },
		{ T_BF16, 1, 2 },     { T_Q4_0, 32, 18 },
		{ T_Q4_1, 32, 20 },   { T_Q5_0, 32, 22 },
		{ T_Q5_1, 32, 24 },   { T_Q8_0, 32, 34 },
		{ T_Q8_1, 32, 36 },   { T_Q2_K, 256, 84 },
		{ T_Q3_K, 256, 110 }, { T_Q4_K, 256, 144 },
		{ T_Q5_K, 256, 176 }, { T_Q6_K, 256, 210 },
		{ T_Q8_K, 256, 292 },
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
	const uint64_t h = m->hidden,
		       kv = (uint64_t)m->kv_heads * (m->hidden / m->heads),
		       f = m->ffn, v = m->vocab;
	size_t n = 0, cap = 3 + 12 * (size_t)m->layers;
	struct tensor *t = calloc(cap, sizeof(*t));
	uint64_t off = 0;

	if (!t)
		return 0;
#define ADD(kind_, ne0, ne1, q6, ...)                      \
	do {                                               \
		struct tensor *x = &t[n++];                \
		snprintf(x->name, NAME, __VA_ARGS__);      \
		x->kind = kind_;                           \
		x->ne[0] = ne0;                            \
		x->ne[1] = ne1;                            \
		x->ndim = kind_ == MATRIX ? 2 : 1;         \
		x->type = kind_ != MATRIX       ? T_F32 :  \
			  m->quant == GGUF_Q8_0 ? T_Q8_0 : \
			  (q6)                  ? T_Q6_K : \
						  T_Q4_K;                   \
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
	return i == 0  ? 2 /* unknown */ :
	       i < 3   ? 3 /* control */ :
	       i < 259 ? 6 /* byte */ :
			 1 /* normal */;
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
		    ((m & ((1u << shift) - 1)) == (1u << (shift - 1)) &&
		     (r & 1)))
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
			k[j + 8] = (uint8_t)((sc[j + 4] & 15) | (mn[j + 4] & 15)
									<< 4);
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

/* ---- the check of a written file, on the one GGUF reader ---- */

int gguf_read_info(const char *path, struct gguf_info *info, char *err,
		   size_t n)
{
	struct gguf_header h;
	uint64_t end = 0;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	if (gguf_header_read(path, &h, err, n))
		goto out;
	if (h.version != 3) {
		snprintf(err, n,
			 "%s: GGUF version %" PRIu32
			 "; this reader knows GGUF v3",
			 path, h.version);
		goto out;
	}
	/* the writer lays the tensors out in header order, none overlapping */
	for (uint64_t i = 0; i < h.n_tensors; i++) {
		if (h.t[i].begin < end) {
			snprintf(err, n,
				 "%s: tensor '%s' at file offset %" PRIu64
				 ": overlapping the one before",
				 path, h.t[i].name, h.t[i].begin);
			goto out;
		}
		end = h.t[i].end;
	}
	info->version = h.version;
	info->alignment = h.alignment;
	info->n_kv = h.n_kv;
	info->n_tensors = h.n_tensors;
	info->data_offset = h.data_offset;
	info->data_end = h.n_tensors ? end : h.data_offset;
	info->n_params = h.n_params;
	snprintf(info->arch, sizeof(info->arch), "%s", h.arch);
	rc = 0;
out:
	gguf_header_free(&h);
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

/* check_out_dir: --out's directory (copied into DIR) exists and is
 * writable, and OUT, when it exists, is a regular file; 2 (said) if not. */
static int check_out_dir(const char *out, char *dir, size_t dirlen)
{
	char copy[4200];
	struct stat st;

	snprintf(copy, sizeof(copy), "%s", out);
	snprintf(dir, dirlen, "%s", dirname(copy));
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK))
		return bench_bad("mkgguf", "--out", out,
				 "its directory must exist and be writable");
	if (!stat(out, &st) && !S_ISREG(st.st_mode))
		return bench_bad("mkgguf", "--out", out,
				 "it exists and is not a regular file");
	return 0;
}

/* check_free_space: refuses before writing when DIR cannot hold model M,
 * so a full disk is bad input, not a half-written file; 1 on no memory. */
static int check_free_space(const struct gguf_model *m, const char *dir)
{
	struct statvfs vfs;
	struct tensor *t;
	uint64_t need;

	if (!tensor_list(m, &t, &need)) {
		fprintf(stderr, "residctl bench mkgguf: no memory\n");
		return 1;
	}
	free(t);
	need += 8 * MiB; /* the header, with room to spare */
	if (!statvfs(dir, &vfs) &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < need) {
		fprintf(stderr,
			"residctl bench mkgguf: %s has %" PRIu64
			" MiB free, the model needs %" PRIu64
			" MiB; free space or give another --out\n",
			dir, (uint64_t)vfs.f_bavail * vfs.f_frsize / MiB,
			need / MiB);
		return 2;
	}
	return 0;
}

int bench_mkgguf(int argc, char **argv)
{
	static const char *const presets[] = { "tiny", "qwen2.5-3b", NULL };
	static const char *const quants[] = { "q8_0", "q4km", NULL };
	int preset = -1, quant = -1, quant_seen = 0;
	uint64_t seed = 1, size = 0;
	const char *out = NULL;
	struct gguf_model m;
	char err[600], dir[4200];
	struct cli_opt opts[] = {
		{ "preset", CLI_CHOICE, &preset,
		  .help = "the model's shapes (required)" },
		{ "quant", CLI_CHOICE, &quant, .seen = &quant_seen,
		  .help = "the matrices' types (default q8_0 for tiny, q4km for qwen2.5-3b)" },
		CLI_SEED(&seed, "the weights' seed (default 1)"),
		{ "out", CLI_TEXT, &out, .arg = "FILE",
		  .help = "the model to write (required)" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "bench mkgguf",
		.synopsis = "",
		.about = about,
		.opts = opts,
	};
	int rc;

	opts[0].choices = presets;
	opts[1].choices = quants;
	rc = cli_parse(&spec, argc, argv);
	if (rc != CLI_RUN)
		return rc;
	if (preset < 0 || !out || !*out) {
		fprintf(stderr, "residctl bench mkgguf: no %s given; give %s\n",
			preset < 0 ? "--preset" : "--out",
			preset < 0 ? "--preset tiny or --preset qwen2.5-3b" :
				     "--out FILE");
		return 2;
	}
	if (!quant_seen)
		quant = preset == 0 ? GGUF_Q8_0 : GGUF_Q4_KM;
	if (gguf_preset(presets[preset], (enum gguf_quant)quant, seed, &m))
		return bench_bad("mkgguf", "preset", presets[preset],
				 "give tiny or qwen2.5-3b");
	rc = check_out_dir(out, dir, sizeof(dir));
	if (rc)
		return rc;
	rc = check_free_space(&m, dir);
	if (rc)
		return rc;
	child_stop_softly();
	if (gguf_write(out, &m, &size, err, sizeof(err))) {
		fprintf(stderr, "residctl bench mkgguf: %s\n", err);
		return 1;
	}
	printf("mkgguf: %s, %" PRIu64 " bytes, preset %s, %s, seed %" PRIu64
	       "\n",
	       out, size, m.name, quants[quant], seed);
	return 0;
}
