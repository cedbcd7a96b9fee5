/* The simulated kernel (design.md §4): a memfd's page cache is a per-page
 * present bit over a byte buffer, which is mapping B; mapping A is an
 * address range reserved PROT_NONE (touching it crashes: I-1) whose PTEs
 * are per-page mapped bits. sim_read faults as the kernel does, the uffd
 * queues one message per faulting thread, CONTINUE and WAKE follow the errno
 * rules of design.md §2.7, and read_text serves a cgroup v2 machine. Every call
 * is a step (sched_point) before it acts. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "oracle.h"
#include "sim_internal.h"

#define OFFERED_FEATURES (UFFD_FEATURE_MISSING_SHMEM | \
			  UFFD_FEATURE_MINOR_SHMEM | UFFD_FEATURE_THREAD_ID | \
			  UFFD_FEATURE_POISON)
#define API_IOCTLS ((1ull << _UFFDIO_REGISTER) | \
		    (1ull << _UFFDIO_UNREGISTER) | (1ull << _UFFDIO_API))
#define RANGE_IOCTLS ((1ull << _UFFDIO_WAKE) | (1ull << _UFFDIO_COPY) | \
		      (1ull << _UFFDIO_ZEROPAGE) | (1ull << _UFFDIO_POISON))
/* mapped[]: a PTE in A, or a poison marker or PROT_NONE (later accesses
 * fail: sim_read's SIGBUS). */
#define PTE_MAPPED 1
#define PTE_POISON 2
#define REG_MODES (UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR)
#define CGROUP "/sys/fs/cgroup/sim/"

static uint64_t pages_of(uint64_t len)
{
	return (len + SIM_PAGE - 1) / SIM_PAGE;
}

/* ---- descriptors ---- */

static struct sim_file *file_of(struct sim *s, int fd, enum sim_file_kind k)
{
	struct sim_file *f;

	if (fd < SIM_FD_BASE || (uint32_t)(fd - SIM_FD_BASE) >= s->nfiles)
		return NULL;
	f = &s->files[fd - SIM_FD_BASE];
	return f->kind == k ? f : NULL;
}

/* Numbers are never reused, so a stale fd fails with EBADF. */
static int file_new(struct sim *s, enum sim_file_kind k)
{
	if (sim_grow((void **)&s->files, &s->cap_files, s->nfiles + 1,
		     sizeof(*s->files)))
		return -ENOMEM;
	s->files[s->nfiles].kind = k;
	return SIM_FD_BASE + (int)s->nfiles++;
}

static struct sim_memfd *memfd_of(struct sim *s, int fd)
{
	struct sim_file *f = file_of(s, fd, FK_MEMFD);

	return f ? f->mf : NULL;
}

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
static void make_present(struct sim_memfd *mf, uint64_t off, uint64_t len)
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

/* The memfd whose mapping A holds addr. */
static struct sim_memfd *memfd_of_a(struct sim *s, uint64_t addr,
				    uint64_t *off)
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
	struct sim_memfd *mf = memfd_of_a(s, addr, &off);

	return mf ? ((uint64_t)mf->fd << 40) | off : UINT64_MAX;
}

static void memfd_free_pages(struct sim_memfd *mf)
{
	free(mf->bytes);
	free(mf->present);
	free(mf->mapped);
	free(mf->large);
	mf->bytes = mf->present = mf->mapped = mf->large = NULL;
	mf->npages = mf->npresent = mf->size = 0;
}

/* Frees the pages of a memfd nothing refers to any more. */
static void memfd_release(struct sim_memfd *mf)
{
	if (!mf->open && !mf->a && !mf->b_mapped)
		memfd_free_pages(mf);
}

void kernel_destroy(struct sim *s)
{
	for (uint32_t i = 0; i < s->nmemfds; i++) {
		struct sim_memfd *mf = s->memfds[i];

		if (mf->a && munmap(mf->a, pages_of(mf->a_len) * SIM_PAGE) < 0)
			perror("sim: munmap(A)");
		memfd_free_pages(mf);
		free(mf);
	}
	free(s->memfds);
	free(s->files);
}

/* ---- faults and wakes ---- */

