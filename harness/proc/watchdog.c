/* The watchdog thread: progress is CPU time, summed over this process's
 * threads (but the watchdog's), its reaped children and every live
 * descendant (/proc/<pid>/task/<tid>/children). A deadlock, a thread lost
 * in a fault nobody resolves, a child stuck in the kernel all leave it
 * flat; a command that works, or waits for a child that works, moves it. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/proc_stat.h"
#include "proc/child.h"
#include "proc/thread_dump.h"
#include "proc/watchdog.h"

/* ThreadSanitizer kills a child that starts threads after a fork of a
 * multi-threaded process (die_after_fork): its build has no watchdog, as
 * before; its storms keep their own. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WATCHDOG_OFF 1
#endif
#endif

#define DEFAULT_S 600
#define MAX_DESC 256
#define DUMP_MAX 4096

struct wd {
	unsigned seconds;
	pid_t tid; /* the watchdog's own thread */
	char rerun[4096];
};

static struct wd wd;

/* The live descendants of pid, appended to out; the new count. */
static int descendants(pid_t pid, pid_t *out, int n)
{
	char path[64], file[96];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		FILE *f;
		int c;

		if (e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%.20s/children", path,
			 e->d_name);
		f = fopen(file, "r");
		while (f && n < MAX_DESC && fscanf(f, "%d", &c) == 1) {
			out[n++] = c;
			n = descendants(c, out, n);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* The ticks of a stat file: its own, those of the children it reaped. */
static unsigned long long cpu_of(const char *path, int own, int reaped)
{
	struct proc_stat st;

	if (proc_stat_read(path, &st))
		return 0;
	return (own ? st.utime + st.stime : 0) +
	       (reaped ? (unsigned long long)(st.cutime + st.cstime) : 0);
}

/* Ticks used by the command: the tool's threads but this one, the
 * children it reaped, and every live descendant with the ones they
 * reaped. */
static unsigned long long progress(void)
{
	static pid_t desc[MAX_DESC];
	unsigned long long sum = 0;
	char path[96];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	int n;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == wd.tid)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/stat",
			 e->d_name);
		sum += cpu_of(path, 1, 0);
	}
	if (d)
		closedir(d);
	sum += cpu_of("/proc/self/stat", 0, 1);
	n = descendants(getpid(), desc, 0);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)desc[i]);
		sum += cpu_of(path, 1, 1);
	}
	return sum;
}

static void fire(void)
{
	static pid_t desc[MAX_DESC];
	static char dump[DUMP_MAX];
	int n = descendants(getpid(), desc, 0);

	dprintf(STDERR_FILENO,
		"residctl: watchdog: no progress for %u s (no CPU time used by the tool or its children; RESIDCTL_WATCHDOG sets the limit): a hang\n",
		wd.seconds);
	thread_dump(getpid(), dump, sizeof(dump));
	dprintf(STDERR_FILENO, "  pid %d: %s\n", (int)getpid(), dump);
	for (int i = 0; i < n; i++) {
		thread_dump(desc[i], dump, sizeof(dump));
		dprintf(STDERR_FILENO, "  child %d: %s\n", (int)desc[i], dump);
	}
	dprintf(STDERR_FILENO, "rerun: %s\n", wd.rerun);
	child_exit_via_main(1);
}

static void *watch(void *arg)
{
	struct timespec second = { 1, 0 };
	unsigned long long last;
	unsigned idle = 0;

	(void)arg;
	wd.tid = gettid();
	last = progress();
	for (;;) {
		nanosleep(&second, NULL);
		unsigned long long now = progress();

		idle = now == last ? idle + 1 : 0;
		last = now;
		if (idle >= wd.seconds)
			fire();
	}
	return NULL;
}

#define SHELL_SAFE                                             \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
	"0123456789_-+=/.,:@%"

/* buf (n bytes, used so far) with len bytes of s appended when they fit. */
static size_t append(char *buf, size_t n, size_t used, const char *s,
		     size_t len)
{
	if (used + len < n) {
		memcpy(buf + used, s, len);
		used += len;
		buf[used] = '\0';
	}
	return used;
}

/* Appends s as the shell would read it back (single-quoted unless plain)
 * and a space; the new used. */
static size_t quote(const char *s, char *buf, size_t n, size_t used)
{
	int plain = *s && strspn(s, SHELL_SAFE) == strlen(s);

	if (!plain)
		used = append(buf, n, used, "'", 1);
	for (; *s; s++)
		used = *s == '\'' ? append(buf, n, used, "'\\''", 4) :
				    append(buf, n, used, s, 1);
	if (!plain)
		used = append(buf, n, used, "'", 1);
	return append(buf, n, used, " ", 1);
}

/* The environment that shapes a run, then the command line, quoted. */
static void rerun_line(int argc, char **argv)
{
	extern char **environ;
	size_t used = 0;

	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "RESIDCTL_", 9) &&
		    strncmp(*e, "RESIDCTL_COVERAGE=", 18) && strchr(*e, '=')) {
			/* NAME=, then the value quoted */
			used = append(wd.rerun, sizeof(wd.rerun), used, *e,
				      (size_t)(strchr(*e, '=') - *e) + 1);
			used = quote(strchr(*e, '=') + 1, wd.rerun,
				     sizeof(wd.rerun), used);
		}
	for (int i = 0; i < argc; i++)
		used = quote(argv[i], wd.rerun, sizeof(wd.rerun), used);
	if (used)
		wd.rerun[used - 1] = '\0';
}

int watchdog_start(int argc, char **argv, char *err, size_t n)
{
	const char *v = getenv("RESIDCTL_WATCHDOG");
	uint64_t s = DEFAULT_S;
	pthread_t th;

	if (v && (cli_u64(v, &s) || s > 86400)) {
		snprintf(err, n,
			 "RESIDCTL_WATCHDOG: bad value '%s'; give seconds, 0 to 86400 (0: off)",
			 v);
		return -1;
	}
#ifdef WATCHDOG_OFF
	s = 0;
#endif
	if (!s)
		return 0;
	wd.seconds = (unsigned)s;
	rerun_line(argc, argv);
	errno = pthread_create(&th, NULL, watch, NULL);
	if (errno) {
		snprintf(err, n, "watchdog: pthread_create: %s",
			 strerror(errno));
		return -1;
	}
	pthread_detach(th);
	return 0;
}

void watchdog_hang_here(const char *where)
{
	const char *v = getenv("RESIDCTL_HANG");

	if (!v || strcmp(v, where))
		return;
	for (;;)
		pause();
}
