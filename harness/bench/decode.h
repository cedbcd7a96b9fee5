/* The decode workload's weights and its math (`residctl bench decode`):
 * each layer's bytes are read as a rows x cols matrix of f32 weights and
 * multiplied into a vector x, y = W x, as CPU decoding does once per token.
 * Weights are n x 2^-24 with |n| < 2^23 and x's entries k / 128 with
 * 0 < |k| < 128, so each product is exact in a double and so is each row's
 * sum (below 2^50 units of 2^-31): y depends neither on the order of the
 * sum nor on how threads split the rows, and a wrong weight changes its
 * row's y. A layer's output is checked as a checksum of its y. */
#ifndef HARNESS_BENCH_DECODE_H
#define HARNESS_BENCH_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "workload/layout.h"

#define DECODE_MAX_COLS (1u << 20)

/* The weight at f32 word `index` of the file (its byte offset / 4). */
float decode_weight(uint64_t index, uint64_t seed);
/* The file's bytes [off, off + len) (off a multiple of 4): its weights. */
void decode_fill(uint8_t *dst, uint64_t off, uint64_t len, uint64_t seed);

/* The input vector: cols non-zero entries. */
void decode_x(float *x, uint32_t cols);

/* A layer's weights: the f32 words wholly inside [off, off + len). */
struct decode_layer {
	uint64_t first, words, rows; /* first word's index; last row short */
};
struct decode_layer decode_layer_of(const struct layout_layer *l,
				    uint32_t cols);

/* What a decode scan needs: the columns, x, each layer's reference
 * checksum. */
struct decode_job {
	uint32_t cols;
	const float *x;
	const uint64_t *ref;
};

/* The checksum of y over rows [r0, r1) of a layer whose words start at w;
 * checksums of disjoint row ranges add up to the layer's. */
uint64_t decode_rows(const float *w, const struct decode_layer *d,
		     uint32_t cols, const float *x, uint64_t r0, uint64_t r1);

/* Every layer's checksum, computed from pread of the file at path: the
 * outputs a run must produce. 0, or -1 with err. */
int decode_reference(const char *path, const struct layout *l, uint32_t cols,
		     const float *x, uint64_t *ref, char *err, size_t n);

#endif
