/* Shard reports (campaign.h) checked and combined: one campaign, every
 * shard 1..N exactly once, each having run all of its units; then rows
 * joined by name: counters summed, maxima kept, interleavings as a set,
 * samples and findings by index. A smaller campaign is an error, never a
 * verdict. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "campaign/merge.h"

/* One line on stderr; returns -1. */
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("residctl merge: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	return -1;
}

/* Merging runs only in the tool: out of memory ends it, with a line. */
static void *zalloc(size_t n, size_t size)
{
	void *p = calloc(n + 1, size);

	if (!p) {
		fprintf(stderr, "residctl merge: out of memory\n");
		exit(2);
	}
	return p;
}

uint64_t merge_u64(const json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	return v > 0 ? (uint64_t)v : 0;
}

const char *merge_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

#define u merge_u64
#define str merge_str

/* "explore 'T-3 strategy=pct:3 ..' seed 1, rev R": a campaign, named. */
static void describe(const json_t *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s '%s' seed %s, %" PRIu64 " %s, rev %s",
		 str(c, "command"), str(c, "identity"), str(c, "seed"),
		 u(c, "size"), str(c, "unit"), str(c, "rev"));
}

static json_t *load(const char *path)
{
	json_error_t e;
	json_t *r = json_load_file(path, 0, &e);

	if (!r) {
		if (e.line > 0)
			fail("cannot read %s: %s (line %d)\n", path, e.text,
			     e.line);
		else
			fail("cannot read %s: %s\n", path, e.text);
		return NULL;
	}
	if (strcmp(str(r, "format"), CAMPAIGN_FORMAT) ||
	    !json_is_object(json_object_get(r, "campaign")) ||
	    !json_is_array(json_object_get(r, "rows"))) {
		fail("%s is not a campaign report (%s); write one with "
		     "--report\n",
		     path, CAMPAIGN_FORMAT);
		json_decref(r);
		return NULL;
	}
	return r;
}

static int cmp_index(const void *a, const void *b)
{
	uint64_t x = u(*(json_t *const *)a, "index");
	uint64_t y = u(*(json_t *const *)b, "index");

	return x < y ? -1 : x > y;
}

static void sum_into(json_t *dst, const json_t *src, int max)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)src, k, v) {
		uint64_t a = u(dst, k), b = (uint64_t)json_integer_value(v);

		json_object_set_new(dst, k,
				    json_integer(
					    (json_int_t)(max ? (a > b ? a : b) :
							       a + b)));
	}
}

static void append_all(json_t *dst, const json_t *src)
{
	size_t i;
	json_t *v;

	json_array_foreach(src, i, v)
		json_array_append(dst, v);
}

/* Adds shard row s into merged row m (same name). */
static int join(json_t *m, const json_t *s)
{
	if (u(m, "size") != u(s, "size"))
		return fail("row %s has %" PRIu64
			    " units in one shard and %" PRIu64 " in another\n",
			    str(s, "name"), u(m, "size"), u(s, "size"));
	json_object_set_new(m, "ran",
			    json_integer(
				    (json_int_t)(u(m, "ran") + u(s, "ran"))));
	json_object_set_new(m, "findings_total",
			    json_integer((json_int_t)(u(m, "findings_total") +
						      u(s, "findings_total"))));
	json_object_set_new(m, "failing",
			    json_integer((json_int_t)(u(m, "failing") +
						      u(s, "failing"))));
	sum_into(json_object_get(m, "counters"), json_object_get(s, "counters"),
		 0);
	sum_into(json_object_get(m, "maxima"), json_object_get(s, "maxima"), 1);
	append_all(json_object_get(m, "samples"),
		   json_object_get(s, "samples"));
	append_all(json_object_get(m, "findings"),
		   json_object_get(s, "findings"));
	append_all(json_object_get(m, "interleavings"),
		   json_object_get(s, "interleavings"));
	json_t *f = json_object_get(s, "first"),
	       *g = json_object_get(m, "first");

	if (f && (!g || u(f, "index") < u(g, "index")))
		json_object_set(m, "first", f);
	return 0;
}

