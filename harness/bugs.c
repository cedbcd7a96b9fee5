#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bugs.h"

#include "bug_switch.h"

const struct bug_info bug_table[NBUGS + 1] = {
	[1] = { "false RECONCILE FAILED",
		"reconcile leaves the bytes reserved by in-flight fetches out "
		"of the comparison", "T-6", "T-6" },
	[2] = { "commit-before-RESIDENT deadlock",
		"the fetcher marks the chunk RESIDENT before committing its "
		"reservation", "T-3", "T-3" },
	[3] = { "commit-and-pin not atomic",
		"commit and pin in two critical sections, RESIDENT between "
		"them", "T-3", "T-3" },
	[4] = { "unlocked latency histogram",
		"workers update bucket, count, sum, min and max without the "
		"histogram lock", "T-6", "T-6" },
	[5] = { "unlocked statistics counters",
		"plain ++ and += on the shared counters", "T-6", "T-6" },
	[6] = { "unlocked pin operations in the prefetch path",
		"pin before the fetch, unpin on abandon, unpin after the "
		"fetch: bare", "T-6", "T-6" },
	[7] = { "lost wakeup on FETCHING->ABSENT",
		"the drop paths set ABSENT without UFFDIO_WAKE", "T-7", "T-7" },
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
		if (*p < '1' || *p > '0' + NBUGS || (p[1] && !strchr(",+", p[1]))) {
			snprintf(err, n, "bad bug list '%s': give numbers 1..%d "
				 "separated by commas (e.g. 2 or 1,5), all or "
				 "none", s, NBUGS);
			return -1;
		}
		*mask |= 1u << (*p - '0');
		if (!p[1])
			return 0;
		p += 2;
	}
}

void bugs_format(unsigned mask, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int b = 1; b <= NBUGS; b++)
		if (mask >> b & 1 && len + 3 < n)
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

int bugs_option(const char *cmd, const char *value)
{
	char err[160];
	unsigned mask;

	if (bugs_parse(value, &mask, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl %s: %s\n", cmd, err);
		return 2;
	}
	bugs_enable(bugs_enabled() | mask);
	return 0;
}
