/* cgroup_scope.c and the probe with libcgroup itself against the real
 * hierarchy this process runs in: on this machine (v1), and in every cell of
 * the kernel matrix (v1 and v2, from the root cgroup and from a delegated
 * scope that holds other processes, with and without swap). Needs root. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup_scope.h"
#include "cgroupfs.h"
#include "cli/probe.h"
#include "seam.h"
#include "tests/suites.h"

#define MiB (1ULL << 20)

/* The memory cgroup (v1 memory line, else the v2 line) of /proc/PID/cgroup
 * below its mount, in rel; 0 or -1. */
static int rel_of(pid_t pid, char *rel, size_t n)
{
	char path[64], text[8192];
	int found = -1;
	long got;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	got = resid_seam_linux.read_text(resid_seam_linux.ctx, path, text,
					 sizeof(text));
	if (got <= 0)
		return -1;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(l, ':'),
		     *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2 || (size_t)snprintf(rel, n, "%s", c2 + 1) >= n)
			continue;
		if (strstr(c1, "memory"))
			return 0; /* v1 memory wins, as in cg_find_memory */
		if (!strncmp(l, "0::", 3))
			found = 0;
	}
	return found;
}

/* Whether PID's memory cgroup ends in rel (the mount's root may precede). */
static int in(pid_t pid, const char *rel)
{
	char now[CG_PATH_MAX];
	size_t nl, rl = strlen(rel);

	if (rel_of(pid, now, sizeof(now)))
		return 0;
	nl = strlen(now);
	return nl >= rl && !strcmp(now + nl - rl, rel);
}

/* The residctl-<pid>-* entries of dir. */
static int ours_in(const char *dir)
{
	char prefix[32];
	struct dirent *e;
	DIR *d = opendir(dir);
	int count = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	snprintf(prefix, sizeof(prefix), "residctl-%d-", (int)getpid());
	while ((e = readdir(d)))
		count += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return count;
}

static void read_file(const char *dir, const char *file, char *buf, size_t n)
{
	char path[CG_PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (resid_seam_linux.read_text(resid_seam_linux.ctx, path, buf, n) < 0)
		snprintf(buf, n, "(absent)");
}

/* A process beside this one in its cgroup, as a systemd scope holds. */
static pid_t helper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	CU_ASSERT_FATAL(pid > 0);
	return pid;
}

