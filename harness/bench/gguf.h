/* GGUF v3 models of `residctl bench mkgguf` (gguf.c): files a real engine
 * (llama.cpp, docs/engine.md) loads and decodes, shaped like a real model
 * and seeded, so the engine's output is a function of the seed alone
 * (design.md §11). And a reader of their header, for checks. */
#ifndef HARNESS_BENCH_GGUF_H
#define HARNESS_BENCH_GGUF_H

#include <stddef.h>
#include <stdint.h>

enum gguf_quant {
	GGUF_Q8_0,  /* every matrix Q8_0 */
	GGUF_Q4_KM, /* Q4_K, with Q6_K for the head and some attn_v/ffn_down */
};

/* An architecture qwen2 decoder: the shapes and the weights' seed. */
struct gguf_model {
	const char *name; /* the preset's name, general.name */
	uint32_t layers, hidden, ffn, heads, kv_heads, vocab, ctx;
	enum gguf_quant quant;
	uint64_t seed;
};

/* The preset `name` ("tiny", "qwen2.5-3b") into *m with quant and seed:
 * 0, or -1 when there is no such preset. */
int gguf_preset(const char *name, enum gguf_quant quant, uint64_t seed,
		struct gguf_model *m);

/* Writes the model to path through path.tmp, renamed when complete and
 * fsynced; *size gets its bytes. -1 with one line in err, nothing left
 * behind (also when a stop signal arrives, child_stop_signal). */
int gguf_write(const char *path, const struct gguf_model *m, uint64_t *size,
	       char *err, size_t n);

/* What a GGUF file's header says, each value checked against the format
 * and the file: version 3, every key and type known, every tensor's type,
 * shape and offset valid (aligned, in order, not overlapping, inside the
 * file). */
struct gguf_info {
	uint32_t version, alignment;
	uint64_t n_kv, n_tensors;
	uint64_t data_offset; /* where tensor data begins */
	uint64_t data_end;    /* end of the last tensor's bytes */
	uint64_t n_params;    /* elements of all tensors */
	char arch[64];        /* general.architecture, "" when absent */
};

/* 0, or -1 with one line in err naming the byte and what is wrong. */
int gguf_read_info(const char *path, struct gguf_info *info, char *err,
		   size_t n);

#endif
