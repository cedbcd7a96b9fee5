/* A campaign split into shards and its report, the file `residctl merge`
 * reads (docs/campaigns.md).
 *
 * A campaign is a numbered list of units (schedules, storm rounds, matrix
 * runs, kernel cells), 0..size-1. Shard K of N (`--shard K/N`, K from 1)
 * runs unit i exactly when i mod N == K - 1: the N shards together run the
 * units of the unsharded campaign, each once, whatever their timing.
 *
 * A report holds the campaign's identity (command, what decides its units,
 * build, seed, size), the shard, and rows (a gate scenario, a matrix cell):
 * counters that add up, maxima, a set of interleaving hashes, samples, and
 * findings (units worth a line: every failure with its replay line, the
 * lowest FINDINGS_MAX indices kept, all counted, and the failing ones
 * counted apart). Merge keeps the lowest FINDINGS_MAX of the union, which
 * are those of the unsharded run: each is among its shard's lowest. */
#ifndef HARNESS_CAMPAIGN_H
#define HARNESS_CAMPAIGN_H

#include <stddef.h>
#include <stdint.h>

#define CAMPAIGN_FORMAT "residctl-campaign/1"
#define FINDINGS_MAX 100

struct shard {
	uint64_t k, n; /* 1 <= k <= n; n == 0 is the unsharded run, as 1/1 */
};

/* Parses "K/N" into s; -1 with one line in err naming v and the fix. */
int shard_parse(const char *v, struct shard *s, char *err, size_t n);
/* --shard K/N, a command's option (cli.h): dst is a struct shard. */
int shard_opt(void *dst, const char *where, const char *v, char *err, size_t n);
#define CLI_SHARD(dst)                                                        \
	{                                                                     \
		"shard", CLI_CALL, dst, .arg = "K/N",                         \
					.help = "run only the units i with "  \
						"i mod N = K - 1 (K from 1)", \
					.parse = shard_opt                    \
	}
static inline int shard_owns(const struct shard *s, uint64_t i)
{
	return s->n <= 1 || i % s->n == s->k - 1;
}
static inline int shard_split(const struct shard *s)
{
	return s->n > 1;
}
/* How many of units 0..size-1 shard k of n runs. */
uint64_t shard_units(uint64_t size, uint64_t k, uint64_t n);
/* Sorts v[0..n) and returns how many distinct values it holds: the
 * interleavings of a union of hash sets. */
uint64_t distinct_u64(uint64_t *v, size_t n);

struct campaign;
struct campaign_row;

/* identity: what decides the units, e.g. "T-3 strategy=pct:3 bugs=7";
 * unit: what a unit is ("schedules"). NULL when out of memory. */
struct campaign *campaign_new(const char *command, const char *identity,
			      uint64_t seed, uint64_t size, const char *unit,
			      const struct shard *sh);
/* The row called name, made on first use; size: its units. NULL when out
 * of memory (or past 64 rows), and campaign_write then fails. */
struct campaign_row *campaign_row(struct campaign *c, const char *name,
				  uint64_t size);
void row_ran(struct campaign_row *r, uint64_t units);
void row_count(struct campaign_row *r, const char *name, uint64_t v);
void row_max(struct campaign_row *r, const char *name, uint64_t v);
/* A counter that must end above 0 over the whole campaign; judged by merge
 * (a shard alone may miss it) unless the row counts units not run. */
void row_require(struct campaign_row *r, const char *counter);
/* Distinct interleavings: merge counts the union of every shard's set. */
void row_hashes(struct campaign_row *r, const uint64_t *h, size_t n);
void row_sample(struct campaign_row *r, uint64_t v);
/* Unit index's finding, in increasing index order; fails: it fails the
 * row. line: the command that reruns it, or NULL. */
void row_finding(struct campaign_row *r, uint64_t index, int fails,
		 const char *what, const char *line);
/* The row's first failure after shrinking; merge keeps the lowest index. */
void row_first(struct campaign_row *r, uint64_t index, const char *what,
	       const char *line);
/* Writes the report atomically; -1 after a line on stderr. */
int campaign_write(struct campaign *c, const char *path, double seconds);
void campaign_free(struct campaign *c);

#endif
