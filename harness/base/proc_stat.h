/* The fields of /proc/<pid>/stat the tool reads. */
#ifndef HARNESS_PROC_STAT_H
#define HARNESS_PROC_STAT_H

struct proc_stat {
	char state;                      /* R, S, D, Z, ... */
	unsigned long long utime, stime; /* clock ticks */
	long long cutime, cstime;        /* of reaped children */
	unsigned long long start;        /* ticks after boot */
};

/* Parses a stat file (of a process or a task). 0, or -1 with errno
 * (ENOENT: no such process; EINVAL: malformed). */
int proc_stat_read(const char *path, struct proc_stat *st);

#endif
