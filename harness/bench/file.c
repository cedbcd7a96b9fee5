/* The benchmark's backing file on a real disk, its page cache, the
 * process's own count of bytes read from the block layer, and a model
 * file written whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "bench/bench.h"

#define PIECE (8 * MiB)

int bench_dir_check(const char *dir, uint64_t size, char *err, size_t n)
{
	struct statfs fs;
	struct statvfs vfs;
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, n,
			 "bad --dir '%s': not a directory; give an "
			 "existing directory on a disk",
			 dir);
		return -1;
	}
	if (statfs(dir, &fs) || statvfs(dir, &vfs)) {
		snprintf(err, n,
			 "bad --dir '%s': %s; give a readable "
			 "directory on a disk",
			 dir, strerror(errno));
		return -1;
	}
	/* Bytes read from tmpfs or ramfs never reach a block device. */
	if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC) {
		snprintf(err, n,
			 "bad --dir '%s': it is in memory (tmpfs), so "
			 "no byte would be read from a disk; give a directory "
			 "on a disk",
			 dir);
		return -1;
	}
	if ((uint64_t)vfs.f_bavail * vfs.f_frsize < size + 64 * MiB) {
		snprintf(err, n,
			 "bad --dir '%s': less than %" PRIu64 " MiB "
			 "free for the backing file; free space or give "
			 "another --dir",
			 dir, size / MiB + 64);
		return -1;
	}
	return 0;
}

static int write_all(int fd, const uint8_t *buf, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t w = pwrite(fd, buf, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		off += (uint64_t)w;
		len -= (uint64_t)w;
	}
	return 0;
}

int bench_file_create(struct bench_file *f, const char *dir, uint64_t size,
		      uint64_t seed, bench_fill fill, char *err, size_t n)
{
	uint8_t *buf = malloc(PIECE);

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->size = size;
	f->seed = seed;
	snprintf(f->path, sizeof(f->path), "%s/residctl-bench-%d.dat", dir,
		 (int)getpid());
	if (!buf) {
		snprintf(err, n, "no memory for the file's content");
		return -1;
	}
	f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (f->fd < 0) {
		snprintf(err, n, "cannot create %s: %s", f->path,
			 strerror(errno));
		free(buf);
		f->path[0] = '\0';
		return -1;
	}
	for (uint64_t off = 0; off < size && !child_stop_signal();
	     off += PIECE) {
		uint64_t len = size - off < PIECE ? size - off : PIECE;

		fill(buf, off, len, seed);
		if (write_all(f->fd, buf, len, off)) {
			snprintf(err, n, "cannot write %s: %s", f->path,
				 strerror(errno));
			free(buf);
			bench_file_remove(f);
			return -1;
		}
	}
	free(buf);
	if (child_stop_signal() || fsync(f->fd)) {
		snprintf(err, n, "%s %s",
			 child_stop_signal() ? "interrupted writing" :
					       "cannot fsync",
			 f->path);
		bench_file_remove(f);
		return -1;
	}
	return 0;
}

void bench_file_remove(struct bench_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->path[0] && unlink(f->path) && errno != ENOENT)
		fprintf(stderr,
			"residctl bench: cannot remove %s: %s; remove "
			"it by hand\n",
			f->path, strerror(errno));
	f->path[0] = '\0';
}

int bench_read_bytes(uint64_t *out)
{
	char line[128];
	FILE *f = fopen("/proc/self/io", "r");
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "read_bytes: %" SCNu64, out) == 1) {
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

int bench_out_open(struct bench_out *o, const char *path, char *err, size_t n)
{
	o->path = path;
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp", path);
	o->f = fopen(o->tmp, "wb");
	if (!o->f)
		snprintf(err, n, "cannot create %s: %s; give a writable path",
			 o->tmp, strerror(errno));
	return o->f ? 0 : -1;
}

int bench_out_close(struct bench_out *o, int ok, char *err, size_t n)
{
	FILE *f = o->f;

	o->f = NULL;
	if (ok && !child_stop_signal() && !fflush(f) && !fsync(fileno(f))) {
		int closed = !fclose(f);

		f = NULL;
		if (closed && !rename(o->tmp, o->path))
			return 0;
		if (closed) {
			snprintf(err, n, "cannot rename %s to %s: %s", o->tmp,
				 o->path, strerror(errno));
			unlink(o->tmp);
			return -1;
		}
	}
	snprintf(err, n, "%s writing %s: %s; free space or give another path",
		 child_stop_signal() ? "interrupted" : "error", o->tmp,
		 child_stop_signal() ? "nothing kept" : strerror(errno));
	if (f)
		fclose(f);
	unlink(o->tmp);
	return -1;
}

int bench_pread_full(int fd, void *dst, uint64_t len, uint64_t off)
{
	uint8_t *p = dst;

	while (len) {
		ssize_t k = pread(fd, p, len, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		off += (uint64_t)k;
		len -= (uint64_t)k;
	}
	return 0;
}
