/* The stale-cgroup sweep: a walk of the memory hierarchy (and of v1's blkio
 * one) from its mount point for residctl-<pid>-* directories whose owner
 * is gone. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/proc_stat.h"
#include "cgroup/cgroup_procs.h"
#include "cgroup/cgroup_stale.h"
#include "cgroupfs.h"
#include "seam.h"

/* The boot time has a one-second grain and the wall clock may have been
 * stepped since the cgroup was made: an owner counts as started after it
 * only by more than this. A pid reused sooner keeps the group until that
 * process ends. */
#define CLOCK_SLACK_S 30
#define MAX_DEPTH 16
#define BUSY_TRIES 200
#define PREFIX "residctl-"
#define HELD "-held"

struct sweep {
	char said[1024]; /* what was removed, for the one line */
	size_t used;
	unsigned removed, killed, failed;
	long long btime; /* boot time, seconds since the epoch */
	long hz;
};

static void say(struct sweep *w, const char *what, const char *path)
{
	int k = snprintf(w->said + w->used, sizeof(w->said) - w->used, "%s%s%s",
			 w->used ? ", " : "", what, path);

	if (k > 0 && w->used + (size_t)k < sizeof(w->said))
		w->used += (size_t)k;
}

static long long boot_time(void)
{
	char line[256];
	long long bt = -1;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	fclose(f);
	return bt;
}

/* The owner of a cgroup made at `made` (seconds): gone when there is no
 * such process, it is a zombie, or it started after the cgroup was made
 * (its pid was reused). A process whose start cannot be read counts as
 * live: the sweep errs on the side of keeping. */
static int owner_gone(const struct sweep *w, pid_t pid, time_t made)
{
	char path[64];
	struct proc_stat st;

	if (pid == getpid())
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (proc_stat_read(path, &st))
		return errno == ENOENT;
	if (st.state == 'Z' || st.state == 'X')
		return 1;
	if (w->btime < 0 || w->hz <= 0)
		return 0;
	return w->btime + (long long)(st.start / (unsigned long long)w->hz) >
	       (long long)made + CLOCK_SLACK_S;
}

/* SIGKILL to every process of the cgroup; the number signalled. */
static unsigned kill_procs(const char *dir)
{
	char path[CG_PATH_MAX + 16];
	unsigned n = 0;
	int pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%d", &pid) == 1)
		if (pid > 0 && kill(pid, SIGKILL) == 0)
			n++;
	fclose(f);
	return n;
}

static int rmdir_busy(const char *dir)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < BUSY_TRIES; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		nanosleep(&ts, NULL); /* killed processes take a moment */
	}
	return -1;
}

/* A stale cgroup and everything below it: its processes killed, depth
 * first. */
static void remove_tree(struct sweep *w, const char *dir, int depth)
{
	DIR *d = depth < MAX_DEPTH ? opendir(dir) : NULL;
	struct dirent *e;
	char sub[CG_PATH_MAX];

	while (d && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) <
		    (int)sizeof(sub))
			remove_tree(w, sub, depth + 1);
	}
	if (d)
		closedir(d);
	w->killed += kill_procs(dir);
	if (rmdir_busy(dir) == 0) {
		w->removed++;
		say(w, "", dir);
	} else {
		w->failed++;
		say(w, "NOT removed (rmdir it by hand): ", dir);
	}
}

/* A stale -held leaf holds its parent's own processes (v2, a delegated
 * scope): they go back to the parent, once memory is no longer enabled
 * below it, and are never killed. */
static void release_held(struct sweep *w, const char *parent, const char *held)
{
	char ctl[CG_PATH_MAX + 32], from[CG_PATH_MAX + 16],
		to[CG_PATH_MAX + 16];

	snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", parent);
	snprintf(from, sizeof(from), "%s/cgroup.procs", held);
	snprintf(to, sizeof(to), "%s/cgroup.procs", parent);
	cg_write_str(ctl, "-memory"); /* refused while another child uses it */
	if (cg_empty_into(from, to) == 0 && rmdir_busy(held) == 0) {
		w->removed++;
		say(w, "", held);
	} else {
		w->failed++;
		say(w,
		    "NOT released (move its processes to the parent, then rmdir it): ",
		    held);
	}
}

/* The owner pid of a residctl-<pid>-<tag> name, else 0. */
static pid_t owner_of(const char *name)
{
	char *end;
	long pid;

	if (strncmp(name, PREFIX, strlen(PREFIX)))
		return 0;
	pid = strtol(name + strlen(PREFIX), &end, 10);
	return end != name + strlen(PREFIX) && *end == '-' && pid > 0 &&
			       pid < (1L << 22) ?
		       (pid_t)pid :
		       0;
}

static int is_held(const char *name)
{
	size_t n = strlen(name), h = strlen(HELD);

	return n > h && !strcmp(name + n - h, HELD);
}

/* held: 0 for the groups of dir, then 1 for its -held leaves, which can
 * only be released once their sibling is gone. */
static void walk(struct sweep *w, const char *dir, int depth, int held)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char sub[CG_PATH_MAX];
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d))) {
		pid_t owner;

		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >=
			    (int)sizeof(sub))
			continue;
		owner = owner_of(e->d_name);
		if (owner && is_held(e->d_name) == held &&
		    stat(sub, &st) == 0 && owner_gone(w, owner, st.st_ctime)) {
			if (held)
				release_held(w, dir, sub);
			else
				remove_tree(w, sub, depth + 1);
		} else if (!held && depth < MAX_DEPTH) {
			walk(w, sub, depth + 1, 0);
		}
	}
	closedir(d);
	if (!held)
		walk(w, dir, depth, 1);
}

/* Walks the hierarchy holding m (a v1 blkio one too): from its mount
 * point, the process's group without its path below it. */
static void sweep_hierarchy(struct sweep *w, struct cg_memory *m)
{
	size_t root = strlen(m->dir);

	if (strcmp(m->rel, "/")) {
		size_t rl = strlen(m->rel);

		if (rl > root || strcmp(m->dir + root - rl, m->rel))
			return;
		root -= rl;
	}
	m->dir[root] = '\0';
	walk(w, m->dir, 0, 0);
}

void cg_stale_sweep(void)
{
	struct cg_memory *m = malloc(sizeof(*m));
	struct sweep *w = calloc(1, sizeof(*w));
	struct cg_env env;
	char err[256];

	if (!m || !w)
		goto out;
	cg_env_init(&env, resid_seam_linux.read_text, resid_seam_linux.ctx);
	w->btime = boot_time();
	w->hz = sysconf(_SC_CLK_TCK);
	if (cg_find_memory(&env, m, err, sizeof(err)) == 0 &&
	    m->version != CG_NONE)
		sweep_hierarchy(w, m);
	/* the device classes' v1 blkio groups (cgroup_io.h) */
	if (cg_find_v1(&env, "blkio", m, err, sizeof(err)) == 0)
		sweep_hierarchy(w, m);
	if (w->removed || w->failed)
		fprintf(stderr,
			"residctl: stale cgroups of gone residctl processes: %u removed, %u not, %u processes killed: %s%s\n",
			w->removed, w->failed, w->killed, w->said,
			w->used + 1 >= sizeof(w->said) ? " ..." : "");
out:
	free(m);
	free(w);
}
