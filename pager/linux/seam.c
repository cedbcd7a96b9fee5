/* The Linux side of the seam: thin wrappers that turn errno into -errno. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "reader.h"
#include "seam.h"

static int neg(long rc)
{
	return rc < 0 ? -errno : (int)rc;
}

static int lx_uffd_open(void *ctx, int flags)
{
	(void)ctx;
	int fd = (int)syscall(SYS_userfaultfd, flags);

	if (fd >= 0 || errno != EPERM)
		return neg(fd);
	/* vm.unprivileged_userfaultfd = 0: the device still serves root. */
	int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

	if (dev < 0)
		return -EPERM;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, flags);
	int e = errno;

	close(dev);
	return fd < 0 ? -e : fd;
}

static int lx_uffd_api(void *ctx, int fd, struct uffdio_api *api)
{
	(void)ctx;
	return neg(ioctl(fd, UFFDIO_API, api));
}

static int lx_uffd_register(void *ctx, int fd, struct uffdio_register *reg)
{
	(void)ctx;
	return neg(ioctl(fd, UFFDIO_REGISTER, reg));
}

static long lx_uffd_read(void *ctx, int fd, struct uffd_msg *msgs, size_t n)
{
	(void)ctx;
	ssize_t got = read(fd, msgs, n * sizeof(*msgs));

	if (got < 0)
		return -errno;
	return got / (ssize_t)sizeof(*msgs);
}

static int lx_uffd_continue(void *ctx, int fd, uint64_t addr, uint64_t len,
			    int64_t *mapped)
{
	(void)ctx;
	struct uffdio_continue c = {
		.range = { .start = addr, .len = len },
		.mode = 0,
	};
	int rc = ioctl(fd, UFFDIO_CONTINUE, &c);
	int e = errno;

	*mapped = c.mapped;
	return rc < 0 ? -e : 0;
}

static int lx_uffd_wake(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	(void)ctx;
	struct uffdio_range r = { .start = addr, .len = len };

	return neg(ioctl(fd, UFFDIO_WAKE, &r));
}

static int lx_uffd_poison(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	(void)ctx;
	struct uffdio_poison p = { .range = { .start = addr, .len = len } };

	return neg(ioctl(fd, UFFDIO_POISON, &p));
}

static int lx_sigbus_thread(void *ctx, uint32_t tid)
{
	(void)ctx;
	return neg(syscall(SYS_tgkill, getpid(), (pid_t)tid, SIGBUS));
}

static int lx_protect_none(void *ctx, void *addr, uint64_t len)
{
	(void)ctx;
	return neg(mprotect(addr, len, PROT_NONE));
}

static int lx_wait_readable(void *ctx, int fd_a, int fd_b, int timeout_ms)
{
	(void)ctx;
	struct pollfd p[2] = {
		{ .fd = fd_a, .events = POLLIN },
		{ .fd = fd_b, .events = POLLIN },
	};
	int rc = poll(p, 2, timeout_ms);

	if (rc < 0)
		return -errno;
	return (p[0].revents ? 1 : 0) | (p[1].revents ? 2 : 0);
}