static void queue_fault(struct sim *s, struct sim_thread *t)
{
	struct sim_file *f = file_of(s, t->fault_uffd, FK_UFFD);

	t->queued = 1;
	t->msg_seq = ++s->msg_seq;
	f->nqueued++;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *p = s->threads[i];

		if (p->wait == W_POLL && (p->poll_fd[0] == t->fault_uffd ||
					  p->poll_fd[1] == t->fault_uffd))
			sched_wake(p);
	}
}

/* A woken faulter's unread message leaves the queue, as in the kernel. */
static void wake_faulter(struct sim *s, struct sim_thread *t)
{
	if (t->queued) {
		t->queued = 0;
		file_of(s, t->fault_uffd, FK_UFFD)->nqueued--;
	}
	sched_wake(t);
}

static void wake_range(struct sim *s, int uffd, uint64_t addr, uint64_t len)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait == W_FAULT && t->fault_uffd == uffd &&
		    t->fault_addr >= addr && t->fault_addr - addr < len)
			wake_faulter(s, t);
	}
}

/* The current thread touches a page of A that has no PTE. */
static void fault(struct sim *s, struct sim_memfd *mf, uint64_t page)
{
	struct sim_thread *me = sched_self(s);
	int minor = mf->present[page];
	uint64_t mode = minor ? UFFDIO_REGISTER_MODE_MINOR :
		UFFDIO_REGISTER_MODE_MISSING;

	if (mf->uffd < 0 || !(mf->reg_mode & mode)) {
		/* Not watched: the kernel allocates (zeros) and maps. */
		mf->npresent += !minor;
		mf->present[page] = mf->mapped[page] = 1;
		return;
	}
	me->fault_mf = mf;
	me->fault_off = page * SIM_PAGE;
	me->fault_addr = (uintptr_t)mf->a + me->fault_off;
	me->fault_flags = minor ? UFFD_PAGEFAULT_FLAG_MINOR : 0;
	me->fault_uffd = mf->uffd;
	if (me->loop_page != kernel_a_obj(s, me->fault_addr))
		me->loop_faults = 0;
	me->loop_page = kernel_a_obj(s, me->fault_addr);
	if (++me->loop_faults >= ORACLE_FAULT_LOOP)
		oracle_livelock(s, me);
	queue_fault(s, me);
	sched_block(s, W_FAULT, page, 0, 0);
}

/* A SIGBUS sent to the running thread while it slept in a fault. */
static int me_sigbus(struct sim *s)
{
	struct sim_thread *me = sched_self(s);
	int hit = me->sigbus;

	me->sigbus = 0;
	return hit;
}

int sim_read(struct sim *s, const void *addr, void *dst, size_t len)
{
	uint64_t at = (uintptr_t)addr, end = at + len;

	while (at < end) {
		struct sim_memfd *mf;
		uint64_t off, page, n;

		sched_point(s, OP_READ, kernel_a_obj(s, at));
		mf = memfd_of_a(s, at, &off);
		if (!mf || off >= mf->npages * SIM_PAGE) {
			sim_fail(s, "sim_read at %p: not in a mapping A or "
				 "past its file's end", (void *)(uintptr_t)at);
			return 0;
		}
		page = off / SIM_PAGE;
		if (me_sigbus(s) || mf->mapped[page] == PTE_POISON) {
			sched_progress(s);
			return -1;
		}
		if (!mf->mapped[page]) {
			fault(s, mf, page);
			continue; /* woken: touch the page again */
		}
		n = SIM_PAGE - off % SIM_PAGE;
		n = n < end - at ? n : end - at;
		memcpy((uint8_t *)dst + (at - (uintptr_t)addr),
		       mf->bytes + off, n);
		at += n;
		if (s->cur)
			s->cur->loop_faults = 0;
		sched_progress(s);
	}
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
	mf = memfd_of_a(s, at, &off);
	if (!mf || len > pages_of(mf->a_len) * SIM_PAGE - off)
		return -ENOMEM;
	for (uint64_t p = off / SIM_PAGE; p < off / SIM_PAGE + pages_of(len);
	     p++)
		if (mf->mapped[p] == PTE_MAPPED)
			mf->mapped[p] = 0;
	return 0;
}

