/* The replay line: everything one run needs, as one shell word, and the
 * strategy names a user types. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault/bugs.h"
#include "rev.h"
#include "sim/explore.h"

int parse_strategy(const char *s, enum sim_strategy *st, unsigned *depth)
{
	if (!strcmp(s, "random")) {
		*st = SIM_RANDOM;
		*depth = 0;
		return 0;
	}
	/* pct:D (depth 1..9) or dfs:P (preemption bound 0..9) */
	if (strlen(s) != 5 || s[3] != ':' || s[4] < '0' || s[4] > '9')
		return -1;
	if (!strncmp(s, "pct", 3) && s[4] != '0')
		*st = SIM_PCT;
	else if (!strncmp(s, "dfs", 3))
		*st = SIM_DFS;
	else
		return -1;
	*depth = (unsigned)(s[4] - '0');
	return 0;
}

void replay_free(struct replay *rp)
{
	free(rp->schedule);
	rp->schedule = NULL;
	rp->nschedule = 0;
}

/* The line's fault field: a spec list with ':' for '/', or "-". */
static int faults_encode(const struct fault_plan *f, char *buf, size_t n)
{
	if (fault_plan_format(f, buf, n) < 0)
		return -1;
	if (!buf[0])
		snprintf(buf, n, "-");
	for (char *c = buf; *c; c++)
		if (*c == '/')
			*c = ':';
	return 0;
}

#define FAULTS_MAX 8192
#define UNEQUAL "+unequal"

char *replay_encode(const struct replay *rp)
{
	size_t cap = 128 + FAULTS_MAX + rp->nschedule * 12, len;
	char *s = malloc(cap), *faults = malloc(FAULTS_MAX);

	if (!s || !faults || faults_encode(&rp->faults, faults, FAULTS_MAX)) {
		free(s);
		free(faults);
		return NULL;
	}
	char strat[16], bugs[24];

	if (rp->strategy == SIM_PCT)
		snprintf(strat, sizeof(strat), "pct%u-k%" PRIu64, rp->depth,
			 rp->steps);
	else if (rp->strategy == SIM_DFS)
		snprintf(strat, sizeof(strat), "dfs%u", rp->depth);
	else
		snprintf(strat, sizeof(strat), "random");
	bugs_format(rp->bugs, bugs, sizeof(bugs));
	len = (size_t)snprintf(s, cap, "rc3/%s%s/%s%s/%s/%" PRIu64 "/%s/%u/%s/",
			       RESID_SIM_BUILD, sim_build(), rp->p->id,
			       rp->unequal ? UNEQUAL : "", strat, rp->seed,
			       bugs, rp->ops, faults);
	free(faults);
	/* Run-length: "thread*count" or "thread", dot-separated. */
	for (size_t i = 0; i < rp->nschedule;) {
		size_t j = i;

		while (j < rp->nschedule && rp->schedule[j] == rp->schedule[i])
			j++;
		len += (size_t)snprintf(s + len, cap - len, "%s%u",
					i ? "." : "", rp->schedule[i]);
		if (j - i > 1)
			len += (size_t)snprintf(s + len, cap - len, "*%zu",
						j - i);
		i = j;
	}
	return s;
}

static int bad(char *err, size_t n, const char *what)
{
	snprintf(err, n,
		 "malformed replay line: %s; paste the line residctl "
		 "printed, in quotes",
		 what);
	return -1;
}

/* The schedule's thread ids, "T*COUNT" runs separated by dots, into rp;
 * NULL, or what is wrong. */
static const char *decode_schedule(const char *p, struct replay *rp)
{
	size_t cap = 0;

	while (*p) {
		char *end;
		unsigned long t = strtoul(p, &end, 10), count = 1;

		if (end == p || t > 65535)
			return "bad thread id";
		if (*end == '*') {
			p = end + 1;
			count = strtoul(p, &end, 10);
			if (end == p || !count || count > 10000000)
				return "bad count";
		}
		if (rp->nschedule + count > cap) {
			cap = (rp->nschedule + count) * 2;
			uint16_t *g = realloc(rp->schedule, cap * sizeof(*g));

			if (!g)
				return "too long";
			rp->schedule = g;
		}
		while (count--)
			rp->schedule[rp->nschedule++] = (uint16_t)t;
		if (*end == '.')
			end++;
		else if (*end)
			return "bad separator";
		p = end;
	}
	return NULL;
}

int replay_decode(const char *line, struct replay *rp, char *err, size_t n)
{
	char rev[64], id[64], strat[32], bugs[32], why[400];
	char faults[FAULTS_MAX];
	unsigned long long seed;
	unsigned ops;
	int used = 0;

	memset(rp, 0, sizeof(*rp));
	if (sscanf(line,
		   "rc3/%63[^/]/%63[^/]/%31[^/]/%llu/%31[^/]/%u/%8191[^/]/%n",
		   rev, id, strat, &seed, bugs, &ops, faults, &used) != 7 ||
	    !used)
		return bad(err, n,
			   "expected rc3/REV/SCENARIO/STRATEGY/SEED/"
			   "BUGS/OPS/FAULTS/SCHEDULE");
	if (bugs_parse(bugs, &rp->bugs, why, sizeof(why)) < 0)
		return bad(err, n, why);
	for (char *c = faults; *c; c++)
		if (*c == ':')
			*c = '/';
	if (strcmp(faults, "-") &&
	    fault_plan_add(&rp->faults, "faults", faults, why, sizeof(why)) < 0)
		return bad(err, n, why);
	char here[80];

	snprintf(here, sizeof(here), "%s%s", RESID_SIM_BUILD, sim_build());
	if (strcmp(rev, here)) {
		snprintf(err, n,
			 "replay line is from build %s, this is %s: "
			 "replay it in the build that printed it (the same "
			 "sources; a +simx line needs make simx and "
			 "build/simx/residctl)",
			 rev, here);
		return -1;
	}
	size_t idlen = strlen(id), ulen = strlen(UNEQUAL);

	if (idlen > ulen && !strcmp(id + idlen - ulen, UNEQUAL)) {
		rp->unequal = 1;
		id[idlen - ulen] = '\0';
	}
	rp->p = simprog_find(id);
	if (!rp->p)
		return bad(err, n, "unknown scenario");
	if (fault_plan_fit(&rp->faults, simprog_can_fire(rp->p), rp->p->id, why,
			   sizeof(why)) < 0)
		return bad(err, n, why);
	if (!strcmp(strat, "random")) {
		rp->strategy = SIM_RANDOM;
	} else if (!strncmp(strat, "dfs", 3) && strat[3] >= '0' &&
		   strat[3] <= '9' && !strat[4]) {
		rp->strategy = SIM_DFS;
		rp->depth = (unsigned)(strat[3] - '0');
	} else if (!strncmp(strat, "pct", 3) && strat[3] >= '1' &&
		   strat[3] <= '9' && !strncmp(strat + 4, "-k", 2) &&
		   strat[6] >= '1' && strat[6] <= '9') {
		char *end;

		rp->strategy = SIM_PCT;
		rp->depth = (unsigned)(strat[3] - '0');
		rp->steps = strtoull(strat + 6, &end, 10);
		if (*end)
			return bad(err, n, "bad PCT step count");
	} else {
		return bad(err, n, "unknown strategy");
	}
	if (!ops || ops > 1000000)
		return bad(err, n, "operation count out of range");
	rp->seed = seed;
	rp->ops = ops;
	const char *what = decode_schedule(line + used, rp);

	return what ? (replay_free(rp), bad(err, n, what)) : 0;
}
