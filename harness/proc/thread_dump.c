/* The thread dump of a hang: state and wait channel of each thread. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proc/thread_dump.h"

/* The first line of /proc/<pid>/task/<tid>/<name>, or "". */
static void task_line(const char *dir, const char *tid, const char *name,
		      char *buf, int n)
{
	char path[400];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s/%s", dir, tid, name);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, n, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Each thread's name, state and wait channel: where a hang sleeps. */
void thread_dump(pid_t pid, char *buf, size_t n)
{
	char dir[64], comm[64], wchan[64], stat[512];
	size_t used;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d) {
		snprintf(buf, n, "cannot list %s: %s", dir, strerror(errno));
		return;
	}
	used = (size_t)snprintf(buf, n,
				"watchdog: thread dump (tid comm state "
				"wchan):");
	while ((e = readdir(d)) && used < n) {
		if (e->d_name[0] == '.')
			continue;
		task_line(dir, e->d_name, "comm", comm, sizeof(comm));
		task_line(dir, e->d_name, "wchan", wchan, sizeof(wchan));
		task_line(dir, e->d_name, "stat", stat, sizeof(stat));
		/* The state follows the command name in parentheses. */
		char *st = strrchr(stat, ')');

		used += (size_t)snprintf(buf + used, n - used, " %s %s %c %s;",
					 e->d_name, comm,
					 st && st[1] ? st[2] : '?',
					 wchan[0] ? wchan : "-");
	}
	closedir(d);
}
