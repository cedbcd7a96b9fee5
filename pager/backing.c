/* The backing store: a file read with O_DIRECT (buffered plus
 * POSIX_FADV_DONTNEED when the file system refuses O_DIRECT, recorded in the
 * manifest), a plain descriptor for unaligned pieces, or the synthetic
 * content of design.md §5.1. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

int backing_open(struct resid_region *r, const char *path, char *err, size_t n)
{
	if (r->cfg.backing == RESID_BACKING_SYNTHETIC) {
		r->backing_fd = r->plain_fd = -1;
		r->backing_size = r->cfg.region_len;
		return 0;
	}
	if (!path || !*path) {
		snprintf(err, n,
			 "path is %s with RESID_BACKING_FILE: set "
			 "cfg.path to the file to map",
			 path ? "empty" : "NULL");
		return -EINVAL;
	}
	int fd = SEAM(r, backing_open, path, 1, &r->backing_size);

	r->direct = fd >= 0;
	if (fd == -EINVAL) /* the file system has no O_DIRECT */
		fd = SEAM(r, backing_open, path, 0, &r->backing_size);
	if (fd == -EISDIR || fd == -ENODEV || fd == -ESPIPE) {
		snprintf(err, n,
			 "path %s is not a regular file (%s): set "
			 "cfg.path to a regular file",
			 path,
			 fd == -EISDIR ? "a directory" :
			 fd == -ESPIPE ? "a FIFO or socket" :
					 "a device");
		return fd;
	}
	if (fd < 0) {
		snprintf(err, n,
			 "path %s: cannot open: %s: set cfg.path to a "
			 "readable file",
			 path, strerror(-fd));
		return fd;
	}
	r->backing_fd = fd;
	r->plain_fd = SEAM(r, backing_open, path, 0, &r->backing_size);
	if (r->plain_fd < 0) {
		int e = r->plain_fd;

		snprintf(err, n, "path %s: cannot open: %s", path,
			 strerror(-e));
		SEAM(r, close, fd);
		r->backing_fd = r->plain_fd = -1;
		return e;
	}
	if (r->backing_size < r->cfg.region_len) {
		snprintf(err, n,
			 "region_len %" PRIu64 " is larger than the "
			 "file %s (%" PRIu64 " bytes): shrink region_len or "
			 "use a larger file",
			 r->cfg.region_len, path, r->backing_size);
		SEAM(r, close, r->backing_fd);
		SEAM(r, close, r->plain_fd);
		r->backing_fd = r->plain_fd = -1;
		return -EINVAL;
	}
	return 0;
}

/* A buffered read, dropped from the page cache after: it would hold a
 * second copy of what B holds. */
static long plain_read(struct resid_region *r, uint8_t *dst, uint64_t len,
		       uint64_t off)
{
	long n = SEAM(r, backing_pread, r->plain_fd, dst, len, off);

	if (n > 0)
		SEAM(r, backing_dontneed, r->plain_fd, off, (uint64_t)n);
	return n;
}

long backing_read(struct resid_region *r, uint8_t *dst, uint64_t len,
		  uint64_t off)
{
	long n;

	if (r->cfg.backing == RESID_BACKING_SYNTHETIC) {
		n = SEAM(r, backing_pread, -1, dst, len, off);
		if (n > 0)
			resid_content_fill(dst, off, (uint64_t)n, r->cfg.seed);
		return n;
	}
	/* The page-aligned head with O_DIRECT; only an unaligned tail (the
	 * file's last bytes) goes through the plain descriptor. */
	uint64_t head = r->direct && !(off % RESID_PAGE) ?
				len / RESID_PAGE * RESID_PAGE :
				0;

	if (head) {
		n = SEAM(r, backing_pread, r->backing_fd, dst, head, off);
		if (n < (long)head || head == len)
			return n;
		long t = plain_read(r, dst + head, len - head, off + head);

		/* a failed tail is a short read: the caller asks again */
		return t > 0 ? n + t : n;
	}
	return plain_read(r, dst, len, off);
}

/* A fetch worker's reader runs this, on its own thread on Linux. */
long backing_read_job(void *r, void *dst, size_t len, uint64_t off)
{
	return backing_read(r, dst, len, off);
}
