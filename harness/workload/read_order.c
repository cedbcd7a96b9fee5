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

/* The embeddings and what goes with them (an embedding norm). */
static int embedding(const char *name)
{
	return strstr(name, "embd") || strstr(name, "embed") ||
	       strstr(name, "wte") || strstr(name, "wpe");
}

int64_t read_order_rank(const char *name, int64_t nblocks)
{
	int64_t b = read_order_block(name);

	if (b >= 0)
		return 1 + b;
	if (embedding(name))
		return 0;
	if (strstr(name, "norm") || strstr(name, "ln_f"))
		return nblocks + 1;
	if (strstr(name, "output") || strstr(name, "lm_head"))
		return nblocks + 2;
	return 0; /* embeddings, rope tables: read first */
}

/* An embedding table, which a decoder reads by rows. */
static int rows_table(const char *name)
{
	return read_order_block(name) < 0 && !strstr(name, "norm") &&
	       embedding(name);
}

/* One more than the highest block number among the names. */
static int64_t blocks_of(const struct layout *l)
{
	int64_t nblocks = 0;

	for (uint32_t i = 0; l->names && i < l->nlayers; i++) {
		int64_t b = read_order_block(l->names[i]);

		if (b >= nblocks)
			nblocks = b + 1;
	}
	return nblocks;
}

/* Whether the model has an output head of its own; without one (tied
 * embeddings) the embedding table is the head, read whole each pass. */
