/* residctl bench mkmodel: a synthetic safetensors file shaped like a
 * decoder-only model (embedding, N layers of attention and MLP weights with
 * their norms, final norm, head), F16, packed as the safetensors writer
 * packs them: the header padded to 8 bytes, tensors back to back, so layers
 * start and end inside pages as real ones do. The data bytes are the content
 * of design.md §5.1 at their file offsets, so every byte can be checked; with
 * --dtype F32 the tensors are F32 and hold the decode workload's weights
 * (decode.h), real numbers at their file offsets. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "bench/bench.h"
#include "bench/decode.h"
#include "bench/mkmodel.h"

static const char about[] =
	"  Writes a synthetic safetensors model to FILE: model.embed_tokens\n"
	"  [V,H], N layers (model.layers.<i>.: input_layernorm [H], q/k/v/o\n"
	"  projections [H,H], [H/4,H] for k and v, post_attention_layernorm [H],\n"
	"  gate/up [F,H], down [H,F]), model.norm [H], lm_head [V,H]; all F16,\n"
	"  packed back to back after an 8-byte-padded header, so tensors start\n"
	"  and end inside pages. Data bytes are the test content (seed S) at\n"
	"  their file offsets. --dtype F32: F32 tensors holding real weights,\n"
	"  those 'residctl bench decode' multiplies (seed S). Defaults: 8\n"
	"  layers, H 768, F 2048, V 8192, seed 1, F16 (about 119 MiB). Exit 0,\n"
	"  1 on a write error, 2 on bad input.\n";

#define NAME 96

struct tensor_def {
	char name[NAME];
	uint64_t rows, cols; /* cols 0: a vector of rows elements */
};

/* The tensors in file order; count, or 0 when out of memory. */
static size_t tensor_list(const struct mkmodel *m, struct tensor_def **out)
{
	static const struct {
		const char *name;
		int rows, cols;
	} per_layer[] = {
		/* 'h' = hidden, 'k' = hidden / 4, 'f' = ffn, 0 = vector */
		{ "input_layernorm.weight", 'h', 0 },
		{ "self_attn.q_proj.weight", 'h', 'h' },
		{ "self_attn.k_proj.weight", 'k', 'h' },
		{ "self_attn.v_proj.weight", 'k', 'h' },
		{ "self_attn.o_proj.weight", 'h', 'h' },
		{ "post_attention_layernorm.weight", 'h', 0 },
		{ "mlp.gate_proj.weight", 'f', 'h' },
		{ "mlp.up_proj.weight", 'f', 'h' },
		{ "mlp.down_proj.weight", 'h', 'f' },
	};
	const size_t nper = sizeof(per_layer) / sizeof(per_layer[0]);
	size_t n = 0, total = 3 + m->layers * nper;
	struct tensor_def *t = calloc(total, sizeof(*t));

	if (!t)
		return 0;
	t[n++] = (struct tensor_def){ "model.embed_tokens.weight", m->vocab,
				      m->hidden };
	for (uint64_t l = 0; l < m->layers; l++)
		for (size_t k = 0; k < nper; k++, n++) {
			uint64_t dim[2];

			for (int d = 0; d < 2; d++) {
				int c = d ? per_layer[k].cols :
					    per_layer[k].rows;

				dim[d] = c == 'h' ? m->hidden :
					 c == 'k' ? (m->hidden + 3) / 4 :
					 c == 'f' ? m->ffn :
						    0;
			}
			snprintf(t[n].name, NAME, "model.layers.%" PRIu64 ".%s",
				 l, per_layer[k].name);
			t[n].rows = dim[0];
			t[n].cols = dim[1];
		}
	t[n++] = (struct tensor_def){ "model.norm.weight", m->hidden, 0 };
	t[n++] = (struct tensor_def){ "lm_head.weight", m->vocab, m->hidden };
	*out = t;
	return n;
}

static uint64_t bytes_of(const struct tensor_def *t, int f32)
{
	return (f32 ? 4 : 2) * t->rows * (t->cols ? t->cols : 1);
}

/* The JSON header, padded with spaces to a multiple of 8 (as the
 * safetensors writer pads it); NULL when out of memory. */
