/* A scenario's memory cgroup, made and removed with libcgroup; file names and
 * values come from cgroupfs.h, the one v1/v2 mapping. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup_io.h"
#include "cgroup/cgroup_limits.h"
#include "cgroup/cgroup_procs.h"
#include "cgroup/cgroup_scope.h"
#include "proc/child.h"
#include "seam.h"

#define CG_SCOPE_MAX 8

/* What removing a scope takes, kept here rather than in the caller's
 * cg_scope: cg_scope_cleanup_all may run in a signal handler (flags and
 * prepared strings only) and must never follow a pointer into a stack that
 * is gone. */
struct slot {
	int used;                      /* claimed; atomic */
	volatile sig_atomic_t armed;   /* strings ready: cleanup may act */
	volatile sig_atomic_t moved;   /* the process was (maybe) moved in */
	volatile sig_atomic_t subtree; /* v2: we enabled memory in the
					* parent's cgroup.subtree_control */
	volatile sig_atomic_t held;    /* v2: the held leaf exists and may
					* hold the parent's processes */
	unsigned gen;
	pid_t pid;
	char dir[CG_PATH_MAX];         /* the child */
	char procs[CG_PATH_MAX];       /* <parent>/cgroup.procs */
	char subtree_ctl[CG_PATH_MAX]; /* <parent>/cgroup.subtree_control */
	char held_dir[CG_PATH_MAX];    /* <parent>/residctl-<pid>-<tag>-held */
	char held_procs[CG_PATH_MAX];  /* its cgroup.procs */
	char pidstr[16];
	char leak[CG_PATH_MAX + 96];
	struct cg_io_slot io; /* the device class's throttle */
};

static struct slot slots[CG_SCOPE_MAX];
static unsigned last_gen;
static const char *const memctl[] = { "memory", NULL };

static void linux_env(struct cg_env *e)
{
	cg_env_init(e, resid_seam_linux.read_text, resid_seam_linux.ctx);
}

