/* A scope's read throttle (devclass.h), the part of cgroup_scope.c that
 * holds the backing device to a class: v1 a blkio cgroup made beside the
 * memory one and entered with it, v2 io.max in the memory cgroup itself
 * (io enabled in the parent's cgroup.subtree_control when it is not). Its
 * state lives in the scope's slot, so the signal handler's cleanup can
 * undo it with syscalls only. */
#ifndef HARNESS_CGROUP_IO_H
#define HARNESS_CGROUP_IO_H

#include <signal.h>
#include <sys/types.h>

#include "cgroup/devclass.h"
#include "cgroupfs.h"

struct cg_io_slot {
	volatile sig_atomic_t made;    /* v1: dir exists */
	volatile sig_atomic_t moved;   /* v1: processes may be in dir */
	volatile sig_atomic_t subtree; /* v2: we enabled io in the parent */
	int version;                   /* 0: no throttle */
	char dir[CG_PATH_MAX];         /* v1 the blkio child; v2 the memory
					* child */
	char procs[CG_PATH_MAX];       /* v1: dir's cgroup.procs */
	char back[CG_PATH_MAX];        /* v1: the blkio parent's cgroup.procs */
	char subtree_ctl[CG_PATH_MAX]; /* v2: the parent's subtree_control */
};

/* Applies dc to dev for the scope whose memory child is mem (version,
 * dir) under parent_dir, named residctl-<pid>-<tag> like it; the process
 * is in mem already and moves into the v1 blkio child. Call with io
 * zeroed. -1 with one line in err, io's flags saying what to undo. */
int cg_io_enter(struct cg_io_slot *io, const struct cg_memory *mem,
		const char *parent_dir, pid_t pid, const char *tag,
		const struct devclass *dc, const struct devclass_dev *dev,
		char *err, size_t n);

/* v2: io off in the parent again, before the process moves back (the
 * parent must distribute no controller to hold it). Syscalls only; 0 or
 * -errno. */
int cg_io_release_subtree(struct cg_io_slot *io);

/* v1: every process of the blkio child back to its parent, the child
 * removed. Syscalls only; 0 or -errno. */
int cg_io_remove(struct cg_io_slot *io);

#endif
