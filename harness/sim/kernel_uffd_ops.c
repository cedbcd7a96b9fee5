/* The uffd's range operations: CONTINUE, POISON and WAKE follow the errno
 * rules of design.md §2.7, page by page, and wake what they mapped. */
#include <errno.h>

#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

/* The memfd registered on uffd whose A holds [addr, addr + len), or NULL
 * with *err set. */
static struct sim_memfd *registered(struct sim *s, int uffd, uint64_t addr,
				    uint64_t len, uint64_t *off, int *err)
{
	struct sim_memfd *mf;

	*err = -EINVAL;
	if ((addr | len) % SIM_PAGE || !len || addr + len < addr)
		return NULL;
	*err = -ENOENT;
	mf = kernel_memfd_of_a(s, addr, off);
	if (!mf || mf->uffd != uffd || len > mf->a_len - *off)
		return NULL;
	*err = -EINVAL;
	return mf->reg_mode & UFFDIO_REGISTER_MODE_MINOR ? mf : NULL;
}

/* Page by page: a hole stops it with EFAULT, a mapped page with EEXIST.
 * Partial progress is EAGAIN with mapped = bytes done, else mapped holds
 * the error; only what was mapped is woken (design.md §2.7). A range the kernel
 * refuses before it looks at the mapping (unaligned, empty: EINVAL) leaves
 * mapped unwritten, which the Linux seam reports as 0 (`residctl
 * conformance`, continue-bad-range). */
int kernel_uffd_continue(void *ctx, int fd, uint64_t addr, uint64_t len,
			 int64_t *mapped)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t off, done = 0;
	int err;

	sched_point(s, OP_CONTINUE, kernel_a_obj(s, addr));
	if (!kernel_file_of(s, fd, FK_UFFD))
		return -EBADF;
	if ((addr | len) % SIM_PAGE || !len || addr + len < addr) {
		*mapped = 0;
		return -EINVAL;
	}
	mf = registered(s, fd, addr, len, &off, &err);
	if (!mf) {
		*mapped = err;
		return err;
	}
	err = 0;
	for (uint64_t p = off / SIM_PAGE; done < len; p++, done += SIM_PAGE) {
		if (!mf->present[p] || mf->mapped[p]) {
			err = mf->present[p] ? -EEXIST : -EFAULT;
			break;
		}
		mf->mapped[p] = PTE_MAPPED;
	}
	if (done) {
		kernel_wake_range(s, fd, addr, done);
		sched_progress(s);
	}
	if (done == len) {
		s->continues_ok++;
		*mapped = (int64_t)len;
		return 0;
	}
	*mapped = done ? (int64_t)done : err;
	return done ? -EAGAIN : err;
}

/* Page by page like CONTINUE: a PTE or a marker already there stops it with
 * EEXIST; the poisoned part is woken, and its faulters touch it again. */
int kernel_uffd_poison(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t off, done = 0;
	int err;

	sched_point(s, OP_POISON, kernel_a_obj(s, addr));
	if (!kernel_file_of(s, fd, FK_UFFD))
		return -EBADF;
	mf = registered(s, fd, addr, len, &off, &err);
	if (!mf)
		return err;
	err = 0;
	for (uint64_t p = off / SIM_PAGE; done < len; p++, done += SIM_PAGE) {
		if (mf->mapped[p]) {
			err = -EEXIST;
			break;
		}
		mf->mapped[p] = PTE_POISON;
	}
	if (done)
		kernel_wake_range(s, fd, addr, done);
	return done == len ? 0 : done ? -EAGAIN : err;
}

int kernel_uffd_wake(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	struct sim *s = ctx;

	sched_point(s, OP_WAKE, kernel_a_obj(s, addr));
	if (!kernel_file_of(s, fd, FK_UFFD))
		return -EBADF;
	if ((addr | len) % SIM_PAGE || !len || addr + len < addr)
		return -EINVAL;
	kernel_wake_range(s, fd, addr, len);
	return 0;
}