static struct slot *slot_claim(struct cg_scope *s)
{
	child_on_exit(cg_scope_cleanup_all);
	for (int i = 0; i < CG_SCOPE_MAX; i++) {
		struct slot *sl = &slots[i];
		int free_slot = 0;

		if (!__atomic_compare_exchange_n(&sl->used, &free_slot, 1, 0,
						 __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			continue;
		do /* 0 means "no slot" in a cg_scope */
			sl->gen = __atomic_add_fetch(&last_gen, 1,
						     __ATOMIC_SEQ_CST);
		while (!sl->gen);
		sl->pid = s->pid;
		sl->moved = sl->subtree = sl->held = 0;
		memset(&sl->io, 0, sizeof(sl->io));
		s->slot = i;
		s->gen = sl->gen;
		return sl;
	}
	return NULL;
}

static void slot_release(struct cg_scope *s, struct slot *sl)
{
	sl->armed = 0;
	__atomic_store_n(&sl->used, 0, __ATOMIC_SEQ_CST);
	s->gen = 0;
}

/* The scope's slot while it is live in this process, else NULL. */
static struct slot *slot_of(const struct cg_scope *s)
{
	struct slot *sl;

	if (!s->gen || s->slot < 0 || s->slot >= CG_SCOPE_MAX)
		return NULL;
	sl = &slots[s->slot];
	return sl->armed && sl->gen == s->gen && sl->pid == getpid() ? sl :
								       NULL;
}

static int lcg_init(char *err, size_t n)
{
	static int done;
	int rc;

	if (done)
		return 0;
	rc = cgroup_init();
	if (rc) {
		snprintf(err, n,
			 "cgroup: libcgroup cgroup_init: %s: check that a cgroup filesystem is mounted (/proc/self/mountinfo)",
			 cgroup_strerror(rc));
		return -1;
	}
	done = 1;
	return 0;
}

/* One line for a libcgroup failure, with the fix when we know it. */
static void lcg_fail(const struct cg_scope *s, const struct slot *sl,
		     const char *what, int rc, char *err, size_t n)
{
	int e = rc == ECGOTHER ? cgroup_get_last_errno() : 0;

	/* libcgroup turns a failed mkdir's EACCES into "not allowed" */
	if (e == EACCES || e == EPERM || rc == ECGROUPNOTOWNER ||
	    (rc == ECGROUPNOTALLOWED && geteuid() != 0))
		snprintf(err, n,
			 "cgroup: %s %s: permission denied: run as root, or give this user write access to %s",
			 what, s->mem.dir, s->parent.dir);
	else if (e == EBUSY && sl->subtree)
		snprintf(err, n,
			 "cgroup: %s %s: a process entered %s while memory was being enabled below it (v2 no-internal-process rule): run residctl again",
			 what, s->mem.dir, s->parent.dir);
	else
		snprintf(err, n, "cgroup: %s %s: libcgroup: %s", what,
			 s->mem.dir, cgroup_strerror(rc));
}

/* The held leaf's processes back into the parent, then the leaf removed.
 * Syscalls only: also called from a signal handler. 0 or -errno. */
static int release_held(struct slot *sl)
{
	int rc = cg_empty_into(sl->held_procs, sl->procs);

	if (rc)
		return rc;
	if (rmdir(sl->held_dir) && errno != ENOENT)
		return -errno;
	sl->held = 0;
	return 0;
}

static int tag_ok(const char *tag)
{
	size_t len = strlen(tag);

	if (len == 0 || len > 32)
		return 0;
	for (; *tag; tag++)
		if (!(*tag >= 'a' && *tag <= 'z') &&
		    !(*tag >= 'A' && *tag <= 'Z') &&
		    !(*tag >= '0' && *tag <= '9') && *tag != '-' && *tag != '_')
			return 0;
	return 1;
}

static int fits(int w, size_t n)
{
	return w >= 0 && (size_t)w < n;
}

/* The child's names, and the slot's strings, all made up front. */
static int scope_paths(struct cg_scope *s, struct slot *sl, const char *tag,
		       char *err, size_t n)
{
	const struct cg_memory *p = &s->parent;
	const char *prel = strcmp(p->rel, "/") ? p->rel : "";

	if (!fits(snprintf(s->mem.rel, sizeof(s->mem.rel), "%s/residctl-%d-%s",
			   prel, (int)s->pid, tag),
		  sizeof(s->mem.rel)) ||
	    !fits(snprintf(s->mem.dir, sizeof(s->mem.dir), "%s/residctl-%d-%s",
			   p->dir, (int)s->pid, tag),
		  sizeof(s->mem.dir)) ||
	    !fits(snprintf(sl->procs, sizeof(sl->procs), "%s/cgroup.procs",
			   p->dir),
		  sizeof(sl->procs)) ||
	    !fits(snprintf(sl->subtree_ctl, sizeof(sl->subtree_ctl),
			   "%s/cgroup.subtree_control", p->dir),
		  sizeof(sl->subtree_ctl)) ||
	    !fits(snprintf(sl->held_dir, sizeof(sl->held_dir), "%s-held",
			   s->mem.dir),
		  sizeof(sl->held_dir)) ||
	    !fits(snprintf(sl->held_procs, sizeof(sl->held_procs),
			   "%s-held/cgroup.procs", s->mem.dir),
		  sizeof(sl->held_procs)) ||
	    !fits(snprintf(sl->leak, sizeof(sl->leak),
			   "residctl: cgroup %s (or its -held sibling) was not removed: rmdir it by hand\n",
			   s->mem.dir),
		  sizeof(sl->leak))) {
		snprintf(err, n,
			 "cgroup: %s/residctl-%d-%s: path longer than %d bytes",
			 p->dir, (int)s->pid, tag, CG_PATH_MAX - 1);
		return -1;
	}
	strcpy(sl->dir, s->mem.dir);
	snprintf(sl->pidstr, sizeof(sl->pidstr), "%d", (int)s->pid);
	return 0;
}

/* The libcgroup group with the mapped writes, in their order. */
static int scope_group(struct cg_scope *s, uint64_t limit, char *err, size_t n)
{
	struct cg_memory fresh = {
		.version = s->parent.version,
		.limit = CG_UNLIMITED,
		.swap_limit = CG_UNLIMITED,
		/* a child has the swap file when its parent has, and below
		 * the v2 root (which never has one) when swap accounting is
		 * on; with swap present I-3 needs it, so it is written */
		.has_swap_file = s->parent.has_swap_file ||
				 (s->parent.version == CG_V2 &&
				  !strcmp(s->parent.rel, "/") &&
				  s->parent.swap_total),
	};
	struct cg_write w[CG_MAX_WRITES];
	struct cgroup_controller *ctl;
	int nw = cg_limit_writes(&fresh, limit, w), rc;

	if (nw < 0) {
		snprintf(err, n,
			 "cgroup: limit %" PRIu64
			 " for %s: use a positive multiple of %llu bytes",
			 limit, s->mem.dir, RESID_PAGE);
		return -1;
	}
	s->cg = cgroup_new_cgroup(s->mem.rel);
	ctl = s->cg ? cgroup_add_controller(s->cg, "memory") : NULL;
	if (!ctl) {
		snprintf(err, n,
			 "cgroup: libcgroup could not describe %s (out of memory?)",
			 s->mem.dir);
		return -1;
	}
	for (int i = 0; i < nw; i++) {
		rc = cgroup_add_value_string(ctl, w[i].file, w[i].value);
		if (rc) {
			snprintf(err, n, "cgroup: libcgroup %s=%s for %s: %s",
				 w[i].file, w[i].value, s->mem.dir,
				 cgroup_strerror(rc));
			return -1;
		}
	}
	return 0;
}

static void free_group(struct cg_scope *s)
{
	if (s->cg)
		cgroup_free(&s->cg);
	s->cg = NULL;
}

/* Undoes whatever of enter happened, in the reverse order, with libcgroup.
 * Each step runs only when its part happened. */
#define BUSY_TRIES 200

/* 10 ms, with nanosleep: also called from a signal handler. */
static void busy_pause(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static int scope_teardown(struct cg_scope *s, struct slot *sl, char *err,
			  size_t n)
{
	int rc, bad = 0;

	rc = cg_io_remove(&sl->io);
	if (rc) {
		snprintf(err, n, "cgroup: removing %s: %s: rmdir it by hand",
			 sl->io.dir, strerror(-rc));
		bad = 1;
	}
	/* v2 lets the process back into the parent only when the parent
	 * distributes no controller */
	rc = cg_io_release_subtree(&sl->io);
	if (rc && !bad) {
		snprintf(err, n, "cgroup: writing -io to %s: %s",
			 sl->io.subtree_ctl, strerror(-rc));
		bad = 1;
	}
	if (sl->subtree) {
		rc = cg_write_str(sl->subtree_ctl, "-memory");
		if (rc) {
			snprintf(err, n, "cgroup: writing -memory to %s: %s",
				 sl->subtree_ctl, strerror(-rc));
			bad = 1;
		} else {
			sl->subtree = 0;
		}
	}
	if (sl->moved) {
		rc = cgroup_change_cgroup_path(s->parent.rel, s->pid, memctl);
		if (rc && !bad) {
			snprintf(err, n,
				 "cgroup: moving the process back to %s: libcgroup: %s",
				 s->parent.dir, cgroup_strerror(rc));
			bad = 1;
		} else if (!rc) {
			sl->moved = 0;
		}
	}
	if (sl->held && !sl->subtree) {
		rc = release_held(sl);
		if (rc && !bad) {
			snprintf(err, n,
				 "cgroup: moving the processes of %s back to its parent: %s",
				 sl->held_dir, strerror(-rc));
			bad = 1;
		}
	}
	if (access(s->mem.dir, F_OK) == 0) {
		/* also moves any straggler thread to the parent. A child
		 * process just reaped can keep the group busy for a moment:
		 * the kernel drops its reference after waitpid returns. */
		for (int i = 0; i < BUSY_TRIES; i++) {
			rc = cgroup_delete_cgroup(s->cg, 0);
			if (!rc || access(s->mem.dir, F_OK) != 0)
				break;
			busy_pause();
		}
		if (rc && !bad) {
			snprintf(err, n,
				 "cgroup: deleting %s: libcgroup: %s: rmdir it by hand",
				 s->mem.dir, cgroup_strerror(rc));
			bad = 1;
		}
	} else if (errno != ENOENT && !bad) {
		snprintf(err, n, "cgroup: %s: %s", s->mem.dir, strerror(errno));
		bad = 1;
	}
	if (bad)
		return -1;
	free_group(s);
	slot_release(s, sl);
	return 0;
}

/* v2: whether memory is already in <parent>/cgroup.subtree_control. */
static int subtree_has_memory(const struct slot *sl, char *err, size_t n)
{
	char text[512];
	long got = resid_seam_linux.read_text(resid_seam_linux.ctx,
					      sl->subtree_ctl, text,
					      sizeof(text));

	if (got < 0) {
		snprintf(err, n, "cgroup: %s: %s", sl->subtree_ctl,
			 strerror((int)-got));
		return -1;
	}
	for (char *save = NULL, *w = strtok_r(text, " \n", &save); w;
	     w = strtok_r(NULL, " \n", &save))
		if (!strcmp(w, "memory"))
			return 1;
	return 0;
}

/* v2 below a non-root group P (a systemd scope, a service): P holds this
 * process and maybe others, and a group that holds processes cannot enable
 * memory for its children. So every process of P moves into a leaf,
 * <P>/residctl-<pid>-<tag>-held, as systemd asks of a delegated group's
 * owner; libcgroup then enables memory in the empty P, makes the child and
 * moves this process on into it. These moves are plain writes: libcgroup
 * 2.0.2 refuses to move a task before memory is enabled in the target's
 * parent (design.md §2.7), and cannot make a group without a controller. */
static int scope_evacuate(struct cg_scope *s, struct slot *sl, char *err,
			  size_t n)
{
	int rc;

	if (mkdir(sl->held_dir, 0755)) {
		if (errno == EACCES || errno == EPERM)
			snprintf(err, n,
				 "cgroup: mkdir %s: permission denied: run as root, or give this user write access to %s",
				 sl->held_dir, s->parent.dir);
		else
			snprintf(err, n, "cgroup: mkdir %s: %s", sl->held_dir,
				 strerror(errno));
		return -1;
	}
	sl->held = 1;
	sl->moved = 1; /* this process leaves P with the others */
	rc = cg_empty_into(sl->procs, sl->held_procs);
	if (rc) {
		snprintf(err, n,
			 "cgroup: moving the processes of %s into %s: %s",
			 s->parent.dir, sl->held_dir, strerror(-rc));
		return -1;
	}
	return 0;
}

static int scope_verify(struct cg_scope *s, uint64_t limit, char *err, size_t n)
{
	struct cg_env env;
	char why[CG_PATH_MAX + 160];

	linux_env(&env);
	if (cg_read_limits(&env, &s->mem, err, n))
		return -1;
	if (s->mem.limit != limit) {
		snprintf(err, n,
			 "cgroup: %s/%s reads %" PRIu64
			 " after writing %" PRIu64
			 ": check what else manages this cgroup",
			 s->mem.dir, cg_limit_file(s->mem.version),
			 s->mem.limit, limit);
		return -1;
	}
	s->cond = cg_swap_check(&s->mem, why, sizeof(why));
	if (s->cond < 0) {
		snprintf(err, n, "cgroup: I-3 does not hold in %s: %s",
			 s->mem.dir, why);
		return -1;
	}
	return 0;
}

static int scope_check_inside(const struct cg_scope *s, char *err, size_t n)
{
	struct cg_env env;
	struct cg_memory *now = malloc(sizeof(*now));
	int rc = -1;

	linux_env(&env);
	if (!now) {
		snprintf(err, n, "cgroup: out of memory checking %s",
			 env.proc_self_cgroup);
	} else if (cg_find_memory(&env, now, err, n) == 0) {
		if (strcmp(now->dir, s->mem.dir))
			snprintf(err, n,
				 "cgroup: %s puts the process in %s, not %s",
				 env.proc_self_cgroup, now->dir, s->mem.dir);
		else
			rc = 0;
	}
	free(now);
	return rc;
}

int cg_scope_enter(struct cg_scope *s, const char *tag, uint64_t limit_bytes,
		   char *err, size_t n)
{
	return cg_scope_enter_class(s, tag, limit_bytes, NULL, NULL, err, n);
}

int cg_scope_enter_class(struct cg_scope *s, const char *tag,
			 uint64_t limit_bytes, const struct devclass *dc,
			 const struct devclass_dev *dev, char *err, size_t n)
{
	struct cg_env env;
	struct slot *sl;
	char spare[CG_PATH_MAX + 160];
	int rc, evac = 0;

	memset(s, 0, sizeof(*s));
	s->slot = -1;
	s->pid = getpid();
	if (!tag_ok(tag)) {
		snprintf(err, n,
			 "cgroup: scope tag \"%.40s\": use 1 to 32 of [A-Za-z0-9_-]",
			 tag);
		return -1;
	}
	linux_env(&env);
	if (cg_find_memory(&env, &s->parent, err, n))
		return -1;
	if (s->parent.version == CG_NONE) {
		snprintf(err, n,
			 "cgroup: no memory controller in %s: enable it (v2: add memory to the parent's cgroup.subtree_control; v1: mount -t cgroup -o memory memory /sys/fs/cgroup/memory)",
			 env.mountinfo);
		return -1;
	}
	s->mem.version = s->parent.version;
	sl = slot_claim(s);
	if (!sl) {
		snprintf(err, n,
			 "cgroup: more than %d scopes live at once; leave one first",
			 CG_SCOPE_MAX);
		return -1;
	}
	if (scope_paths(s, sl, tag, err, n) || lcg_init(err, n) ||
	    scope_group(s, limit_bytes, err, n)) {
		free_group(s);
		slot_release(s, sl);
		return -1;
	}
	/* from here on, an interrupted enter is cleaned up too */
	sl->armed = 1;
	if (s->mem.version == CG_V2 && strcmp(s->parent.rel, "/")) {
		rc = subtree_has_memory(sl, err, n);
		if (rc < 0)
			goto undo;
		evac = !rc;
	}
	if (evac && scope_evacuate(s, sl, err, n))
		goto undo;
	sl->subtree = evac; /* libcgroup enables memory in the parent */
	rc = cgroup_create_cgroup(s->cg, 1);
	if (rc) {
		lcg_fail(s, sl, "creating", rc, err, n);
		goto undo;
	}
	if (scope_verify(s, limit_bytes, err, n))
		goto undo;
	sl->moved = 1;
	rc = cgroup_change_cgroup_path(s->mem.rel, s->pid, memctl);
	if (rc) {
		lcg_fail(s, sl, "moving the process into", rc, err, n);
		goto undo;
	}
	if (scope_check_inside(s, err, n))
		goto undo;
	if (dc && devclass_throttles(dc) &&
	    cg_io_enter(&sl->io, &s->mem, s->parent.dir, s->pid, tag, dc, dev,
			err, n))
		goto undo;
	return 0;
undo:
	/* err keeps the first failure; the teardown's own goes to stderr,
	 * and the slot stays armed for cg_scope_cleanup_all */
	if (scope_teardown(s, sl, spare, sizeof(spare)))
		fprintf(stderr, "residctl: %s\n", spare);
	return -1;
}

int cg_scope_leave(struct cg_scope *s)
{
	struct slot *sl = slot_of(s);
	char err[CG_PATH_MAX + 160];

	if (!sl) {
		/* never entered, left already, or cleaned up by
		 * cg_scope_cleanup_all */
		if (s->pid == getpid())
			free_group(s);
		return 0;
	}
	if (scope_teardown(s, sl, err, sizeof(err))) {
		fprintf(stderr, "residctl: %s\n", err);
		return -1;
	}
	return 0;
}

/* scope_teardown's steps with syscalls only: libcgroup allocates, which a
 * signal handler must not. */
static void slot_teardown_raw(struct slot *sl)
{
	cg_io_remove(&sl->io);
	cg_io_release_subtree(&sl->io);
	if (sl->subtree && cg_write_str(sl->subtree_ctl, "-memory") == 0)
		sl->subtree = 0;
	/* cgroup.procs moves every thread, on v1 and v2 */
	if (sl->moved && !sl->subtree &&
	    cg_write_str(sl->procs, sl->pidstr) == 0)
		sl->moved = 0;
	if (sl->held && !sl->subtree)
		release_held(sl);
	for (int i = 0; !sl->moved && !sl->held && i < BUSY_TRIES; i++) {
		if (rmdir(sl->dir) == 0 || errno == ENOENT) {
			sl->armed = 0;
			__atomic_store_n(&sl->used, 0, __ATOMIC_SEQ_CST);
			return;
		}
		if (errno != EBUSY)
			break;
		busy_pause();
	}
	if (write(STDERR_FILENO, sl->leak, strlen(sl->leak)) < 0)
		return; /* nowhere left to say it */
}

void cg_scope_cleanup_all(void)
{
	int saved = errno;

	for (int i = 0; i < CG_SCOPE_MAX; i++)
		if (slots[i].armed && slots[i].pid == getpid())
			slot_teardown_raw(&slots[i]);
	errno = saved;
}
