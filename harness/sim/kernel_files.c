/* The simulated kernel's descriptors (design.md §4): a memfd, a uffd or a
 * notifier behind a small number, never reused, so that a stale fd fails
 * with EBADF; close lets a uffd's faulters go and frees a memfd nothing
 * refers to. */
#include <errno.h>

#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

struct sim_file *kernel_file_of(struct sim *s, int fd, enum sim_file_kind k)
{
	struct sim_file *f;

	if (fd < SIM_FD_BASE || (uint32_t)(fd - SIM_FD_BASE) >= s->nfiles)
		return NULL;
	f = &s->files[fd - SIM_FD_BASE];
	return f->kind == k ? f : NULL;
}

/* Numbers are never reused, so a stale fd fails with EBADF. */
int kernel_file_new(struct sim *s, enum sim_file_kind k)
{
	if (sim_grow((void **)&s->files, &s->cap_files, s->nfiles + 1,
		     sizeof(*s->files)))
		return -ENOMEM;
	s->files[s->nfiles].kind = k;
	return SIM_FD_BASE + (int)s->nfiles++;
}

struct sim_memfd *kernel_memfd_of(struct sim *s, int fd)
{
	struct sim_file *f = kernel_file_of(s, fd, FK_MEMFD);

	return f ? f->mf : NULL;
}

int kernel_close(void *ctx, int fd)
{
	struct sim *s = ctx;
	struct sim_file *f;

	sched_point(s, OP_CLOSE, (uint64_t)fd);
	if (fd < SIM_FD_BASE || (uint32_t)(fd - SIM_FD_BASE) >= s->nfiles)
		return -EBADF;
	f = &s->files[fd - SIM_FD_BASE];
	switch (f->kind) {
	case FK_CLOSED:
		return -EBADF;
	case FK_UFFD:
		/* Its faulters are let go; their pages are no longer
		 * watched, so the retry is served by the kernel. */
		for (uint32_t i = 0; i < s->nmemfds; i++)
			if (s->memfds[i]->uffd == fd)
				s->memfds[i]->uffd = -1;
		kernel_wake_range(s, fd, 0, UINT64_MAX);
		break;
	case FK_MEMFD:
		f->mf->open = 0;
		kernel_memfd_release(f->mf);
		break;
	case FK_NOTIFY:
		break;
	}
	f->kind = FK_CLOSED;
	return 0;
}
