/* Configuration defaults and validation (I-10): every value is checked
 * before a decision is made on it. */
#include <inttypes.h>
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
	memset(cfg, 0, sizeof(*cfg));
	cfg->backing = RESID_BACKING_SYNTHETIC;
	cfg->policy = RESID_POLICY_DECLARED;
	cfg->signal = RESID_SIGNAL_BEFORE_READ;
	cfg->fetch_workers = 4;
	cfg->fetching_timeout_ms = 30000;
	cfg->reconcile_interval = 16;
	cfg->demand_retries = 64;
	cfg->prefetch_backoff_ms = 100;
}

const char *resid_policy_name(enum resid_policy p)
{
	return (unsigned)p < 3 ? policy_names[p] : "unknown";
}

int resid_policy_parse(const char *name, enum resid_policy *out)
{
	static const struct { const char *name; enum resid_policy p; } alias[] = {
		{ "lru", RESID_POLICY_LRU },
		{ "learned", RESID_POLICY_LEARNED },
		{ "layer_order_learned", RESID_POLICY_LEARNED },
		{ "declared", RESID_POLICY_DECLARED },
		{ "layer_order_declared", RESID_POLICY_DECLARED },
	};

	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++) {
		if (!strcmp(name, alias[i].name)) {
			*out = alias[i].p;
			return 0;
		}
	}
	return -1;
}

/* The checks that need no chunk table; the table's own are in chunks.c. */
int config_check(const struct resid_config *c, char *err, size_t n)
{
	if (c->region_len == 0) {
		snprintf(err, n, "region length is 0: give the size of the "
			 "region");
		return -1;
	}
	if (c->budget_bytes == 0) {
		snprintf(err, n, "budget is 0: give a budget of at least one "
			 "chunk");
		return -1;
	}
	if ((unsigned)c->policy > RESID_POLICY_DECLARED) {
		snprintf(err, n, "policy %d is unknown: use lru, "
			 "layer_order_learned or layer_order_declared",
			 (int)c->policy);
		return -1;
	}
	if (c->fetch_workers == 0 || c->fetch_workers > 256) {
		snprintf(err, n, "fetch_workers %u is out of range: use 1..256",
			 c->fetch_workers);
		return -1;
	}
	if (c->prefetch_depth > 64) {
		snprintf(err, n, "prefetch depth %u is out of range: use 0..64",
			 c->prefetch_depth);
		return -1;
	}
	if (c->reconcile_interval == 0 || c->fetching_timeout_ms == 0) {
		snprintf(err, n, "reconcile interval and FETCHING time-out "
			 "must be positive");
		return -1;
	}
	return 0;
}

/* After the chunk table exists. */
int config_check_budget(const struct resid_region *r, char *err, size_t n)
{
	if (r->cfg.budget_bytes < r->max_chunk) {
		snprintf(err, n, "budget %" PRIu64 " bytes is smaller than the "
			 "largest chunk (%" PRIu64 " bytes): raise the budget "
			 "or use smaller chunks", r->cfg.budget_bytes,
			 r->max_chunk);
		return -1;
	}
	return 0;
}