int sim_page_state(struct sim *s, const void *addr, int *in_cache,
		   int *mapped)
{
	uint64_t off;
	struct sim_memfd *mf = memfd_of_a(s, (uintptr_t)addr, &off);

	if (!mf || off >= mf->npages * SIM_PAGE)
		return -1;
	*in_cache = mf->present[off / SIM_PAGE];
	*mapped = mf->mapped[off / SIM_PAGE];
	return 0;
}

static void poll_block(struct sim *s, int fd_a, int fd_b, int timed,
		       uint64_t deadline)
{
	struct sim_thread *me = sched_self(s);

	me->poll_fd[0] = fd_a;
	me->poll_fd[1] = fd_b;
	sched_block(s, W_POLL, 0, timed, deadline);
}

/* ---- userfaultfd ---- */

static int k_uffd_open(void *ctx, int flags)
{
	struct sim *s = ctx;
	int fd;

	sched_point(s, OP_UFFD_OPEN, (uint64_t)flags);
	if (flags & ~(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	fd = file_new(s, FK_UFFD);
	if (fd >= 0)
		s->files[fd - SIM_FD_BASE].nonblock = !!(flags & O_NONBLOCK);
	return fd;
}

static int k_uffd_api(void *ctx, int fd, struct uffdio_api *api)
{
	struct sim *s = ctx;
	struct sim_file *f;

	sched_point(s, OP_UFFD_API, (uint64_t)fd);
	f = file_of(s, fd, FK_UFFD);
	if (!f)
		return -EBADF;
	/* Once per descriptor. */
	if (f->api_done || api->api != UFFD_API)
		return -EINVAL;
	f->api_done = 1;
	api->features |= OFFERED_FEATURES;
	api->ioctls = API_IOCTLS;
	return 0;
}

static int k_uffd_register(void *ctx, int fd, struct uffdio_register *reg)
{
	struct sim *s = ctx;
	struct sim_file *f;
	struct sim_memfd *mf;
	uint64_t off;

	sched_point(s, OP_UFFD_REGISTER, (uint64_t)fd);
	f = file_of(s, fd, FK_UFFD);
	if (!f)
		return -EBADF;
	if (!f->api_done || !reg->mode || (reg->mode & ~REG_MODES))
		return -EINVAL;
	/* The sim registers a whole mapping A, nothing else. */
	mf = memfd_of_a(s, reg->range.start, &off);
	if (!mf || off || reg->range.len != mf->a_len)
		return -EINVAL;
	if (mf->uffd >= 0)
		return -EBUSY;
	mf->uffd = fd;
	mf->reg_mode = reg->mode;
	reg->ioctls = RANGE_IOCTLS;
	if (reg->mode & UFFDIO_REGISTER_MODE_MINOR)
		reg->ioctls |= 1ull << _UFFDIO_CONTINUE;
	return 0;
}

/* The oldest unread message on the uffd. */
static struct sim_thread *oldest_message(struct sim *s, int fd)
{
	struct sim_thread *first = NULL;

	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->queued && t->fault_uffd == fd &&
		    (!first || t->msg_seq < first->msg_seq))
			first = t;
	}
	return first;
}

static long k_uffd_read(void *ctx, int fd, struct uffd_msg *msgs, size_t n)
{
	struct sim *s = ctx;
	struct sim_file *f;
	size_t got = 0;

	sched_point(s, OP_UFFD_READ, (uint64_t)fd);
	if (!n)
		return -EINVAL;
	for (;;) {
		f = file_of(s, fd, FK_UFFD);
		if (!f)
			return -EBADF;
		if (f->nqueued)
			break;
		if (f->nonblock)
			return -EAGAIN;
		poll_block(s, fd, -1, 0, 0);
	}
	while (got < n && f->nqueued) {
		struct sim_thread *t = oldest_message(s, fd);

		memset(&msgs[got], 0, sizeof(msgs[got]));
		msgs[got].event = UFFD_EVENT_PAGEFAULT;
		msgs[got].arg.pagefault.flags = t->fault_flags;
		msgs[got].arg.pagefault.address = t->fault_addr;
		msgs[got].arg.pagefault.feat.ptid = (uint32_t)t->id + 1;
		t->queued = 0;
		f->nqueued--;
		got++;
	}
	return (long)got;
}

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
	mf = memfd_of_a(s, addr, off);
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
static int k_uffd_continue(void *ctx, int fd, uint64_t addr, uint64_t len,
			   int64_t *mapped)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t off, done = 0;
	int err;

	sched_point(s, OP_CONTINUE, kernel_a_obj(s, addr));
	if (!file_of(s, fd, FK_UFFD))
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
		wake_range(s, fd, addr, done);
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
static int k_uffd_poison(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t off, done = 0;
	int err;

	sched_point(s, OP_POISON, kernel_a_obj(s, addr));
	if (!file_of(s, fd, FK_UFFD))
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
		wake_range(s, fd, addr, done);
	return done == len ? 0 : done ? -EAGAIN : err;
}

