/* The chunks of a whole file and the order an engine reads them in, for
 * residctl run (docs/run.md): from the file's own tensor table (GGUF,
 * safetensors), from a layout file, or equal chunks. */
#ifndef HARNESS_READ_ORDER_H
#define HARNESS_READ_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "workload/layout.h"

struct read_order {
	const char *source; /* "gguf", "safetensors", "table", "equal" */
	struct layout lay;  /* chunks cover the whole file */
	uint32_t *seq;      /* chunk ids in read order, nseq of them */
	uint32_t nseq;    /* nchunks, less the pieces of a table read by rows */
	uint64_t largest; /* the largest chunk, in whole pages */
	uint32_t largest_id;
};

/* order NULL or "auto": the file's own tensor table when it is GGUF or
 * safetensors, else equal chunks of `chunk` bytes; otherwise `order` is a
 * layout file (layout.h) describing this file. The last chunk is extended
 * to the file's end (size bytes). 0, or -1 with one line in err. */
int read_order_make(const char *path, uint64_t size, const char *order,
		    uint64_t chunk, struct read_order *out, char *err,
		    size_t n);

/* Cuts every chunk longer than max (rounded down to pages) into pieces of
 * max bytes, which keep their chunk's place in the read order. A chunk of
 * an embedding table read by rows (a token's row, when the model has an
 * output head of its own) is cut into pieces of `rows` bytes and left out
 * of the order: a token reads one row, in no order the file declares. 0,
 * or -1 with one line in err. */
int read_order_split(struct read_order *o, uint64_t max, uint64_t rows,
		     char *err, size_t n);

/* Moves every chunk's start down to a multiple of `folio`, as the huge path
 * needs: chunks whose starts meet become one, in the order where the first
 * of them was (out of it only when all of them were). 0, or -1 with one
 * line in err. */
int read_order_align(struct read_order *o, uint64_t folio, char *err, size_t n);

void read_order_free(struct read_order *o);

/* Where a tensor named `name` is read in one pass of a decoder: the
 * embeddings (0), block b (1 + b), the final norm (nblocks + 1), the
 * output head (nblocks + 2); a name it does not know, 0. */
int64_t read_order_rank(const char *name, int64_t nblocks);

/* The block number of a name (blk.<n>., layers.<n>., h.<n>.,
 * blocks.<n>.), or -1. */
int64_t read_order_block(const char *name);

#endif
