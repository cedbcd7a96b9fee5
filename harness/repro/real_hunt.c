/* The real-kernel detectors: the bug's gate scenario run by this residctl
 * (or its ThreadSanitizer build, build/tsan/residctl beside it) in a child
 * process with the switch on, its output read for what caught it. Real
 * threads are not deterministic: the command that reran it is the replay. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "fault/bugs.h"
#include "proc/child.h"
#include "repro/repro_internal.h"

#define OUT_MAX (256u << 10)

/* build/residctl -> build/tsan/residctl; the suppressions beside ci/. */
static int tsan_paths(const char *self, char *exe, char *supp, size_t n)
{
	char dir[4096];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", self);
	snprintf(exe, n, "%.4000s/tsan/residctl", dirname(dir));
	snprintf(supp, n, "%.4000s/../ci/tsan.supp", dir);
	return stat(exe, &st) == 0 && stat(supp, &st) == 0 ? 0 : -1;
}

/* Runs argv with stdout and stderr into out; returns the exit status
 * (128 + signal when killed), or -1. */
static int run_capture(char *const argv[], const char *tsan_opts, char *out,
		       size_t cap)
{
	char path[] = "/tmp/residctl-repro-XXXXXX";
	int fd = mkstemp(path), status;
	pid_t pid;

	if (fd < 0)
		return -1;
	unlink(path);
	pid = child_fork();
	if (pid < 0) {
		close(fd);
		return -1;
	}
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (tsan_opts)
			setenv("TSAN_OPTIONS", tsan_opts, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	if (child_reap(pid, &status, 0) != pid) {
		close(fd);
		return -1;
	}
	ssize_t got = pread(fd, out, cap - 1, 0);

	out[got > 0 ? got : 0] = '\0';
	close(fd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The line after `key`, cut at its end, into dst. */
static void line_of(const char *text, const char *key, char *dst, size_t n)
{
	const char *p = strstr(text, key);

	snprintf(dst, n, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
}

static void classify(const char *text, int tsan, struct detection *d)
{
	const char *p;

	if (tsan && (p = strstr(text, "WARNING: ThreadSanitizer: "))) {
		/* The kind of report and the first frame of the pager. */
		char kind[64], frame[160] = "";
		const char *f = strstr(p, "#0 ");
		int len = (int)strcspn(p + 26, "(\n");

		while (len && p[26 + len - 1] == ' ')
			len--;
		snprintf(kind, sizeof(kind), "%.*s", len, p + 26);
		if (f)
			snprintf(frame, sizeof(frame), "%.*s",
				 (int)strcspn(f + 3, " "), f + 3);
		snprintf(d->oracle, sizeof(d->oracle), "TSan %.50s", kind);
		snprintf(d->why, sizeof(d->why), "ThreadSanitizer: %s in %s",
			 kind, frame[0] ? frame : "?");
	} else if (strstr(text, "watchdog: thread dump")) {
		snprintf(d->oracle, sizeof(d->oracle), "watchdog (hang)");
		line_of(text, "watchdog: thread dump", d->why, 160);
	} else if ((p = strstr(text, " I-"))) {
		snprintf(d->oracle, sizeof(d->oracle), "%.*s",
			 (int)strcspn(p + 1, " :("), p + 1);
		line_of(p + 1, "I-", d->why, sizeof(d->why));
	} else {
		snprintf(d->oracle, sizeof(d->oracle), "scenario failed");
		line_of(text, "FAIL", d->why, sizeof(d->why));
	}
}

/* The command line argv as a user would paste it; NULL without memory. */
static char *rerun_line(char *const argv[], int tsan)
{
	size_t len = 32;
	char *line;

	for (int i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	line = malloc(len);
	if (!line)
		return NULL;
	strcpy(line, tsan ? "TSAN_OPTIONS='...' " : "");
	for (int i = 0; argv[i]; i++)
		strcat(strcat(line, i ? " " : ""), argv[i]);
	return line;
}

static void run_once(int bug, enum detector det, const struct repro_opts *o,
		     struct detection *d);

/* Real threads catch a race only when they happen to interleave badly:
 * run again, with the next seed, until one run catches it. */
void repro_real(int bug, enum detector det, const struct repro_opts *o,
		struct detection *d)
{
	struct repro_opts one = *o;
	double secs = 0;

	for (int i = 0; i < (o->attempts > 0 ? o->attempts : 1); i++) {
		detection_free(d);
		*d = (struct detection){ 0 };
		one.seed = o->seed + (uint64_t)i;
		run_once(bug, det, &one, d);
		secs += d->seconds;
		d->schedules = (uint64_t)i + 1;
		if (!d->ran || d->detected)
			break;
	}
	d->seconds = secs;
}

static void run_once(int bug, enum detector det, const struct repro_opts *o,
		     struct detection *d)
{
	/* Every switch off: the three storms must pass. Every run is the
	 * generic one: the storms' swarm draws faults and chunk size from
	 * the seed, nothing from the bug. */
	const char *id = bug ? bug_table[bug].real_scenario : "T-3";
	int clean = bug == 0;
	char exe[4096], supp[4096], seed[32], bugs[8], tsan_opts[4300];
	char *out = malloc(OUT_MAX);
	int tsan = det == DET_TSAN;

	if (!out) {
		snprintf(d->why, sizeof(d->why), "out of memory");
		return;
	}
	snprintf(exe, sizeof(exe), "%s", o->self);
	if (tsan && tsan_paths(o->self, exe, supp, sizeof(exe)) < 0) {
		snprintf(d->why, sizeof(d->why),
			 "no ThreadSanitizer build "
			 "beside %s: run make tsan",
			 o->self);
		free(out);
		return;
	}
	snprintf(tsan_opts, sizeof(tsan_opts),
		 "halt_on_error=1 exitcode=66 "
		 "second_deadlock_stack=1 suppressions=%s",
		 supp);
	snprintf(seed, sizeof(seed), "%" PRIu64, o->seed);
	snprintf(bugs, sizeof(bugs), "%d", bug);
	char *argv[20];
	int n = 0;

	argv[n++] = exe;
	argv[n++] = "check";
	argv[n++] = (char *)id;
	if (clean) {
		argv[n++] = "T-6";
		argv[n++] = "T-7";
	}
	argv[n++] = "--seed";
	argv[n++] = seed;
	argv[n++] = "--swarm";
	/* A bug's hunt on the first leg only: a hang waits out the storm's
	 * hang budget once per leg run (the clean row runs them all). */
	if (bug) {
		argv[n++] = "--backing";
		argv[n++] = "synthetic";
		argv[n++] = "--chunks";
		argv[n++] = "equal";
		argv[n++] = "--pages";
		argv[n++] = "4k";
		argv[n++] = "--bug";
		argv[n++] = bugs;
	}
	argv[n] = NULL;
	double t0 = mono_now();
	int rc = run_capture(argv, tsan ? tsan_opts : NULL, out, OUT_MAX);

	d->seconds = mono_now() - t0;
	d->replay = rerun_line(argv, tsan);
	if (rc == 0 || rc == 1 || rc == 66) {
		d->ran = 1;
		d->detected = rc != 0;
		if (d->detected)
			classify(out, tsan, d);
		else
			snprintf(d->why, sizeof(d->why), "%s passed", id);
	} else {
		line_of(out, "residctl", d->why, sizeof(d->why));
		if (!d->why[0])
			snprintf(d->why, sizeof(d->why), "%.300s exited %d",
				 exe, rc);
	}
	free(out);
}