/* The simulated kernel runs one process, which never forks. */
static int k_process_id(void *ctx)
{
	(void)ctx;
	return 1;
}

/* tgkill(SIGBUS) to the thread whose fault message carried ptid tid (its
 * id + 1). */
static int k_sigbus_thread(void *ctx, uint32_t tid)
{
	struct sim *s = ctx;
	int hit = 0;

	sched_point(s, OP_SIGBUS, tid);
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if ((uint32_t)t->id + 1 != tid || t->wait == W_EXITED)
			continue;
		t->sigbus = 1;
		hit = 1;
		if (t->wait == W_FAULT)
			wake_faulter(s, t);
	}
	return hit ? 0 : -ESRCH;
}

/* mprotect(PROT_NONE) over part of A: its pages fault for good, which
 * sim_read reports like a SIGBUS (the kernel's is a SIGSEGV). */
static int k_protect_none(void *ctx, void *addr, uint64_t len)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t off, at = (uintptr_t)addr;

	sched_point(s, OP_PROTECT, kernel_a_obj(s, at));
	mf = memfd_of_a(s, at, &off);
	if (!mf || (at | len) % SIM_PAGE || len > mf->a_len - off)
		return -EINVAL;
	for (uint64_t p = off / SIM_PAGE; p < (off + len) / SIM_PAGE; p++)
		mf->mapped[p] = PTE_POISON;
	return 0;
}

static int k_uffd_wake(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	struct sim *s = ctx;

	sched_point(s, OP_WAKE, kernel_a_obj(s, addr));
	if (!file_of(s, fd, FK_UFFD))
		return -EBADF;
	if ((addr | len) % SIM_PAGE || !len || addr + len < addr)
		return -EINVAL;
	wake_range(s, fd, addr, len);
	return 0;
}

/* poll's view: a negative fd is ignored, a bad one is ready (POLLNVAL). */
static int readable(struct sim *s, int fd)
{
	struct sim_file *f;

	if (fd < 0)
		return 0;
	if ((f = file_of(s, fd, FK_UFFD)))
		return f->nqueued > 0;
	if ((f = file_of(s, fd, FK_NOTIFY)))
		return f->count > 0;
	return 1;
}

static int k_wait_readable(void *ctx, int fd_a, int fd_b, int timeout_ms)
{
	struct sim *s = ctx;
	uint64_t deadline = sched_deadline(s, (uint64_t)(timeout_ms < 0 ? 0 :
							 timeout_ms) * 1000000ull);

	sched_point(s, OP_POLL, ((uint64_t)(uint32_t)fd_a << 32) |
		    (uint32_t)fd_b);
	for (int woke = 0;; woke = 1) {
		int mask = readable(s, fd_a) | readable(s, fd_b) << 1;

		if (mask || !timeout_ms || (woke && s->cur->timed_out))
			return mask;
		poll_block(s, fd_a, fd_b, timeout_ms > 0, deadline);
	}
}

static int k_notify_open(void *ctx)
{
	struct sim *s = ctx;

	sched_point(s, OP_NOTIFY_OPEN, 0);
	return file_new(s, FK_NOTIFY);
}

static int k_notify_signal(void *ctx, int fd)
{
	struct sim *s = ctx;
	struct sim_file *f;

	sched_point(s, OP_NOTIFY_SIGNAL, (uint64_t)fd);
	f = file_of(s, fd, FK_NOTIFY);
	if (!f)
		return -EBADF;
	f->count++;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait == W_POLL && (t->poll_fd[0] == fd ||
					  t->poll_fd[1] == fd))
			sched_wake(t);
	}
	return 0;
}

