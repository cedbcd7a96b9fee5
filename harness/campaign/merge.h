/* The shard reports of one campaign combined into one (merge.c); printed
 * as a table, JSON and JUnit by `residctl merge` (cmd_merge.c). */
#ifndef HARNESS_MERGE_H
#define HARNESS_MERGE_H

#include <jansson.h>
#include <stdint.h>

struct merged {
	json_t *campaign; /* the identity every shard carries */
	uint64_t shards;
	double seconds_max; /* the longest shard */
	/* In the campaign's order; each with "passed" and "reason", its
	 * interleavings counted, samples sorted, findings the union's lowest
	 * FINDINGS_MAX by index, "first" the lowest-index first failure. */
	json_t *rows;
	int failed; /* rows that failed */
};

/* Reads paths[0..n), checks they are the N shards of one campaign, each
 * once and whole, and merges them. -1 after one line on stderr naming the
 * file or the shard at fault. */
int merge_load(char *const *paths, int n, struct merged *m);
void merged_free(struct merged *m);
/* A report's field: a count (0 when absent), a string ("" when absent). */
uint64_t merge_u64(const json_t *o, const char *key);
const char *merge_str(const json_t *o, const char *key);

#endif
