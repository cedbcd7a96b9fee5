/* The backing store on the simulated kernel: the synthetic source only,
 * and the readers whose reads run on the waiting thread. */
#include <errno.h>
#include <stdlib.h>

#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

int kernel_backing_open(void *ctx, const char *path, int direct, uint64_t *size)
{
	(void)path;
	(void)direct;
	(void)size;
	sched_point(ctx, OP_BACKING_OPEN, 0);
	return -ENOENT; /* scenarios use the synthetic source */
}

/* Synthetic only: the pages of B the read lands in enter the page cache
 * (the pager writes their bytes before its next seam call). Failing and
 * short reads are the fault seam's. */
long kernel_backing_pread(void *ctx, int fd, void *buf, size_t len,
			  uint64_t off)
{
	struct sim *s = ctx;
	uint64_t at = (uintptr_t)buf, n = len;

	sched_point(s, OP_PREAD, off);
	if (fd != -1)
		return -EBADF;
	if (kernel_a_obj(s, at) != UINT64_MAX) {
		sim_fail(s,
			 "I-1: a backing read into mapping A at offset "
			 "%#llx",
			 (unsigned long long)(kernel_a_obj(s, at) &
					      ((1ull << 40) - 1)));
		return -EFAULT;
	}
	for (uint32_t i = 0; n && i < s->nmemfds; i++) {
		struct sim_memfd *mf = s->memfds[i];
		uint64_t b = (uintptr_t)mf->bytes;

		if (!mf->b_mapped || at < b || at - b >= mf->npages * SIM_PAGE)
			continue;
		kernel_make_present(mf, at - b, n);
	}
	return (long)n;
}

int kernel_backing_dontneed(void *ctx, int fd, uint64_t off, uint64_t len)
{
	(void)fd;
	(void)len;
	sched_point(ctx, OP_DONTNEED, off);
	return -EBADF;
}

/* A reader's read runs inside read_wait, on the waiting thread, at that
 * read's own scheduling points: what it touches is the caller's buffer
 * alone, so when it ran between start and wait changes nothing the
 * scheduler could order. Misuse is an oracle's failure. */
struct sim_reader {
	resid_read_fn fn;
	void *arg;
	void *buf;
	size_t len;
	uint64_t off;
	int queued;
};

int kernel_reader_open(void *ctx, resid_reader *rd, resid_read_fn fn, void *arg)
{
	struct sim_reader *sr = calloc(1, sizeof(*sr));

	(void)ctx;
	if (!sr)
		return -ENOMEM;
	sr->fn = fn;
	sr->arg = arg;
	*rd = (resid_reader)sr;
	return 0;
}

void kernel_read_start(void *ctx, resid_reader rd, void *buf, size_t len,
		       uint64_t off)
{
	struct sim_reader *sr = (struct sim_reader *)rd;

	if (sr->queued)
		sim_fail(ctx, "a reader's read started with one in flight");
	sr->buf = buf;
	sr->len = len;
	sr->off = off;
	sr->queued = 1;
}

long kernel_read_wait(void *ctx, resid_reader rd)
{
	struct sim_reader *sr = (struct sim_reader *)rd;

	if (!sr->queued) {
		sim_fail(ctx, "a reader waited for a read never started");
		return -EINVAL;
	}
	sr->queued = 0;
	return sr->fn(sr->arg, sr->buf, sr->len, sr->off);
}

void kernel_reader_close(void *ctx, resid_reader rd)
{
	struct sim_reader *sr = (struct sim_reader *)rd;

	if (sr->queued)
		sim_fail(ctx, "a reader closed with a read in flight");
	free(sr);
}
