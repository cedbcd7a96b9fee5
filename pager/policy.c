/* The policy front: validates the parameters, dispatches events to the
 * kind, and picks victims by the one rule of policy.h for every kind. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy.h"
#include "policy_kinds.h"

/* A NULL event is one the kind does not learn from. */
struct kind {
	void *(*create)(const struct policy_params *p);
	void (*destroy)(void *s);
	void (*on_fault)(void *s, uint32_t chunk, uint64_t seq);
	void (*on_access)(void *s, uint32_t chunk);
	uint64_t (*next_use)(void *s, uint32_t chunk);
	uint64_t (*next_use_consumed)(void *s, uint32_t chunk); /* or NULL */
	int (*near)(void *s, uint32_t chunk, uint32_t before,
		    uint32_t after); /* or NULL */
	uint32_t (*predict)(void *s, uint32_t chunk, uint32_t *out,
			    uint32_t max);
};

static const struct kind kinds[] = {
	[RESID_POLICY_LRU] = {
		policy_lru_create, policy_lru_destroy, policy_lru_on_fault,
		NULL, policy_lru_next_use, NULL, NULL, NULL,
	},
	[RESID_POLICY_LEARNED] = {
		policy_learned_create, policy_learned_destroy,
		policy_learned_on_fault, NULL, policy_learned_next_use, NULL,
		NULL, policy_learned_predict,
	},
	[RESID_POLICY_DECLARED] = {
		policy_declared_create, policy_declared_destroy, NULL,
		policy_declared_on_access, policy_declared_next_use,
		policy_declared_next_use_consumed, policy_declared_near,
		policy_declared_predict,
	},
};

struct policy {
	const struct kind *k;
	void *s;
	uint32_t nchunks;
};

__attribute__((format(printf, 3, 4))) static void say(char *err, size_t errlen,
						      const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* I-10: every parameter is checked before a kind is built on it. */
static int params_ok(const struct policy_params *p, char *err, size_t errlen)
{
	uint32_t i;

	if ((unsigned)p->kind >= sizeof(kinds) / sizeof(kinds[0])) {
		say(err, errlen, "policy: unknown policy kind %d",
		    (int)p->kind);
		return 0;
	}
	if (!p->nchunks) {
		say(err, errlen, "policy: the region has no chunks");
		return 0;
	}
	if (p->kind != RESID_POLICY_DECLARED)
		return 1;
	if (p->signal != RESID_SIGNAL_BEFORE_READ &&
	    p->signal != RESID_SIGNAL_AFTER_READ) {
		say(err, errlen,
		    "policy: unknown access signal %d; state "
		    "BEFORE_READ or AFTER_READ",
		    (int)p->signal);
		return 0;
	}
	if (!p->declared_seq) {
		if (p->declared_len)
			say(err, errlen,
			    "policy: declared_len %u without a "
			    "sequence; pass both, or NULL and 0 for the chunk "
			    "order",
			    p->declared_len);
		return !p->declared_len;
	}
	if (!p->declared_len) {
		say(err, errlen,
		    "policy: the declared sequence is empty; pass "
		    "NULL for the chunk order 0..%u",
		    p->nchunks - 1);
		return 0;
	}
	for (i = 0; i < p->declared_len; i++) {
		if (p->declared_seq[i] >= p->nchunks) {
			say(err, errlen,
			    "declared_seq[%u] names chunk %u, but "
			    "the region has %u chunks",
			    i, p->declared_seq[i], p->nchunks);
			return 0;
		}
	}
	return 1;
}

struct policy *policy_create(const struct policy_params *p, char *err,
			     size_t errlen)
{
	struct policy *pol;

	if (!params_ok(p, err, errlen))
		return NULL;
	pol = malloc(sizeof(*pol));
	if (!pol)
		goto oom;
	pol->k = &kinds[p->kind];
	pol->nchunks = p->nchunks;
	pol->s = pol->k->create(p);
	if (pol->s)
		return pol;
	free(pol);
oom:
	say(err, errlen, "policy: out of memory for %u chunks", p->nchunks);
	return NULL;
}

void policy_destroy(struct policy *p)
{
	if (!p)
		return;
	p->k->destroy(p->s);
	free(p);
}

/* Ids outside the region are ignored rather than trusted: an application's
 * notify_access must not index past a kind's tables. */
void policy_on_fault(struct policy *p, uint32_t chunk, uint64_t seq)
{
	if (p->k->on_fault && chunk < p->nchunks)
		p->k->on_fault(p->s, chunk, seq);
}

/* No kind ranks by residency: lru ages by faults, the others by order. */
void policy_on_resident(struct policy *p, uint32_t chunk)
{
	(void)p;
	(void)chunk;
}

void policy_on_access(struct policy *p, uint32_t chunk)
{
	if (p->k->on_access && chunk < p->nchunks)
		p->k->on_access(p->s, chunk);
}

uint64_t policy_next_use(struct policy *p, uint32_t chunk)
{
	if (chunk >= p->nchunks)
		return POLICY_NEVER;
	return p->k->next_use(p->s, chunk);
}

uint64_t policy_next_use_consumed(struct policy *p, uint32_t chunk)
{
	if (chunk >= p->nchunks)
		return POLICY_NEVER;
	if (!p->k->next_use_consumed)
		return p->k->next_use(p->s, chunk);
	return p->k->next_use_consumed(p->s, chunk);
}

int policy_near(struct policy *p, uint32_t chunk, uint32_t before,
		uint32_t after)
{
	return chunk < p->nchunks && p->k->near &&
	       p->k->near(p->s, chunk, before, after);
}

int64_t policy_victim(struct policy *p, const uint32_t *candidates, uint32_t n,
		      uint64_t must_exceed)
{
	int64_t best = -1;
	uint64_t best_use = 0, use;
	uint32_t i, c;

	for (i = 0; i < n; i++) {
		c = candidates[i];
		if (c >= p->nchunks)
			continue;
		use = p->k->next_use(p->s, c);
		if (must_exceed != POLICY_NEVER && use <= must_exceed)
			continue;
		if (best < 0 || use > best_use ||
		    (use == best_use && c < best)) {
			best = c;
			best_use = use;
		}
	}
	return best;
}

uint32_t policy_predict(struct policy *p, uint32_t chunk, uint32_t *out,
			uint32_t max)
{
	if (!p->k->predict || chunk >= p->nchunks)
		return 0;
	return p->k->predict(p->s, chunk, out, max);
}
