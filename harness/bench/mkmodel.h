/* The synthetic safetensors model of `residctl bench mkmodel` (mkmodel.c),
 * also written by the unit tests of harness/workload/layout.c. */
#ifndef HARNESS_BENCH_MKMODEL_H
#define HARNESS_BENCH_MKMODEL_H

#include <stddef.h>
#include <stdint.h>

struct mkmodel {
	uint64_t layers, hidden, ffn, vocab, seed;
	int f32; /* F32 tensors of real weights (decode.h), not F16 */
};

/* Writes the model to path (through path.tmp, renamed when complete);
 * *size gets its bytes. -1 with one line in err, nothing left behind. */
int mkmodel_write(const char *path, const struct mkmodel *m, uint64_t *size,
		  char *err, size_t n);

#endif
