/* The device's limit: fio, O_DIRECT, sequential reads of the bench's own
 * file, each block size at queue depths 1, 2, 4, 8, 16 (while blocks x
 * depth stay within DEVICE_BUFFERS of buffers), 2 s each. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/device.h"
#include "proc/child.h"

#define DEVICE_BUFFERS (1024 * MiB)

int device_have_fio(void)
{
	const char *path = getenv("PATH");
	char dir[4096];

	while (path && *path) {
		size_t len = strcspn(path, ":");

		snprintf(dir, sizeof(dir), "%.*s/fio", (int)len, path);
		if (len && access(dir, X_OK) == 0)
			return 1;
		path += len + (path[len] == ':');
	}
	return 0;
}

/* fio's read bandwidth in KiB/s: field 7 of its terse (v3) line. */
static int parse_terse(const char *out, double *kib)
{
	const char *p = out;

	for (int f = 1; f < 7; f++) {
		p = strchr(p, ';');
		if (!p)
			return -1;
		p++;
	}
	char *end;

	*kib = strtod(p, &end);
	return end == p || *end != ';' ? -1 : 0;
}

static int run_fio(const char *path, uint64_t size, uint64_t bs, uint64_t qd,
		   double *mibps, char *err, size_t n)
{
	char a_file[4200], a_bs[48], a_qd[32], a_size[48], out[4096];
	char *argv[] = { "fio",
			 "--name=device",
			 a_file,
			 "--readonly",
			 "--rw=read",
			 a_bs,
			 "--direct=1",
			 "--ioengine=libaio",
			 a_qd,
			 a_size,
			 "--time_based",
			 "--runtime=2",
			 "--output-format=terse",
			 "--terse-version=3",
			 NULL };
	size_t got = 0;
	int fd[2], status;
	double kib;
	pid_t pid;

	snprintf(a_file, sizeof(a_file), "--filename=%s", path);
	snprintf(a_bs, sizeof(a_bs), "--bs=%llu", (unsigned long long)bs);
	snprintf(a_qd, sizeof(a_qd), "--iodepth=%llu", (unsigned long long)qd);
	snprintf(a_size, sizeof(a_size), "--size=%llu",
		 (unsigned long long)(size / bs * bs));
	if (pipe(fd)) {
		snprintf(err, n, "fio: pipe: %s", strerror(errno));
		return -1;
	}
	pid = child_fork();
	if (pid < 0) {
		snprintf(err, n, "fio: fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execvp("fio", argv);
		_exit(127);
	}
	close(fd[1]);
	for (ssize_t k;
	     got < sizeof(out) - 1 &&
	     (k = read(fd[0], out + got, sizeof(out) - 1 - got)) != 0;)
		if (k > 0)
			got += (size_t)k;
		else if (errno != EINTR)
			break;
	out[got] = 0;
	close(fd[0]);
	if (child_reap(pid, &status, 0) < 0) {
		snprintf(err, n, "fio: waitpid: %s", strerror(errno));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, n, "fio failed (exit %d)%s",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 WIFEXITED(status) && WEXITSTATUS(status) == 127 ?
				 ": not installed; run: "
				 "apt-get install -y fio" :
				 "");
		return -1;
	}
	if (parse_terse(out, &kib)) {
		snprintf(err, n, "fio: cannot read its terse output");
		return -1;
	}
	*mibps = kib / 1024;
	return 0;
}

int device_measure(const char *path, uint64_t size, struct device_limit *d,
		   char *err, size_t n)
{
	for (int b = 0; b < DEVICE_BS; b++) {
		for (int q = 0; q < DEVICE_QDS && d->bs[b]; q++) {
			uint64_t qd = 1ull << q;
			double v;

			if (q && d->bs[b] * qd > DEVICE_BUFFERS)
				break;
			if (run_fio(path, size, d->bs[b], qd, &v, err, n))
				return -1;
			fprintf(stderr,
				"  fio: %llu KiB blocks, queue depth "
				"%llu: %.0f MiB/s\n",
				(unsigned long long)(d->bs[b] >> 10),
				(unsigned long long)qd, v);
			if (v > d->mibps[b][q])
				d->mibps[b][q] = v;
			if (v > d->best) {
				d->best = v;
				d->best_bs = d->bs[b];
				d->best_qd = qd;
			}
		}
	}
	return 0;
}
