/* The kernel seam: every primitive the pager takes from the operating system
 * goes through this table. pager/linux/ is the kernel; the harness supplies a
 * simulated kernel and wraps either one with fault points. Calls return 0 or a
 * non-negative count on success and -errno on failure; none sets errno. */
#ifndef RESID_SEAM_H
#define RESID_SEAM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/userfaultfd.h>

/* UFFDIO_POISON (Linux 6.6) is missing from older uapi headers. */
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)
#define _UFFDIO_POISON (0x08)
struct uffdio_poison {
	struct uffdio_range range;
	__u64 mode;
	__s64 updated;
};
#define UFFDIO_POISON _IOWR(UFFDIO, _UFFDIO_POISON, struct uffdio_poison)
#endif

/* Lock and condition storage. The Linux seam uses the pthread objects; another
 * seam may use `tag` to find its own state. */
typedef struct resid_mutex {
	pthread_mutex_t pm;
	uintptr_t tag;
} resid_mutex;

typedef struct resid_cond {
	pthread_cond_t pc;
	uintptr_t tag;
} resid_cond;

typedef uintptr_t resid_thread;
typedef uintptr_t resid_reader;

/* The job a reader runs: one backing read, as the seam's backing_pread
 * returns it. */
typedef long (*resid_read_fn)(void *arg, void *buf, size_t len, uint64_t off);

struct resid_seam {
	const char *name;
	void *ctx;

	/* userfaultfd */
	int (*uffd_open)(void *ctx, int flags);
	int (*uffd_api)(void *ctx, int fd, struct uffdio_api *api);
	int (*uffd_register)(void *ctx, int fd, struct uffdio_register *reg);
	/* Reads whole messages; -EAGAIN when the queue is empty. */
	long (*uffd_read)(void *ctx, int fd, struct uffd_msg *msgs, size_t n);
	/* -EAGAIN with *mapped = bytes done on partial progress. */
	int (*uffd_continue)(void *ctx, int fd, uint64_t addr, uint64_t len,
			     int64_t *mapped);
	int (*uffd_wake)(void *ctx, int fd, uint64_t addr, uint64_t len);
	/* UFFDIO_POISON: later accesses to the range raise SIGBUS; wakes the
	 * range's faulters. -EEXIST where a page is mapped. */
	int (*uffd_poison)(void *ctx, int fd, uint64_t addr, uint64_t len);
	/* SIGBUS to thread tid of this process (a fault message's ptid),
	 * for kernels without UFFDIO_POISON. */
	int (*sigbus_thread)(void *ctx, uint32_t tid);
	/* mprotect(PROT_NONE) on part of a mapping: later accesses fault
	 * (SIGSEGV) before reaching the uffd. */
	int (*protect_none)(void *ctx, void *addr, uint64_t len);
	/* Waits until fd_a or fd_b is readable or timeout_ms passes; returns a
	 * bit mask (1: fd_a, 2: fd_b), 0 on time-out. */
	int (*wait_readable)(void *ctx, int fd_a, int fd_b, int timeout_ms);
	int (*notify_open)(void *ctx); /* an eventfd for shutdown */
	int (*notify_signal)(void *ctx, int fd);

