/* Fault plans: the specs a user types (--fault, RESIDCTL_FAULTS), a
 * scenario's defaults and a replay line's faults, parsed, fitted to a run
 * and written back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/err_line.h"
#include "base/rng.h"
#include "base/row.h"
#include "fault/fault.h"

#define PREFIX "resid/"
#define PREFIX_LEN (sizeof(PREFIX) - 1)

#define FAULT_NAME(e, s) [e] = PREFIX s,
static const char *const names[FP_COUNT] = { FAULT_POINTS(FAULT_NAME) };
#undef FAULT_NAME
#define FAULT_COUNTER(e, s) [e] = "fired:" s,
static const char *const counters[FP_COUNT] = { FAULT_POINTS(FAULT_COUNTER) };
#undef FAULT_COUNTER

const char *fault_name(int point)
{
	return point >= 0 && point < FP_COUNT ? names[point] : NULL;
}

/* The point called name[0..len), with or without the prefix; -1 if none. */
static int point_index(const char *name, size_t len)
{
	if (len > PREFIX_LEN && !memcmp(name, PREFIX, PREFIX_LEN)) {
		name += PREFIX_LEN;
		len -= PREFIX_LEN;
	}
	for (int p = 0; p < FP_COUNT; p++) {
		const char *s = names[p] + PREFIX_LEN;

		if (strlen(s) == len && !memcmp(s, name, len))
			return p;
	}
	return -1;
}

/* A plain decimal in [0, 1] as a threshold on 53 bits. 0 or -1. */
static int parse_probability(const char *s, uint64_t *threshold)
{
	char *end;
	double p;

	/* Digits and dots only: no sign, exponent, hex, inf or nan. */
	if (s[strspn(s, "0123456789.")] || !strpbrk(s, "0123456789"))
		return -1;
	p = strtod(s, &end);
	if (*end || p > 1)
		return -1;
	*threshold = (uint64_t)(p * 0x1p53);
	return 0;
}

/* "N" or "N+M+..": call numbers >= 1, kept ascending and unique. */
static int parse_calls(const char *s, struct fault_rule *r)
{
	char buf[24];

	r->ncalls = 0;
	for (;;) {
		size_t len = strcspn(s, "+");
		uint64_t c;
		uint16_t i;

		if (len >= sizeof(buf) || r->ncalls == FAULT_MAX_CALLS)
			return -1;
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (cli_u64(buf, &c) || !c)
			return -1;
		for (i = r->ncalls; i && r->calls[i - 1] > c; i--)
			r->calls[i] = r->calls[i - 1];
		if (i && r->calls[i - 1] == c)
			return -1;
		r->calls[i] = c;
		r->ncalls++;
		if (!s[len])
			return 0;
		s += len + 1;
	}
}

static int unknown(const char *where, const char *s, size_t len, size_t k,
		   char *err, size_t n)
{
	char known[FP_COUNT * 24];
	size_t used = 0;

	for (int p = 0; p < FP_COUNT; p++) {
		int w = snprintf(known + used, sizeof(known) - used, "%s, ",
				 names[p] + PREFIX_LEN);

		if (w < 0 || (size_t)w >= sizeof(known) - used)
			break;
		used += (size_t)w;
	}
	return err_line(err, n,
			"%s \"%.*s\": unknown point \"%.*s\"; use one of "
			"%sall or swarm (the \"" PREFIX
			"\" prefix is optional)",
			where, (int)len, s, (int)k, s, known);
}

