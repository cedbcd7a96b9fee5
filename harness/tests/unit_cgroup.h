/* A unit suite's memory cgroup of its own, as the gate's scenarios have:
 * memory.stat of a shared cgroup counts other processes' shmem too. Only
 * as root; otherwise the suite runs in the process's own cgroup (own = 0)
 * and a check of shmem can see others' pages. */
#ifndef HARNESS_TESTS_UNIT_CGROUP_H
#define HARNESS_TESTS_UNIT_CGROUP_H

#include "cgroup/cgroup_scope.h"

struct unit_cgroup {
	struct cg_scope scope;
	int own; /* 1 from a successful enter to the leave */
};

/* For a suite's setup: the process into a 256 MiB child named by tag.
 * 0, or -1 with "SUITE suite: why" on stderr. */
int unit_cgroup_enter(struct unit_cgroup *u, const char *suite,
		      const char *tag);

/* For its teardown: back out of the child, if entered. 0, or -1. */
int unit_cgroup_leave(struct unit_cgroup *u);

#endif
