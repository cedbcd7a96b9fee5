/* Configuration defaults and validation (I-10): every value is checked
 * before a decision is made on it. */
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const policy_names[] = {
	[RESID_POLICY_LRU] = "lru",
	[RESID_POLICY_LEARNED] = "layer_order_learned",
	[RESID_POLICY_DECLARED] = "layer_order_declared",
};

void resid_config_init(struct resid_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->policy = RESID_POLICY_DECLARED;
	cfg->signal = RESID_SIGNAL_BEFORE_READ;
	cfg->fetch_workers = 0; /* auto: config_workers() */
	cfg->fetching_timeout_ms = 30000;
	cfg->reconcile_interval = 16;
	cfg->prefetch_backoff_ms = 100;
	cfg->fetch_piece = 1ull << 20;
}

void resid_harness_init(struct resid_harness *h)
{
	memset(h, 0, sizeof(*h));
	h->demand_retries = 64;
	h->landing_wait_ms = 100;
}

const char *resid_policy_name(enum resid_policy p)
{
	return (unsigned)p < 3 ? policy_names[p] : "unknown";
}

int resid_policy_parse(const char *name, enum resid_policy *out)
{
	static const struct {
		const char *name;
		enum resid_policy p;
	} alias[] = {
		{ "lru", RESID_POLICY_LRU },
		{ "learned", RESID_POLICY_LEARNED },
		{ "layer_order_learned", RESID_POLICY_LEARNED },
		{ "declared", RESID_POLICY_DECLARED },
		{ "layer_order_declared", RESID_POLICY_DECLARED },
	};

	for (size_t i = 0; name && out && i < sizeof(alias) / sizeof(alias[0]);
	     i++) {
		if (!strcmp(name, alias[i].name)) {
			*out = alias[i].p;
			return 0;
		}
	}
	return -1;
}

/* Each worker costs about 2.1 MiB of the cgroup (its bounce buffer and two
 * threads, headroom.c): one per 16 MiB of budget, 1 to 4, keeps that under
 * an eighth of the budget from 16 MiB up, and a small budget's headroom
 * small. */
#define AUTO_WORKER_BUDGET (16ull << 20)
#define AUTO_WORKERS_MAX 4u

uint32_t config_workers(const struct resid_config *c)
{
	uint64_t n = c->budget_bytes / AUTO_WORKER_BUDGET;

	if (c->fetch_workers)
		return c->fetch_workers;
	return n < 1                ? 1 :
	       n > AUTO_WORKERS_MAX ? AUTO_WORKERS_MAX :
				      (uint32_t)n;
}

/* A fetch worker's bounce slot: FETCH_SLOT_BIG where the largest chunk
 * holds eight of them. */
uint64_t config_slot(const struct resid_config *c)
{
	uint64_t largest = c->chunk_size;

	for (uint32_t i = 0; i < c->table_len && c->table; i++)
		if (c->table[i].len > largest)
			largest = c->table[i].len;
	return largest >= 8 * FETCH_SLOT_BIG ? FETCH_SLOT_BIG :
					       FETCH_SLOT_SMALL;
}

