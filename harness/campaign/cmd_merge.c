/* residctl merge: the shard reports of one campaign as one verdict, one
 * table, one JSON and one JUnit file (merge.c does the combining). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "campaign/merge.h"
#include "campaign/report.h"

static const char about[] =
	"  Combines the reports that the shards of one campaign wrote\n"
	"  (explore, check --sim, storm, matrix with --shard K/N --report FILE;\n"
	"  kernels/matrix.sh --shard K/N --report FILE) into one: a row\n"
	"  per scenario or cell with its verdict, units, failures and counters\n"
	"  summed, interleavings counted over the union, and the failures in\n"
	"  index order with the lines that rerun them (the first 100), as the\n"
	"  unsharded campaign prints them. --json and --junit write the merged\n"
	"  report. A missing or duplicated shard, a shard cut short, or a\n"
	"  report of another campaign is an error. Exit 0 when every row\n"
	"  passed, 1 when one failed, 2 on bad input.\n";

#define str merge_str
#define u merge_u64

static void counters(FILE *f, const json_t *row)
{
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(row, "counters"), k, v)
		if (json_integer_value(v))
			fprintf(f, " %s=%" JSON_INTEGER_FORMAT, k,
				json_integer_value(v));
	json_object_foreach(json_object_get(row, "maxima"), k, v)
		if (json_integer_value(v))
			fprintf(f, " %s(max)=%" JSON_INTEGER_FORMAT, k,
				json_integer_value(v));
	const json_t *s = json_object_get(row, "samples");
	size_t n = json_array_size(s);

	if (n)
		fprintf(f,
			" median=%" JSON_INTEGER_FORMAT
			" worst=%" JSON_INTEGER_FORMAT,
			json_integer_value(json_array_get(s, (n - 1) / 2)),
			json_integer_value(json_array_get(s, n - 1)));
}

static void finding(FILE *f, const char *lead, const json_t *x)
{
	fprintf(f, "  %s#%" PRIu64 " %s%s\n", lead, u(x, "index"),
		json_is_true(json_object_get(x, "fails")) ? "" :
							    "(not a "
							    "failure) ",
		str(x, "what"));
	if (json_string_value(json_object_get(x, "line")))
		fprintf(f, "      %s\n", str(x, "line"));
}

static void table(FILE *f, const struct merged *m)
{
	const json_t *c = m->campaign, *row, *x;
	uint64_t units = 0, failing = 0;
	size_t i, j;

	fprintf(f,
		"merge: %s %s, seed %s, rev %s: %" PRIu64 " shards, %" PRIu64
		" %s, longest shard %.1f s\n",
		str(c, "command"), str(c, "identity"), str(c, "seed"),
		str(c, "rev"), m->shards, u(c, "size"), str(c, "unit"),
		m->seconds_max);
	fprintf(f, "%-24s %-4s %10s %9s  %s\n", "row", "", "units", "failures",
		"counters");
	json_array_foreach(m->rows, i, row) {
		fprintf(f, "%-24s %-4s %10" PRIu64 " %9" PRIu64 " ",
			str(row, "name"),
			json_is_true(json_object_get(row, "passed")) ? "PASS" :
								       "FAIL",
			u(row, "ran"), u(row, "failing"));
		counters(f, row);
		fputc('\n', f);
		if (*str(row, "reason"))
			fprintf(f, "  %s\n", str(row, "reason"));
		if ((x = json_object_get(row, "first")))
			finding(f, "first failure, shrunk: ", x);
		json_array_foreach(json_object_get(row, "findings"), j, x)
			finding(f, "", x);
		if (u(row, "findings_total") >
		    json_array_size(json_object_get(row, "findings")))
			fprintf(f,
				"  ... %" PRIu64 " in all; the first %zu "
				"listed\n",
				u(row, "findings_total"),
				json_array_size(
					json_object_get(row, "findings")));
		units += u(row, "ran");
		failing += u(row, "failing");
	}
	fprintf(f,
		"total: %zu passed, %d failed; %" PRIu64 " %s, %" PRIu64
		" failed\n",
		json_array_size(m->rows) - (size_t)m->failed, m->failed, units,
		str(c, "unit"), failing);
}

static int write_json(const char *path, const struct merged *m)
{
	char tmp[4200];
	json_t *o = json_pack("{s:s, s:O, s:I, s:f, s:b, s:O}", "format",
			      "residctl-merged/1", "campaign", m->campaign,
			      "shards", (json_int_t)m->shards, "seconds_max",
			      m->seconds_max, "passed", !m->failed, "rows",
			      m->rows);
	FILE *f = o ? open_tmp(path, tmp, sizeof(tmp)) : NULL;

	if (!o || !f || json_dumpf(o, f, JSON_INDENT(1)) < 0) {
		fprintf(stderr, "residctl merge: cannot write %s\n", path);
		json_decref(o);
		if (f) {
			fclose(f);
			remove(tmp);
		}
		return -1;
	}
	json_decref(o);
	fputc('\n', f);
	return close_tmp(f, tmp, path);
}

static int write_junit(const char *path, const struct merged *m)
{
	char tmp[4200];
	FILE *f = open_tmp(path, tmp, sizeof(tmp));
	const json_t *row, *x;
	size_t i, j;

	if (!f)
		return -1;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuite name=\"residctl-%s\" tests=\"%zu\" failures=\"%d\""
		" errors=\"0\" time=\"%.3f\">\n",
		str(m->campaign, "command"), json_array_size(m->rows),
		m->failed, m->seconds_max);
	json_array_foreach(m->rows, i, row) {
		fprintf(f, "  <testcase classname=\"residctl.%s\" name=\"",
			str(m->campaign, "command"));
		xml_str(f, str(row, "name"));
		fputs("\">\n", f);
		if (!json_is_true(json_object_get(row, "passed"))) {
			fputs("    <failure message=\"", f);
			xml_str(f, str(row, "reason"));
			fputs("\"/>\n", f);
		}
		fprintf(f, "    <system-out>%" PRIu64 " %s", u(row, "ran"),
			str(m->campaign, "unit"));
		json_array_foreach(json_object_get(row, "findings"), j, x) {
			fprintf(f, "\n#%" PRIu64 " ", u(x, "index"));
			xml_str(f, str(x, "what"));
			fputs(" ", f);
			xml_str(f, str(x, "line"));
		}
		fputs("</system-out>\n  </testcase>\n", f);
	}
	fputs("</testsuite>\n", f);
	return close_tmp(f, tmp, path);
}

/* Files to merge: the operands in order. */
struct reports {
	char **files;
	int n;
};

