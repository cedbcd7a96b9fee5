/* The Linux seam's readers (reader.c): a thread each, one read at a time. */
#ifndef RESID_LINUX_READER_H
#define RESID_LINUX_READER_H

#include "seam.h"

int lx_reader_open(void *ctx, resid_reader *rd, resid_read_fn fn, void *arg);
void lx_read_start(void *ctx, resid_reader rd, void *buf, size_t len,
		   uint64_t off);
long lx_read_wait(void *ctx, resid_reader rd);
void lx_reader_close(void *ctx, resid_reader rd);

#endif
