/* Moving processes between cgroups with plain open/read/write: a signal
 * handler's cleanup and the stale-cgroup sweep use them as well as the
 * scopes. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup_procs.h"

/* open/write/close only: also used from a signal handler. */
int cg_write_str(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, str, strlen(str)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Moves every process listed in the cgroup.procs file `from` into the one
 * `to`, with plain reads and writes: the signal handler's cleanup uses it
 * too. A process that exits meanwhile (ESRCH) is skipped. The number moved,
 * or -errno of the first failure. */
static int move_all(const char *from, const char *to)
{
	char buf[512], pid[16];
	size_t pl = 0;
	int fd = open(from, O_RDONLY | O_CLOEXEC), moved = 0, rc = 0;
	ssize_t got;

	if (fd < 0)
		return -errno;
	while (!rc && (got = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < got && !rc; i++) {
			if (buf[i] != '\n') {
				if (pl < sizeof(pid) - 1)
					pid[pl++] = buf[i];
				continue;
			}
			pid[pl] = '\0';
			pl = 0;
			rc = cg_write_str(to, pid);
			if (!rc)
				moved++;
			else if (rc == -ESRCH)
				rc = 0;
		}
	}
	if (!rc && got < 0)
		rc = -errno;
	close(fd);
	return rc ? rc : moved;
}

/* Moving processes out of a group while reading its cgroup.procs can miss
 * some, and a process can fork meanwhile: repeat until a pass moves none. */
#define MOVE_PASSES 20

int cg_empty_into(const char *from, const char *to)
{
	int rc = 1;

	for (int i = 0; i < MOVE_PASSES && rc > 0; i++)
		rc = move_all(from, to);
	return rc > 0 ? -EBUSY : rc;
}
