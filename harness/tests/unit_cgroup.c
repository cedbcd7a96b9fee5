/* The unit suites' own memory cgroup (unit_cgroup.h). */
#include <stdio.h>
#include <unistd.h>

#include "tests/unit_cgroup.h"

#define UNIT_CGROUP_LIMIT (256u << 20)

int unit_cgroup_enter(struct unit_cgroup *u, const char *suite, const char *tag)
{
	char err[512];

	if (geteuid() != 0)
		return 0;
	if (cg_scope_enter(&u->scope, tag, UNIT_CGROUP_LIMIT, err,
			   sizeof(err)) < 0) {
		fprintf(stderr, "%s suite: %s\n", suite, err);
		return -1;
	}
	u->own = 1;
	return 0;
}

int unit_cgroup_leave(struct unit_cgroup *u)
{
	if (u->own && cg_scope_leave(&u->scope) < 0)
		return -1;
	u->own = 0;
	return 0;
}
