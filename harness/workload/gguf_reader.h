/* The one GGUF header reader (gguf.c): the layouts of GGUF models
 * (gguf_layers, layout.h) and the checks of `bench mkgguf`'s files
 * (gguf_read_info, bench/gguf.h) are both built on it. */
#ifndef HARNESS_WORKLOAD_GGUF_READER_H
#define HARNESS_WORKLOAD_GGUF_READER_H

#include <stddef.h>
#include <stdint.h>

#include "workload/layout.h"

/* A GGUF v2 or v3 header as the file lays it out, every value checked
 * against the format and the file: each tensor's type known, its first
 * dimension whole blocks of it, its offset aligned, its bytes inside the
 * file. */
struct gguf_header {
	uint32_t version, alignment;
	uint64_t n_kv, n_tensors;
	uint64_t data_offset;    /* where tensor data begins */
	uint64_t n_params;       /* elements of all tensors */
	char arch[64];           /* general.architecture, "" when absent */
	struct layout_tensor *t; /* n_tensors, in header order, file offsets */
};

/* 0, or -1 with one line in err naming the file, the header byte and what
 * is wrong. gguf_header_free after either. */
int gguf_header_read(const char *path, struct gguf_header *h, char *err,
		     size_t n);
void gguf_header_free(struct gguf_header *h);

#endif