/* The checks that need no chunk table; the table's own are in chunks.c. */
int config_check(const struct resid_config *c, char *err, size_t n)
{
	if (c->backing == RESID_BACKING_UNSET ||
	    (unsigned)c->backing > RESID_BACKING_SYNTHETIC) {
		snprintf(err, n,
			 "backing is %s: set cfg.backing to "
			 "RESID_BACKING_FILE (with cfg.path) or "
			 "RESID_BACKING_SYNTHETIC",
			 c->backing ? "unknown" : "not set");
		return -1;
	}
	if (c->backing == RESID_BACKING_SYNTHETIC && c->path) {
		snprintf(err, n,
			 "path %s with RESID_BACKING_SYNTHETIC: set "
			 "cfg.backing to RESID_BACKING_FILE to read the file, "
			 "or cfg.path to NULL",
			 c->path);
		return -1;
	}
	if (c->region_len == 0) {
		snprintf(err, n, "region_len is 0: set it to the bytes to map");
		return -1;
	}
	if (c->budget_bytes == 0) {
		snprintf(err, n,
			 "budget_bytes is 0: set at least the largest "
			 "chunk");
		return -1;
	}
	if ((unsigned)c->policy > RESID_POLICY_DECLARED) {
		snprintf(err, n,
			 "policy %d is unknown: use lru, "
			 "layer_order_learned or layer_order_declared",
			 (int)c->policy);
		return -1;
	}
	if (c->fetch_workers > 256) {
		snprintf(err, n,
			 "fetch_workers %u is out of range: use 1..256, "
			 "or 0 to let the budget choose",
			 c->fetch_workers);
		return -1;
	}
	if (c->overlap_evict && c->policy != RESID_POLICY_DECLARED) {
		snprintf(err, n,
			 "overlap_evict needs the policy "
			 "layer_order_declared (its order says when a consumed "
			 "piece is used again): set policy, or overlap_evict 0");
		return -1;
	}
	if (c->prefetch_depth > 64) {
		snprintf(err, n, "prefetch_depth %u is out of range: use 0..64",
			 c->prefetch_depth);
		return -1;
	}
	if (c->trace_fn && c->prefetch_depth) {
		snprintf(err, n,
			 "prefetch_depth %u with trace_fn: a prefetch "
			 "maps its chunk before it is read, so the read would "
			 "not be recorded; set prefetch_depth 0",
			 c->prefetch_depth);
		return -1;
	}
	if (c->fetch_piece % RESID_PAGE) {
		snprintf(err, n,
			 "fetch_piece %" PRIu64 " is not a multiple of "
			 "%llu: round it, or 0 for whole chunks",
			 c->fetch_piece, RESID_PAGE);
		return -1;
	}
	if (c->reconcile_interval == 0 || c->fetching_timeout_ms == 0) {
		snprintf(err, n,
			 "reconcile_interval %u and fetching_timeout_ms "
			 "%u must be positive",
			 c->reconcile_interval, c->fetching_timeout_ms);
		return -1;
	}
	return 0;
}

/* After the chunk table exists. */
int config_check_budget(const struct resid_region *r, char *err, size_t n)
{
	if (r->cfg.budget_bytes < r->max_chunk) {
		snprintf(err, n,
			 "budget_bytes %" PRIu64 " is smaller than the "
			 "largest chunk (%" PRIu64 " bytes): raise it or use "
			 "smaller chunks",
			 r->cfg.budget_bytes, r->max_chunk);
		return -1;
	}
	return 0;
}

/* A declared order names a chunk at most once: a repeat is a mistake in
 * the caller's table, not an order. A chunk left out has no declared time
 * (a table read by rows). */
int config_check_declared(const struct resid_region *r, char *err, size_t n)
{
	const uint32_t *seq = r->cfg.declared_seq;
	uint32_t len = r->cfg.declared_len, bad = UINT32_MAX;
	uint8_t *seen;

	if (r->cfg.policy != RESID_POLICY_DECLARED || !seq || !len)
		return 0; /* NULL and 0, or a mismatch the policy names */
	for (uint32_t i = 0; i < len; i++)
		if (seq[i] >= r->nchunks)
			return 0; /* out of range: the policy names it */
	seen = calloc(r->nchunks, 1);
	if (!seen) {
		snprintf(err, n, "out of memory for %u chunks", r->nchunks);
		return -1;
	}
	for (uint32_t i = 0; i < len && bad == UINT32_MAX; i++)
		if (seen[seq[i]]++)
			bad = i;
	free(seen);
	if (bad == UINT32_MAX)
		return 0;
	snprintf(err, n,
		 "declared_seq[%u] repeats chunk %u: list each of the "
		 "%u chunks at most once",
		 bad, seq[bad], r->nchunks);
	return -1;
}
