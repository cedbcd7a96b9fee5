/* The cgroups an interrupted or killed residctl left behind (design.md §9). */
#ifndef HARNESS_CGROUP_STALE_H
#define HARNESS_CGROUP_STALE_H

/* Removes every residctl-<pid>-* memory cgroup (and v1 blkio one) whose owner
 * is gone: no process <pid>, a zombie, one started after the cgroup was
 * made (the pid reused), or this process (which has made none yet). Its
 * processes are killed first; a -held leaf's (the delegated scope's own
 * processes) are moved back to its parent instead. A live owner's cgroups
 * are never touched. One line on stderr says what was removed. */
void cg_stale_sweep(void);

#endif
