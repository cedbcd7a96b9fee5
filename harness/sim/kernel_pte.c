/* Mapping A (design.md §4): an address range reserved PROT_NONE (touching
 * it crashes: I-1) whose PTEs are per-page mapped bits; mapping B is the
 * memfd's bytes. Maps, unmaps, drops (madvise) and PROT_NONE over A, and
 * what A's pages hold. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

/* The memfd whose mapping A holds addr. */
struct sim_memfd *kernel_memfd_of_a(struct sim *s, uint64_t addr, uint64_t *off)
{
	for (uint32_t i = 0; i < s->nmemfds; i++) {
		struct sim_memfd *mf = s->memfds[i];
		uint64_t a = (uintptr_t)mf->a;

		if (mf->a && addr >= a && addr - a < mf->a_len) {
			*off = addr - a;
			return mf;
		}
	}
	return NULL;
}

uint64_t kernel_a_obj(struct sim *s, uint64_t addr)
{
	uint64_t off;
	struct sim_memfd *mf = kernel_memfd_of_a(s, addr, &off);

	return mf ? ((uint64_t)mf->fd << 40) | off : UINT64_MAX;
}

/* PROT_READ is mapping A, PROT_READ|PROT_WRITE mapping B: one of each. */
int kernel_map(void *ctx, int fd, uint64_t len, int prot, void **out)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	void *a;

	sched_point(s, OP_MAP, (uint64_t)fd);
	mf = kernel_memfd_of(s, fd);
	if (!mf)
		return -EBADF;
	if (!len || len > mf->npages * SIM_PAGE)
		return -EINVAL;
	if (prot == (PROT_READ | PROT_WRITE)) {
		if (mf->b_mapped)
			return -EBUSY;
		mf->b_mapped = 1;
		*out = mf->bytes;
		return 0;
	}
	if (prot != PROT_READ)
		return -EINVAL;
	if (mf->a)
		return -EBUSY;
	a = mmap(NULL, pages_of(len) * SIM_PAGE, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED)
		return -ENOMEM;
	mf->a = a;
	mf->a_len = len;
	*out = a;
	return 0;
}

int kernel_unmap(void *ctx, void *addr, uint64_t len)
{
	struct sim *s = ctx;

	sched_point(s, OP_UNMAP, kernel_a_obj(s, (uintptr_t)addr));
	for (uint32_t i = 0; i < s->nmemfds; i++) {
		struct sim_memfd *mf = s->memfds[i];

		if (mf->a && mf->a == addr && len == mf->a_len) {
			if (munmap(mf->a, pages_of(len) * SIM_PAGE) < 0)
				return -errno;
			mf->a = NULL;
			mf->uffd = -1; /* the registration goes with the VMA */
			memset(mf->mapped, 0, mf->npages);
		} else if (mf->b_mapped && mf->bytes == addr) {
			mf->b_mapped = 0;
		} else {
			continue;
		}
		kernel_memfd_release(mf);
		return 0;
	}
	return -EINVAL;
}

int kernel_nohugepage(void *ctx, void *addr, uint64_t len)
{
	struct sim *s = ctx;

	(void)len;
	sched_point(s, OP_NOHUGEPAGE, 0);
	for (uint32_t i = 0; i < s->nmemfds; i++) {
		struct sim_memfd *mf = s->memfds[i];

		if ((mf->a && mf->a == addr) ||
		    (mf->b_mapped && mf->bytes == addr))
			return 0;
	}
	return -ENOMEM;
}

/* The bounce buffer is the pager's own memory: nothing to model. */
int kernel_hugepage(void *ctx, void *addr, uint64_t len)
{
	(void)addr;
	(void)len;
	sched_point(ctx, OP_HUGEPAGE, 0);
	return 0;
}

/* The pages mapped in A that belong to large folios. */
int kernel_folio_census(void *ctx, const void *addr, uint64_t len,
			uint64_t *large)
{
	struct sim *s = ctx;
	uint64_t off;
	struct sim_memfd *mf;

	sched_point(s, OP_FSTAT, kernel_a_obj(s, (uintptr_t)addr));
	mf = kernel_memfd_of_a(s, (uintptr_t)addr, &off);
	if (!mf)
		return -EINVAL;
	*large = 0;
	for (uint64_t p = off / SIM_PAGE;
	     p < mf->npages && p * SIM_PAGE < off + len; p++)
		*large += mf->mapped[p] == PTE_MAPPED && mf->large[p] ?
				  SIM_PAGE :
				  0;
	return 0;
}

int sim_drop(struct sim *s, const void *addr, uint64_t len)
{
	uint64_t at = (uintptr_t)addr, off;
	struct sim_memfd *mf;

	sched_point(s, OP_DROP_A, kernel_a_obj(s, at));
	/* As madvise: the start aligned, the length rounded up, 0 is 0. */
	if (at % SIM_PAGE)
		return -EINVAL;
	if (!len)
		return 0;
	mf = kernel_memfd_of_a(s, at, &off);
	if (!mf || len > pages_of(mf->a_len) * SIM_PAGE - off)
		return -ENOMEM;
	for (uint64_t p = off / SIM_PAGE; p < off / SIM_PAGE + pages_of(len);
	     p++)
		if (mf->mapped[p] == PTE_MAPPED)
			mf->mapped[p] = 0;
	return 0;
}

int kernel_drop_a(void *ctx, void *addr, uint64_t len)
{
	return sim_drop(ctx, addr, len);
}

int sim_page_state(struct sim *s, const void *addr, int *in_cache, int *mapped)
{
	uint64_t off;
	struct sim_memfd *mf = kernel_memfd_of_a(s, (uintptr_t)addr, &off);

	if (!mf || off >= mf->npages * SIM_PAGE)
		return -1;
	*in_cache = mf->present[off / SIM_PAGE];
	*mapped = mf->mapped[off / SIM_PAGE];
	return 0;
}

/* mprotect(PROT_NONE) over part of A: its pages fault for good, which
 * sim_read reports like a SIGBUS (the kernel's is a SIGSEGV). */
int kernel_protect_none(void *ctx, void *addr, uint64_t len)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t off, at = (uintptr_t)addr;

	sched_point(s, OP_PROTECT, kernel_a_obj(s, at));
	mf = kernel_memfd_of_a(s, at, &off);
	if (!mf || (at | len) % SIM_PAGE || len > mf->a_len - off)
		return -EINVAL;
	for (uint64_t p = off / SIM_PAGE; p < (off + len) / SIM_PAGE; p++)
		mf->mapped[p] = PTE_POISON;
	return 0;
}
