#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault/bugs.h"

#include "bug_switch.h"

const struct bug_info bug_table[NBUGS + 1] = {
	[1] = { .title = "false RECONCILE FAILED",
		.shape = "reconcile leaves the bytes reserved by in-flight "
			 "fetches out of the comparison",
		.sim_scenario = "T-6",
		.real_scenario = "T-6" },
	[2] = { .title = "commit-before-RESIDENT deadlock",
		.shape = "the fetcher marks the chunk RESIDENT before "
			 "committing its reservation",
		.sim_scenario = "T-3",
		.real_scenario = "T-3" },
	[3] = { .title = "commit-and-pin not atomic",
		.shape = "commit and pin in two critical sections, RESIDENT "
			 "between them",
		.sim_scenario = "T-3",
		.real_scenario = "T-3" },
	[4] = { .title = "unlocked latency histogram",
		.shape = "workers update bucket, count, sum, min and max "
			 "without the histogram lock",
		.sim_scenario = "T-6",
		.real_scenario = "T-6" },
	[5] = { .title = "unlocked statistics counters",
		.shape = "plain ++ and += on the shared counters",
		.sim_scenario = "T-6",
		.real_scenario = "T-6" },
	[6] = { .title = "unlocked pin operations in the prefetch path",
		.shape = "pin before the fetch, unpin on abandon, unpin after "
			 "the fetch: bare",
		.sim_scenario = "T-6",
		.real_scenario = "T-6" },
	[7] = { .title = "lost wakeup on FETCHING->ABSENT",
		.shape = "the drop paths set ABSENT without UFFDIO_WAKE",
		.sim_scenario = "T-7",
		.real_scenario = "T-7" },
	[8] = { .title = "condition wait under if",
		.shape = "resid_quiesce waits for idle once, not until idle: "
			 "a wakeup that finds the pager busy returns",
		.sim_scenario = "T-6",
		.real_scenario = "T-6" },
	[9] = { .title = "chunk lock dropped around a policy update",
		.shape = "the dispatcher tells the policy of a fault without "
			 "the chunk lock, then marks the chunk FETCHING as "
			 "decided before",
		.sim_scenario = "T-6",
		.real_scenario = "T-6" },
	[10] = { .title = "signal where close needs a broadcast",
		 .shape = "resid_close wakes one idle worker to stop; the "
			  "others sleep on and the joins hang",
		 .sim_scenario = "T-3",
		 .real_scenario = "T-3" },
	[11] = { .title = "a refault answered with a wake",
		 .shape = "a fault on a resident chunk is taken for a message "
			  "read late: the page whose entry in A was dropped is "
			  "woken, never mapped, and its thread faults for ever",
		 .sim_scenario = "H-1",
		 .real_scenario = "H-1" },
};

int bugs_parse(const char *s, unsigned *mask, char *err, size_t n)
{
	const char *p = s;

	*mask = 0;
	if (!strcmp(s, "all")) {
		*mask = BUGS_ALL;
		return 0;
	}
	if (!strcmp(s, "none") || !strcmp(s, "-"))
		return 0;
	for (;;) {
		char *end;
		unsigned long b;

		errno = 0;
		b = *p >= '1' && *p <= '9' ? strtoul(p, &end, 10) : 0;
		if (!b || errno || b > NBUGS || (*end && !strchr(",+", *end)) ||
		    (*end && !end[1])) {
			snprintf(err, n,
				 "bad bug list '%s': give numbers 1..%d "
				 "separated by commas (e.g. 2 or 1,5), all or "
				 "none",
				 s, NBUGS);
			return -1;
		}
		*mask |= 1u << b;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

void bugs_format(unsigned mask, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int b = 1; b <= NBUGS; b++)
		if (mask >> b & 1 && len + 4 < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%d",
						len ? "+" : "", b);
	if (!len)
		snprintf(buf, n, "-");
}

void bugs_enable(unsigned mask)
{
	__atomic_store_n(&resid_bugs, mask, __ATOMIC_RELAXED);
}

unsigned bugs_enabled(void)
{
	return __atomic_load_n(&resid_bugs, __ATOMIC_RELAXED);
}

int bugs_from_env(char *err, size_t n)
{
	const char *v = getenv("RESIDCTL_BUGS");
	unsigned mask;

	if (!v || !*v)
		return 0;
	if (bugs_parse(v, &mask, err, n) < 0)
		return -1;
	bugs_enable(mask);
	return 0;
}

int bugs_opt(void *dst, const char *where, const char *value, char *err,
	     size_t n)
{
	unsigned mask;

	(void)dst;
	(void)where;
	if (bugs_parse(value, &mask, err, n) < 0)
		return -1;
	bugs_enable(bugs_enabled() | mask);
	return 0;
}
