#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "proc/child.h"
#include "resid_harness.h"
#include "workload/content_file.h"

#define PIECE (1u << 20)

/* This process's directory and latest file, for content_abandon. */
static char live_dir[4096], live_file[4200];
static pid_t dir_owner, file_owner;

int content_dir_make(char *dir, size_t n, char *err, size_t en)
{
	const char *base = getenv("TMPDIR");

	snprintf(dir, n, "%s/residctl-file-XXXXXX",
		 base && *base ? base : "/tmp");
	child_on_exit(content_abandon);
	if (mkdtemp(dir)) {
		snprintf(live_dir, sizeof(live_dir), "%s", dir);
		dir_owner = getpid();
		return 0;
	}
	snprintf(err, en,
		 "cannot make a directory for the backing file "
		 "(%s): %s; set TMPDIR to a writable directory",
		 dir, strerror(errno));
	dir[0] = '\0';
	return -1;
}

void content_abandon(void)
{
	/* a forked child inherits both but owns neither */
	if (live_file[0] && file_owner == getpid())
		unlink(live_file);
	if (live_dir[0] && dir_owner == getpid())
		rmdir(live_dir);
}

int content_dir_remove(const char *dir)
{
	char path[4200];
	struct dirent *e;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d) {
		fprintf(stderr, "residctl: cannot list %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) < 0) {
			fprintf(stderr, "residctl: cannot remove %s: %s\n",
				path, strerror(errno));
			rc = -1;
		}
	}
	closedir(d);
	if (rmdir(dir) < 0) {
		fprintf(stderr, "residctl: cannot remove %s: %s\n", dir,
			strerror(errno));
		rc = -1;
	}
	return rc;
}

uint64_t content_file_len(uint64_t want, uint64_t seed)
{
	uint64_t s = seed;

	return want - 1 - rng_below(&s, RESID_PAGE - 1);
}

static int write_all(int fd, uint64_t len, uint64_t seed)
{
	static uint8_t buf[PIECE];

	for (uint64_t off = 0; off < len;) {
		size_t want = len - off < PIECE ? (size_t)(len - off) : PIECE;

		resid_content_fill(buf, off, want, seed);
		ssize_t n = pwrite(fd, buf, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOSPC;
		off += (uint64_t)n;
	}
	return 0;
}

int content_file_direct(struct resid_region *r)
{
	char m[2048];

	return resid_manifest_json(r, m, sizeof(m)) == 0 &&
	       strstr(m, "\"o_direct\":true") != NULL;
}

int content_file_make(const char *dir, const char *name, uint64_t len,
		      uint64_t seed, char *path, size_t pn, char *err,
		      size_t en)
{
	int fd, rc;

	snprintf(path, pn, "%s/%s", dir, name);
	child_on_exit(content_abandon);
	snprintf(live_file, sizeof(live_file), "%s", path);
	file_owner = getpid();
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, en, "cannot create the backing file %s: %s", path,
			 strerror(errno));
		return -1;
	}
	rc = write_all(fd, len, seed);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	/* Clean pages only: after fsync the whole file can be dropped. */
	if (!rc)
		rc = -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc) {
		snprintf(err, en, "cannot write the backing file %s: %s", path,
			 strerror(-rc));
		unlink(path);
		return -1;
	}
	return 0;
}
