/* A whole file's chunks and their read order (read_order.h): the layers of
 * its tensor table, chunked as layout.h says, ranked by where a decoder
 * reads each tensor in a pass, so that a file whose tensors are stored in
 * another order (safetensors sorts by name: layers.10 before layers.2;
 * some GGUF files put output.weight first) is still declared in the order
 * it is read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/read_order.h"

int64_t read_order_block(const char *name)
{
	int64_t block;

	return layout_layer_key(name, &block) ? block : -1;
}

int64_t read_order_rank(const char *name, int64_t nblocks)
{
	int64_t b = read_order_block(name);

	if (b >= 0)
		return 1 + b;
	if (strstr(name, "embd") || strstr(name, "embed") ||
	    strstr(name, "wte") || strstr(name, "wpe"))
		return 0;
	if (strstr(name, "norm") || strstr(name, "ln_f"))
		return nblocks + 1;
	if (strstr(name, "output") || strstr(name, "lm_head"))
		return nblocks + 2;
	return 0; /* embeddings, rope tables: read first */
}

/* Equal chunks of `chunk` bytes over size, as layers of their own. */
static int equal(struct layout *l, uint64_t size, uint64_t chunk, char *err,
		 size_t n)
{
	uint32_t cap = 0;

	for (uint64_t off = 0; off < size; off += chunk)
		if (layout_add(l, &cap, off,
			       size - off < chunk ? size - off : chunk,
			       "equal chunks", "a chunk", err, n))
			return -1;
	return layout_derive(l, err, n);
}

/* safetensors: an 8-byte header length within the file, then '{'. */
static int looks_safetensors(const char *path, uint64_t size)
{
	unsigned char b[9];
	uint64_t h = 0;
	FILE *f = fopen(path, "rb");
	int ok = f && fread(b, 1, 9, f) == 9;

	if (f)
		fclose(f);
	for (int i = 7; ok && i >= 0; i--)
		h = h << 8 | b[i];
	return ok && h >= 2 && h <= size - 8 && b[8] == '{';
}

