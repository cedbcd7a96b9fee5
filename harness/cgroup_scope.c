/* A scenario's memory cgroup, made and removed with libcgroup; file names and
 * values come from cgroupfs.h, the one v1/v2 mapping. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_scope.h"
#include "seam.h"

#define CG_SCOPE_MAX 8

static const char *const memctl[] = { "memory", NULL };
static struct cg_scope *live_scopes[CG_SCOPE_MAX];

static void linux_env(struct cg_env *e)
{
	cg_env_init(e, resid_seam_linux.read_text, resid_seam_linux.ctx);
}

static int lcg_init(char *err, size_t n)
{
	static int done;
	int rc;

	if (done)
		return 0;
	rc = cgroup_init();
	if (rc) {
		snprintf(err, n, "cgroup: libcgroup cgroup_init: %s: check that a cgroup filesystem is mounted (/proc/self/mountinfo)",
			 cgroup_strerror(rc));
		return -1;
	}
	done = 1;
	return 0;
}

/* One line for a libcgroup failure, with the fix when we know it. */
static void lcg_fail(const struct cg_scope *s, const char *what, int rc,
		     char *err, size_t n)
{
	int e = rc == ECGOTHER ? cgroup_get_last_errno() : 0;

	if (e == EACCES || e == EPERM || rc == ECGROUPNOTOWNER)
		snprintf(err, n, "cgroup: %s %s: permission denied: run as root, or give this user write access to %s",
			 what, s->mem.dir, s->parent.dir);
	else if (e == EBUSY && s->subtree)
		snprintf(err, n, "cgroup: %s %s: %s holds other processes, so memory cannot be enabled below it (v2 no-internal-process rule): run residctl alone in a delegated cgroup, e.g. systemd-run --scope -p Delegate=yes residctl ...",
			 what, s->mem.dir, s->parent.dir);
	else
		snprintf(err, n, "cgroup: %s %s: libcgroup: %s", what,
			 s->mem.dir, cgroup_strerror(rc));
}

