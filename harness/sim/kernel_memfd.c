/* The memfd's page cache (design.md §4): a per-page present bit over a
 * byte buffer, which is mapping B, with large folios where the huge tmpfs
 * is; its sizing, writes, hole punches and the counts st_blocks and the
 * page walk see. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

/* Whether none of the folio block at page fb is in the page cache. */
static int block_empty(const struct sim_memfd *mf, uint64_t fb)
{
	for (uint64_t p = fb; p < fb + mf->folio_pages; p++)
		if (mf->present[p])
			return 0;
	return 1;
}

/* The pages of [off, off + len) enter the memfd's page cache, whole or not
 * (a partial page is a page the kernel allocates too). Where large folios
 * may be, a page whose whole folio block is empty comes in a large folio
 * (the block, all of it); into a block that holds pages it comes alone,
 * as the kernel falls back when a huge folio does not fit. */
void kernel_make_present(struct sim_memfd *mf, uint64_t off, uint64_t len)
{
	for (uint64_t p = off / SIM_PAGE;
	     p < mf->npages && p * SIM_PAGE < off + len; p++) {
		uint64_t fb = p - p % mf->folio_pages;

		if (mf->folio_pages > 1 && !mf->present[p] &&
		    fb + mf->folio_pages <= mf->npages && block_empty(mf, fb)) {
			memset(mf->present + fb, 1, mf->folio_pages);
			memset(mf->large + fb, 1, mf->folio_pages);
			mf->npresent += mf->folio_pages;
			continue;
		}
		mf->npresent += !mf->present[p];
		mf->present[p] = 1;
	}
}

void kernel_memfd_free_pages(struct sim_memfd *mf)
{
	free(mf->bytes);
	free(mf->present);
	free(mf->mapped);
	free(mf->large);
	mf->bytes = mf->present = mf->mapped = mf->large = NULL;
	mf->npages = mf->npresent = mf->size = 0;
}

/* Frees the pages of a memfd nothing refers to any more. */
void kernel_memfd_release(struct sim_memfd *mf)
{
	if (!mf->open && !mf->a && !mf->b_mapped)
		kernel_memfd_free_pages(mf);
}

void kernel_destroy(struct sim *s)
{
	for (uint32_t i = 0; i < s->nmemfds; i++) {
		struct sim_memfd *mf = s->memfds[i];

		if (mf->a && munmap(mf->a, pages_of(mf->a_len) * SIM_PAGE) < 0)
			perror("sim: munmap(A)");
		kernel_memfd_free_pages(mf);
		free(mf);
	}
	free(s->memfds);
	free(s->files);
}

/* A memfd, or a file of the huge tmpfs: folio_pages per folio. */
static int memfd_new(struct sim *s, uint32_t folio_pages)
{
	struct sim_memfd *mf;
	int fd;

	if (sim_grow((void **)&s->memfds, &s->cap_memfds, s->nmemfds + 1,
		     sizeof(*s->memfds)))
		return -ENOMEM;
	mf = calloc(1, sizeof(*mf));
	if (!mf)
		return -ENOMEM;
	fd = kernel_file_new(s, FK_MEMFD);
	if (fd < 0) {
		free(mf);
		return fd;
	}
	mf->fd = fd;
	mf->open = 1;
	mf->uffd = -1;
	mf->folio_pages = folio_pages;
	s->files[fd - SIM_FD_BASE].mf = mf;
	s->memfds[s->nmemfds++] = mf;
	return fd;
}

int kernel_memfd_create(void *ctx, const char *name)
{
	(void)name;
	sched_point(ctx, OP_MEMFD_CREATE, 0);
	return memfd_new(ctx, 1); /* shmem_enabled is never here */
}

uint64_t kernel_folio(const struct sim *s)
{
	return s->cfg.folio_bytes ? s->cfg.folio_bytes : SIM_FOLIO;
}

/* Only the huge tmpfs takes O_TMPFILE here. */
int kernel_tmpfile_create(void *ctx, const char *dir)
{
	sched_point(ctx, OP_MEMFD_CREATE, 1);
	if (strcmp(dir, SIM_HUGE_DIR))
		return -ENOENT;
	return memfd_new(ctx, (uint32_t)(kernel_folio(ctx) / SIM_PAGE));
}

