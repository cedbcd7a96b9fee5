/* Private to the simulated kernel's files (kernel_*.c): the helpers they
 * share, and the seam operations kernel_seam.c puts in its table. */
#ifndef HARNESS_SIM_KERNEL_H
#define HARNESS_SIM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim_internal.h"

/* mapped[]: a PTE in A, or a poison marker or PROT_NONE (later accesses
 * fail: sim_read's SIGBUS). */
#define PTE_MAPPED 1
#define PTE_POISON 2

static inline uint64_t pages_of(uint64_t len)
{
	return (len + SIM_PAGE - 1) / SIM_PAGE;
}

/* kernel_files.c: the file fd names when it is of kind k, else NULL; a
 * new descriptor (or -ENOMEM); the memfd fd names, else NULL. */
struct sim_file *kernel_file_of(struct sim *s, int fd, enum sim_file_kind k);
int kernel_file_new(struct sim *s, enum sim_file_kind k);
struct sim_memfd *kernel_memfd_of(struct sim *s, int fd);

/* kernel_memfd.c: pages entering the page cache, a memfd's pages freed,
 * and freed only when nothing refers to it; the huge folio's size. */
void kernel_make_present(struct sim_memfd *mf, uint64_t off, uint64_t len);
void kernel_memfd_free_pages(struct sim_memfd *mf);
void kernel_memfd_release(struct sim_memfd *mf);
uint64_t kernel_folio(const struct sim *s);

/* kernel_pte.c: the memfd whose mapping A holds addr, *off into it. */
struct sim_memfd *kernel_memfd_of_a(struct sim *s, uint64_t addr,
				    uint64_t *off);

/* kernel_fault.c: wakes the faulters on uffd in [addr, addr + len). */
void kernel_wake_range(struct sim *s, int uffd, uint64_t addr, uint64_t len);

/* The seam's operations (struct resid_seam), by file. */
/* kernel_files.c */
int kernel_close(void *ctx, int fd);
/* kernel_memfd.c */
int kernel_memfd_create(void *ctx, const char *name);
int kernel_tmpfile_create(void *ctx, const char *dir);
int kernel_ftruncate(void *ctx, int fd, uint64_t len);
int kernel_punch(void *ctx, int fd, uint64_t off, uint64_t len);
int kernel_fstat_blocks(void *ctx, int fd, uint64_t *blocks);
int kernel_memfd_present(void *ctx, int fd, uint64_t *bytes);
long kernel_memfd_write(void *ctx, int fd, const void *buf, size_t len,
			uint64_t off);
/* kernel_pte.c */
int kernel_map(void *ctx, int fd, uint64_t len, int prot, void **out);
int kernel_unmap(void *ctx, void *addr, uint64_t len);
int kernel_nohugepage(void *ctx, void *addr, uint64_t len);
/* The pager's MADV_DONTNEED on A: sim_drop. */
int kernel_drop_a(void *ctx, void *addr, uint64_t len);
int kernel_hugepage(void *ctx, void *addr, uint64_t len);
int kernel_folio_census(void *ctx, const void *addr, uint64_t len,
			uint64_t *large);
int kernel_protect_none(void *ctx, void *addr, uint64_t len);
/* kernel_fault.c */
int kernel_sigbus_thread(void *ctx, uint32_t tid);
/* kernel_uffd.c */
int kernel_uffd_open(void *ctx, int flags);
int kernel_uffd_api(void *ctx, int fd, struct uffdio_api *api);
int kernel_uffd_register(void *ctx, int fd, struct uffdio_register *reg);
long kernel_uffd_read(void *ctx, int fd, struct uffd_msg *msgs, size_t n);
int kernel_wait_readable(void *ctx, int fd_a, int fd_b, int timeout_ms);
int kernel_notify_open(void *ctx);
int kernel_notify_signal(void *ctx, int fd);
/* kernel_uffd_ops.c */
int kernel_uffd_continue(void *ctx, int fd, uint64_t addr, uint64_t len,
			 int64_t *mapped);
int kernel_uffd_poison(void *ctx, int fd, uint64_t addr, uint64_t len);
int kernel_uffd_wake(void *ctx, int fd, uint64_t addr, uint64_t len);
/* kernel_backing.c */
int kernel_backing_open(void *ctx, const char *path, int direct,
			uint64_t *size);
long kernel_backing_pread(void *ctx, int fd, void *buf, size_t len,
			  uint64_t off);
int kernel_backing_dontneed(void *ctx, int fd, uint64_t off, uint64_t len);
int kernel_reader_open(void *ctx, resid_reader *rd, resid_read_fn fn,
		       void *arg);
void kernel_read_start(void *ctx, resid_reader rd, void *buf, size_t len,
		       uint64_t off);
long kernel_read_wait(void *ctx, resid_reader rd);
void kernel_reader_close(void *ctx, resid_reader rd);
/* kernel_proc.c */
long kernel_read_text(void *ctx, const char *path, char *buf, size_t cap);

#endif
