#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/page_cache.h"
#include "resid.h"

/* Pages of the file in the page cache, or -1. */
static int64_t cached_pages(int fd, uint64_t size)
{
	uint64_t pages = (size + RESID_PAGE - 1) / RESID_PAGE;
	unsigned char *vec = malloc(pages);
	void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	int64_t in = -1;

	if (vec && m != MAP_FAILED && mincore(m, size, vec) == 0) {
		in = 0;
		for (uint64_t i = 0; i < pages; i++)
			in += vec[i] & 1;
	}
	if (m != MAP_FAILED)
		munmap(m, size);
	free(vec);
	return in;
}

static int drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	int rc = -1;

	if (fd < 0)
		return -1;
	sync();
	if (write(fd, "1", 1) == 1)
		rc = 0;
	close(fd);
	return rc;
}

const char *page_cache_drop(int fd, const char *path, uint64_t size, char *err,
			    size_t n)
{
	int e = fsync(fd) ?
			errno :
			posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_DONTNEED);
	int64_t in;

	if (e) {
		snprintf(err, n, "cannot drop the page cache of %s: %s", path,
			 strerror(e));
		return NULL;
	}
	in = cached_pages(fd, size);
	if (in == 0)
		return "fadvise";
	if (in > 0 && geteuid() == 0 && drop_caches() == 0 &&
	    (in = cached_pages(fd, size)) == 0)
		return "fadvise+drop_caches";
	snprintf(err, n,
		 "%" PRId64 " pages of %s stay in the page cache after "
		 "POSIX_FADV_DONTNEED%s; stop what maps the file",
		 in, path,
		 geteuid() ? " (run as root to drop caches)" :
			     " and drop_caches");
	return NULL;
}
