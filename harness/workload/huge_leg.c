#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/child.h"
#include "workload/huge_leg.h"

#define OPTIONS "huge=always,mode=0700,size=2g"

uint64_t huge_leg_folio(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
			"r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int huge_leg_mountpoint(char *dir, size_t n)
{
	if (snprintf(dir, n, "/tmp/residctl-huge-XXXXXX") >= (int)n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(dir) ? 0 : -1;
}

int huge_leg_enter(const char *dir, char *err, size_t n)
{
	if (unshare(CLONE_NEWNS) < 0) {
		snprintf(err, n, "unshare(CLONE_NEWNS): %s", strerror(errno));
		return -1;
	}
	/* Nothing mounted here propagates to the machine's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		snprintf(err, n, "mount --make-rprivate /: %s",
			 strerror(errno));
		return -1;
	}
	if (mount("residctl-huge", dir, "tmpfs", MS_NOSUID | MS_NODEV,
		  OPTIONS) < 0) {
		snprintf(err, n, "mount -t tmpfs -o " OPTIONS " on %s: %s", dir,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* The trial mounts over /tmp: in the child's own mount namespace that
 * hides nothing of the machine's, and a caller killed meanwhile leaves no
 * directory behind. */
#define TRIAL_DIR "/tmp"

int huge_leg_available(char *why, size_t n)
{
	char err[512] = "";
	int status = 0, pfd[2];
	pid_t pid;

	if (!huge_leg_folio()) {
		snprintf(why, n, "the kernel has no transparent huge pages");
		return 0;
	}
	if (pipe(pfd) < 0) {
		snprintf(why, n, "cannot make a pipe: %s", strerror(errno));
		return 0;
	}
	pid = child_fork();
	if (pid == 0) {
		close(pfd[0]);
		int rc = huge_leg_enter(TRIAL_DIR, err, sizeof(err));

		if (rc < 0 && write(pfd[1], err, strlen(err)) < 0)
			_exit(2);
		_exit(rc < 0);
	}
	close(pfd[1]);
	ssize_t got = pid > 0 ? read(pfd[0], err, sizeof(err) - 1) : 0;

	close(pfd[0]);
	err[got > 0 ? got : 0] = '\0';
	if (pid < 0 || child_reap(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		snprintf(why, n, "%s", err[0] ? err : "the trial child failed");
		return 0;
	}
	return 1;
}