/* A shard row's copy to merge into. */
static json_t *start_row(const json_t *s)
{
	json_t *m = json_deep_copy(s);

	if (!json_is_array(json_object_get(m, "interleavings")))
		json_object_set_new(m, "interleavings", json_array());
	return m;
}

/* Sorts, counts the interleavings, cuts the findings, gives the verdict. */
static void finish(json_t *m, struct merged *mg)
{
	json_t *samples = json_object_get(m, "samples");
	json_t *fl = json_object_get(m, "findings");
	json_t *il = json_object_get(m, "interleavings");
	size_t n = json_array_size(il), i;
	uint64_t d;
	uint64_t *h = zalloc(n, sizeof(*h));
	char reason[512] = "";
	json_t *v;

	json_array_foreach(il, i, v)
		h[i] = strtoull(json_string_value(v) ? json_string_value(v) :
						       "0",
				NULL, 16);
	d = distinct_u64(h, n);
	free(h);
	if (n)
		json_object_set_new(json_object_get(m, "counters"),
				    "interleavings",
				    json_integer((json_int_t)d));
	json_object_del(m, "interleavings");

	n = json_array_size(samples);
	uint64_t *sv = zalloc(n, sizeof(*sv));

	json_array_foreach(samples, i, v)
		sv[i] = (uint64_t)json_integer_value(v);
	distinct_u64(sv, n); /* sorts them */
	json_array_clear(samples);
	for (i = 0; i < n; i++)
		json_array_append_new(samples, json_integer((json_int_t)sv[i]));
	free(sv);

	n = json_array_size(fl);
	json_t **fv = zalloc(n, sizeof(*fv));

	json_array_foreach(fl, i, v)
		fv[i] = json_incref(v);
	qsort(fv, n, sizeof(*fv), cmp_index);
	json_array_clear(fl);
	for (i = 0; i < n; i++) {
		if (i < FINDINGS_MAX)
			json_array_append(fl, fv[i]);
		json_decref(fv[i]);
	}
	free(fv);

	if (u(m, "failing"))
		snprintf(reason, sizeof(reason),
			 "%" PRIu64 " of %" PRIu64 " %s failed",
			 u(m, "failing"), u(m, "ran"),
			 str(mg->campaign, "unit"));
	json_array_foreach(json_object_get(m, "require"), i, v) {
		const char *c = json_string_value(v);
		const json_t *cs = json_object_get(m, "counters");

		if (c && !u(cs, c) && !u(cs, "not_run") && !reason[0])
			snprintf(reason, sizeof(reason),
				 "%s never happened in "
				 "%" PRIu64 " %s",
				 c, u(m, "ran"), str(mg->campaign, "unit"));
	}
	json_object_set_new(m, "passed", json_boolean(!reason[0]));
	json_object_set_new(m, "reason", json_string(reason));
	mg->failed += reason[0] != 0;
}

static int cmp_order(const void *a, const void *b)
{
	uint64_t x = u(*(json_t *const *)a, "order");
	uint64_t y = u(*(json_t *const *)b, "order");

	return x < y ? -1 : x > y;
}

/* Joins report r's rows into m->rows; -1 on a mismatch. */
static int add_rows(struct merged *m, const json_t *r)
{
	size_t i, j;
	json_t *s, *t;

	json_array_foreach(json_object_get(r, "rows"), i, s) {
		json_t *found = NULL;

		json_array_foreach(m->rows, j, t)
			if (!strcmp(str(t, "name"), str(s, "name")))
				found = t;
		if (found && join(found, s) < 0)
			return -1;
		if (!found)
			json_array_append_new(m->rows, start_row(s));
	}
	return 0;
}