static int lx_notify_open(void *ctx)
{
	(void)ctx;
	return neg(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

static int lx_notify_signal(void *ctx, int fd)
{
	(void)ctx;
	uint64_t one = 1;

	return write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

static int lx_memfd_create(void *ctx, const char *name)
{
	(void)ctx;
	return neg(memfd_create(name, MFD_CLOEXEC));
}

static int lx_tmpfile_create(void *ctx, const char *dir)
{
	(void)ctx;
	return neg(open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
}

static int lx_ftruncate(void *ctx, int fd, uint64_t len)
{
	(void)ctx;
	return neg(ftruncate(fd, (off_t)len));
}

static int lx_punch(void *ctx, int fd, uint64_t off, uint64_t len)
{
	(void)ctx;
	return neg(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     (off_t)off, (off_t)len));
}

static int lx_fstat_blocks(void *ctx, int fd, uint64_t *blocks)
{
	(void)ctx;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*blocks = (uint64_t)st.st_blocks;
	return 0;
}

static int lx_memfd_present(void *ctx, int fd, uint64_t *bytes)
{
	(void)ctx;
	off_t data, hole = 0;

	*bytes = 0;
	for (;;) {
		data = lseek(fd, hole, SEEK_DATA);
		if (data < 0)
			return errno == ENXIO ? 0 : -errno;
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return -errno;
		*bytes += (uint64_t)(hole - data);
	}
}

/* A child forked from the process gets no copy of the mapping: its
 * accesses fault (SIGSEGV) instead of reading or allocating pages of the
 * parent's memfd unseen by the parent's pager. */
static int lx_map(void *ctx, int fd, uint64_t len, int prot, void **out)
{
	(void)ctx;
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	int e;

	if (p == MAP_FAILED)
		return -errno;
	if (madvise(p, len, MADV_DONTFORK) < 0) {
		e = errno;
		munmap(p, len);
		return -e;
	}
	*out = p;
	return 0;
}

static int lx_unmap(void *ctx, void *addr, uint64_t len)
{
	(void)ctx;
	return neg(munmap(addr, len));
}

static int lx_nohugepage(void *ctx, void *addr, uint64_t len)
{
	(void)ctx;
	return neg(madvise(addr, len, MADV_NOHUGEPAGE));
}

static int lx_drop_a(void *ctx, void *addr, uint64_t len)
{
	(void)ctx;
	return neg(madvise(addr, len, MADV_DONTNEED));
}

static long lx_memfd_write(void *ctx, int fd, const void *buf, size_t len,
			   uint64_t off)
{
	(void)ctx;
	ssize_t n = pwrite(fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static int lx_hugepage(void *ctx, void *addr, uint64_t len)
{
	(void)ctx;
	return neg(madvise(addr, len, MADV_HUGEPAGE));
}

#ifdef RESID_HARNESS
/* I-9's check at quiescence (pager/check.c), in harness builds only.
 * pagemap gives each mapped page's frame (root only: 0 otherwise),
 * kpageflags the frame's flags: a page of a large folio is a compound
 * head or tail. */
#define PM_PRESENT (1ull << 63)
#define PM_PFN ((1ull << 55) - 1)
#define KPF_HEAD (1ull << 15)
#define KPF_TAIL (1ull << 16)
#define CENSUS_BATCH 512

static int census(int pm, int kf, uint64_t first, uint64_t pages,
		  uint64_t *large)
{
	uint64_t e[CENSUS_BATCH], flags;

	for (uint64_t p = 0; p < pages; p += CENSUS_BATCH) {
		uint64_t n = pages - p < CENSUS_BATCH ? pages - p :
							CENSUS_BATCH;

		if (pread(pm, e, n * 8, (off_t)((first + p) * 8)) !=
		    (ssize_t)(n * 8))
			return -EIO;
		for (uint64_t i = 0; i < n; i++) {
			if (!(e[i] & PM_PRESENT))
				continue;
			if (!(e[i] & PM_PFN))
				return -EPERM;
			if (pread(kf, &flags, 8,
				  (off_t)((e[i] & PM_PFN) * 8)) != 8)
				return -EIO;
			*large += flags & (KPF_HEAD | KPF_TAIL) ? 4096 : 0;
		}
	}
	return 0;
}

static int lx_folio_census(void *ctx, const void *addr, uint64_t len,
			   uint64_t *large)
{
	(void)ctx;
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	int rc = pm < 0 || kf < 0 ? -errno : 0;

	*large = 0;
	if (rc == 0)
		rc = census(pm, kf, (uintptr_t)addr / 4096, (len + 4095) / 4096,
			    large);
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return rc;
}
#endif

static int lx_close(void *ctx, int fd)
{
	(void)ctx;
	return neg(close(fd));
}

/* O_NONBLOCK: the open of a FIFO would wait for a writer. A file that is
 * not regular is refused: EISDIR, ESPIPE (FIFO, socket), ENODEV (device). */
static int lx_backing_open(void *ctx, const char *path, int direct,
			   uint64_t *size)
{
	(void)ctx;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
				    (direct ? O_DIRECT : 0));
	struct stat st;
	int e, fl;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		e = errno;
	} else if (!S_ISREG(st.st_mode)) {
		e = S_ISDIR(st.st_mode)                          ? EISDIR :
		    S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ? ESPIPE :
								   ENODEV;
	} else if ((fl = fcntl(fd, F_GETFL)) < 0 ||
		   fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		e = errno;
	} else {
		*size = (uint64_t)st.st_size;
		return fd;
	}
	close(fd);
	return -e;
}

/* fd -1 is the synthetic source: the read succeeds in full and the caller
 * writes the content, so fault points still see every backing read. */
static long lx_backing_pread(void *ctx, int fd, void *buf, size_t len,
			     uint64_t off)
{
	(void)ctx;
	if (fd == -1)
		return (long)len;
	ssize_t n = pread(fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static int lx_backing_dontneed(void *ctx, int fd, uint64_t off, uint64_t len)
{
	(void)ctx;
	return -posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}

static long lx_read_text(void *ctx, const char *path, char *buf, size_t cap)
{
	(void)ctx;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -errno;
	while (got + 1 < cap) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return (long)got;
}

static int lx_process_id(void *ctx)
{
	(void)ctx;
	return (int)getpid();
}

static uint64_t lx_clock_ns(void *ctx)
{
	(void)ctx;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lx_sleep_ns(void *ctx, uint64_t ns)
{
	(void)ctx;
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int lx_thread_start(void *ctx, resid_thread *t, void *(*fn)(void *),
			   void *arg, const char *name)
{
	(void)ctx;
	pthread_t th;
	sigset_t all, old;
	int rc;

	/* The application's signals are for its own threads: a handler must
	 * not run on the pager's (a process-directed signal goes to any
	 * thread that does not block it). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_setname_np(th, name); /* best effort: names help wchan dumps */
	*t = (resid_thread)th;
	return 0;
}

static int lx_thread_join(void *ctx, resid_thread t)
{
	(void)ctx;
	return -pthread_join((pthread_t)t, NULL);
}

static void lx_mutex_init(void *ctx, resid_mutex *m)
{
	(void)ctx;
	pthread_mutex_init(&m->pm, NULL);
}

static void lx_mutex_destroy(void *ctx, resid_mutex *m)
{
	(void)ctx;
	pthread_mutex_destroy(&m->pm);
}

static void lx_lock(void *ctx, resid_mutex *m)
{
	(void)ctx;
	pthread_mutex_lock(&m->pm);
}

static int lx_trylock(void *ctx, resid_mutex *m)
{
	(void)ctx;
	return pthread_mutex_trylock(&m->pm) ? -EBUSY : 0;
}

static void lx_unlock(void *ctx, resid_mutex *m)
{
	(void)ctx;
	pthread_mutex_unlock(&m->pm);
}

static void lx_cond_init(void *ctx, resid_cond *c)
{
	(void)ctx;
	pthread_cond_init(&c->pc, NULL);
}

static void lx_cond_destroy(void *ctx, resid_cond *c)
{
	(void)ctx;
	pthread_cond_destroy(&c->pc);
}

static void lx_cond_wait(void *ctx, resid_cond *c, resid_mutex *m)
{
	(void)ctx;
	pthread_cond_wait(&c->pc, &m->pm);
}

static void lx_cond_signal(void *ctx, resid_cond *c)
{
	(void)ctx;
	pthread_cond_signal(&c->pc);
}

static void lx_cond_broadcast(void *ctx, resid_cond *c)
{
	(void)ctx;
	pthread_cond_broadcast(&c->pc);
}

static void lx_yield(void *ctx, const char *what)
{
	(void)ctx;
	(void)what;
}

const struct resid_seam resid_seam_linux = {
	.name = "linux",
	.uffd_open = lx_uffd_open,
	.uffd_api = lx_uffd_api,
	.uffd_register = lx_uffd_register,
	.uffd_read = lx_uffd_read,
	.uffd_continue = lx_uffd_continue,
	.uffd_wake = lx_uffd_wake,
	.uffd_poison = lx_uffd_poison,
	.sigbus_thread = lx_sigbus_thread,
	.protect_none = lx_protect_none,
	.wait_readable = lx_wait_readable,
	.notify_open = lx_notify_open,
	.notify_signal = lx_notify_signal,
	.memfd_create = lx_memfd_create,
	.tmpfile_create = lx_tmpfile_create,
	.ftruncate = lx_ftruncate,
	.punch = lx_punch,
	.fstat_blocks = lx_fstat_blocks,
	.memfd_present = lx_memfd_present,
	.map = lx_map,
	.unmap = lx_unmap,
	.nohugepage = lx_nohugepage,
	.drop_a = lx_drop_a,
	.memfd_write = lx_memfd_write,
	.hugepage = lx_hugepage,
#ifdef RESID_HARNESS
	.folio_census = lx_folio_census,
#endif
	.close = lx_close,
	.backing_open = lx_backing_open,
	.backing_pread = lx_backing_pread,
	.backing_dontneed = lx_backing_dontneed,
	.reader_open = lx_reader_open,
	.read_start = lx_read_start,
	.read_wait = lx_read_wait,
	.reader_close = lx_reader_close,
	.read_text = lx_read_text,
	.process_id = lx_process_id,
	.clock_ns = lx_clock_ns,
	.sleep_ns = lx_sleep_ns,
	.thread_start = lx_thread_start,
	.thread_join = lx_thread_join,
	.mutex_init = lx_mutex_init,
	.mutex_destroy = lx_mutex_destroy,
	.lock = lx_lock,
	.trylock = lx_trylock,
	.unlock = lx_unlock,
	.cond_init = lx_cond_init,
	.cond_destroy = lx_cond_destroy,
	.cond_wait = lx_cond_wait,
	.cond_signal = lx_cond_signal,
	.cond_broadcast = lx_cond_broadcast,
	.yield = lx_yield,
};