static void helper_end(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static int skip_unless_root(void)
{
	if (geteuid() == 0)
		return 0;
	printf("\n    note: not root, skipping the real cgroup tests ");
	return 1;
}

/* Where this process starts, and its parent's cgroup.subtree_control. */
static void start_state(struct cg_memory *m, char *subtree, size_t n)
{
	struct cg_env env;
	char err[CG_PATH_MAX + 256];

	cg_env_init(&env, resid_seam_linux.read_text, resid_seam_linux.ctx);
	if (cg_find_memory(&env, m, err, sizeof(err))) {
		printf("\n    cg_find_memory: %s ", err);
		CU_FAIL_FATAL("cg_find_memory failed");
	}
	read_file(m->dir, "cgroup.subtree_control", subtree, n);
}

/* Enter from where the process runs, with a helper process beside it: the
 * child has the limit and forbids swap with its own file, the helper stays
 * out of it. Then leave (or clean up as the signal handler does, when
 * `raw`): both processes and the parent's subtree_control are back as they
 * were, and no residctl-<pid>-* group is left. */
static void enter_with_helper(int raw)
{
	static struct cg_memory start, again;
	static struct cg_scope s;
	char err[CG_PATH_MAX + 256], before[512], after[512];
	struct cg_env env;
	uint64_t shmem;
	pid_t h;

	if (skip_unless_root())
		return;
	start_state(&start, before, sizeof(before));
	h = helper();
	if (cg_scope_enter(&s, "live", 64 * MiB, err, sizeof(err))) {
		printf("\n    cg_scope_enter: %s ", err);
		helper_end(h);
		CU_FAIL_FATAL("cg_scope_enter failed");
	}
	CU_ASSERT_STRING_EQUAL(s.parent.dir, start.dir);
	CU_ASSERT(in(getpid(), s.mem.rel));
	CU_ASSERT(!in(h, s.mem.rel));
	CU_ASSERT_EQUAL(s.mem.limit, 64 * MiB);
	CU_ASSERT(s.cond == CG_SWAP_V2_MAX_ZERO ||
		  s.cond == CG_SWAP_V1_MEMSW_EQ_LIMIT ||
		  (s.cond == CG_SWAP_NONE_CONFIGURED && !s.mem.swap_total));
	cg_env_init(&env, resid_seam_linux.read_text, resid_seam_linux.ctx);
	CU_ASSERT_EQUAL(cg_read_shmem(&env, &s.mem, &shmem), 0);
	if (raw)
		cg_scope_cleanup_all();
	else
		CU_ASSERT_EQUAL(cg_scope_leave(&s), 0);
	CU_ASSERT(in(getpid(), start.rel));
	CU_ASSERT(in(h, start.rel));
	CU_ASSERT_EQUAL(ours_in(start.dir), 0);
	start_state(&again, after, sizeof(after));
	CU_ASSERT_STRING_EQUAL(after, before);
	CU_ASSERT_STRING_EQUAL(again.dir, start.dir);
	helper_end(h);
	CU_ASSERT_EQUAL(cg_scope_leave(&s), 0); /* idempotent */
}

static void enter_leave_with_helper(void)
{
	enter_with_helper(0);
}

static void cleanup_all_with_helper(void)
{
	enter_with_helper(1);
}

/* A "yes" from the probe is a promise that the gate can start here. */
static void probe_agrees(void)
{
	static struct probe p;
	static struct cg_memory start;
	char subtree[512];

	if (skip_unless_root())
		return;
	start_state(&start, subtree, sizeof(subtree));
	probe_run(&p);
	if (!p.can_run)
		printf("\n    probe: %s ", p.verdict);
	CU_ASSERT(p.can_run);
	CU_ASSERT(p.swap_cond >= 0);
	CU_ASSERT(in(getpid(), start.rel));
	CU_ASSERT_EQUAL(ours_in(start.dir), 0);
}

/* cg_scope_enter, which the rest of the test needs. */
static void enter(struct cg_scope *s, const char *tag, uint64_t limit)
{
	char err[CG_PATH_MAX + 256];

	if (cg_scope_enter(s, tag, limit, err, sizeof(err))) {
		printf("\n    cg_scope_enter: %s ", err);
		CU_FAIL_FATAL("cg_scope_enter failed");
	}
}

/* Bad arguments, enter and leave, the signal handler's path, and a stale
 * scope whose slot a later one took. */
static void test_real_scope(void)
{
	struct cg_scope s, t;
	struct stat st;
	char err[CG_PATH_MAX + 256], dir[CG_PATH_MAX];

	if (skip_unless_root())
		return;
	CU_ASSERT_EQUAL(cg_scope_enter(&s, "bad/tag", 64 * MiB, err,
				       sizeof(err)),
			-1);
	CU_ASSERT_EQUAL(cg_scope_enter(&s, "unit", 64 * MiB + 1, err,
				       sizeof(err)),
			-1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "multiple of 4096"));
	CU_ASSERT_NOT_EQUAL(stat(s.mem.dir, &st), 0);
	CU_ASSERT_EQUAL(cg_scope_leave(&s), 0);

	enter(&s, "unit", 64 * MiB);
	strcpy(dir, s.mem.dir);
	CU_ASSERT_EQUAL(stat(dir, &st), 0);
	CU_ASSERT(in(getpid(), s.mem.rel));
	CU_ASSERT_EQUAL(s.mem.limit, 64 * MiB);
	CU_ASSERT(s.cond >= 0);
	CU_ASSERT_EQUAL(cg_scope_leave(&s), 0);
	CU_ASSERT(stat(dir, &st) != 0 && errno == ENOENT);
	CU_ASSERT(in(getpid(), s.parent.rel));
	CU_ASSERT_EQUAL(cg_scope_leave(&s), 0);

	/* the atexit / signal path */
	enter(&s, "unit2", 64 * MiB);
	strcpy(dir, s.mem.dir);
	CU_ASSERT_EQUAL(stat(dir, &st), 0);
	cg_scope_cleanup_all();
	CU_ASSERT(stat(dir, &st) != 0 && errno == ENOENT);
	CU_ASSERT(in(getpid(), s.parent.rel));

	/* a later scope may take the same slot: leaving the stale one must
	 * not remove it */
	enter(&t, "unit3", 32 * MiB);
	CU_ASSERT_EQUAL(cg_scope_leave(&s), 0);
	CU_ASSERT_EQUAL(stat(t.mem.dir, &st), 0);
	CU_ASSERT(in(getpid(), t.mem.rel));
	strcpy(dir, t.mem.dir);
	CU_ASSERT_EQUAL(cg_scope_leave(&t), 0);
	CU_ASSERT(stat(dir, &st) != 0 && errno == ENOENT);
	CU_ASSERT(in(getpid(), t.parent.rel));
}

/* Also leaves a scope a fatal assertion left entered. */
static int suite_clean(void)
{
	cg_scope_cleanup_all();
	return 0;
}

void suite_cgroup_live(void)
{
	CU_pSuite s = CU_add_suite("cgroup-live", NULL, suite_clean);

	if (!s)
		return;
	if (!CU_add_test(s, "real scope", test_real_scope) ||
	    !CU_add_test(s, "enter and leave beside a helper",
			 enter_leave_with_helper) ||
	    !CU_add_test(s, "signal cleanup beside a helper",
			 cleanup_all_with_helper) ||
	    !CU_add_test(s, "probe yes means the gate can start", probe_agrees))
		return; /* run.c reports CU_get_error() */
}
