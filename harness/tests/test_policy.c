/* The policies against naive references written here step by step: random
 * fault and access histories, random candidate sets and admission bounds,
 * plus hand-written cases for the rules the random runs cannot name. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "policy.h"
#include "tests/suites.h"

#define MAXN 12   /* chunks in a random state */
#define MAXLEN 30 /* declared cycle length */
#define MAXEV 80  /* events in a random history */
#define TRIALS 400
#define NONE UINT32_MAX

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t bound)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % bound);
}

/* Everything the references need: the parameters and the raw history. */
struct model {
	struct policy_params pp;
	uint32_t seq[MAXLEN], len; /* declared cycle, explicit */
	uint32_t faults[MAXEV], nfaults;
	uint32_t access[MAXEV], naccess;
};

static struct policy *make(const struct policy_params *pp)
{
	char err[256] = "";
	struct policy *p = policy_create(pp, err, sizeof(err));

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_STRING_EQUAL(err, "");
	return p;
}

/* lru: the age is the distance back in the fault list to the chunk's last
 * fault (one seq per fault). */
static uint64_t ref_lru(const struct model *m, uint32_t c)
{
	uint32_t i;

	for (i = m->nfaults; i-- > 0;)
		if (m->faults[i] == c)
			return m->nfaults - 1 - i;
	return POLICY_NEVER;
}

/* learned: successors rebuilt from the fault list; self-repeats teach
 * nothing. */
static void ref_succ(const struct model *m, uint32_t *succ)
{
	uint32_t i;

	for (i = 0; i < m->pp.nchunks; i++)
		succ[i] = NONE;
	for (i = 1; i < m->nfaults; i++)
		if (m->faults[i] != m->faults[i - 1])
			succ[m->faults[i - 1]] = m->faults[i];
}

static uint64_t ref_learned(const struct model *m, uint32_t c)
{
	uint32_t succ[MAXN], x, d;

	if (!m->nfaults)
		return POLICY_NEVER;
	ref_succ(m, succ);
	x = m->faults[m->nfaults - 1];
	for (d = 1; d <= m->pp.nchunks; d++) {
		x = succ[x];
		if (x == NONE)
			break;
		if (x == c)
			return d;
	}
	return POLICY_NEVER;
}

/* declared: replays the signals one position at a time; returns the last
 * signalled position, or -1 before any. */
static int ref_cursor(const struct model *m)
{
	int pos = -1;
	uint32_t a, k, j;

	for (a = 0; a < m->naccess; a++) {
		for (k = 0; k < m->len; k++) {
			j = (uint32_t)(pos + 1 + k) % m->len;
			if (m->seq[j] == m->access[a]) {
				pos = (int)j;
				break;
			}
		}
	}
	return pos;
}

/* Steps from the cursor to c: counting the cursor as 0 (BEFORE_READ or no
 * signal yet) or from 1 after it (AFTER_READ). *at gets the position. */
static uint64_t ref_declared_at(const struct model *m, uint32_t c, uint32_t *at)
{
	int pos = ref_cursor(m);
	uint32_t d, lo = 0, hi = m->len - 1;

	if (pos >= 0 && m->pp.signal == RESID_SIGNAL_AFTER_READ) {
		lo = 1;
		hi = m->len;
	}
	for (d = lo; d <= hi; d++) {
		*at = ((pos < 0 ? 0 : (uint32_t)pos) + d) % m->len;
		if (m->seq[*at] == c)
			return d;
	}
	return POLICY_NEVER;
}

static uint64_t ref_next_use(const struct model *m, uint32_t c)
{
	uint32_t at;

	switch (m->pp.kind) {
	case RESID_POLICY_LRU:
		return ref_lru(m, c);
	case RESID_POLICY_LEARNED:
		return ref_learned(m, c);
	default:
		return ref_declared_at(m, c, &at);
	}
}

static int64_t ref_victim(const struct model *m, const uint32_t *cand,
			  uint32_t n, uint64_t must_exceed)
{
	int64_t best = -1;
	uint64_t best_use = 0, u;
	uint32_t i;

	for (i = 0; i < n; i++) {
		u = ref_next_use(m, cand[i]);
		if (must_exceed != POLICY_NEVER && !(u > must_exceed))
			continue;
		if (best < 0 || u > best_use ||
		    (u == best_use && cand[i] < (uint64_t)best)) {
			best = cand[i];
			best_use = u;
		}
	}
	return best;
}

static int listed(const uint32_t *out, uint32_t k, uint32_t x)
{
	while (k-- > 0)
		if (out[k] == x)
			return 1;
	return 0;
}

