/* A cgroup's processes, with syscalls only (async-signal-safe). */
#ifndef HARNESS_CGROUP_PROCS_H
#define HARNESS_CGROUP_PROCS_H

/* Writes str to path. 0 or -errno. */
int cg_write_str(const char *path, const char *str);

/* Moves every process of the cgroup.procs file `from` into the one `to`,
 * until a pass moves none. 0, -EBUSY when processes kept coming, or
 * -errno. */
int cg_empty_into(const char *from, const char *to);

#endif