static int has_head(const struct layout *l, int64_t nblocks)
{
	for (uint32_t i = 0; l->names && i < l->nlayers; i++)
		if (read_order_rank(l->names[i], nblocks) == nblocks + 2)
			return 1;
	return 0;
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
 * earliest layer is (chunk 0, which holds the header, where its first
 * tensor is: a tied embedding table, the head, is read last). */
static int rank_chunks(struct read_order *o, char *err, size_t n)
{
	struct layout *l = &o->lay;
	int64_t *rank = calloc(l->nchunks, sizeof(*rank));
	int64_t nblocks = blocks_of(l);
	int head = has_head(l, nblocks);

	o->seq = malloc(l->nchunks * sizeof(*o->seq));
	if (!rank || !o->seq) {
		free(rank);
		snprintf(err, n,
			 "no memory for the order of %" PRIu32 " chunks",
			 l->nchunks);
		return -1;
	}
	for (uint32_t c = 0; c < l->nchunks; c++)
		rank[c] = INT64_MAX;
	for (uint32_t i = 0; i < l->nlayers; i++) {
		int64_t r = l->names ? read_order_rank(l->names[i], nblocks) :
				       (int64_t)i;
		uint32_t c = l->layers[i].chunk;

		if (l->names && !head && rows_table(l->names[i]))
			r = nblocks + 2;
		if (r < rank[c])
			rank[c] = r;
	}
	for (uint32_t c = 0; c < l->nchunks; c++)
		o->seq[c] = c;
	o->nseq = l->nchunks;
	qsort_r(o->seq, l->nchunks, sizeof(*o->seq), by_rank, rank);
	free(rank);
	return 0;
}

/* The largest chunk, in whole pages, and its id. */
static void find_largest(struct read_order *o)
{
	o->largest = 0;
	for (uint32_t c = 0; c < o->lay.nchunks; c++) {
		uint64_t pages = (o->lay.chunks[c].len + 4095) & ~4095ull;

		if (pages > o->largest) {
			o->largest = pages;
			o->largest_id = c;
		}
	}
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
	find_largest(o);
	if (rank_chunks(o, err, n)) {
		read_order_free(o);
		return -1;
	}
	return 0;
}

/* Which chunks hold nothing but embedding tables read by rows (the model
 * having a head of its own). */
static void by_rows(const struct layout *l, uint8_t *rows)
{
	int head = has_head(l, blocks_of(l));

	memset(rows, 2, l->nchunks); /* 2: no layer seen yet */
	for (uint32_t i = 0; head && i < l->nlayers; i++) {
		uint8_t *r = &rows[l->layers[i].chunk];

		*r = *r && rows_table(l->names[i]);
	}
	for (uint32_t c = 0; c < l->nchunks; c++)
		rows[c] = rows[c] == 1;
}

int read_order_split(struct read_order *o, uint64_t max, uint64_t rows,
		     char *err, size_t n)
{
	struct layout *l = &o->lay;
	struct resid_chunk_spec *old = l->chunks, *cs = NULL;
	uint32_t *first, *seq = NULL, total = 0, k = 0;
	uint64_t *cut;
	uint8_t *row;

	max &= ~4095ull;
	rows &= ~4095ull;
	if (!max || !rows)
		return 0;
	first = malloc(l->nchunks * sizeof(*first));
	cut = malloc(l->nchunks * sizeof(*cut));
	row = malloc(l->nchunks);
	if (first && cut && row) {
		by_rows(l, row);
		for (uint32_t c = 0; c < l->nchunks; c++) {
			cut[c] = row[c] && rows < max ? rows : max;
			first[c] = total;
			total += (uint32_t)((old[c].len + cut[c] - 1) / cut[c]);
		}
		cs = malloc(total * sizeof(*cs));
		seq = cs ? malloc(total * sizeof(*seq)) : NULL;
	}
	if (!seq) {
		free(first);
		free(cut);
		free(row);
		free(cs);
		snprintf(err, n,
			 "no memory to cut %" PRIu32 " chunks into "
			 "pieces of %" PRIu64 " bytes",
			 l->nchunks, max);
		return -1;
	}
	for (uint32_t c = 0; c < l->nchunks; c++)
		for (uint64_t at = 0; at < old[c].len; at += cut[c])
			cs[first[c] + at / cut[c]] = (struct resid_chunk_spec){
				old[c].off + at, old[c].len - at < cut[c] ?
							 old[c].len - at :
							 cut[c]
			};
	/* Pieces keep their chunk's place in the order, in file order; the
	 * pieces of a table read by rows have no place in it. */
	for (uint32_t i = 0; i < o->nseq; i++) {
		uint32_t c = o->seq[i],
			 end = c + 1 < l->nchunks ? first[c + 1] : total;

		for (uint32_t p = first[c]; !row[c] && p < end; p++)
			seq[k++] = p;
	}
	for (uint32_t i = 0; i < l->nlayers; i++) {
		uint32_t c = l->layers[i].chunk;

		l->layers[i].chunk = first[c] + (uint32_t)((l->layers[i].off -
							    old[c].off) /
							   cut[c]);
	}
	free(first);
	free(cut);
	free(row);
	free(old);
	free(o->seq);
	l->chunks = cs;
	l->nchunks = total;
	o->seq = seq;
	o->nseq = k;
	find_largest(o);
	return 0;
}

int read_order_align(struct read_order *o, uint64_t folio, char *err, size_t n)
{
	struct layout *l = &o->lay;
	struct resid_chunk_spec *cs = malloc(l->nchunks * sizeof(*cs));
	uint32_t *to = malloc(l->nchunks * sizeof(*to)), m = 0, k = 0;
	uint8_t *in = calloc(l->nchunks, 1);

	if (!cs || !to || !in) {
		free(cs);
		free(to);
		free(in);
		snprintf(err, n, "no memory to align %" PRIu32 " chunks",
			 l->nchunks);
		return -1;
	}
	for (uint32_t c = 0; c < l->nchunks; c++) {
		uint64_t at = l->chunks[c].off / folio * folio;

		if (!m || cs[m - 1].off != at)
			cs[m++].off = at;
		to[c] = m - 1;
	}
	for (uint32_t j = 0; j < m; j++)
		cs[j].len = (j + 1 < m ? cs[j + 1].off : l->region_len) -
			    cs[j].off;
	for (uint32_t i = 0; i < o->nseq; i++)
		if (!in[to[o->seq[i]]]++)
			o->seq[k++] = to[o->seq[i]];
	for (uint32_t i = 0; i < l->nlayers; i++)
		l->layers[i].chunk = to[l->layers[i].chunk];
	free(l->chunks);
	free(to);
	free(in);
	l->chunks = cs;
	l->nchunks = m;
	o->nseq = k;
	find_largest(o);
	return 0;
}

void read_order_free(struct read_order *o)
{
	layout_free(&o->lay);
	free(o->seq);
	o->seq = NULL;
}
