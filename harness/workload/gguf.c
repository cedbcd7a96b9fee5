/* The one GGUF reader (gguf_reader.h; versions 2 and 3): its header read
 * as the format lays it out (magic, version, tensor and metadata counts;
 * the metadata's key-value pairs, of which general.alignment and
 * general.architecture are kept; each tensor's name, dimensions, type and
 * data offset), the tensors' sizes from their ggml types, checked against
 * the file. The layers of a GGUF file are its tensors grouped by their
 * blk.<n>. prefix (layout.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "workload/gguf_reader.h"
#include "workload/layout.h"

#define MAX_STRING (1u << 20) /* a key, a name or a metadata string */
#define MAX_TENSORS (1u << 20)
#define MAX_DIMS 4

enum {
	T_U8,
	T_I8,
	T_U16,
	T_I16,
	T_U32,
	T_I32,
	T_F32,
	T_BOOL,
	T_STRING,
	T_ARRAY,
	T_U64,
	T_I64,
	T_F64,
	T_COUNT
};

struct reader {
	FILE *f;
	const char *path;
	uint64_t pos, size;
	char *err;
	size_t n;
};

__attribute__((format(printf, 2, 3))) static int bad(struct reader *r,
						     const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(r->err, r->n, "%s: GGUF header byte %" PRIu64 ": ",
			 r->path, r->pos);

	if (k >= 0 && (size_t)k < r->n) {
		va_start(ap, fmt);
		vsnprintf(r->err + k, r->n - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int bytes(struct reader *r, void *dst, uint64_t len)
{
	if (len > r->size - r->pos || fread(dst, 1, len, r->f) != len)
		return bad(r,
			   "the file ends inside the header; it is truncated or not GGUF");
	r->pos += len;
	return 0;
}

static int skip(struct reader *r, uint64_t len)
{
	if (len > r->size - r->pos ||
	    fseeko(r->f, (off_t)(r->pos + len), SEEK_SET))
		return bad(r,
			   "the file ends inside the header; it is truncated or not GGUF");
	r->pos += len;
	return 0;
}

/* Little-endian, as GGUF is written (and this machine reads). */
static int u32(struct reader *r, uint32_t *v)
{
	return bytes(r, v, sizeof(*v));
}

static int u64(struct reader *r, uint64_t *v)
{
	return bytes(r, v, sizeof(*v));
}

/* A string: u64 length, then its bytes; into *out (NUL-terminated) or
 * skipped when out is NULL. */
static int string(struct reader *r, char **out)
{
	uint64_t len;

	if (u64(r, &len))
		return -1;
	if (len > MAX_STRING)
		return bad(r,
			   "a string of %" PRIu64
			   " bytes (over 1 MiB); the header is corrupt",
			   len);
	if (!out)
		return skip(r, len);
	*out = malloc(len + 1);
	if (!*out)
		return bad(r, "no memory for a string");
	if (bytes(r, *out, len)) {
		free(*out);
		*out = NULL;
		return -1;
	}
	(*out)[len] = '\0';
	return 0;
}

static uint64_t scalar_size(uint32_t type)
{
	static const uint8_t size[T_COUNT] = {
		[T_U8] = 1,  [T_I8] = 1,  [T_U16] = 2, [T_I16] = 2,
		[T_U32] = 4, [T_I32] = 4, [T_F32] = 4, [T_BOOL] = 1,
		[T_U64] = 8, [T_I64] = 8, [T_F64] = 8,
	};

	return type < T_COUNT ? size[type] : 0;
}

/* A metadata value of `type`, skipped; general.alignment and
 * general.architecture are kept in h. */
static int value(struct reader *r, uint32_t type, const char *key,
		 struct gguf_header *h)
{
	uint32_t et, a;
	uint64_t count;
	char *s = NULL;

	if (!strcmp(key, "general.architecture")) {
		if (type != T_STRING)
			return bad(r,
				   "general.architecture has type %" PRIu32
				   ", not string (8)",
				   type);
		if (string(r, &s))
			return -1;
		snprintf(h->arch, sizeof(h->arch), "%s", s);
		free(s);
		return 0;
	}
	if (type == T_STRING)
		return string(r, NULL);
	if (type == T_ARRAY) {
		if (u32(r, &et) || u64(r, &count))
			return -1;
		if (et == T_STRING) {
			for (uint64_t i = 0; i < count; i++)
				if (string(r, NULL))
					return -1;
			return 0;
		}
		if (!scalar_size(et))
			return bad(r,
				   "key '%s': an array of type %" PRIu32
				   "; GGUF arrays hold scalars or strings",
				   key, et);
		if (count > r->size / scalar_size(et))
			return bad(r,
				   "key '%s': an array of %" PRIu64
				   " elements, more than the file holds",
				   key, count);
		return skip(r, count * scalar_size(et));
	}
	if (!scalar_size(type))
		return bad(r,
			   "key '%s': value type %" PRIu32
			   " is not a GGUF type (0..12)",
			   key, type);
	if (!strcmp(key, "general.alignment")) {
		if (type != T_U32)
			return bad(r,
				   "general.alignment has type %" PRIu32
				   ", not uint32 (4)",
				   type);
		if (u32(r, &a))
			return -1;
		if (!a || a & (a - 1))
			return bad(r,
				   "general.alignment %" PRIu32
				   " is not a power of two",
				   a);
		h->alignment = a;
		return 0;
	}
	return skip(r, scalar_size(type));
}

/* ggml's types: elements per block and bytes per block (ggml.c's
 * type_traits); 0 where the id is unused or removed. */
static int ggml_type(uint32_t t, uint64_t *blck, uint64_t *bytes_)
{
	static const struct {
		uint16_t blck, bytes;
	} tt[] = {
		[0] = { 1, 4 },      /* F32 */
		[1] = { 1, 2 },      /* F16 */
		[2] = { 32, 18 },    /* Q4_0 */
		[3] = { 32, 20 },    /* Q4_1 */
		[6] = { 32, 22 },    /* Q5_0 */
		[7] = { 32, 24 },    /* Q5_1 */
		[8] = { 32, 34 },    /* Q8_0 */
		[9] = { 32, 36 },    /* Q8_1 */
		[10] = { 256, 84 },  /* Q2_K */
		[11] = { 256, 110 }, /* Q3_K */
		[12] = { 256, 144 }, /* Q4_K */
		[13] = { 256, 176 }, /* Q5_K */
		[14] = { 256, 210 }, /* Q6_K */
		[15] = { 256, 292 }, /* Q8_K */
		[16] = { 256, 66 },  /* IQ2_XXS */
		[17] = { 256, 74 },  /* IQ2_XS */
		[18] = { 256, 98 },  /* IQ3_XXS */
		[19] = { 256, 50 },  /* IQ1_S */
		[20] = { 32, 18 },   /* IQ4_NL */
		[21] = { 256, 110 }, /* IQ3_S */
		[22] = { 256, 82 },  /* IQ2_S */
		[23] = { 256, 136 }, /* IQ4_XS */
		[24] = { 1, 1 },     /* I8 */
		[25] = { 1, 2 },     /* I16 */
		[26] = { 1, 4 },     /* I32 */
		[27] = { 1, 8 },     /* I64 */
		[28] = { 1, 8 },     /* F64 */
		[29] = { 256, 56 },  /* IQ1_M */
		[30] = { 1, 2 },     /* BF16 */
		[34] = { 256, 54 },  /* TQ1_0 */
		[35] = { 256, 66 },  /* TQ2_0 */
		[39] = { 32, 17 },   /* MXFP4 */
	};

	if (t >= sizeof(tt) / sizeof(tt[0]) || !tt[t].blck)
		return -1;
	*blck = tt[t].blck;
	*bytes_ = tt[t].bytes;
	return 0;
}

static int tensor_info(struct reader *r, struct layout_tensor *t,
		       uint64_t *n_params)
{
	uint32_t nd, type;
	uint64_t dim, elems = 1, blck, per, rows;

	if (string(r, &t->name) || u32(r, &nd))
		return -1;
	if (!nd || nd > MAX_DIMS)
		return bad(r,
			   "tensor '%s' has %" PRIu32
			   " dimensions; GGUF gives 1 to 4",
			   t->name, nd);
	uint64_t ne0 = 0;

	for (uint32_t d = 0; d < nd; d++) {
		if (u64(r, &dim))
			return -1;
		if (d == 0)
			ne0 = dim;
		if (dim && elems > UINT64_MAX / dim)
			return bad(r,
				   "tensor '%s': its dimensions overflow 64 bits; the header is corrupt",
				   t->name);
		elems *= dim;
	}
	if (u32(r, &type) || u64(r, &t->begin))
		return -1;
	if (ggml_type(type, &blck, &per))
		return bad(r,
			   "tensor '%s': ggml type %" PRIu32
			   " is not one this reader knows (F32, F16, BF16, Q4_0..Q8_K, IQ*, TQ*, MXFP4, I8..F64)",
			   t->name, type);
	if (ne0 % blck)
		return bad(r,
			   "tensor '%s': its first dimension %" PRIu64
			   " is not a multiple of its type's block of %" PRIu64,
			   t->name, ne0, blck);
	rows = ne0 ? elems / ne0 : 0;
	if (ne0 / blck && rows > UINT64_MAX / (ne0 / blck * per))
		return bad(r,
			   "tensor '%s': its size overflows 64 bits; the header is corrupt",
			   t->name);
	t->end = t->begin + ne0 / blck * per * rows;
	if (t->end < t->begin)
		return bad(r,
			   "tensor '%s': offset + size overflow 64 bits; the header is corrupt",
			   t->name);
	*n_params += elems;
	return 0;
}

static int by_begin(const void *a, const void *b)
{
	const struct layout_tensor *x = a, *y = b;

	return (x->begin > y->begin) - (x->begin < y->begin);
}

int gguf_is(const char *path)
{
	char magic[4];
	FILE *f = fopen(path, "rb");
	int is = f && fread(magic, 1, 4, f) == 4 && !memcmp(magic, "GGUF", 4);

	if (f)
		fclose(f);
	return is;
}

static int header(struct reader *r, struct gguf_header *h)
{
	char magic[4], *key = NULL;
	uint32_t type;
	uint64_t align;
	struct layout_tensor *t;

	if (bytes(r, magic, 4) || memcmp(magic, "GGUF", 4))
		return bad(r, "no GGUF magic; give a GGUF file");
	if (u32(r, &h->version))
		return -1;
	if (h->version != 2 && h->version != 3)
		return bad(r,
			   "GGUF version %" PRIu32
			   "; this reader takes versions 2 and 3",
			   h->version);
	if (u64(r, &h->n_tensors) || u64(r, &h->n_kv))
		return -1;
	if (h->n_tensors > MAX_TENSORS)
		return bad(r,
			   "%" PRIu64
			   " tensors (more than %u); the header is corrupt",
			   h->n_tensors, MAX_TENSORS);
	for (uint64_t i = 0; i < h->n_kv; i++) {
		if (string(r, &key) || u32(r, &type) ||
		    value(r, type, key, h)) {
			free(key);
			return -1;
		}
		free(key);
		key = NULL;
	}
	t = h->t = calloc(h->n_tensors ? h->n_tensors : 1, sizeof(*t));
	if (!t)
		return bad(r, "no memory for %" PRIu64 " tensors",
			   h->n_tensors);
	for (uint64_t i = 0; i < h->n_tensors; i++)
		if (tensor_info(r, &t[i], &h->n_params))
			return -1;
	align = h->alignment;
	h->data_offset = (r->pos + align - 1) / align * align;
	for (uint64_t i = 0; i < h->n_tensors; i++) {
		if (t[i].begin % align)
			return bad(r,
				   "tensor '%s': data offset %" PRIu64
				   " is not aligned to general.alignment %" PRIu64,
				   t[i].name, t[i].begin, align);
		if (t[i].end > r->size - h->data_offset ||
		    h->data_offset > r->size)
			return bad(r,
				   "tensor '%s': its data [%" PRIu64
				   ", %" PRIu64
				   ") after the header reach past the file's %" PRIu64
				   " bytes; the file is truncated",
				   t[i].name, t[i].begin, t[i].end, r->size);
		t[i].begin += h->data_offset;
		t[i].end += h->data_offset;
	}
	return 0;
}

void gguf_header_free(struct gguf_header *h)
{
	for (uint64_t i = 0; h->t && i < h->n_tensors; i++)
		free(h->t[i].name);
	free(h->t);
	h->t = NULL;
}

int gguf_header_read(const char *path, struct gguf_header *h, char *err,
		     size_t n)
{
	struct reader r = { .path = path, .err = err, .n = n };
	struct stat st;
	int rc = -1;

	memset(h, 0, sizeof(*h));
	h->alignment = 32; /* GGUF's default */
	r.f = fopen(path, "rb");
	if (!r.f || fstat(fileno(r.f), &st)) {
		snprintf(err, n,
			 "cannot read the GGUF file %s: %s; give a readable file",
			 path, strerror(errno));
	} else {
		r.size = (uint64_t)st.st_size;
		rc = header(&r, h);
	}
	if (r.f)
		fclose(r.f);
	return rc;
}

int gguf_layers(const char *path, struct layout *out, char *err, size_t n)
{
	struct gguf_header h;
	struct layout_tensor *t;
	uint64_t kept = 0;
	int rc = -1;

	if (gguf_header_read(path, &h, err, n))
		goto out;
	t = h.t;
	for (uint64_t i = 0; i < h.n_tensors; i++)
		if (t[i].end > t[i].begin) /* an empty tensor has no bytes */
			t[kept++] = t[i];
		else
			free(t[i].name);
	h.n_tensors = kept;
	qsort(t, kept, sizeof(*t), by_begin);
	for (uint64_t i = 1; i < kept; i++)
		if (t[i].begin < t[i - 1].end) {
			snprintf(err, n,
				 "%s: tensors '%s' and '%s' overlap at file offset %" PRIu64
				 "; the header is corrupt",
				 path, t[i - 1].name, t[i].name, t[i].begin);
			goto out;
		}
	if (!kept) {
		snprintf(err, n, "%s: no tensor with data; give a GGUF model",
			 path);
		goto out;
	}
	rc = layout_group(t, kept, path, out, err, n);
out:
	gguf_header_free(&h);
	return rc;
}