static uint32_t ref_predict(const struct model *m, uint32_t c, uint32_t *out,
			    uint32_t max)
{
	uint32_t succ[MAXN], k = 0, x, at, i;

	if (m->pp.kind == RESID_POLICY_LEARNED) {
		ref_succ(m, succ);
		for (x = succ[c];
		     k < max && x != NONE && x != c && !listed(out, k, x);
		     x = succ[x])
			out[k++] = x;
	} else if (m->pp.kind == RESID_POLICY_DECLARED &&
		   ref_declared_at(m, c, &at) != POLICY_NEVER) {
		for (i = 1; i < m->len && k < max; i++) {
			x = m->seq[(at + i) % m->len];
			if (x != c && !listed(out, k, x))
				out[k++] = x;
		}
	}
	return k;
}

/* Compares every query against the references; returns how many next uses
 * were finite, so a run can prove it tested something. */
static uint32_t compare(struct policy *p, const struct model *m)
{
	uint32_t n = m->pp.nchunks, cand[MAXN + 3], got[MAXN], want[MAXN];
	uint32_t c, k, i, max, finite = 0;
	uint64_t must;

	for (c = 0; c < n; c++) {
		CU_ASSERT_EQUAL(policy_next_use(p, c), ref_next_use(m, c));
		finite += ref_next_use(m, c) != POLICY_NEVER;
	}
	for (i = 0; i < 4; i++) {
		k = rnd(n + 3);
		for (c = 0; c < k; c++)
			cand[c] = rnd(n);
		switch (rnd(4)) {
		case 0:
			must = POLICY_NEVER;
			break;
		case 1:
			must = ref_next_use(m, rnd(n));
			break;
		default:
			must = rnd(MAXLEN + 2);
		}
		CU_ASSERT_EQUAL(policy_victim(p, cand, k, must),
				ref_victim(m, cand, k, must));
	}
	c = rnd(n);
	max = rnd(n + 1);
	k = policy_predict(p, c, got, max);
	CU_ASSERT_EQUAL_FATAL(k, ref_predict(m, c, want, max));
	CU_ASSERT(memcmp(got, want, k * sizeof(got[0])) == 0);
	return finite;
}

/* A random history: faults mostly follow a hidden cycle so that chains
 * form, with noise and repeats; accesses likewise; resident events mixed
 * in. Queries run between events to catch stale caches. */
static void random_runs(enum resid_policy kind)
{
	uint32_t t, e, c, hidden[MAXN], prev, finite = 0;
	struct policy *p;
	struct model m;

	for (t = 0; t < TRIALS; t++) {
		memset(&m, 0, sizeof(m));
		m.pp.kind = kind;
		m.pp.nchunks = 1 + rnd(MAXN);
		m.pp.signal = rnd(2) ? RESID_SIGNAL_AFTER_READ :
				       RESID_SIGNAL_BEFORE_READ;
		if (rnd(4)) {
			m.len = 1 + rnd(MAXLEN);
			for (e = 0; e < m.len; e++)
				m.seq[e] = rnd(m.pp.nchunks);
			m.pp.declared_seq = m.seq;
			m.pp.declared_len = m.len;
		} else {
			m.len = m.pp.nchunks;
			for (e = 0; e < m.len; e++)
				m.seq[e] = e;
		}
		for (c = 0; c < m.pp.nchunks; c++)
			hidden[c] = rnd(m.pp.nchunks);
		p = make(&m.pp);
		prev = 0;
		for (e = 0; e < MAXEV; e++) {
			c = rnd(3) ? hidden[prev] : rnd(m.pp.nchunks);
			prev = c;
			switch (rnd(5)) {
			case 0:
				policy_on_resident(p, c);
				break;
			case 1:
			case 2:
				m.access[m.naccess++] = c;
				policy_on_access(p, c);
				break;
			default:
				policy_on_fault(p, c, 1000 + m.nfaults);
				m.faults[m.nfaults++] = c;
			}
			if (!rnd(3))
				finite += compare(p, &m);
		}
		finite += compare(p, &m);
		policy_destroy(p);
	}
	CU_ASSERT(finite > TRIALS);
}

static void test_random_lru(void)
{
	random_runs(RESID_POLICY_LRU);
}

static void test_random_learned(void)
{
	random_runs(RESID_POLICY_LEARNED);
}

static void test_random_declared(void)
{
	random_runs(RESID_POLICY_DECLARED);
}

static struct policy *declared(uint32_t n, const uint32_t *seq, uint32_t len,
			       enum resid_signal sig)
{
	struct policy_params pp = {
		.kind = RESID_POLICY_DECLARED,
		.nchunks = n,
		.declared_seq = seq,
		.declared_len = len,
		.signal = sig,
	};

	return make(&pp);
}

static struct policy *plain(enum resid_policy kind, uint32_t n)
{
	struct policy_params pp = { .kind = kind, .nchunks = n };

