/* Trace file reader and writer; the format is in trace.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/trace.h"
#include "base/err_line.h"
#include "resid.h"

#define MAGIC "residctl-trace"
#define HEADER "'residctl-trace 1 reference' or 'residctl-trace 1 fault'"

struct reader {
	FILE *f;
	const char *path;
	uint64_t line;
	char *buf;
	size_t cap;
	char *err;
	size_t errlen;
	uint64_t rec, nrec; /* record being read, of how many */
};

__attribute__((format(printf, 2, 3))) static int bad(struct reader *r,
						     const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, r->errlen, "%s:%" PRIu64 ": ", r->path, r->line);
	if (n >= 0 && (size_t)n < r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The next line, without its newline, in r->buf; `what` names what was due
 * there, for the truncation error (NULL: record rec of nrec). */
static int next_line(struct reader *r, const char *what)
{
	ssize_t len;

	errno = 0;
	len = getline(&r->buf, &r->cap, r->f);
	r->line++;
	if (len < 0 && ferror(r->f))
		return bad(r, "read error: %s", strerror(errno));
	if (len < 0 && what)
		return bad(r,
			   "truncated: the file ends where %s was due; rewrite the trace",
			   what);
	if (len < 0)
		return bad(r,
			   "truncated: the file ends where record %" PRIu64
			   " of %" PRIu64 " was due; rewrite the trace",
			   r->rec + 1, r->nrec);
	if (r->buf[len - 1] != '\n')
		return bad(r,
			   "truncated: the last line has no newline; rewrite the trace");
	r->buf[--len] = '\0';
	if (len && r->buf[len - 1] == '\r')
		return bad(r,
			   "line ends in CR (a DOS file); convert it with dos2unix");
	if (strlen(r->buf) != (size_t)len)
		return bad(r,
			   "NUL byte in the line; a trace is text, see harness/analysis/trace.h");
	return 0;
}

/* Plain decimal below 2^64: returns the character after it, or NULL. */
static const char *num(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return NULL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return NULL;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return s;
}

/* A line "KEY N". */
static int field(struct reader *r, const char *key, uint64_t *v)
{
	size_t k = strlen(key);
	const char *p;
	char what[32];

	snprintf(what, sizeof(what), "the '%s N' line", key);
	if (next_line(r, what))
		return -1;
	if (strncmp(r->buf, key, k) || r->buf[k] != ' ' ||
	    !(p = num(r->buf + k + 1, v)) || *p)
		return bad(r, "expected '%s N', got '%.60s'", key, r->buf);
	return 0;
}

static int header(struct reader *r, struct trace *t)
{
	size_t m = strlen(MAGIC);
	const char *p;
	uint64_t v;

	if (next_line(r, "the header " HEADER))
		return -1;
	if (strncmp(r->buf, MAGIC " ", m + 1))
		return bad(r,
			   "not a residctl trace (first line '%.60s'); the first line must be " HEADER,
			   r->buf);
	p = num(r->buf + m + 1, &v);
	if (!p || *p != ' ')
		return bad(r, "bad header '%.60s'; expected " HEADER, r->buf);
	if (v != 1)
		return bad(r,
			   "trace version %" PRIu64
			   "; this residctl reads version 1, rewrite the trace with it",
			   v);
	if (!strcmp(p + 1, "reference"))
		t->kind = TRACE_REFERENCE;
	else if (!strcmp(p + 1, "fault"))
		t->kind = TRACE_FAULT;
	else
		return bad(r,
			   "trace kind '%.60s'; expected 'reference' or 'fault'",
			   p + 1);

	if (field(r, "chunks", &v))
		return -1;
	if (v == 0 || v > TRACE_MAX_CHUNKS)
		return bad(r, "chunks %" PRIu64 "; give 1..%u", v,
			   TRACE_MAX_CHUNKS);
	t->nchunks = (uint32_t)v;
	t->sizes = malloc(v * sizeof(*t->sizes));
	if (!t->sizes)
		return bad(r, "no memory for %" PRIu64 " chunk sizes", v);
	return 0;
}

static int size_ok(struct reader *r, uint64_t bytes)
{
	if (bytes == 0 || bytes % RESID_PAGE)
		return bad(r,
			   "chunk size %" PRIu64
			   "; sizes must be > 0 and a multiple of 4096",
			   bytes);
	return 0;
}

static int sizes(struct reader *r, struct trace *t)
{
	uint64_t id, bytes;
	const char *p;
	uint32_t c;

	if (next_line(r, "the 'chunk-size BYTES' or 'size 0 BYTES' line"))
		return -1;
	if (!strncmp(r->buf, "chunk-size ", 11)) {
		if (!(p = num(r->buf + 11, &bytes)) || *p)
			return bad(r,
				   "expected 'chunk-size BYTES', got '%.60s'",
				   r->buf);
		if (size_ok(r, bytes))
			return -1;
		for (c = 0; c < t->nchunks; c++)
			t->sizes[c] = bytes;
		return 0;
	}
	for (c = 0; c < t->nchunks; c++) {
		if (c && next_line(r, "a 'size ID BYTES' line"))
			return -1;
		if (strncmp(r->buf, "size ", 5) ||
		    !(p = num(r->buf + 5, &id)) || *p != ' ' ||
		    !(p = num(p + 1, &bytes)) || *p)
			return bad(r,
				   "expected 'size %" PRIu32
				   " BYTES'%s, got '%.60s'",
				   c, c ? "" : " or 'chunk-size BYTES'",
				   r->buf);
		if (id != c)
			return bad(r,
				   "size line for chunk %" PRIu64
				   " where chunk %" PRIu32
				   " was due; list every chunk once, in id order",
				   id, c);
		if (size_ok(r, bytes))
			return -1;
		t->sizes[c] = bytes;
	}
	return 0;
}

static int records(struct reader *r, struct trace *t)
{
	uint64_t n, i, v, cap = 0;
	const char *p;
	uint32_t *seq;

	if (field(r, "accesses", &n))
		return -1;
	if (n > SIZE_MAX / sizeof(*t->seq))
		return bad(r,
			   "accesses %" PRIu64
			   " is more than this machine can hold",
			   n);
	r->nrec = n;
	for (i = 0; i < n; i++) {
		r->rec = i;
		if (next_line(r, NULL))
			return -1;
		if (!(p = num(r->buf, &v)) || *p)
			return bad(r,
				   "record '%.60s' is not a chunk id; one decimal id per line",
				   r->buf);
		if (v >= t->nchunks)
			return bad(r,
				   "chunk id %" PRIu64
				   " out of range; this trace has %" PRIu32
				   " chunks (ids 0..%" PRIu32 ")",
				   v, t->nchunks, t->nchunks - 1);
		/* Grow with the file, not the header, so a lying count
		 * cannot make us allocate what is not there. */
		if (i == cap) {
			cap = cap ? (cap > n / 2 ? n : cap * 2) :
				    (n < 4096 ? n : 4096);
			seq = realloc(t->seq, cap * sizeof(*seq));
			if (!seq)
				return bad(r,
					   "no memory for %" PRIu64 " records",
					   cap);
			t->seq = seq;
		}
		t->seq[i] = (uint32_t)v;
		t->n = i + 1;
	}
	errno = 0;
	if (getline(&r->buf, &r->cap, r->f) >= 0) {
		r->line++;
		return bad(r,
			   "more records than the %" PRIu64
			   " declared; fix the 'accesses' line",
			   n);
	}
	if (ferror(r->f))
		return bad(r, "read error: %s", strerror(errno));
	return 0;
}

int trace_read(const char *path, struct trace *out, char *err, size_t errlen)
{
	struct reader r = { .path = path, .err = err, .errlen = errlen };
	struct trace t = { 0 };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	r.f = fopen(path, "r");
	if (!r.f) {
		snprintf(err, errlen,
			 "%s: cannot open: %s; give the path of a trace the workload wrote",
			 path, strerror(errno));
		return -1;
	}
	if (!header(&r, &t) && !sizes(&r, &t) && !records(&r, &t))
		rc = 0;
	free(r.buf);
	if (fclose(r.f) && rc == 0) {
		snprintf(err, errlen, "%s: close: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc)
		trace_free(&t);
	else
		*out = t;
	return rc;
}

int trace_write(const char *path, const struct trace *t, char *err,
		size_t errlen)
{
	int equal = 1, ok;
	uint64_t i;
	uint32_t c;
	FILE *f;

	if (t->kind != TRACE_REFERENCE && t->kind != TRACE_FAULT)
		return err_line(
			err, errlen,
			"%s: trace kind %d; use TRACE_REFERENCE or TRACE_FAULT",
			path, (int)t->kind);
	if (t->nchunks == 0 || t->nchunks > TRACE_MAX_CHUNKS)
		return err_line(err, errlen,
				"%s: %" PRIu32 " chunks; give 1..%u", path,
				t->nchunks, TRACE_MAX_CHUNKS);
	for (c = 0; c < t->nchunks; c++) {
		if (t->sizes[c] == 0 || t->sizes[c] % RESID_PAGE)
			return err_line(err, errlen,
					"%s: chunk %" PRIu32 " size %" PRIu64
					"; sizes must be > 0 and a multiple of 4096",
					path, c, t->sizes[c]);
		equal &= t->sizes[c] == t->sizes[0];
	}
	for (i = 0; i < t->n; i++)
		if (t->seq[i] >= t->nchunks)
			return err_line(err, errlen,
					"%s: access %" PRIu64
					" names chunk %" PRIu32 " of %" PRIu32
					"; ids run 0..chunks-1",
					path, i, t->seq[i], t->nchunks);

	f = fopen(path, "w");
	if (!f)
		return err_line(err, errlen, "%s: cannot create: %s", path,
				strerror(errno));
	ok = fprintf(f, MAGIC " 1 %s\nchunks %" PRIu32 "\n",
		     t->kind == TRACE_FAULT ? "fault" : "reference",
		     t->nchunks) >= 0;
	if (equal)
		ok = ok &&
		     fprintf(f, "chunk-size %" PRIu64 "\n", t->sizes[0]) >= 0;
	for (c = 0; ok && !equal && c < t->nchunks; c++)
		ok = fprintf(f, "size %" PRIu32 " %" PRIu64 "\n", c,
			     t->sizes[c]) >= 0;
	ok = ok && fprintf(f, "accesses %" PRIu64 "\n", t->n) >= 0;
	for (i = 0; ok && i < t->n; i++)
		ok = fprintf(f, "%" PRIu32 "\n", t->seq[i]) >= 0;
	/* A failed write leaves a file the reader refuses as truncated. */
	if (fclose(f))
		ok = 0;
	if (!ok)
		return err_line(err, errlen, "%s: write failed: %s", path,
				strerror(errno));
	return 0;
}

void trace_free(struct trace *t)
{
	free(t->sizes);
	free(t->seq);
	memset(t, 0, sizeof(*t));
}
