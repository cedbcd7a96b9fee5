/* A real layout (design.md §2.1 step 7): the byte ranges the
 * application reads as layers, from a file, and the pager's chunk table
 * derived from them.
 *
 * The file is either a text table, one layer per line in file order:
 *     # comment (also after a layer); blank lines are skipped
 *     0x2a0 1048576        offset length, decimal or 0x hex
 * or a safetensors file (read when its first 8 bytes are not all text): an
 * 8-byte little-endian header length N, N bytes of JSON naming each tensor's
 * data_offsets, the data from 8 + N. Tensors are taken in offset order and
 * grouped: consecutive tensors named `<prefix>.layers.<n>.` (or `.h.<n>.`,
 * `.blocks.<n>.`) form one layer, any other tensor is a layer of its own;
 * or a GGUF file (it begins with "GGUF"; gguf.c).
 *
 * Layers start and end anywhere; the pager wants 4096-aligned, contiguous
 * chunks from offset 0. Chunk boundaries are the page floors of the layers'
 * starts (the first chunk starts at 0 and also holds what precedes the first
 * layer, e.g. the header): a layer's first byte is always in its own chunk,
 * layers starting in the same page share one, and a layer's last bytes may
 * lie in the first page of the next chunk. The region ends with the last
 * layer (the last chunk may end unaligned). */
#ifndef HARNESS_LAYOUT_H
#define HARNESS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "resid.h"

#define LAYOUT_MAX_LAYERS (1u << 20)

struct layout_layer {
	uint64_t off, len;
	uint32_t chunk; /* the chunk holding its first byte */
};

struct layout {
	uint32_t nlayers, nchunks;
	struct layout_layer *layers;     /* in file order */
	struct resid_chunk_spec *chunks; /* for resid_config.table */
	uint64_t region_len;             /* end of the last layer */
	char **names;                    /* a layer's first tensor's name
					  * (safetensors, GGUF), else NULL */
	uint32_t names_cap;
};

/* Reads a text table, or a safetensors or GGUF header, from path. 0 with
 * *out filled (release with layout_free), or -1 with one line in err
 * naming the file, the line or field, and the fix; *out is then empty. */
int layout_read(const char *path, struct layout *out, char *err, size_t n);

/* Derives the chunks from out->layers (sorted, disjoint, non-empty); -1 only
 * when out of memory. Used by the readers and the tests. */
int layout_derive(struct layout *out, char *err, size_t n);

/* The last chunk a layer's bytes reach (its own, or the next one). */
uint32_t layout_last_chunk(const struct layout *l, uint32_t layer);

/* The largest chunk in whole pages: the least budget the pager takes. */
uint64_t layout_largest_chunk(const struct layout *l);

/* Frees and empties l. Safe on an empty layout. */
void layout_free(struct layout *l);

/* For the readers: appends a layer after the checks both formats share
 * (non-empty, no overflow, after the previous one, not too many); `what`
 * names it in an error ("line 7", "tensor 'x'"). *cap: slots allocated. */
int layout_add(struct layout *l, uint32_t *cap, uint64_t off, uint64_t len,
	       const char *path, const char *what, char *err, size_t n);

/* Names the layer just added (its first tensor). -1 only without memory. */
int layout_name(struct layout *l, const char *name, char *err, size_t n);

/* The length of a tensor name's layer key: the name up to the number that
 * "blk.", "layers.", "h." or "blocks." (at the start or after a dot)
 * introduces, "model.layers.3" of "model.layers.3.mlp.w"; 0 if none. The
 * number goes to *block when block is not NULL. */
size_t layout_layer_key(const char *name, int64_t *block);

/* A tensor of a file, for layout_group. */
struct layout_tensor {
	char *name;
	uint64_t begin, end; /* file offsets */
};

/* Appends the tensors (in file order) to out as layers: consecutive
 * tensors with the same layer key form one, any other is one of its own. */
int layout_group(const struct layout_tensor *t, size_t nt, const char *path,
		 struct layout *out, char *err, size_t n);

/* safetensors.c: the layers of a safetensors file (data_offsets made file
 * offsets, grouped as above) appended to out; -1 with err. */
int safetensors_layers(const char *path, struct layout *out, char *err,
		       size_t n);

/* gguf.c: whether the file begins with GGUF's magic, and its tensors as
 * layers (consecutive tensors named blk.<n>. form one, any other is one of
 * its own; data offsets made file offsets), appended to out; -1 with err
 * naming the file, the field and the fix. Versions 2 and 3. */
int gguf_is(const char *path);
int gguf_layers(const char *path, struct layout *out, char *err, size_t n);

#endif