	return make(&pp);
}

static void expect_uses(struct policy *p, const uint64_t *want, uint32_t n)
{
	uint32_t c;

	for (c = 0; c < n; c++)
		CU_ASSERT_EQUAL(policy_next_use(p, c), want[c]);
}

/* The cycle 0,1,2,3 and a signal for chunk 1: BEFORE_READ needs 1 now,
 * AFTER_READ has consumed it and needs it a full cycle later. */
static void test_signal(void)
{
	static const uint32_t all[] = { 0, 1, 2, 3 };
	static const uint64_t start[] = { 0, 1, 2, 3 };
	static const uint64_t before[] = { 3, 0, 1, 2 };
	static const uint64_t after[] = { 3, 4, 1, 2 };
	static const uint64_t after2[] = { 2, 3, 4, 1 };
	struct policy *b = declared(4, NULL, 0, RESID_SIGNAL_BEFORE_READ);
	struct policy *a = declared(4, NULL, 0, RESID_SIGNAL_AFTER_READ);

	expect_uses(b, start, 4);
	expect_uses(a, start, 4); /* nothing consumed yet, either way */
	policy_on_access(b, 1);
	policy_on_access(a, 1);
	expect_uses(b, before, 4);
	expect_uses(a, after, 4);
	CU_ASSERT_EQUAL(policy_victim(b, all, 4, POLICY_NEVER), 0);
	CU_ASSERT_EQUAL(policy_victim(a, all, 4, POLICY_NEVER), 1);
	policy_on_fault(a, 3, 7); /* faults do not move the cursor */
	policy_on_resident(a, 3);
	expect_uses(a, after, 4);
	policy_on_access(a, 2);
	expect_uses(a, after2, 4);
	policy_destroy(b);
	policy_destroy(a);
}

/* A chunk twice in a row in the cycle: the second signal advances. */
static void test_repeated_chunk(void)
{
	static const uint32_t seq[] = { 0, 0, 1 };
	static const uint64_t at0[] = { 0, 2 };
	static const uint64_t at1[] = { 0, 1 };
	struct policy *p = declared(2, seq, 3, RESID_SIGNAL_BEFORE_READ);

	policy_on_access(p, 0);
	expect_uses(p, at0, 2);
	policy_on_access(p, 0);
	expect_uses(p, at1, 2);
	policy_on_access(p, 5); /* outside the region: ignored */
	expect_uses(p, at1, 2);
	CU_ASSERT_EQUAL(policy_next_use(p, 5), POLICY_NEVER);
	policy_destroy(p);
}

/* Prefetch admission: only a next use strictly later than the target's. */
static void test_admission(void)
{
	static const uint32_t mid[] = { 2, 1 }, all[] = { 3, 2, 1, 0 };
	static const uint32_t ties[] = { 3, 2 };
	struct policy *d = declared(4, NULL, 0, RESID_SIGNAL_BEFORE_READ);
	struct policy *l = plain(RESID_POLICY_LRU, 4);

	CU_ASSERT_EQUAL(policy_victim(d, mid, 2, 2), -1);
	CU_ASSERT_EQUAL(policy_victim(d, mid, 2, 1), 2);
	CU_ASSERT_EQUAL(policy_victim(d, mid, 2, POLICY_NEVER), 2);
	CU_ASSERT_EQUAL(policy_victim(d, all, 4, 3), -1);
	CU_ASSERT_EQUAL(policy_victim(d, all, 0, POLICY_NEVER), -1);
	policy_on_fault(l, 0, 10);
	policy_on_fault(l, 1, 11);
	CU_ASSERT_EQUAL(policy_next_use(l, 0), 1);
	CU_ASSERT_EQUAL(policy_next_use(l, 1), 0);
	/* never faulted is the oldest; equal ages go to the lowest id */
	CU_ASSERT_EQUAL(policy_victim(l, all, 4, 5), 2);
	CU_ASSERT_EQUAL(policy_victim(l, ties, 2, POLICY_NEVER), 2);
	CU_ASSERT_EQUAL(policy_victim(l, all + 2, 2, 1), -1);
	policy_destroy(d);
	policy_destroy(l);
}

/* Faults 0,1,2,3,0 close a cycle; a jump 0->2 then leaves 1 off the chain
 * and makes the current chunk 2 a cycle of three away. */
static void test_learned_chain(void)
{
	static const uint64_t cycle[] = { 4, 1, 2, 3 };
	static const uint64_t jumped[] = { 2, POLICY_NEVER, 3, 1 };
	struct policy *p = plain(RESID_POLICY_LEARNED, 4);
	uint32_t i;

	expect_uses(p,
		    (const uint64_t[]){ POLICY_NEVER, POLICY_NEVER,
					POLICY_NEVER, POLICY_NEVER },
		    4);
	for (i = 0; i < 5; i++)
		policy_on_fault(p, i % 4, i);
	expect_uses(p, cycle, 4);
	policy_on_fault(p, 2, 5);
	expect_uses(p, jumped, 4);
	policy_destroy(p);
}

