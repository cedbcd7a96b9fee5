/* One measurement in a forked child, charged to its own memory cgroup (the
 * storms' pattern: the parent enters the scope, forks, and removes the scope
 * after the child is reaped, also when the child dies or is killed). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/write_all.h"
#include "bench/bench.h"
#include "cgroup/cgroup_scope.h"
#include "proc/child.h"

struct header {
	int rc;
	char message[512];
};

static void child(bench_fn fn, void *arg, void *out, size_t len, int fd)
{
	struct header h = { 0 };

	h.rc = fn(arg, out, h.message, sizeof(h.message));
	if (write_all(fd, &h, sizeof(h)) || write_all(fd, out, len))
		_exit(3);
	_exit(0);
}

/* Reads want bytes; -1 when the child closed early, -2 on a signal to stop. */
static int collect(int fd, char *dst, size_t want)
{
	size_t got = 0;

	while (got < want) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int rc = poll(&p, 1, 500);

		if (child_stop_signal())
			return -2;
		if (rc <= 0)
			continue;
		ssize_t n = read(fd, dst + got, want - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

int bench_class_setup(const char *cmd, struct bench_class *c, const char *path)
{
	char err[600];

	if (!devclass_throttles(&c->dc) ||
	    devclass_device(path, &c->dev, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "residctl bench %s: %s\n", cmd, err);
	return 2;
}

int bench_in_child(const char *tag, uint64_t limit, bench_fn fn, void *arg,
		   void *out, size_t len, char *err, size_t n)
{
	return bench_in_child_class(tag, limit, NULL, fn, arg, out, len, err,
				    n);
}

int bench_in_child_class(const char *tag, uint64_t limit,
			 const struct bench_class *c, bench_fn fn, void *arg,
			 void *out, size_t len, char *err, size_t n)
{
	struct cg_scope scope;
	struct header h;
	char *buf = malloc(sizeof(h) + len);
	int fds[2], status = 0, rc;

	if (!buf) {
		snprintf(err, n, "no memory for a result");
		return -1;
	}
	if (cg_scope_enter_class(&scope, tag, limit, c ? &c->dc : NULL,
				 c ? &c->dev : NULL, err, n) < 0) {
		free(buf);
		return -1;
	}
	if (pipe(fds) < 0) {
		snprintf(err, n, "pipe: %s", strerror(errno));
		cg_scope_leave(&scope);
		free(buf);
		return -1;
	}
	pid_t pid = child_fork();

	if (pid == 0) {
		close(fds[0]);
		child(fn, arg, out, len, fds[1]);
	}
	close(fds[1]);
	rc = pid < 0 ? -3 : collect(fds[0], buf, sizeof(h) + len);
	close(fds[0]);
	if (pid > 0) {
		if (rc == -2)
			kill(pid, SIGKILL);
		child_reap(pid, &status, 0);
	}
	if (cg_scope_leave(&scope) < 0 && rc == 0)
		rc = -4;
	if (rc == 0) {
		memcpy(&h, buf, sizeof(h));
		memcpy(out, buf + sizeof(h), len);
		if (h.rc)
			snprintf(err, n, "%s", h.message);
		rc = h.rc ? -1 : 0;
	} else if (rc == -1) {
		snprintf(err, n,
			 "the measuring process died (status %#x) "
			 "before it reported",
			 status);
	} else {
		snprintf(err, n, "%s",
			 rc == -2 ?
				 "interrupted" :
			 rc == -3 ?
				 "fork failed" :
				 "could not remove the measurement's cgroup");
	}
	free(buf);
	return rc ? -1 : 0;
}