static char *header(const struct tensor_def *t, size_t nt, int f32,
		    uint64_t *len, uint64_t *data_len)
{
	const char *dtype = f32 ? "F32" : "F16";
	size_t cap = 256 + nt * (NAME + 128), k = 0;
	char *h = malloc(cap);
	uint64_t off = 0;

	if (!h)
		return NULL;
	k += (size_t)snprintf(
		h + k, cap - k,
		"{\"__metadata__\":{\"format\":\"pt\",\"generator\":\"residctl bench mkmodel\"}");
	for (size_t i = 0; i < nt; i++) {
		uint64_t b = bytes_of(&t[i], f32);

		if (t[i].cols)
			k += (size_t)snprintf(
				h + k, cap - k,
				",\"%s\":{\"dtype\":\"%s\",\"shape\":[%" PRIu64
				",%" PRIu64 "],\"data_offsets\":[%" PRIu64
				",%" PRIu64 "]}",
				t[i].name, dtype, t[i].rows, t[i].cols, off,
				off + b);
		else
			k += (size_t)snprintf(
				h + k, cap - k,
				",\"%s\":{\"dtype\":\"%s\",\"shape\":[%" PRIu64
				"],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}",
				t[i].name, dtype, t[i].rows, off, off + b);
		off += b;
	}
	h[k++] = '}';
	while (k % 8)
		h[k++] = ' ';
	*len = k;
	*data_len = off;
	return h;
}

int mkmodel_write(const char *path, const struct mkmodel *m, uint64_t *size_out,
		  char *err, size_t n)
{
	struct tensor_def *t = NULL;
	size_t nt = tensor_list(m, &t);
	uint64_t hlen, data_len, size, off;
	char *h = nt ? header(t, nt, m->f32, &hlen, &data_len) : NULL;
	uint8_t le[8], *buf = malloc(8 * MiB);
	struct bench_out o;
	int rc = -1, ok;

	if (!h || !buf) {
		snprintf(err, n, "no memory for the model's header");
		goto out;
	}
	size = 8 + hlen + data_len;
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(hlen >> (8 * i));
	if (bench_out_open(&o, path, err, n))
		goto out;
	ok = fwrite(le, 1, 8, o.f) == 8 && fwrite(h, 1, hlen, o.f) == hlen;
	for (off = 8 + hlen; ok && off < size && !child_stop_signal();) {
		uint64_t len = size - off < 8 * MiB ? size - off : 8 * MiB;

		(m->f32 ? decode_fill : resid_content_fill)(buf, off, len,
							    m->seed);
		ok = fwrite(buf, 1, len, o.f) == len;
		off += len;
	}
	if (bench_out_close(&o, ok, err, n))
		goto out;
	*size_out = size;
	rc = 0;
out:
	free(t);
	free(h);
	free(buf);
	return rc;
}

int bench_mkmodel(int argc, char **argv)
{
	struct mkmodel m = { .layers = 8,
			     .hidden = 768,
			     .ffn = 2048,
			     .vocab = 8192,
			     .seed = 1 };
	static const char *const dtypes[] = { "F16", "F32", NULL };
	const char *path = NULL;
	uint64_t size = 0;
	char err[600];
	struct cli_opt opts[] = {
		{ "layers", CLI_U64, &m.layers, .arg = "N", .min = 1,
		  .max = 1000, .what = "layers", .help = "(default 8)" },
		{ "hidden", CLI_U64, &m.hidden, .arg = "H", .min = 1,
		  .max = 1u << 16, .what = "hidden", .help = "(default 768)" },
		{ "ffn", CLI_U64, &m.ffn, .arg = "F", .min = 1, .max = 1u << 16,
		  .what = "ffn", .help = "(default 2048)" },
		{ "vocab", CLI_U64, &m.vocab, .arg = "V", .min = 1,
		  .max = 1u << 20, .what = "vocab", .help = "(default 8192)" },
		CLI_SEED(&m.seed, "the content's seed (default 1)"),
		{ "dtype", CLI_CHOICE, &m.f32, .choices = dtypes,
		  .help = "the tensors' type (default F16)" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "bench mkmodel",
		.synopsis = "FILE",
		.about = about,
		.opts = opts,
		.operands = 1,
		.required = 1,
		.operand = { .type = CLI_TEXT, .dst = &path },
	};
	int rc = cli_parse(&spec, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	uint64_t est = (m.f32 ? 4 : 2) * (2 * m.vocab * m.hidden +
					  m.layers * (2 * m.hidden * m.hidden +
						      m.hidden * m.hidden / 2 +
						      3 * m.ffn * m.hidden));

	if (est > 64ull << 30)
		return bench_bad(
			"mkmodel", "size", "over 64 GiB",
			"give fewer --layers or a smaller --hidden/--ffn/--vocab");
	child_stop_softly();
	if (mkmodel_write(path, &m, &size, err, sizeof(err))) {
		fprintf(stderr, "residctl bench mkmodel: %s\n", err);
		return 1;
	}
	printf("mkmodel: %s, %" PRIu64 " bytes, %" PRIu64 " layers\n", path,
	       size, m.layers);
	return 0;
}