static void expect_predict(struct policy *p, uint32_t c, uint32_t max,
			   const uint32_t *want, uint32_t n)
{
	uint32_t got[8];

	CU_ASSERT_EQUAL_FATAL(policy_predict(p, c, got, max), n);
	CU_ASSERT(n == 0 || memcmp(got, want, n * sizeof(got[0])) == 0);
}

static void test_predict(void)
{
	static const uint32_t seq[] = { 0, 1, 0, 2, 3 };
	static const uint32_t faults[] = { 0, 1, 1, 2, 3, 1 };
	struct policy *d = declared(5, seq, 5, RESID_SIGNAL_BEFORE_READ);
	struct policy *l = plain(RESID_POLICY_LEARNED, 4);
	struct policy *r = plain(RESID_POLICY_LRU, 4);
	uint32_t i;

	expect_predict(d, 0, 8, (const uint32_t[]){ 1, 2, 3 }, 3);
	expect_predict(d, 0, 2, (const uint32_t[]){ 1, 2 }, 2);
	expect_predict(d, 3, 8, (const uint32_t[]){ 0, 1, 2 }, 3);
	expect_predict(d, 4, 8, NULL, 0); /* not in the cycle */
	policy_on_access(d, 0);
	policy_on_access(d, 1);
	policy_on_access(d, 0); /* cursor at position 2 */
	expect_predict(d, 0, 8, (const uint32_t[]){ 2, 3, 1 }, 3);
	for (i = 0; i < 6; i++)
		policy_on_fault(l, faults[i], i);
	/* 0->1, 1->2 (not 1->1), 2->3, 3->1 */
	expect_predict(l, 0, 8, (const uint32_t[]){ 1, 2, 3 }, 3);
	expect_predict(l, 3, 8, (const uint32_t[]){ 1, 2 }, 2);
	expect_predict(l, 2, 1, (const uint32_t[]){ 3 }, 1);
	expect_predict(r, 0, 8, NULL, 0);
	policy_destroy(d);
	policy_destroy(l);
	policy_destroy(r);
}

/* Refused, with a line that names what was wrong. */
static void expect_reject(const struct policy_params *pp, const char *why)
{
	char err[256] = "";

	CU_ASSERT_PTR_NULL(policy_create(pp, err, sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, why));
}

static void test_create(void)
{
	static const uint32_t bad[] = { 0, 3, 4 }, ok[] = { 3, 0 };
	struct policy_params pp = {
		.kind = RESID_POLICY_DECLARED,
		.nchunks = 4,
		.declared_seq = bad,
		.declared_len = 3,
	};

	expect_reject(&pp, "names chunk 4");
	pp.declared_len = 0;
	expect_reject(&pp, "empty");
	pp.declared_seq = NULL;
	pp.declared_len = 2;
	expect_reject(&pp, "without a sequence");
	pp.declared_seq = ok;
	pp.signal = (enum resid_signal)7;
	expect_reject(&pp, "signal");
	pp.signal = RESID_SIGNAL_AFTER_READ;
	pp.nchunks = 0;
	expect_reject(&pp, "no chunks");
	pp.nchunks = 4;
	pp.kind = (enum resid_policy)9;
	expect_reject(&pp, "kind");
	pp.kind = RESID_POLICY_DECLARED;
	policy_destroy(make(&pp));
	pp.declared_seq = NULL;
	pp.declared_len = 0;
	policy_destroy(make(&pp)); /* NULL, 0: the chunk order */
	pp.declared_seq = bad;
	pp.declared_len = 3;
	CU_ASSERT_PTR_NULL(policy_create(&pp, NULL, 0)); /* no err buffer */
}

void suite_policy(void)
{
	CU_pSuite s = CU_add_suite("policy", NULL, NULL);

	if (!s)
		return;
	CU_add_test(s, "lru matches the naive reference", test_random_lru);
	CU_add_test(s, "learned matches the naive reference",
		    test_random_learned);
	CU_add_test(s, "declared matches the naive reference",
		    test_random_declared);
	CU_add_test(s, "before/after read signal", test_signal);
	CU_add_test(s, "repeated chunk advances the cursor",
		    test_repeated_chunk);
	CU_add_test(s, "prefetch admission and ties", test_admission);
	CU_add_test(s, "learned chain distances", test_learned_chain);
	CU_add_test(s, "predict", test_predict);
	CU_add_test(s, "create rejects bad parameters", test_create);
}
