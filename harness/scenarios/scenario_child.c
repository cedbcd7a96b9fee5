/* A real-kernel scenario in a child process with a progress watchdog: an
 * injected fault that always fires (punch=1) can leave the pager no way
 * forward, and a faulting thread cannot be interrupted, so the child is
 * killed instead and the row says what fired up to then. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/coverage.h"
#include "proc/child.h"
#include "scenarios/scenario_child.h"
#include "workload/huge_leg.h"

#define TICK_NS 100000000L

/* What the watchdog watches: checks or mismatches going up. */
static uint64_t progress_of(const struct scen_result *r)
{
	return __atomic_load_n(&r->checks, __ATOMIC_RELAXED) +
	       __atomic_load_n(&r->mismatches, __ATOMIC_RELAXED);
}

/* Waits for pid; kills it when progress stalls for stall_s. Returns the
 * child's exit code, or -1 when it was killed or died of a signal. */
static int watch(pid_t pid, const struct scen_result *r, unsigned stall_s,
		 int *stalled)
{
	struct timespec tick = { 0, TICK_NS };
	uint64_t last = progress_of(r), idle_ticks = 0;
	int status;

	for (;;) {
		pid_t w = child_reap(pid, &status, 1);

		if (w == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (w < 0)
			return -1;
		nanosleep(&tick, NULL);
		if (progress_of(r) != last) {
			last = progress_of(r);
			idle_ticks = 0;
		} else if (++idle_ticks * TICK_NS >= stall_s * 1000000000ull) {
			*stalled = 1;
			if (kill(pid, SIGKILL) < 0)
				perror("residctl: kill(scenario child)");
			child_reap(pid, &status, 0);
			return -1;
		}
	}
}

int scen_run_counted(const struct scenario *s, const struct run_opts *o,
		     struct scen_result *res)
{
	uint64_t mark[CP_COUNT], hits[CP_COUNT];
	int rc;

	coverage_mark(mark);
	rc = s->run(o, res);
	coverage_since(mark, hits);
	coverage_add_run(&res->cov, hits);
	return rc;
}

int scen_run_child(const struct scenario *s, const struct run_opts *o,
		   unsigned stall_s, struct scen_result *res)
{
	struct scen_result *shared;
	int stalled = 0, rc;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		scen_fail(res, "cannot map the result for %s's child: %s",
			  s->id, strerror(errno));
		return -1;
	}
	*shared = *res;
	pid = child_fork();
	if (pid < 0) {
		scen_fail(res, "cannot fork %s's child: %s", s->id,
			  strerror(errno));
		munmap(shared, sizeof(*shared));
		return -1;
	}
	if (pid == 0) {
		char err[512];

		/* _exit: the parent owns the cgroup and its atexit cleanup. */
		if (o->leg & LEG_HUGE &&
		    huge_leg_enter(o->huge_dir, err, sizeof(err)) < 0) {
			scen_fail(shared, "the huge leg: %s", err);
			_exit(3);
		}
		rc = scen_run_counted(s, o, shared);
		fflush(NULL);
		_exit(rc == 0 ? 0 : 3);
	}
	rc = watch(pid, shared, stall_s, &stalled);
	*res = *shared;
	coverage_absorb(res->cov.hits); /* the child's, into this process's */
	if (munmap(shared, sizeof(*shared)) < 0)
		perror("residctl: munmap(scenario result)");
	if (stalled) {
		scen_fail(res,
			  "no progress for %u s: killed (a fault that "
			  "always fires can leave the pager no way forward)",
			  stall_s);
		return 0;
	}
	if (rc < 0)
		scen_fail(res, "its child died of a signal");
	return rc == 0 ? 0 : -1;
}