/* The sim sizes a memfd only while nothing maps it. */
int kernel_ftruncate(void *ctx, int fd, uint64_t len)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t np = pages_of(len), keep;
	uint8_t *bytes = NULL, *present, *mapped, *large;

	sched_point(s, OP_FTRUNCATE, (uint64_t)fd);
	mf = kernel_memfd_of(s, fd);
	if (!mf)
		return -EBADF;
	if (mf->a || mf->b_mapped)
		return -EBUSY;
	present = calloc(np + 1, 1);
	mapped = calloc(np + 1, 1);
	large = calloc(np + 1, 1);
	/* From the heap, not a mapping of its own: a campaign makes
	 * thousands, and munmap's TLB flush cost more than the runs. */
	if (np && (bytes = aligned_alloc(SIM_PAGE, np * SIM_PAGE)))
		memset(bytes, 0, np * SIM_PAGE);
	if (!present || !mapped || !large || (np && !bytes)) {
		free(present);
		free(mapped);
		free(large);
		free(bytes);
		return -ENOMEM;
	}
	keep = np < mf->npages ? np : mf->npages;
	if (keep) {
		memcpy(bytes, mf->bytes, keep * SIM_PAGE);
		memcpy(present, mf->present, keep);
		memcpy(large, mf->large, keep);
	}
	kernel_memfd_free_pages(mf);
	mf->bytes = bytes;
	mf->present = present;
	mf->mapped = mapped;
	mf->large = large;
	mf->npages = np;
	mf->size = len;
	for (uint64_t p = 0; p < keep; p++)
		mf->npresent += present[p];
	return 0;
}

/* A punch that covers part of a large folio splits it into pages first
 * (then punched as any); the split unmaps all of the folio's pages from
 * A, as Linux 6.18 leaves a file folio's (its next access faults MINOR).
 * A split that fails leaves the folio whole, and the punch only zeroes
 * its part of it. Returns whether page p is in a folio the punch of
 * [off, end) cannot free. */
static int split_for_punch(struct sim *s, struct sim_memfd *mf, uint64_t p,
			   uint64_t off, uint64_t end)
{
	uint64_t fb = p - p % mf->folio_pages;

	if (!mf->large[p] ||
	    (fb * SIM_PAGE >= off && (fb + mf->folio_pages) * SIM_PAGE <= end))
		return 0;
	if (s->cfg.split_fails)
		return 1;
	memset(mf->large + fb, 0, mf->folio_pages);
	for (uint64_t q = fb; q < fb + mf->folio_pages; q++)
		if (mf->mapped[q] == PTE_MAPPED)
			mf->mapped[q] = 0;
	return 0;
}

/* Whole pages leave the page cache and A; a partial page is zeroed. */
int kernel_punch(void *ctx, int fd, uint64_t off, uint64_t len)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t end;

	sched_point(s, OP_PUNCH, ((uint64_t)fd << 40) | off);
	mf = kernel_memfd_of(s, fd);
	if (!mf)
		return -EBADF;
	if (!len || off + len < off)
		return -EINVAL;
	end = off + len < mf->npages * SIM_PAGE ? off + len :
						  mf->npages * SIM_PAGE;
	for (uint64_t at = off; at < end;) {
		uint64_t p = at / SIM_PAGE, next = (p + 1) * SIM_PAGE;
		uint64_t stop = next < end ? next : end;

		memset(mf->bytes + at, 0, stop - at);
		if (at == p * SIM_PAGE && stop == next &&
		    !split_for_punch(s, mf, p, off, end)) {
			mf->npresent -= mf->present[p];
			mf->present[p] = 0;
			mf->large[p] = 0;
			/* A poison marker outlives the punch, as in Linux. */
			if (mf->mapped[p] == PTE_MAPPED)
				mf->mapped[p] = 0;
		}
		at = stop;
	}
	return 0;
}

/* The pages the memfd holds: both st_blocks and the page walk see them
 * at once here (the kernel's late i_blocks is not modelled). */
static int present_pages(struct sim *s, int fd, uint64_t *pages)
{
	struct sim_memfd *mf;

	sched_point(s, OP_FSTAT, (uint64_t)fd);
	mf = kernel_memfd_of(s, fd);
	if (!mf)
		return -EBADF;
	*pages = mf->npresent;
	return 0;
}

int kernel_fstat_blocks(void *ctx, int fd, uint64_t *blocks)
{
	uint64_t pages;
	int rc = present_pages(ctx, fd, &pages);

	if (rc == 0)
		*blocks = pages * (SIM_PAGE / 512);
	return rc;
}

int kernel_memfd_present(void *ctx, int fd, uint64_t *bytes)
{
	uint64_t pages;
	int rc = present_pages(ctx, fd, &pages);

	if (rc == 0)
		*bytes = pages * SIM_PAGE;
	return rc;
}

long kernel_memfd_write(void *ctx, int fd, const void *buf, size_t len,
			uint64_t off)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;

	sched_point(s, OP_MEMFD_WRITE, ((uint64_t)fd << 40) | off);
	mf = kernel_memfd_of(s, fd);
	if (!mf)
		return -EBADF;
	if (off + len < off || off + len > mf->npages * SIM_PAGE)
		return -EFBIG; /* the pager never grows its memfd */
	memcpy(mf->bytes + off, buf, len);
	kernel_make_present(mf, off, len);
	return (long)len;
}