/* ---- the memfd and its mappings ---- */

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
	fd = file_new(s, FK_MEMFD);
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

static int k_memfd_create(void *ctx, const char *name)
{
	(void)name;
	sched_point(ctx, OP_MEMFD_CREATE, 0);
	return memfd_new(ctx, 1); /* shmem_enabled is never here */
}

static uint64_t sim_folio(const struct sim *s)
{
	return s->cfg.folio_bytes ? s->cfg.folio_bytes : SIM_FOLIO;
}

/* Only the huge tmpfs takes O_TMPFILE here. */
static int k_tmpfile_create(void *ctx, const char *dir)
{
	sched_point(ctx, OP_MEMFD_CREATE, 1);
	if (strcmp(dir, SIM_HUGE_DIR))
		return -ENOENT;
	return memfd_new(ctx, (uint32_t)(sim_folio(ctx) / SIM_PAGE));
}

/* The sim sizes a memfd only while nothing maps it. */
static int k_ftruncate(void *ctx, int fd, uint64_t len)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t np = pages_of(len), keep;
	uint8_t *bytes = NULL, *present, *mapped, *large;

	sched_point(s, OP_FTRUNCATE, (uint64_t)fd);
	mf = memfd_of(s, fd);
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
	memfd_free_pages(mf);
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

	if (!mf->large[p] || (fb * SIM_PAGE >= off &&
			      (fb + mf->folio_pages) * SIM_PAGE <= end))
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
static int k_punch(void *ctx, int fd, uint64_t off, uint64_t len)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	uint64_t end;

	sched_point(s, OP_PUNCH, ((uint64_t)fd << 40) | off);
	mf = memfd_of(s, fd);
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
	mf = memfd_of(s, fd);
	if (!mf)
		return -EBADF;
	*pages = mf->npresent;
	return 0;
}

static int k_fstat_blocks(void *ctx, int fd, uint64_t *blocks)
{
	uint64_t pages;
	int rc = present_pages(ctx, fd, &pages);

	if (rc == 0)
		*blocks = pages * (SIM_PAGE / 512);
	return rc;
}

static int k_memfd_present(void *ctx, int fd, uint64_t *bytes)
{
	uint64_t pages;
	int rc = present_pages(ctx, fd, &pages);

	if (rc == 0)
		*bytes = pages * SIM_PAGE;
	return rc;
}

/* PROT_READ is mapping A, PROT_READ|PROT_WRITE mapping B: one of each. */
static int k_map(void *ctx, int fd, uint64_t len, int prot, void **out)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;
	void *a;

	sched_point(s, OP_MAP, (uint64_t)fd);
	mf = memfd_of(s, fd);
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

static int k_unmap(void *ctx, void *addr, uint64_t len)
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
		memfd_release(mf);
		return 0;
	}
	return -EINVAL;
}

static int k_nohugepage(void *ctx, void *addr, uint64_t len)
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

static long k_memfd_write(void *ctx, int fd, const void *buf, size_t len,
			  uint64_t off)
{
	struct sim *s = ctx;
	struct sim_memfd *mf;

	sched_point(s, OP_MEMFD_WRITE, ((uint64_t)fd << 40) | off);
	mf = memfd_of(s, fd);
	if (!mf)
		return -EBADF;
	if (off + len < off || off + len > mf->npages * SIM_PAGE)
		return -EFBIG; /* the pager never grows its memfd */
	memcpy(mf->bytes + off, buf, len);
	make_present(mf, off, len);
	return (long)len;
}

/* The pages mapped in A that belong to large folios. */
static int k_folio_census(void *ctx, const void *addr, uint64_t len,
			  uint64_t *large)
{
	struct sim *s = ctx;
	uint64_t off;
	struct sim_memfd *mf;

	sched_point(s, OP_FSTAT, kernel_a_obj(s, (uintptr_t)addr));
	mf = memfd_of_a(s, (uintptr_t)addr, &off);
	if (!mf)
		return -EINVAL;
	*large = 0;
	for (uint64_t p = off / SIM_PAGE; p < mf->npages &&
	     p * SIM_PAGE < off + len; p++)
		*large += mf->mapped[p] == PTE_MAPPED && mf->large[p] ?
			SIM_PAGE : 0;
	return 0;
}

