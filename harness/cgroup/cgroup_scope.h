/* A scenario's own memory cgroup (design.md §2.6): a child of the process's memory
 * cgroup made with libcgroup, limited with swap forbidden (read back through
 * cgroupfs, I-3 must hold in it), entered by the whole process and removed
 * afterwards, also when the scenario fails or the tool is interrupted. */
#ifndef HARNESS_CGROUP_SCOPE_H
#define HARNESS_CGROUP_SCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup/devclass.h"
#include "cgroupfs.h"

struct cgroup; /* libcgroup */

struct cg_scope {
	int slot;                /* in the table cg_scope_cleanup_all walks */
	unsigned gen;            /* the slot's use this scope owns; 0: none */
	pid_t pid;               /* the process that entered */
	int cond;                /* enum cg_swap_cond that held in the child */
	struct cg_memory mem;    /* the child, as read back */
	struct cg_memory parent; /* where the process came from */
	struct cgroup *cg;       /* libcgroup's handle of the child */
};

/* Creates <memory cgroup>/residctl-<pid>-<tag> with limit_bytes (a positive
 * multiple of 4096) and swap forbidden, checks it by reading it back, and
 * moves the process into it; the first call of a process sweeps the stale
 * cgroups of gone ones first (cg_stale_sweep). Call while the process is
 * single-threaded. -1
 * with one line in err saying what to do; then nothing is left created. */
int cg_scope_enter(struct cg_scope *s, const char *tag, uint64_t limit_bytes,
		   char *err, size_t n);

/* The same, with the reads of dev held to the device class dc
 * (cgroup_io.h) when dc throttles: refused, with nothing left, where
 * neither v1 blkio nor v2 io is available or the kernel refuses the
 * device. */
int cg_scope_enter_class(struct cg_scope *s, const char *tag,
			 uint64_t limit_bytes, const struct devclass *dc,
			 const struct devclass_dev *dev, char *err, size_t n);

/* Moves the process back and deletes the child. Idempotent, and a no-op on
 * a scope whose enter failed. -1 (after a line on stderr naming the cgroup
 * to remove by hand) when it could not. */
int cg_scope_leave(struct cg_scope *s);

/* Removes every live scope of this process, from its own table (a scope on
 * a stack that is gone is never touched). Async-signal-safe: the tool calls
 * it from atexit and from its SIGINT/SIGTERM handler. */
void cg_scope_cleanup_all(void);

#endif
