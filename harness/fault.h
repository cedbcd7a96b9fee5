/* Fault injection (SPEC §5.2): a seam that wraps another seam (the kernel
 * or, later, the simulated kernel) and puts a named libfiu point on every
 * call. Points are enabled by name with a probability or on the Nth call;
 * whether a call fails is decided by the harness's own seeded stream (a hash
 * of seed, point and call number), not libfiu's global generator, so a seed
 * replays and threads need no shared generator. Harness builds only. */
#ifndef HARNESS_FAULT_H
#define HARNESS_FAULT_H

#include <stddef.h>
#include <stdint.h>

#include "seam.h"

enum fault_point {
	FP_READ_EIO,        /* backing read fails with EIO */
	FP_READ_EINTR,      /* backing read fails with EINTR */
	FP_READ_SHORT,      /* backing read returns fewer bytes */
	FP_READ_DELAY,      /* backing read is slow */
	FP_CONT_EAGAIN,     /* CONTINUE maps part, returns EAGAIN + mapped */
	FP_CONT_EEXIST,     /* CONTINUE fails with EEXIST */
	FP_CONT_EFAULT,     /* CONTINUE fails with EFAULT */
	FP_WAKE,            /* UFFDIO_WAKE fails */
	FP_PUNCH,           /* fallocate(PUNCH_HOLE) fails */
	FP_UFFD_EINTR,      /* read(uffd) fails with EINTR */
	FP_CGROUP_READ,     /* a cgroup (or memory.stat) read fails */
	FP_SLOW_WORKER,     /* a fetch worker stalls before its job */
	FP_SPURIOUS_WAKEUP, /* a condition wait returns with no signal */
	FP_COUNT
};

/* "resid/backing_read/eio" ... */
const char *fault_name(int point);

/* Enables from a spec, or a comma-separated list of them: NAME=P (a plain
 * decimal probability 0..1) or NAME@N (only the Nth call since the point was
 * enabled or fault_reset, N >= 1). NAME is a full name, the same without
 * "resid/", or all. Every item is checked before any is enabled. -1 with
 * one line in err (an unknown name lists the known ones). */
int fault_enable(const char *spec, char *err, size_t n);
/* The same for RESIDCTL_FAULTS; 0 when it is unset or empty. */
int fault_enable_env(char *err, size_t n);
/* Disables what fault_enable enabled; points enabled through libfiu's own
 * control (fiu-ctrl, fiu_enable) stay as they are and are not "any". Enable
 * and disable from one thread; decisions are thread-safe. */
void fault_disable_all(void);
int fault_any_enabled(void);

/* Sets the decision stream's seed and zeroes call and fired counts. */
void fault_reset(uint64_t seed);
/* Faults injected: the point fired and changed the call. */
uint64_t fault_fired(int point);
/* Calls of the wrapped op the point belongs to, enabled or not: every
 * backing read counts all four read points; cgroup_read counts only cgroup
 * paths and worker/slow only the "worker-job" yield. */
uint64_t fault_calls(int point);

/* The wrapping seam: a copy of *inner (same ctx) whose backing_pread,
 * uffd_continue, uffd_wake, punch, uffd_read, read_text, yield and
 * cond_wait consult their points and call inner's op when none fires. One
 * per process: call it before the pager starts; a later call rewraps. */
const struct resid_seam *fault_seam(const struct resid_seam *inner);

#endif