	/* the memfd and its two mappings */
	int (*memfd_create)(void *ctx, const char *name);
	/* The huge path's file instead: open(dir, O_TMPFILE) on a tmpfs
	 * mounted with huge= (resid_config.huge_dir). */
	int (*tmpfile_create)(void *ctx, const char *dir);
	int (*ftruncate)(void *ctx, int fd, uint64_t len);
	int (*punch)(void *ctx, int fd, uint64_t off, uint64_t len);
	int (*fstat_blocks)(void *ctx, int fd, uint64_t *blocks);
	/* Bytes of the memfd that hold pages, counted page by page
	 * (SEEK_DATA/SEEK_HOLE): exact where st_blocks may lag (design.md §2.6). */
	int (*memfd_present)(void *ctx, int fd, uint64_t *bytes);
	int (*map)(void *ctx, int fd, uint64_t len, int prot, void **out);
	int (*unmap)(void *ctx, void *addr, uint64_t len);
	int (*nohugepage)(void *ctx, void *addr, uint64_t len);
	/* MADV_DONTNEED on part of A: its entries go, the memfd keeps the
	 * pages, the next access faults (minor). Reference tracing only. */
	int (*drop_a)(void *ctx, void *addr, uint64_t len);
	/* pwrite into the memfd: the pages it allocates are written whole,
	 * not zeroed first as the pages a read into B faults in are. */
	long (*memfd_write)(void *ctx, int fd, const void *buf, size_t len,
			    uint64_t off);
	/* MADV_HUGEPAGE: on a fetch worker's bounce buffer (best effort),
	 * and on B on the huge path where shmem_enabled or the tmpfs says
	 * advise. */
	int (*hugepage)(void *ctx, void *addr, uint64_t len);
	/* Of the pages mapped in [addr, addr + len), the bytes in folios
	 * larger than a page (I-9's check); -errno where that cannot be
	 * told (no privilege for /proc/kpageflags). */
	int (*folio_census)(void *ctx, const void *addr, uint64_t len,
			    uint64_t *large);
	int (*close)(void *ctx, int fd);

	/* the backing store */
	int (*backing_open)(void *ctx, const char *path, int direct,
			    uint64_t *size);
	/* fd -1 is the synthetic source: it returns the count a read would
	 * deliver and the pager writes the content itself. */
	long (*backing_pread)(void *ctx, int fd, void *buf, size_t len,
			      uint64_t off);
	int (*backing_dontneed)(void *ctx, int fd, uint64_t off, uint64_t len);
	/* A reader keeps one read in flight while its caller does other
	 * work: read_start hands it fn(arg, buf, len, off), read_wait returns
	 * what that call returned. One read at a time; wait for it before
	 * the next start and before reader_close. The Linux seam runs the
	 * reads on the reader's own thread; the simulated kernel runs each
	 * inside read_wait, where its scheduling points then fall. */
	int (*reader_open)(void *ctx, resid_reader *rd, resid_read_fn fn,
			   void *arg);
	void (*read_start)(void *ctx, resid_reader rd, void *buf, size_t len,
			   uint64_t off);
	long (*read_wait)(void *ctx, resid_reader rd);
	void (*reader_close)(void *ctx, resid_reader rd);

	/* cgroup, /proc and /sys text files */
	long (*read_text)(void *ctx, const char *path, char *buf, size_t cap);

	/* The calling process's id: a region serves only the process that
	 * opened it, not a child forked since (resid.h, "fork"). */
	int (*process_id)(void *ctx);

	/* time */
	uint64_t (*clock_ns)(void *ctx);
	void (*sleep_ns)(void *ctx, uint64_t ns);

	/* threads and synchronization */
	int (*thread_start)(void *ctx, resid_thread *t, void *(*fn)(void *),
			    void *arg, const char *name);
	int (*thread_join)(void *ctx, resid_thread t);
	void (*mutex_init)(void *ctx, resid_mutex *m);
	void (*mutex_destroy)(void *ctx, resid_mutex *m);
	void (*lock)(void *ctx, resid_mutex *m);
	int (*trylock)(void *ctx, resid_mutex *m); /* 0 or -EBUSY */
	void (*unlock)(void *ctx, resid_mutex *m);
	void (*cond_init)(void *ctx, resid_cond *c);
	void (*cond_destroy)(void *ctx, resid_cond *c);
	void (*cond_wait)(void *ctx, resid_cond *c, resid_mutex *m);
	void (*cond_signal)(void *ctx, resid_cond *c);
	void (*cond_broadcast)(void *ctx, resid_cond *c);
	/* A point where another thread may run: annotated shared-memory
	 * accesses. A no-op on the kernel. */
	void (*yield)(void *ctx, const char *what);
};

/* The Linux kernel (pager/linux/seam.c). */
extern const struct resid_seam resid_seam_linux;

#endif
