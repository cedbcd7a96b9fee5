/* A real file of design.md §5.1 content, for the legs of the gate and the storm
 * rounds that read through the file path users take (O_DIRECT into B): its
 * size is not a multiple of the page size, so the last chunk ends unaligned
 * as real files do. It is written, flushed and dropped from the page cache,
 * so the pager's reads come from the disk, in a temporary directory the
 * command removes with all it holds, also after a failure. */
#ifndef HARNESS_CONTENT_FILE_H
#define HARNESS_CONTENT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "resid.h"

/* Makes a fresh directory under $TMPDIR (or /tmp); 0, or -1 with err. */
int content_dir_make(char *dir, size_t n, char *err, size_t en);
/* Removes dir and every file in it; 0, or -1 after a line on stderr. */
int content_dir_remove(const char *dir);

/* On a signal that ends the tool: unlinks the latest file this process
 * made and removes the directory it made, once empty (after its children,
 * which remove their own files). Async-signal-safe. */
void content_abandon(void);

/* A file length near want that is not a page multiple (want less 1..4095
 * bytes, chosen by seed). */
uint64_t content_file_len(uint64_t want, uint64_t seed);

/* Writes dir/name: len bytes of the content of seed, fsync'd and dropped
 * from the page cache. 0 with its path, or -1 with err (nothing left). */
int content_file_make(const char *dir, const char *name, uint64_t len,
		      uint64_t seed, char *path, size_t pn, char *err,
		      size_t en);

/* Whether region r reads its file with O_DIRECT, as its manifest records
 * (0: buffered, the file system refused O_DIRECT). */
int content_file_direct(struct resid_region *r);

#endif