/* The bounce buffer is the pager's own memory: nothing to model. */
static int k_hugepage(void *ctx, void *addr, uint64_t len)
{
	(void)addr;
	(void)len;
	sched_point(ctx, OP_HUGEPAGE, 0);
	return 0;
}

static int k_close(void *ctx, int fd)
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
		wake_range(s, fd, 0, UINT64_MAX);
		break;
	case FK_MEMFD:
		f->mf->open = 0;
		memfd_release(f->mf);
		break;
	case FK_NOTIFY:
		break;
	}
	f->kind = FK_CLOSED;
	return 0;
}

/* ---- the backing store ---- */

static int k_backing_open(void *ctx, const char *path, int direct,
			  uint64_t *size)
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
static long k_backing_pread(void *ctx, int fd, void *buf, size_t len,
			    uint64_t off)
{
	struct sim *s = ctx;
	uint64_t at = (uintptr_t)buf, n = len;

	sched_point(s, OP_PREAD, off);
	if (fd != -1)
		return -EBADF;
	if (kernel_a_obj(s, at) != UINT64_MAX) {
		sim_fail(s, "I-1: a backing read into mapping A at offset "
			 "%#llx", (unsigned long long)(kernel_a_obj(s, at) &
						       ((1ull << 40) - 1)));
		return -EFAULT;
	}
	for (uint32_t i = 0; n && i < s->nmemfds; i++) {
		struct sim_memfd *mf = s->memfds[i];
		uint64_t b = (uintptr_t)mf->bytes;

		if (!mf->b_mapped || at < b || at - b >= mf->npages * SIM_PAGE)
			continue;
		make_present(mf, at - b, n);
	}
	return (long)n;
}

static int k_backing_dontneed(void *ctx, int fd, uint64_t off, uint64_t len)
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

static int k_reader_open(void *ctx, resid_reader *rd, resid_read_fn fn,
			 void *arg)
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

