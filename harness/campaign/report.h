/* The gate's report: a table for people, JSON and JUnit XML for CI. */
#ifndef HARNESS_REPORT_H
#define HARNESS_REPORT_H

#include <stdio.h>

#include "scenarios/scenario.h"

void report_table(FILE *f, const struct scen_result *res, int n);
/* check's exit: 0 when every row passed, 1 when one failed, else 2 (one
 * could not be judged here). */
int report_exit(const struct scen_result *res, int n);
/* 0, or -1 with a line on stderr naming the file. */
int report_json(const char *path, const struct scen_result *res, int n,
		const char *manifest_json, uint64_t seed);
int report_junit(const char *path, const struct scen_result *res, int n);
/* Writes go to path.tmp (named in tmp), renamed to path by close_tmp, so a
 * failed write leaves nothing half written; both say on stderr what failed. */
FILE *open_tmp(const char *path, char *tmp, size_t n);
int close_tmp(FILE *f, const char *tmp, const char *path);
/* s as a JSON string, quoted and escaped; NULL as "". */
void json_str(FILE *f, const char *s);
/* s escaped for XML text and attribute values. */
void xml_str(FILE *f, const char *s);

#endif