/* Checks the spec s[0..len) and, when plan is set, adds it. */
static int add_one(struct fault_plan *plan, const char *where, const char *s,
		   size_t len, char *err, size_t n)
{
	size_t k = strcspn(s, "=@,");
	const char *v = s + k + 1;
	struct fault_rule r = { .prob = "" };
	uint32_t mask;
	char val[sizeof(r.prob) + 8 * FAULT_MAX_CALLS];
	size_t vlen;
	int p;

	if (!len)
		return err_line(err, n,
				"%s: an empty spec; write NAME=P or NAME@N, "
				"several separated by single commas",
				where);
	if (len == 5 && !memcmp(s, "swarm", 5)) {
		if (plan)
			plan->swarm = FAULT_ALL;
		return 0;
	}
	if (k >= len)
		return err_line(err, n,
				"%s \"%.*s\": no value; write NAME=P "
				"(probability 0..1) or NAME@N (the Nth call, "
				"N >= 1; N+M+.. for several), e.g. wake=0.01",
				where, (int)len, s);
	if (k == 3 && !memcmp(s, "all", 3)) {
		mask = FAULT_ALL;
	} else {
		p = point_index(s, k);
		if (p < 0)
			return unknown(where, s, len, k, err, n);
		mask = 1u << p;
	}
	vlen = len - k - 1;
	if (vlen < sizeof(val)) {
		memcpy(val, v, vlen);
		val[vlen] = '\0';
	}
	if (s[k] == '@') {
		if (vlen >= sizeof(val) || parse_calls(val, &r))
			return err_line(err, n,
					"%s \"%.*s\": calls \"%.*s\" are "
					"not whole numbers >= 1, each once, at most "
					"%d; write e.g. %.*s@3 or %.*s@3+7",
					where, (int)len, s, (int)vlen, v,
					FAULT_MAX_CALLS, (int)k, s, (int)k, s);
	} else if (vlen >= sizeof(r.prob) ||
		   parse_probability(val, &r.threshold)) {
		return err_line(err, n,
				"%s \"%.*s\": probability \"%.*s\" is "
				"not a decimal from 0 to 1; write e.g. %.*s=0.01",
				where, (int)len, s, (int)vlen, v, (int)k, s);
	} else {
		memcpy(r.prob, val, vlen + 1);
	}
	if (!plan)
		return 0;
	for (p = 0; p < FP_COUNT; p++) {
		if (mask & 1u << p) {
			plan->rule[p] = r;
			plan->on |= 1u << p;
		}
	}
	plan->all |= mask == FAULT_ALL;
	return 0;
}

int fault_plan_add(struct fault_plan *plan, const char *where, const char *list,
		   char *err, size_t n)
{
	/* A dry run first, so an error adds nothing. */
	for (int apply = 0; apply < 2; apply++) {
		const char *s = list;

		for (;;) {
			size_t len = strcspn(s, ",");

			if (add_one(apply ? plan : NULL, where, s, len, err, n))
				return -1;
			if (!s[len])
				break;
			s += len + 1;
		}
	}
	return 0;
}

int fault_plan_opt(void *dst, const char *where, const char *spec, char *err,
		   size_t n)
{
	return fault_plan_add(dst, where, spec, err, n);
}

int fault_plan_fit(struct fault_plan *plan, uint32_t can, const char *run,
		   char *err, size_t n)
{
	uint32_t cannot = plan->on & ~can;

	if (plan->all && !(plan->on & can))
		return err_line(err, n,
				"fault all: %s makes no seam call a fault "
				"can fire on; drop --fault for it",
				run);
	if (cannot && !plan->all)
		return err_line(err, n,
				"fault %s cannot fire in %s: it makes no "
				"such seam call; drop it or name another scenario",
				names[__builtin_ctz(cannot)] + PREFIX_LEN, run);
	/* A swarm is whatever the run can fire: never refused. */
	plan->swarm &= can;
	plan->on &= can;
	for (int p = 0; p < FP_COUNT; p++)
		if (!(plan->on & 1u << p))
			memset(&plan->rule[p], 0, sizeof(plan->rule[p]));
	plan->all = 0;
	return 0;
}

