/* A file's pages out of the page cache, so that the next read of it is
 * the device's: the bench arms and run --kernel-mmap start cold. */
#ifndef HARNESS_PAGE_CACHE_H
#define HARNESS_PAGE_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Empties the page cache of fd (path, size bytes): fsync +
 * POSIX_FADV_DONTNEED, then mincore over a mapping of it; when pages stay
 * and we are root, writes 1 to /proc/sys/vm/drop_caches and looks again.
 * Returns how ("fadvise", "fadvise+drop_caches"), or NULL with err when
 * pages are still cached. */
const char *page_cache_drop(int fd, const char *path, uint64_t size, char *err,
			    size_t n);

#endif