/* Every shard must have run all its units: none cut short. */
static int whole(const char *path, const json_t *r, uint64_t k, uint64_t n,
		 uint64_t size)
{
	uint64_t ran = 0, want = shard_units(size, k, n);
	size_t i;
	json_t *s;

	json_array_foreach(json_object_get(r, "rows"), i, s)
		ran += u(s, "ran");
	if (ran != want)
		return fail("shard %" PRIu64 "/%" PRIu64 " (%s) ran %" PRIu64
			    " of its %" PRIu64 " units: cut short; run it "
			    "again\n",
			    k, n, path, ran, want);
	return 0;
}

/* Report i (r, from path) checked against the first and added: one
 * campaign, one split, each shard once and whole. who[k] names shard k's
 * report; the first report sets *shards and allocates who. */
static int take_shard(struct merged *m, const json_t *r, char *const *paths,
		      int i, uint64_t *shards, const char ***who)
{
	const json_t *sh = json_object_get(r, "shard");
	const json_t *c = json_object_get(r, "campaign");
	uint64_t k = u(sh, "k"), nn = u(sh, "n");
	double secs = json_number_value(json_object_get(r, "seconds"));
	char a[1024], b[1024];

	if (nn < 1 || nn > 1000000 || k < 1 || k > nn) {
		fail("%s has no valid shard (k %" PRIu64 ", n %" PRIu64 ")\n",
		     paths[i], k, nn);
		return -1;
	}
	if (!i) {
		m->campaign = json_incref((json_t *)c);
		*shards = nn;
		*who = zalloc(nn + 1, sizeof(**who));
	}
	if (!json_equal((json_t *)c, m->campaign)) {
		describe(c, a, sizeof(a));
		describe(m->campaign, b, sizeof(b));
		fail("%s is of another campaign than %s: %s, not %s; "
		     "merge the reports of one campaign\n",
		     paths[i], paths[0], a, b);
		return -1;
	}
	if (nn != *shards) {
		fail("%s is shard %" PRIu64 "/%" PRIu64 " but %s is of %" PRIu64
		     " shards; merge the reports of one "
		     "split\n",
		     paths[i], k, nn, paths[0], *shards);
		return -1;
	}
	if ((*who)[k]) {
		fail("shard %" PRIu64 "/%" PRIu64 " is given twice: %s "
		     "and %s\n",
		     k, nn, (*who)[k], paths[i]);
		return -1;
	}
	(*who)[k] = paths[i];
	if (whole(paths[i], r, k, nn, u(c, "size")) < 0 || add_rows(m, r) < 0)
		return -1;
	if (secs > m->seconds_max)
		m->seconds_max = secs;
	return 0;
}

/* The merged rows in the campaign's order, each finished. */
static void order_rows(struct merged *m)
{
	size_t nr = json_array_size(m->rows), i;
	json_t **rv = zalloc(nr, sizeof(*rv)), *v;

	json_array_foreach(m->rows, i, v)
		rv[i] = json_incref(v);
	qsort(rv, nr, sizeof(*rv), cmp_order);
	json_array_clear(m->rows);
	for (i = 0; i < nr; i++) {
		finish(rv[i], m);
		json_array_append_new(m->rows, rv[i]);
	}
	free(rv);
}

int merge_load(char *const *paths, int n, struct merged *m)
{
	json_t **r = zalloc((size_t)n, sizeof(*r));
	const char **who = NULL;
	uint64_t shards = 0;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	m->rows = json_array();
	for (int i = 0; i < n; i++)
		if (!(r[i] = load(paths[i])) ||
		    take_shard(m, r[i], paths, i, &shards, &who) < 0)
			goto out;
	for (uint64_t k = 1; k <= shards; k++)
		if (!who[k]) {
			fail("shard %" PRIu64 "/%" PRIu64
			     " is missing (%d of %" PRIu64
			     " reports given); merge every shard\n",
			     k, shards, n, shards);
			goto out;
		}
	m->shards = shards;
	order_rows(m);
	rc = 0;
out:
	for (int i = 0; i < n; i++)
		json_decref(r[i]);
	free(r);
	free(who);
	return rc;
}

void merged_free(struct merged *m)
{
	json_decref(m->campaign);
	json_decref(m->rows);
}
