#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "campaign/report.h"

/* The row's verdict in the table: unknown stands out of the column. */
static const char *const verdict_word[] = {
	[VERDICT_PASS] = "PASS",
	[VERDICT_FAIL] = "FAIL",
	[VERDICT_UNKNOWN] = "UNKNOWN",
};

int report_exit(const struct scen_result *res, int n)
{
	int unknown = 0;

	for (int i = 0; i < n; i++) {
		if (res[i].verdict == VERDICT_FAIL)
			return 1;
		unknown |= res[i].verdict == VERDICT_UNKNOWN;
	}
	return unknown ? 2 : 0;
}

void report_table(FILE *f, const struct scen_result *res, int n)
{
	int passed = 0, unknown = 0;
	uint64_t checks = 0, mismatches = 0;
	double secs = 0;

	fprintf(f, "%-5s %-4s %-13s %-12s %14s %10s %8s  %s\n", "test", "",
		"backing", "chunks", "checks", "mismatches", "seconds",
		"counters");
	for (int i = 0; i < n; i++) {
		const struct scen_result *r = &res[i];

		fprintf(f,
			"%-5s %-4s %-13s %-12s %14" PRIu64 " %10" PRIu64
			" %8.2f ",
			r->id, verdict_word[r->verdict], r->backing, r->chunks,
			r->checks, r->mismatches, r->seconds);
		for (int j = 0; j < r->ncounters; j++)
			fprintf(f, " %s=%" PRIu64, r->counters[j].name,
				r->counters[j].value);
		fputc('\n', f);
		if (r->message[0])
			fprintf(f, "      %s\n", r->message);
		passed += r->passed;
		unknown += r->verdict == VERDICT_UNKNOWN;
		checks += r->checks;
		mismatches += r->mismatches;
		secs += r->seconds;
	}
	fprintf(f, "total: %d passed, %d failed", passed, n - passed - unknown);
	if (unknown)
		fprintf(f, ", %d unknown", unknown);
	fprintf(f, "; %" PRIu64 " checks, %" PRIu64 " mismatches, %.2f s\n",
		checks, mismatches, secs);
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

FILE *open_tmp(const char *path, char *tmp, size_t n)
{
	snprintf(tmp, n, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");

	if (!f)
		fprintf(stderr, "residctl: cannot write %s: %s\n", path,
			strerror(errno));
	return f;
}

int close_tmp(FILE *f, const char *tmp, const char *path)
{
	int bad = ferror(f);

	if (fclose(f) || bad || rename(tmp, path)) {
		fprintf(stderr, "residctl: cannot write %s: %s\n", path,
			strerror(errno ? errno : EIO));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The legs the row's scenario declares for the default gate (its .legs),
 * from which ci/gate-legs.sh knows the rows the gate owes. */
static void gate_legs_json(FILE *f, const char *id)
{
	const struct scenario *s = scenario_find(id);
	const char *sep = "";

	fputs(", \"gate_legs\": [", f);
	for (unsigned leg = 1; s && leg && leg <= s->legs; leg <<= 1)
		if (s->legs & leg) {
			fprintf(f, "%s\"%s\"", sep, scen_leg_name(leg));
			sep = ", ";
		}
	fputc(']', f);
}

int report_json(const char *path, const struct scen_result *res, int n,
		const char *manifest_json, uint64_t seed)
{
	char tmp[4200];
	FILE *f = open_tmp(path, tmp, sizeof(tmp));
	struct coverage cov = { 0 };
	int passed = 0;

	if (!f)
		return -1;
	fprintf(f,
		"{\n  \"seed\": %" PRIu64 ",\n  \"manifest\": %s,\n"
		"  \"scenarios\": [\n",
		seed, manifest_json && *manifest_json ? manifest_json : "null");
	for (int i = 0; i < n; i++) {
		const struct scen_result *r = &res[i];

		passed += r->passed;
		fprintf(f,
			"    {\"id\": \"%s\", \"backing\": \"%s\", "
			"\"chunks\": \"%s\", \"passed\": %s, \"verdict\": "
			"\"%s\", \"checks\": %" PRIu64
			", \"mismatches\": %" PRIu64
			", \"seconds\": %.3f, \"message\": ",
			r->id, r->backing, r->chunks,
			r->passed ? "true" : "false", verdict_name(r->verdict),
			r->checks, r->mismatches, r->seconds);
		json_str(f, r->message);
		gate_legs_json(f, r->id);
		fputs(", \"counters\": {", f);
		for (int j = 0; j < r->ncounters; j++)
			fprintf(f, "%s\"%s\": %" PRIu64, j ? ", " : "",
				r->counters[j].name, r->counters[j].value);
		fputs("}, \"code_probes\": ", f);
		coverage_json(f, &r->cov);
		fprintf(f, "}%s\n", i + 1 < n ? "," : "");
		coverage_merge(&cov, &r->cov);
	}
	fputs("  ],\n  \"code_probes\": ", f);
	coverage_json(f, &cov);
	fprintf(f, ",\n  \"passed\": %d,\n  \"failed\": %d\n}\n", passed,
		n - passed);
	return close_tmp(f, tmp, path);
}

int report_junit(const char *path, const struct scen_result *res, int n)
{
	char tmp[4200];
	FILE *f = open_tmp(path, tmp, sizeof(tmp));
	int failed = 0, unknown = 0;
	double secs = 0;

	if (!f)
		return -1;
	for (int i = 0; i < n; i++) {
		failed += res[i].verdict == VERDICT_FAIL;
		unknown += res[i].verdict == VERDICT_UNKNOWN;
		secs += res[i].seconds;
	}
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuite name=\"residctl-gate\" tests=\"%d\" failures=\"%d\""
		" errors=\"%d\" time=\"%.3f\">\n",
		n, failed, unknown, secs);
	for (int i = 0; i < n; i++) {
		const struct scen_result *r = &res[i];

		/* One name per row: the scenario and its leg. */
		fprintf(f,
			"  <testcase classname=\"residctl.gate\" name=\"%s "
			"(%s, %s chunks)\" time=\"%.3f\">\n",
			r->id, r->backing, r->chunks, r->seconds);
		if (!r->passed) {
			/* A row that could not be judged is an error. */
			const char *tag = r->verdict == VERDICT_UNKNOWN ?
						  "error" :
						  "failure";

			fprintf(f, "    <%s message=\"", tag);
			xml_str(f, r->message);
			fprintf(f, "\">mismatches=%" PRIu64 "</%s>\n",
				r->mismatches, tag);
		}
		fprintf(f,
			"    <system-out>checks=%" PRIu64
			" mismatches=%" PRIu64,
			r->checks, r->mismatches);
		for (int j = 0; j < r->ncounters; j++)
			fprintf(f, " %s=%" PRIu64, r->counters[j].name,
				r->counters[j].value);
		fputs("</system-out>\n  </testcase>\n", f);
	}
	fputs("</testsuite>\n", f);
	return close_tmp(f, tmp, path);
}