static int by_rank(const void *a, const void *b, void *arg)
{
	const int64_t *rank = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (rank[x] != rank[y])
		return rank[x] < rank[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/* The chunks ranked by their layers' names: a chunk is read where its
 * earliest layer is; chunk 0 (the header) first. */
static int rank_chunks(struct read_order *o, char *err, size_t n)
{
	struct layout *l = &o->lay;
	int64_t *rank = calloc(l->nchunks, sizeof(*rank)), nblocks = 0;

	o->seq = malloc(l->nchunks * sizeof(*o->seq));
	if (!rank || !o->seq) {
		free(rank);
		snprintf(err, n,
			 "no memory for the order of %" PRIu32 " chunks",
			 l->nchunks);
		return -1;
	}
	for (uint32_t i = 0; l->names && i < l->nlayers; i++) {
		int64_t b = read_order_block(l->names[i]);

		if (b >= nblocks)
			nblocks = b + 1;
	}
	for (uint32_t c = 0; c < l->nchunks; c++)
		rank[c] = INT64_MAX;
	for (uint32_t i = 0; i < l->nlayers; i++) {
		int64_t r = l->names ? read_order_rank(l->names[i], nblocks) :
				       (int64_t)i;
		uint32_t c = l->layers[i].chunk;

		if (r < rank[c])
			rank[c] = r;
	}
	rank[0] = -1;
	for (uint32_t c = 0; c < l->nchunks; c++)
		o->seq[c] = c;
	qsort_r(o->seq, l->nchunks, sizeof(*o->seq), by_rank, rank);
	free(rank);
	return 0;
}

int read_order_make(const char *path, uint64_t size, const char *order,
		    uint64_t chunk, struct read_order *o, char *err, size_t n)
{
	struct layout *l = &o->lay;
	int rc;

	memset(o, 0, sizeof(*o));
	if (order && strcmp(order, "auto")) {
		o->source = "table";
		rc = layout_read(order, l, err, n);
	} else if (gguf_is(path)) {
		o->source = "gguf";
		rc = gguf_layers(path, l, err, n);
		rc = rc ? rc : layout_derive(l, err, n);
	} else if (looks_safetensors(path, size)) {
		o->source = "safetensors";
		rc = safetensors_layers(path, l, err, n);
		rc = rc ? rc : layout_derive(l, err, n);
	} else {
		o->source = "equal";
		rc = equal(l, size, chunk, err, n);
	}
	if (rc) {
		layout_free(l);
		return -1;
	}
	if (l->region_len > size) {
		snprintf(err, n,
			 "the layout %s ends at byte %" PRIu64
			 ", past the %" PRIu64
			 " bytes of %s; give the layout of this file",
			 order ? order : path, l->region_len, size, path);
		read_order_free(o);
		return -1;
	}
	/* the region is the whole file: the last chunk takes the tail */
	l->chunks[l->nchunks - 1].len = size - l->chunks[l->nchunks - 1].off;
	l->region_len = size;
	for (uint32_t c = 0; c < l->nchunks; c++) {
		uint64_t pages = (l->chunks[c].len + 4095) & ~4095ull;

		if (pages > o->largest) {
			o->largest = pages;
			o->largest_id = c;
		}
	}
	if (rank_chunks(o, err, n)) {
		read_order_free(o);
		return -1;
	}
	return 0;
}

/* The piece of chunk c that holds byte off, once split (first[c] is its
 * first piece). */
static uint32_t piece_of(const struct resid_chunk_spec *old, uint32_t c,
			 const uint32_t *first, uint64_t max, uint64_t off)
{
	return first[c] + (uint32_t)((off - old[c].off) / max);
}

int read_order_split(struct read_order *o, uint64_t max, char *err, size_t n)
{
	struct layout *l = &o->lay;
	struct resid_chunk_spec *old = l->chunks, *cs;
	uint32_t *first, *seq, total = 0, k = 0;

	max &= ~4095ull;
	if (!max || o->largest <= max)
		return 0;
	first = malloc(l->nchunks * sizeof(*first));
	for (uint32_t c = 0; first && c < l->nchunks; c++) {
		first[c] = total;
		total += (uint32_t)((old[c].len + max - 1) / max);
	}
	cs = first ? malloc(total * sizeof(*cs)) : NULL;
	seq = cs ? malloc(total * sizeof(*seq)) : NULL;
	if (!seq) {
		free(first);
		free(cs);
		snprintf(err, n,
			 "no memory to cut %" PRIu32 " chunks into "
			 "pieces of %" PRIu64 " bytes",
			 l->nchunks, max);
		return -1;
	}
	for (uint32_t c = 0; c < l->nchunks; c++)
		for (uint64_t at = 0; at < old[c].len; at += max)
			cs[first[c] + at / max] = (struct resid_chunk_spec){
				old[c].off + at,
				old[c].len - at < max ? old[c].len - at : max
			};
	/* Pieces keep their chunk's place in the order, in file order. */
	for (uint32_t i = 0; i < l->nchunks; i++) {
		uint32_t c = o->seq[i];

		for (uint32_t p = first[c];
		     p < first[c] + (uint32_t)((old[c].len + max - 1) / max);
		     p++)
			seq[k++] = p;
	}
	for (uint32_t i = 0; i < l->nlayers; i++)
		l->layers[i].chunk = piece_of(old, l->layers[i].chunk, first,
					      max, l->layers[i].off);
	o->largest_id = first[o->largest_id];
	o->largest = max;
	free(first);
	free(old);
	free(o->seq);
	l->chunks = cs;
	l->nchunks = total;
	o->seq = seq;
	return 0;
}

void read_order_free(struct read_order *o)
{
	layout_free(&o->lay);
	free(o->seq);
	o->seq = NULL;
}