static int report_opt(void *dst, const char *where, const char *v, char *err,
		      size_t n)
{
	struct reports *r = dst;

	(void)where;
	(void)err;
	(void)n;
	r->files[r->n++] = (char *)v;
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	const char *json = NULL, *junit = NULL;
	struct reports in = { calloc((size_t)argc, sizeof(char *)), 0 };
	struct cli_opt opts[] = {
		CLI_JSON(&json, "write the merged report"),
		{ "junit", CLI_TEXT, &junit, .arg = "FILE",
		  .help = "write the merged rows as JUnit XML" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "merge",
		.synopsis = "REPORT.json...",
		.about = about,
		.opts = opts,
		.operands = 100000,
		.operand = { .type = CLI_CALL, .dst = &in, .parse = report_opt },
	};
	struct merged m;
	int rc;

	if (!in.files) {
		fprintf(stderr, "residctl merge: out of memory\n");
		return 2;
	}
	rc = cli_parse(&spec, argc, argv);
	if (rc == CLI_RUN && !in.n) {
		fprintf(stderr, "residctl merge: no report given; give every "
				"shard's REPORT.json\n");
		rc = 2;
	}
	if (rc != CLI_RUN) {
		free(in.files);
		return rc;
	}
	rc = 2;
	if (merge_load(in.files, in.n, &m) == 0) {
		table(stdout, &m);
		rc = m.failed ? 1 : 0;
		if ((json && write_json(json, &m) < 0) ||
		    (junit && write_junit(junit, &m) < 0))
			rc = 2;
	}
	merged_free(&m);
	free(in.files);
	return rc;
}
