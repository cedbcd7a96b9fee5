/* Shards of a campaign and the report a shard writes (campaign.h), as
 * JSON through jansson. Numbers that may pass 2^63 (seeds, hashes) are
 * strings. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign/campaign.h"
#include "campaign/report.h"
#include "rev.h"

#define MAX_ROWS 64

struct campaign_row {
	json_t *o;
	uint64_t findings;
	int bad; /* jansson could not add something: the write fails */
};

struct campaign {
	json_t *root, *rows;
	struct campaign_row row[MAX_ROWS];
	int nrows, oom;
};

int shard_parse(const char *v, struct shard *s, char *err, size_t en)
{
	char *end;
	unsigned long long k, n;

	k = strtoull(v, &end, 10);
	if (end != v && *end == '/' && end[1] >= '0' && end[1] <= '9') {
		n = strtoull(end + 1, &end, 10);
		if (!*end && v[0] >= '0' && v[0] <= '9' && k >= 1 && k <= n &&
		    n <= 1000000) {
			s->k = k;
			s->n = n;
			return 0;
		}
	}
	snprintf(err, en,
		 "bad shard '%s'; give K/N with 1 <= K <= N <= "
		 "1000000, K counting from 1 (Kubernetes: "
		 "JOB_COMPLETION_INDEX + 1)",
		 v);
	return -1;
}

int shard_opt(void *dst, const char *where, const char *v, char *err, size_t n)
{
	(void)where;
	return shard_parse(v, dst, err, n);
}

uint64_t shard_units(uint64_t size, uint64_t k, uint64_t n)
{
	return size >= k ? (size - k) / n + 1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t distinct_u64(uint64_t *v, size_t n)
{
	uint64_t d = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		d += !i || v[i] != v[i - 1];
	return d;
}

static json_t *hex(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%016" PRIx64, v);
	return json_string(b);
}

static json_t *dec(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	return json_string(b);
}

struct campaign *campaign_new(const char *command, const char *identity,
			      uint64_t seed, uint64_t size, const char *unit,
			      const struct shard *sh)
{
	struct campaign *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->rows = json_array();
	c->root = json_pack("{s:s, s:{s:s, s:s, s:s, s:o, s:I, s:s}, "
			    "s:{s:I, s:I}}",
			    "format", CAMPAIGN_FORMAT, "campaign", "command",
			    command, "identity", identity, "rev", RESID_REV,
			    "seed", dec(seed), "size", (json_int_t)size, "unit",
			    unit, "shard", "k", (json_int_t)(sh->n ? sh->k : 1),
			    "n", (json_int_t)(sh->n ? sh->n : 1));
	if (!c->root || !c->rows ||
	    json_object_set_new(c->root, "rows", c->rows)) {
		json_decref(c->root);
		free(c);
		return NULL;
	}
	return c;
}

struct campaign_row *campaign_row(struct campaign *c, const char *name,
				  uint64_t size)
{
	for (int i = 0; i < c->nrows; i++)
		if (!strcmp(json_string_value(
				    json_object_get(c->row[i].o, "name")),
			    name))
			return &c->row[i];
	json_t *o = json_pack("{s:s, s:I, s:I, s:{}, s:{}, s:[], s:[], s:[], "
			      "s:I, s:I, s:I}",
			      "name", name, "order", (json_int_t)c->nrows,
			      "size", (json_int_t)size, "counters", "maxima",
			      "require", "samples", "findings",
			      "findings_total", (json_int_t)0, "failing",
			      (json_int_t)0, "ran", (json_int_t)0);

	if (!o || c->nrows == MAX_ROWS || json_array_append_new(c->rows, o)) {
		c->oom = 1; /* the write fails */
		return NULL;
	}
	c->row[c->nrows].o = o;
	return &c->row[c->nrows++];
}

/* Adds v to (or, max, keeps the larger in) obj's count name. */
static void add(struct campaign_row *r, json_t *obj, const char *name,
		uint64_t v, int max)
{
	json_t *o = json_object_get(obj, name);
	json_int_t old = o ? json_integer_value(o) : 0;
	json_int_t x = (json_int_t)v;

	r->bad |= json_object_set_new(obj, name,
				      json_integer(max ? (x > old ? x : old) :
							 old + x));
}

static void append(struct campaign_row *r, const char *key, json_t *v)
{
	r->bad |= json_array_append_new(json_object_get(r->o, key), v);
}

void row_ran(struct campaign_row *r, uint64_t units)
{
	add(r, r->o, "ran", units, 0);
}

void row_count(struct campaign_row *r, const char *name, uint64_t v)
{
	add(r, json_object_get(r->o, "counters"), name, v, 0);
}

void row_max(struct campaign_row *r, const char *name, uint64_t v)
{
	add(r, json_object_get(r->o, "maxima"), name, v, 1);
}

void row_require(struct campaign_row *r, const char *counter)
{
	append(r, "require", json_string(counter));
}

void row_hashes(struct campaign_row *r, const uint64_t *h, size_t n)
{
	if (!json_object_get(r->o, "interleavings"))
		r->bad |= json_object_set_new(r->o, "interleavings",
					      json_array());
	for (size_t i = 0; i < n; i++)
		append(r, "interleavings", hex(h[i]));
}

void row_sample(struct campaign_row *r, uint64_t v)
{
	append(r, "samples", json_integer((json_int_t)v));
}

static json_t *finding(uint64_t index, int fails, const char *what,
		       const char *line)
{
	return json_pack("{s:I, s:b, s:s, s:s?}", "index", (json_int_t)index,
			 "fails", fails, "what", what ? what : "", "line",
			 line);
}

void row_finding(struct campaign_row *r, uint64_t index, int fails,
		 const char *what, const char *line)
{
	if (r->findings++ < FINDINGS_MAX)
		append(r, "findings", finding(index, fails, what, line));
	add(r, r->o, "findings_total", 1, 0);
	add(r, r->o, "failing", fails != 0, 0);
}

void row_first(struct campaign_row *r, uint64_t index, const char *what,
	       const char *line)
{
	json_t *old = json_object_get(r->o, "first");

	if (!old || json_integer_value(json_object_get(old, "index")) >
			    (json_int_t)index)
		r->bad |= json_object_set_new(r->o, "first",
					      finding(index, 1, what, line));
}

int campaign_write(struct campaign *c, const char *path, double seconds)
{
	char tmp[4200];
	FILE *f;

	for (int i = 0; i < c->nrows; i++)
		c->oom |= c->row[i].bad;
	if (c->oom ||
	    json_object_set_new(c->root, "seconds", json_real(seconds))) {
		fprintf(stderr, "residctl: out of memory for the report %s\n",
			path);
		return -1;
	}
	if (!(f = open_tmp(path, tmp, sizeof(tmp))))
		return -1;
	if (json_dumpf(c->root, f, JSON_INDENT(1)) < 0) {
		fprintf(stderr, "residctl: cannot write %s: out of memory\n",
			path);
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fputc('\n', f);
	return close_tmp(f, tmp, path);
}

void campaign_free(struct campaign *c)
{
	if (!c)
		return;
	json_decref(c->root);
	free(c);
}