static void k_read_start(void *ctx, resid_reader rd, void *buf, size_t len,
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

static long k_read_wait(void *ctx, resid_reader rd)
{
	struct sim_reader *sr = (struct sim_reader *)rd;

	if (!sr->queued) {
		sim_fail(ctx, "a reader waited for a read never started");
		return -EINVAL;
	}
	sr->queued = 0;
	return sr->fn(sr->arg, sr->buf, sr->len, sr->off);
}

static void k_reader_close(void *ctx, resid_reader rd)
{
	struct sim_reader *sr = (struct sim_reader *)rd;

	if (sr->queued)
		sim_fail(ctx, "a reader closed with a read in flight");
	free(sr);
}

/* ---- /proc, /sys and the cgroup ---- */

static const struct {
	const char *path, *text;
} files[] = {
	{ "/proc/self/cgroup", "0::/sim\n" },
	{ "/proc/self/mountinfo",
	  "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	  "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:2 - "
	  "proc proc rw\n"
	  "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime "
	  "shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	  "40 22 0:30 / " SIM_HUGE_DIR " rw,relatime shared:9 - tmpfs tmpfs "
	  "rw,size=65536k,huge=always\n" },
	{ CGROUP "cgroup.controllers", "cpu io memory pids\n" },
	{ CGROUP "memory.max", "1073741824\n" },
	{ CGROUP "memory.swap.max", "0\n" },
	{ "/proc/meminfo", "MemTotal:        8388608 kB\n"
	  "MemFree:         4194304 kB\nSwapTotal:             0 kB\n"
	  "SwapFree:              0 kB\n" },
	{ "/proc/sys/kernel/osrelease", "6.18.0-sim\n" },
	{ "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
	  "always within_size advise [never] deny force\n" },
	{ "/sys/devices/system/cpu/online", "0-1\n" },
};

/* memory.stat's shmem catches up only when it is more than the lag
 * behind (or ahead), like the kernel's per-CPU batching. */
static uint64_t shmem_now(const struct sim *s)
{
	uint64_t now = 0;

	for (uint32_t i = 0; i < s->nmemfds; i++)
		now += s->memfds[i]->npresent * SIM_PAGE;
	return now;
}

static uint64_t shmem_reported(struct sim *s)
{
	uint64_t now = shmem_now(s), d;

	d = now > s->stat_reported ? now - s->stat_reported :
		s->stat_reported - now;
	if (d > s->cfg.stat_lag_bytes)
		s->stat_reported = now;
	return s->stat_reported;
}

static long put_text(char *buf, size_t cap, const char *text)
{
	size_t n = strlen(text);

	n = n < cap - 1 ? n : cap - 1;
	memcpy(buf, text, n);
	buf[n] = '\0';
	return (long)n;
}

static long k_read_text(void *ctx, const char *path, char *buf, size_t cap)
{
	struct sim *s = ctx;
	char stat[256];
	uint64_t shmem;

	sched_point(s, OP_READ_TEXT, sim_str_hash(path));
	if (!cap)
		return -EINVAL;
	if (!strcmp(path, CGROUP "memory.current")) {
		/* The headroom check's usage: the memfds' pages alone. */
		snprintf(stat, sizeof(stat), "%llu\n",
			 (unsigned long long)shmem_now(s));
		return put_text(buf, cap, stat);
	}
	if (!strcmp(path, "/sys/kernel/mm/transparent_hugepage/"
		    "hpage_pmd_size")) {
		snprintf(stat, sizeof(stat), "%llu\n",
			 (unsigned long long)sim_folio(s));
		return put_text(buf, cap, stat);
	}
	if (!strcmp(path, CGROUP "memory.stat")) {
		shmem = shmem_reported(s);
		snprintf(stat, sizeof(stat), "anon 0\nfile %llu\nkernel 0\n"
			 "shmem %llu\nfile_mapped 0\nshmem_thp 0\n",
			 (unsigned long long)shmem, (unsigned long long)shmem);
		return put_text(buf, cap, stat);
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strcmp(path, files[i].path))
			return put_text(buf, cap, files[i].text);
	return -ENOENT; /* /proc/self/smaps too: the THP check is skipped */
}

const struct resid_seam sim_seam_ops = {
	.name = "sim",
	.uffd_open = k_uffd_open,
	.uffd_api = k_uffd_api,
	.uffd_register = k_uffd_register,
	.uffd_read = k_uffd_read,
	.uffd_continue = k_uffd_continue,
	.uffd_wake = k_uffd_wake,
	.uffd_poison = k_uffd_poison,
	.sigbus_thread = k_sigbus_thread,
	.protect_none = k_protect_none,
	.wait_readable = k_wait_readable,
	.notify_open = k_notify_open,
	.notify_signal = k_notify_signal,
	.memfd_create = k_memfd_create,
	.tmpfile_create = k_tmpfile_create,
	.ftruncate = k_ftruncate,
	.punch = k_punch,
	.fstat_blocks = k_fstat_blocks,
	.memfd_present = k_memfd_present,
	.map = k_map,
	.unmap = k_unmap,
	.nohugepage = k_nohugepage,
	.memfd_write = k_memfd_write,
	.hugepage = k_hugepage,
	.folio_census = k_folio_census,
	.close = k_close,
	.backing_open = k_backing_open,
	.backing_pread = k_backing_pread,
	.backing_dontneed = k_backing_dontneed,
	.reader_open = k_reader_open,
	.read_start = k_read_start,
	.read_wait = k_read_wait,
	.reader_close = k_reader_close,
	.read_text = k_read_text,
	.process_id = k_process_id,
	.clock_ns = sched_clock_ns,
	.sleep_ns = sched_sleep_ns,
	.thread_start = sched_thread_start,
	.thread_join = sched_thread_join,
	.mutex_init = sched_mutex_init,
	.mutex_destroy = sched_mutex_destroy,
	.lock = sched_lock,
	.trylock = sched_trylock,
	.unlock = sched_unlock,
	.cond_init = sched_cond_init,
	.cond_destroy = sched_cond_destroy,
	.cond_wait = sched_cond_wait,
	.cond_signal = sched_cond_signal,
	.cond_broadcast = sched_cond_broadcast,
	.yield = sched_yield_op,
};