/* open/write/close only: also used from a signal handler. */
static int write_str(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, str, strlen(str)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int scope_register(struct cg_scope *s)
{
	for (int i = 0; i < CG_SCOPE_MAX; i++) {
		struct cg_scope *none = NULL;

		if (__atomic_compare_exchange_n(&live_scopes[i], &none, s, 0,
						__ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return 0;
	}
	return -1;
}

static void scope_unregister(struct cg_scope *s)
{
	s->live = 0;
	for (int i = 0; i < CG_SCOPE_MAX; i++) {
		struct cg_scope *me = s;

		__atomic_compare_exchange_n(&live_scopes[i], &me, NULL, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	}
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

/* v2: whether memory is already in <parent>/cgroup.subtree_control. */
static int subtree_has_memory(const struct cg_scope *s, char *err, size_t n)
{
	char text[512];
	long got = resid_seam_linux.read_text(resid_seam_linux.ctx,
					      s->subtree_ctl, text,
					      sizeof(text));

	if (got < 0) {
		snprintf(err, n, "cgroup: %s: %s", s->subtree_ctl,
			 strerror((int)-got));
		return -1;
	}
	for (char *save = NULL, *w = strtok_r(text, " \n", &save); w;
	     w = strtok_r(NULL, " \n", &save))
		if (!strcmp(w, "memory"))
			return 1;
	return 0;
}

/* Names and the strings cg_scope_cleanup_all needs, all made up front. */
static int scope_paths(struct cg_scope *s, const char *tag, char *err,
		       size_t n)
{
	const struct cg_memory *p = &s->parent;
	int w1, w2, w3, w4, w5;

	w1 = snprintf(s->mem.rel, sizeof(s->mem.rel), "%s/residctl-%d-%s",
		      strcmp(p->rel, "/") ? p->rel : "", (int)s->pid, tag);
	w2 = snprintf(s->mem.dir, sizeof(s->mem.dir), "%s/residctl-%d-%s",
		      p->dir, (int)s->pid, tag);
	w3 = snprintf(s->procs, sizeof(s->procs), "%s/cgroup.procs", p->dir);
	w4 = snprintf(s->subtree_ctl, sizeof(s->subtree_ctl),
		      "%s/cgroup.subtree_control", p->dir);
	w5 = snprintf(s->leak, sizeof(s->leak),
		      "residctl: cgroup %s was not removed: rmdir it by hand\n",
		      s->mem.dir);
	if (w1 < 0 || (size_t)w1 >= sizeof(s->mem.rel) || w2 < 0 ||
	    (size_t)w2 >= sizeof(s->mem.dir) || w3 < 0 ||
	    (size_t)w3 >= sizeof(s->procs) || w4 < 0 ||
	    (size_t)w4 >= sizeof(s->subtree_ctl) || w5 < 0 ||
	    (size_t)w5 >= sizeof(s->leak)) {
		snprintf(err, n, "cgroup: %s/residctl-%d-%s: path longer than %d bytes",
			 p->dir, (int)s->pid, tag, CG_PATH_MAX - 1);
		return -1;
	}
	snprintf(s->pidstr, sizeof(s->pidstr), "%d", (int)s->pid);
	return 0;
}

/* The libcgroup group with the mapped writes, in their order. */
static int scope_group(struct cg_scope *s, uint64_t limit, char *err,
		       size_t n)
{
	struct cg_memory fresh = {
		.version = s->parent.version,
		.limit = CG_UNLIMITED,
		.swap_limit = CG_UNLIMITED,
		/* a child has the swap file exactly when its parent has */
		.has_swap_file = s->parent.has_swap_file,
	};
	struct cg_write w[CG_MAX_WRITES];
	struct cgroup_controller *ctl;
	int nw = cg_limit_writes(&fresh, limit, w), rc;

	if (nw < 0) {
		snprintf(err, n, "cgroup: limit %" PRIu64 " for %s: use a positive multiple of %llu bytes",
			 limit, s->mem.dir, CG_PAGE);
		return -1;
	}
	s->cg = cgroup_new_cgroup(s->mem.rel);
	ctl = s->cg ? cgroup_add_controller(s->cg, "memory") : NULL;
	if (!ctl) {
		snprintf(err, n, "cgroup: libcgroup could not describe %s (out of memory?)",
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

/* Undoes whatever of enter happened, in the reverse order, with libcgroup.
 * The steps are harmless when their part never happened. */
static int scope_teardown(struct cg_scope *s, char *err, size_t n)
{
	int rc, bad = 0;

	/* v2 lets the process back into the parent only when the parent
	 * distributes no controller */
	if (s->subtree) {
		rc = write_str(s->subtree_ctl, "-memory");
		if (rc) {
			snprintf(err, n, "cgroup: writing -memory to %s: %s",
				 s->subtree_ctl, strerror(-rc));
			bad = 1;
		} else {
			s->subtree = 0;
		}
	}
	rc = cgroup_change_cgroup_path(s->parent.rel, s->pid, memctl);
	if (rc && !bad) {
		snprintf(err, n, "cgroup: moving the process back to %s: libcgroup: %s",
			 s->parent.dir, cgroup_strerror(rc));
		bad = 1;
	}
	if (access(s->mem.dir, F_OK) == 0) {
		/* also moves any straggler thread to the parent */
		rc = cgroup_delete_cgroup(s->cg, 0);
		if (rc && !bad) {
			snprintf(err, n, "cgroup: deleting %s: libcgroup: %s: rmdir it by hand",
				 s->mem.dir, cgroup_strerror(rc));
			bad = 1;
		}
	} else if (errno != ENOENT && !bad) {
		snprintf(err, n, "cgroup: %s: %s", s->mem.dir, strerror(errno));
		bad = 1;
	}
	if (!bad) {
		cgroup_free(&s->cg);
		scope_unregister(s);
	}
	return bad ? -1 : 0;
}

/* v2 below a non-root group: the parent holds this process, and a group with
 * processes cannot enable memory for its children. Move into the (still
 * plain) child first; libcgroup then enables memory in the emptied parent. */
static int scope_evacuate(struct cg_scope *s, char *err, size_t n)
{
	int rc;

	if (mkdir(s->mem.dir, 0755)) {
		if (errno == EACCES || errno == EPERM)
			snprintf(err, n, "cgroup: mkdir %s: permission denied: run as root, or give this user write access to %s",
				 s->mem.dir, s->parent.dir);
		else
			snprintf(err, n, "cgroup: mkdir %s: %s", s->mem.dir,
				 strerror(errno));
		return -1;
	}
	s->subtree = 1;
	rc = cgroup_change_cgroup_path(s->mem.rel, s->pid, memctl);
	if (rc) {
		lcg_fail(s, "moving the process into", rc, err, n);
		return -1;
	}
	return 0;
}

static int scope_verify(struct cg_scope *s, uint64_t limit, char *err,
			size_t n)
{
	struct cg_env env;
	char why[CG_PATH_MAX + 160];

	linux_env(&env);
	if (cg_read_limits(&env, &s->mem, err, n))
		return -1;
	if (s->mem.limit != limit) {
		snprintf(err, n, "cgroup: %s/%s reads %" PRIu64 " after writing %" PRIu64 ": check what else manages this cgroup",
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

static int scope_check_inside(struct cg_scope *s, char *err, size_t n)
{
	struct cg_env env;
	struct cg_memory *now = malloc(sizeof(*now));
	int rc = -1;

	linux_env(&env);
	if (!now)
		snprintf(err, n, "cgroup: out of memory checking %s", env.proc_self_cgroup);
	else if (cg_find_memory(&env, now, err, n) == 0) {
		if (strcmp(now->dir, s->mem.dir))
			snprintf(err, n, "cgroup: %s puts the process in %s, not %s",
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
	struct cg_env env;
	char spare[CG_PATH_MAX + 160];
	int rc, evac = 0;

	memset(s, 0, sizeof(*s));
	s->pid = getpid();
	if (!tag_ok(tag)) {
		snprintf(err, n, "cgroup: scope tag \"%.40s\": use 1 to 32 of [A-Za-z0-9_-]",
			 tag);
		return -1;
	}
	linux_env(&env);
	if (cg_find_memory(&env, &s->parent, err, n))
		return -1;
	if (s->parent.version == CG_NONE) {
		snprintf(err, n, "cgroup: no memory controller in %s: enable it (v2: add memory to the parent's cgroup.subtree_control; v1: mount -t cgroup -o memory memory /sys/fs/cgroup/memory)",
			 env.mountinfo);
		return -1;
	}
	s->mem.version = s->parent.version;
	if (scope_paths(s, tag, err, n) || lcg_init(err, n) ||
	    scope_group(s, limit_bytes, err, n))
		goto undo_nothing;
	if (scope_register(s)) {
		snprintf(err, n, "cgroup: more than %d scopes live at once; leave one first",
			 CG_SCOPE_MAX);
		goto undo_nothing;
	}
	s->live = 1;
	if (s->mem.version == CG_V2 && strcmp(s->parent.rel, "/")) {
		rc = subtree_has_memory(s, err, n);
		if (rc < 0)
			goto undo;
		evac = !rc;
	}
	if (evac && scope_evacuate(s, err, n))
		goto undo;
	rc = cgroup_create_cgroup(s->cg, 1);
	if (rc) {
		lcg_fail(s, "creating", rc, err, n);
		goto undo;
	}
	if (scope_verify(s, limit_bytes, err, n))
		goto undo;
	if (!evac) {
		rc = cgroup_change_cgroup_path(s->mem.rel, s->pid, memctl);
		if (rc) {
			lcg_fail(s, "moving the process into", rc, err, n);
			goto undo;
		}
	}
	if (scope_check_inside(s, err, n))
		goto undo;
	return 0;
undo:
	/* err keeps the first failure; the teardown's own goes to stderr */
	if (scope_teardown(s, spare, sizeof(spare)))
		fprintf(stderr, "residctl: %s\n", spare);
	return -1;
undo_nothing:
	cgroup_free(&s->cg);
	return -1;
}

int cg_scope_leave(struct cg_scope *s)
{
	char err[CG_PATH_MAX + 160];

	if (!s->live || s->pid != getpid()) {
		/* left already, or cleaned up by cg_scope_cleanup_all */
		if (s->cg && s->pid == getpid())
			cgroup_free(&s->cg);
		return 0;
	}
	if (scope_teardown(s, err, sizeof(err))) {
		fprintf(stderr, "residctl: %s\n", err);
		return -1;
	}
	return 0;
}

/* The same steps as scope_teardown, with syscalls only: libcgroup allocates,
 * which a signal handler must not. */
static void scope_teardown_raw(struct cg_scope *s)
{
	if (s->subtree && write_str(s->subtree_ctl, "-memory") == 0)
		s->subtree = 0;
	/* cgroup.procs moves every thread, on v1 and v2 */
	if (write_str(s->procs, s->pidstr) == 0 &&
	    (rmdir(s->mem.dir) == 0 || errno == ENOENT)) {
		scope_unregister(s);
		return;
	}
	if (write(STDERR_FILENO, s->leak, strlen(s->leak)) < 0)
		return; /* nowhere left to say it */
}

void cg_scope_cleanup_all(void)
{
	int saved = errno;

	for (int i = 0; i < CG_SCOPE_MAX; i++) {
		struct cg_scope *s = __atomic_load_n(&live_scopes[i],
						     __ATOMIC_SEQ_CST);

		if (s && s->live && s->pid == getpid())
			scope_teardown_raw(s);
	}
	errno = saved;
}

int cg_probe(char *out, size_t n)
{
	struct cg_env env;
	struct cg_memory *m = malloc(sizeof(*m));
	char desc[2 * CG_PATH_MAX], why[CG_PATH_MAX + 160];
	int cond;

	if (!m) {
		snprintf(out, n, "cgroup: out of memory");
		return -1;
	}
	linux_env(&env);
	if (cg_find_memory(&env, m, out, n)) {
		free(m);
		return -1;
	}
	cond = cg_swap_check(m, why, sizeof(why));
	if (cg_describe(m, desc, sizeof(desc))) {
		snprintf(out, n, "cgroup: description of %s too long", m->dir);
		free(m);
		return -1;
	}
	snprintf(out, n, "%s i3=%s", desc,
		 cond >= 0 ? cg_swap_cond_name(cond) : why);
	free(m);
	return 0;
}
