/* The interposer's configuration, from the variables residctl run sets
 * (docs/run.md lists them). A malformed value is refused with a line
 * naming the variable; the interposer then hands the file's mappings to the
 * kernel and says why at each one. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload.h"

/* A whole decimal number, nothing after it. */
static int dec(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*end = s;
	*out = v;
	return 0;
}

void preload_ident_read(struct preload_ident *id)
{
	const char *f = getenv("RESIDCTL_RUN_FILE");
	const char *v = getenv("RESIDCTL_RUN_ID"), *p;
	const char *rep = getenv("RESIDCTL_RUN_REPORT");
	uint64_t x[3];

	memset(id, 0, sizeof(*id));
	if (!f || !*f)
		return;
	id->set = 1;
	/* a record nobody asked for is only lost, never wrong */
	if (rep && rep[0] == '/' && strlen(rep) < sizeof(id->report))
		strcpy(id->report, rep);
	if (f[0] != '/' || strlen(f) >= sizeof(id->path)) {
		snprintf(id->err, sizeof(id->err),
			 "RESIDCTL_RUN_FILE '%.200s' is not an absolute path; residctl run sets it",
			 f);
		return;
	}
	strcpy(id->path, f);
	p = v;
	for (int i = 0; i < 3; i++)
		if (!p || dec(p, &p, &x[i]) || *p != (i < 2 ? ':' : '\0')) {
			snprintf(id->err, sizeof(id->err),
				 "RESIDCTL_RUN_ID '%.60s' is not DEV:INO:SIZE in decimal; residctl run sets it",
				 v ? v : "(unset)");
			return;
		} else if (i < 2) {
			p++;
		}
	id->dev = x[0];
	id->ino = x[1];
	id->size = x[2];
	id->id_ok = 1;
}

/* A comma-separated list of decimals into a new array; -1 on a malformed
 * one, -2 without memory. */
static int list(const char *s, uint64_t **out, uint32_t *n)
{
	uint32_t cap = 0, k = 0;
	uint64_t *a = NULL, v;

	*out = NULL;
	*n = 0;
	if (!*s)
		return 0;
	for (;;) {
		if (dec(s, &s, &v)) {
			free(a);
			return -1;
		}
		if (k == cap) {
			uint64_t *g = cap >= (1u << 20) ?
					      NULL :
					      realloc(a, (cap ? cap * 2 : 64) *
								 sizeof(*a));

			if (!g) {
				free(a);
				return cap >= (1u << 20) ? -1 : -2;
			}
			a = g;
			cap = cap ? cap * 2 : 64;
		}
		a[k++] = v;
		if (!*s)
			break;
		if (*s++ != ',') {
			free(a);
			return -1;
		}
	}
	*out = a;
	*n = k;
	return 0;
}

/* The reason into c->err; -1. */
#define BAD(...) bad(c, __VA_ARGS__)

__attribute__((format(printf, 2, 3))) static int bad(struct preload_cfg *c,
						     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int chunks(struct preload_cfg *c, const char *v, uint64_t size)
{
	uint64_t *at;
	uint32_t n;
	int rc = list(v, &at, &n);

	if (rc == -2)
		return BAD(
			"no memory for the chunk table of RESIDCTL_RUN_CHUNKS");
	if (rc || !n)
		return BAD(
			"RESIDCTL_RUN_CHUNKS is not a comma-separated list of chunk start offsets in decimal; residctl run sets it");
	c->table = malloc(n * sizeof(*c->table));
	if (!c->table) {
		free(at);
		return BAD(
			"no memory for the chunk table of RESIDCTL_RUN_CHUNKS");
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? at[i + 1] : size;

		if ((i == 0 && at[0] != 0) || at[i] % RESID_PAGE ||
		    end <= at[i]) {
			BAD("RESIDCTL_RUN_CHUNKS: chunk %u starts at %llu: chunks start at 0, on 4096-byte pages, in increasing order, before the file's end (%llu bytes)",
			    i, (unsigned long long)at[i],
			    (unsigned long long)size);
			free(at);
			return -1;
		}
		c->table[i].off = at[i];
		c->table[i].len = end - at[i];
	}
	free(at);
	c->nchunks = n;
	return 0;
}

static int order(struct preload_cfg *c, const char *v)
{
	uint64_t *seq;
	uint32_t n;
	int rc = list(v, &seq, &n);

	if (rc == -2)
		return BAD("no memory for RESIDCTL_RUN_ORDER");
	if (rc || n > c->nchunks) {
		free(seq);
		return BAD("RESIDCTL_RUN_ORDER is not at most %u comma-separated chunk ids (one cycle of the read order, each chunk at most once); residctl run sets it",
			   c->nchunks);
	}
	if (n && !(c->order = malloc(n * sizeof(*c->order)))) {
		free(seq);
		return BAD("no memory for RESIDCTL_RUN_ORDER");
	}
	for (uint32_t i = 0; i < n; i++) {
		if (seq[i] >= c->nchunks) {
			BAD("RESIDCTL_RUN_ORDER: chunk id %llu at position %u is not below the %u chunks",
			    (unsigned long long)seq[i], i, c->nchunks);
			free(seq);
			return -1;
		}
		c->order[i] = (uint32_t)seq[i];
	}
	c->order_len = n;
	free(seq);
	return 0;
}

static int text(struct preload_cfg *c, const char *name, char *dst, size_t cap)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return 0;
	if (v[0] != '/' || strlen(v) >= cap)
		return BAD("%s '%.200s' is not an absolute path", name, v);
	strcpy(dst, v);
	return 0;
}

static int cfg_read(struct preload_cfg *c, uint64_t size)
{
	const char *v, *end;
	uint64_t x;

	v = getenv("RESIDCTL_RUN_BUDGET");
	if (!v || dec(v, &end, &x) || *end || !x)
		return BAD("RESIDCTL_RUN_BUDGET '%.40s' is not a positive decimal byte count; residctl run sets it from --budget",
			   v ? v : "(unset)");
	c->budget = x;
	v = getenv("RESIDCTL_RUN_POLICY");
	if (v && *v && resid_policy_parse(v, &c->policy))
		return BAD("RESIDCTL_RUN_POLICY '%.40s' is not lru, learned or declared",
			   v);
	v = getenv("RESIDCTL_RUN_PREFETCH");
	if (v && *v && (dec(v, &end, &x) || *end || x > 64))
		return BAD("RESIDCTL_RUN_PREFETCH '%.40s' is not a chunk count 0..64",
			   v);
	c->prefetch = v && *v ? (uint32_t)x : 0;
	if (text(c, "RESIDCTL_RUN_HUGE_DIR", c->huge_dir, sizeof(c->huge_dir)))
		return -1;
	v = getenv("RESIDCTL_RUN_TRACE");
	if (v && *v && strcmp(v, "1"))
		return BAD("RESIDCTL_RUN_TRACE '%.40s' is not 1; residctl run sets it from --trace",
			   v);
	c->trace = v && *v;
	v = getenv("RESIDCTL_RUN_CHUNKS");
	if (chunks(c, v ? v : "", size))
		return -1;
	v = getenv("RESIDCTL_RUN_ORDER");
	return order(c, v ? v : "");
}

void preload_cfg_read(struct preload_cfg *c, uint64_t size)
{
	memset(c, 0, sizeof(*c));
	c->policy = RESID_POLICY_DECLARED;
	c->ok = cfg_read(c, size) == 0;
	if (!c->ok) {
		free(c->table);
		free(c->order);
		c->table = NULL;
		c->order = NULL;
	}
}