int fault_plan_format(const struct fault_plan *plan, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	if (plan->swarm) {
		if (n < 6)
			return -1;
		used = (size_t)snprintf(buf, n, "swarm");
	}
	for (int p = 0; p < FP_COUNT; p++) {
		const struct fault_rule *r = &plan->rule[p];
		int w;

		if (!(plan->on & 1u << p))
			continue;
		w = snprintf(buf + used, n - used, "%s%s%s%s", used ? "," : "",
			     names[p] + PREFIX_LEN, r->prob[0] ? "=" : "@",
			     r->prob);
		if (w < 0 || (size_t)w >= n - used)
			return -1;
		used += (size_t)w;
		for (uint16_t i = 0; i < r->ncalls && !r->prob[0]; i++) {
			w = snprintf(buf + used, n - used, "%s%llu",
				     i ? "+" : "",
				     (unsigned long long)r->calls[i]);
			if (w < 0 || (size_t)w >= n - used)
				return -1;
			used += (size_t)w;
		}
	}
	return 0;
}

/* Ceilings: a point the pager retries only so often must not fail every
 * try, or the swarm makes a false alarm no oracle may judge a bug.
 * Eight failed fetches of one chunk in a row fail it for good
 * (pager/fetch.c): a CONTINUE that fails abandons the fetch at once, and at
 * 0.1 each a campaign of 2000 schedules met eight in a row; at 0.03 each
 * (0.06 both) they come once in 5e9 fetches. A cgroup read is tried 8 times
 * before resid_open refuses the region (pager/reconcile.c): at 0.5 one run
 * in a hundred or so; at 0.1, 1e-8 per read. */
#define SWARM_MIN 0.01
#define SWARM_MAX 0.5

static double swarm_ceiling(int p)
{
	switch (p) {
	case FP_CONT_EEXIST:
	case FP_CONT_EFAULT:
		return 0.03;
	case FP_CGROUP_READ:
		return 0.1;
	default:
		return SWARM_MAX;
	}
}

/* The seed's own stream, apart from the run's (and the seam's hashes). */
static uint64_t swarm_stream(uint64_t seed)
{
	uint64_t s = seed ^ 0x5357524d5357524dull; /* "SWRMSWRM" */

	return rng_next(&s);
}

void fault_plan_swarm(const struct fault_plan *plan, uint64_t seed,
		      struct fault_plan *out)
{
	uint64_t rng = swarm_stream(seed);
	uint32_t draw = plan->swarm & ~plan->on;

	if (out != plan)
		*out = *plan;
	out->swarm = 0;
	/* Every point draws, on or not, so that a point's draw does not
	 * depend on which others the plan names. */
	for (int p = 0; p < FP_COUNT; p++) {
		int on = (int)rng_below(&rng, 2);
		double hi = swarm_ceiling(p);
		double u = (double)rng_below(&rng, 1000) / 999;
		struct fault_rule *r = &out->rule[p];

		if (!(draw & 1u << p) || !on)
			continue;
		memset(r, 0, sizeof(*r));
		/* Four digits, parsed back: the line's text is the rule. */
		snprintf(r->prob, sizeof(r->prob), "%.4f",
			 SWARM_MIN * pow(hi / SWARM_MIN, u));
		(void)parse_probability(r->prob, &r->threshold);
		out->on |= 1u << p;
	}
}

uint64_t fault_swarm_chunk(uint64_t seed)
{
	static const uint64_t sizes[] = { 64 << 10, 256 << 10, 1 << 20 };
	uint64_t rng = swarm_stream(~seed);

	return sizes[rng_below(&rng, 3)];
}

/* Adds to the counter: a storm's child and the run's own seam both report.
 * A swarm names every point it may draw. */
void fault_report(const struct fault_plan *plan, const uint64_t fired[FP_COUNT],
		  struct scen_result *res)
{
	for (int p = 0; p < FP_COUNT; p++) {
		uint64_t v = fired[p];

		if (!((plan->on | plan->swarm) & 1u << p))
			continue;
		for (int i = 0; i < res->ncounters; i++)
			if (res->counters[i].name == counters[p])
				v += res->counters[i].value;
		scen_count(res, counters[p], v);
	}
}
