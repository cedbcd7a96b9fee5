/* The layers of a safetensors file: its JSON header read by a small parser
 * of exactly what the format needs (an object of tensors, each with dtype,
 * shape and data_offsets; __metadata__ skipped), the tensors checked against
 * the file and grouped into layers (layout.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "workload/layout.h"

#define MAX_HEADER (100u << 20)
#define MAX_NAME 512
#define MAX_DEPTH 32

struct tensor {
	char name[MAX_NAME];
	uint64_t begin, end; /* file offsets */
};

struct json {
	const char *s, *p, *end, *path;
	char *err;
	size_t n;
};

__attribute__((format(printf, 2, 3))) static int bad(struct json *j,
						     const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(j->err, j->n, "%s: header byte %td: ", j->path,
			 j->p - j->s);

	if (k >= 0 && (size_t)k < j->n) {
		va_start(ap, fmt);
		vsnprintf(j->err + k, j->n - k, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static void ws(struct json *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p) && *j->p)
		j->p++;
}

/* Consumes c after white space, or fails saying what was due. */
static int expect(struct json *j, char c, const char *due)
{
	ws(j);
	if (j->p == j->end || *j->p != c)
		return bad(j, "expected %s; the JSON header is malformed", due);
	j->p++;
	return 0;
}

static int peek(struct json *j, char c)
{
	ws(j);
	return j->p < j->end && *j->p == c;
}

/* The byte an escape stands for, 0 when it is not one JSON knows. */
static unsigned unescape(char c)
{
	switch (c) {
	case '"':
	case '\\':
	case '/':
		return (unsigned char)c;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	}
	return 0;
}

/* A string into out (cap bytes with its NUL); \u escapes become UTF-8. */
static int string(struct json *j, char *out, size_t cap)
{
	size_t k = 0;

	if (expect(j, '"', "a string"))
		return -1;
	while (j->p < j->end && *j->p != '"') {
		unsigned u = (unsigned char)*j->p++;
		char enc[3] = { (char)u };
		size_t len = 1;

		if (u < 0x20)
			return bad(j,
				   "control byte %#x inside a string; the JSON header is malformed",
				   u);
		if (u == '\\' && j->p < j->end && *j->p == 'u') {
			if (j->end - j->p < 5 ||
			    sscanf(j->p + 1, "%4x", &u) != 1)
				return bad(j,
					   "bad \\u escape; the JSON header is malformed");
			j->p += 5;
			if (u >= 0x800) {
				enc[0] = (char)(0xe0 | u >> 12);
				enc[1] = (char)(0x80 | (u >> 6 & 0x3f));
				enc[2] = (char)(0x80 | (u & 0x3f));
				len = 3;
			} else if (u >= 0x80) {
				enc[0] = (char)(0xc0 | u >> 6);
				enc[1] = (char)(0x80 | (u & 0x3f));
				len = 2;
			} else {
				enc[0] = (char)u;
			}
		} else if (u == '\\') {
			if (j->p == j->end || !(u = unescape(*j->p)))
				return bad(j,
					   "bad escape in a string; the JSON header is malformed");
			j->p++;
			enc[0] = (char)u;
		}
		if (k + len >= cap)
			return bad(j,
				   "a name longer than %zu bytes; shorten it",
				   cap - 1);
		memcpy(out + k, enc, len);
		k += len;
	}
	if (j->p == j->end)
		return bad(j,
			   "a string runs past the end of the header; the file is truncated or the length is wrong");
	j->p++;
	out[k] = '\0';
	return 0;
}

static int u64(struct json *j, uint64_t *out)
{
	unsigned long long v;
	char *end;

	ws(j);
	if (j->p == j->end || *j->p < '0' || *j->p > '9')
		return bad(j,
			   "expected a non-negative integer; fix the header");
	errno = 0;
	v = strtoull(j->p, &end, 10);
	if (errno || (end < j->end && strchr(".eE", *end)))
		return bad(j,
			   "integer out of range or not whole; fix the header");
	j->p = end;
	*out = v;
	return 0;
}

/* Skips any value (metadata, fields this reader does not use). */
static int skip(struct json *j, int depth)
{
	char tmp[MAX_NAME];

	if (depth > MAX_DEPTH)
		return bad(j,
			   "nested deeper than %d; the JSON header is malformed",
			   MAX_DEPTH);
	ws(j);
	if (j->p == j->end)
		return bad(j,
			   "the header ends where a value was due; the file is truncated or the length is wrong");
	if (*j->p == '"') {
		/* Long metadata strings: skip without copying. */
		for (j->p++; j->p < j->end && *j->p != '"'; j->p++)
			if (*j->p == '\\' && j->p + 1 < j->end)
				j->p++;
		return j->p < j->end ?
			       (j->p++, 0) :
			       bad(j,
				   "a string runs past the end of the header; the file is truncated");
	}
	if (*j->p == '{' || *j->p == '[') {
		char close = *j->p++ == '{' ? '}' : ']';

		if (peek(j, close))
			return j->p++, 0;
		do {
			if (close == '}' && (string(j, tmp, sizeof(tmp)) ||
					     expect(j, ':', "':'")))
				return -1;
			if (skip(j, depth + 1))
				return -1;
		} while (peek(j, ',') && j->p++);
		return expect(j, close,
			      close == '}' ? "',' or '}'" : "',' or ']'");
	}
	const char *start = j->p;

	while (j->p < j->end && strchr("+-.0123456789eEtruefalsn", *j->p) &&
	       *j->p)
		j->p++;
	return j->p > start ?
		       0 :
		       bad(j, "unexpected '%c'; the JSON header is malformed",
			   *j->p);
}

static uint64_t dtype_bytes(const char *d)
{
	static const struct {
		const char *name;
		uint64_t bytes;
	} t[] = {
		{ "BOOL", 1 },    { "U8", 1 },  { "I8", 1 },  { "F8_E4M3", 1 },
		{ "F8_E5M2", 1 }, { "I16", 2 }, { "U16", 2 }, { "F16", 2 },
		{ "BF16", 2 },    { "I32", 4 }, { "U32", 4 }, { "F32", 4 },
		{ "I64", 8 },     { "U64", 8 }, { "F64", 8 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(d, t[i].name))
			return t[i].bytes;
	return 0;
}

/* One tensor's object; its byte count checked against dtype x shape. */
static int tensor(struct json *j, struct tensor *t, uint64_t data_len)
{
	char key[MAX_NAME], dtype[32] = "";
	uint64_t elems = 1, v, off[2];
	int have_off = 0, have_shape = 0;

	if (expect(j, '{', "'{' opening tensor's fields"))
		return -1;
	do {
		if (string(j, key, sizeof(key)) || expect(j, ':', "':'"))
			return -1;
		if (!strcmp(key, "dtype")) {
			if (string(j, dtype, sizeof(dtype)))
				return -1;
		} else if (!strcmp(key, "shape")) {
			have_shape = 1;
			if (expect(j, '[', "'[' opening the shape"))
				return -1;
			if (!peek(j, ']'))
				do {
					if (u64(j, &v))
						return -1;
					if (v && elems > UINT64_MAX / v)
						return bad(j,
							   "tensor '%s': shape overflows 64 bits; fix the header",
							   t->name);
					elems *= v;
				} while (peek(j, ',') && j->p++);
			if (expect(j, ']', "',' or ']' in the shape"))
				return -1;
		} else if (!strcmp(key, "data_offsets")) {
			have_off = 1;
			if (expect(j, '[', "'[' opening data_offsets") ||
			    u64(j, &off[0]) ||
			    expect(j, ',',
				   "',' between the two data_offsets") ||
			    u64(j, &off[1]) ||
			    expect(j, ']', "']' after two data_offsets"))
				return -1;
		} else if (skip(j, 1)) {
			return -1;
		}
	} while (peek(j, ',') && j->p++);
	if (expect(j, '}', "',' or '}' in a tensor"))
		return -1;
	if (!have_off || !have_shape || !dtype[0])
		return bad(j,
			   "tensor '%s' has no %s; give dtype, shape and data_offsets",
			   t->name,
			   !have_off   ? "data_offsets" :
			   !have_shape ? "shape" :
					 "dtype");
	if (!dtype_bytes(dtype))
		return bad(j,
			   "tensor '%s': unknown dtype '%s'; use F16, BF16, F32, I8, ... (the safetensors dtypes)",
			   t->name, dtype);
	if (off[0] > off[1] || off[1] > data_len)
		return bad(j,
			   "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64
			   "] are not within the %" PRIu64
			   " data bytes; the file is truncated or the header wrong",
			   t->name, off[0], off[1], data_len);
	if (elems > UINT64_MAX / dtype_bytes(dtype) ||
	    elems * dtype_bytes(dtype) != off[1] - off[0])
		return bad(j,
			   "tensor '%s': shape x %s is not the %" PRIu64
			   " bytes of its data_offsets; fix the header",
			   t->name, dtype, off[1] - off[0]);
	t->begin = off[0];
	t->end = off[1];
	return 0;
}

static int by_begin(const void *a, const void *b)
{
	const struct tensor *x = a, *y = b;

	return x->begin < y->begin ? -1 :
	       x->begin > y->begin ? 1 :
				     (x->end > y->end) - (x->end < y->end);
}

/* Sorted, disjoint tensors into layers: runs of one layer key merge. */
static int group(struct tensor *t, size_t nt, const char *path,
		 struct layout *out, char *err, size_t n)
{
	struct layout_tensor *lt = calloc(nt ? nt : 1, sizeof(*lt));
	int rc;

	if (!lt) {
		snprintf(err, n, "%s: no memory for %zu tensors", path, nt);
		return -1;
	}
	for (size_t i = 0; i < nt; i++)
		lt[i] = (struct layout_tensor){ t[i].name, t[i].begin,
						t[i].end };
	rc = layout_group(lt, nt, path, out, err, n);
	free(lt);
	return rc;
}

/* The header's tensors, data offsets made file offsets. */
static int tensors(struct json *j, uint64_t data_start, uint64_t data_len,
		   struct tensor **out, size_t *nt)
{
	size_t cap = 0;
	char name[MAX_NAME];

	*out = NULL;
	*nt = 0;
	if (expect(j, '{', "'{' opening the header"))
		return -1;
	if (!peek(j, '}'))
		do {
			if (string(j, name, sizeof(name)) ||
			    expect(j, ':', "':' after a name"))
				return -1;
			if (!strcmp(name, "__metadata__")) {
				if (skip(j, 1))
					return -1;
				continue;
			}
			if (*nt == cap) {
				size_t grow = cap ? cap * 2 : 256;
				void *p = grow > LAYOUT_MAX_LAYERS ?
						  NULL :
						  realloc(*out,
							  grow * sizeof(**out));

				if (!p)
					return bad(j,
						   "more than %zu tensors or no memory; a smaller model",
						   cap);
				*out = p;
				cap = grow;
			}
			struct tensor *t = &(*out)[*nt];

			snprintf(t->name, sizeof(t->name), "%s", name);
			if (tensor(j, t, data_len))
				return -1;
			t->begin += data_start;
			t->end += data_start;
			if (t->end > t->begin)
				(*nt)++; /* an empty tensor has no bytes to read */
		} while (peek(j, ',') && j->p++);
	if (expect(j, '}', "',' or '}' after a tensor"))
		return -1;
	ws(j);
	if (j->p != j->end)
		return bad(j,
			   "bytes after the header's object; the header length is wrong");
	return 0;
}

int safetensors_layers(const char *path, struct layout *out, char *err,
		       size_t n)
{
	unsigned char le[8];
	uint64_t hlen = 0, size;
	struct tensor *t = NULL;
	struct stat st;
	char *hdr = NULL;
	size_t nt = 0;
	int rc = -1;
	FILE *f;

	errno = 0;
	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) || fread(le, 1, 8, f) != 8) {
		snprintf(err, n,
			 "cannot read the safetensors file %s: %s; give a readable file",
			 path,
			 errno ? strerror(errno) : "shorter than 8 bytes");
		goto out;
	}
	size = (uint64_t)st.st_size;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | le[i];
	if (hlen < 2 || hlen > MAX_HEADER || hlen > size - 8) {
		snprintf(err, n,
			 "%s: header length %" PRIu64
			 " (the first 8 bytes, little-endian) %s; not a safetensors file (a text table must begin with text), or truncated",
			 path, hlen,
			 hlen > MAX_HEADER ? "is over 100 MiB" :
			 hlen < 2          ? "is too short for '{}'" :
					     "runs past the end of the file");
		goto out;
	}
	hdr = malloc(hlen + 1); /* NUL-terminated: strtoull stops there */
	if (!hdr || fread(hdr, 1, hlen, f) != hlen) {
		snprintf(err, n,
			 "%s: cannot read the %" PRIu64 "-byte header: %s",
			 path, hlen, hdr ? "read error" : "no memory");
		goto out;
	}
	hdr[hlen] = '\0';
	struct json j = { hdr, hdr, hdr + hlen, path, err, n };

	if (tensors(&j, 8 + hlen, size - 8 - hlen, &t, &nt))
		goto out;
	qsort(t, nt, sizeof(*t), by_begin);
	for (size_t i = 1; i < nt; i++)
		if (t[i].begin < t[i - 1].end) {
			snprintf(err, n,
				 "%s: tensors '%s' and '%s' overlap at file offset %" PRIu64
				 "; the header is corrupt",
				 path, t[i - 1].name, t[i].name, t[i].begin);
			goto out;
		}
	rc = group(t, nt, path, out, err, n);
out:
	if (f)
		fclose(f);
	free(hdr);
	free(t);
	return rc;
}
