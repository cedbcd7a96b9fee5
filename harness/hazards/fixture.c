/* The hazards' region: a memfd (or a huge=always tmpfs file) mapped as A
 * (read-only, userfaultfd) and B (read-write), as docs/core.md describes
 * the pager's, built from system calls alone. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hazards/hazards.h"
#include "workload/huge_leg.h"

int hz_fail(struct hz_out *o, const char *what, int err, const char *where)
{
	o->error = 1;
	snprintf(o->note, sizeof(o->note), "%s: %s (%s)", what,
		 err ? strerror(err) : "unexpected", where);
	return -1;
}

const char *hz_errname(int err)
{
	static const struct {
		int e;
		const char *n;
	} names[] = {
		{ 0, "0" },
		{ EAGAIN, "EAGAIN" },
		{ EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" },
		{ EFAULT, "EFAULT" },
		{ EINVAL, "EINVAL" },
		{ ENOENT, "ENOENT" },
		{ ENOMEM, "ENOMEM" },
		{ EPERM, "EPERM" },
		{ ENOSPC, "ENOSPC" },
		{ EIO, "EIO" },
		{ ESRCH, "ESRCH" },
		{ EOPNOTSUPP, "EOPNOTSUPP" },
		{ EACCES, "EACCES" },
	};
	static char other[16];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].n;
	snprintf(other, sizeof(other), "errno%d", err);
	return other;
}

uint8_t hz_byte(size_t off)
{
	return (uint8_t)(1 + ((off >> 12) * 7 + off) % 251);
}

/* len bytes of fd at offset 0, aligned to HZ_PMD: a reservation, then
 * the mapping over its aligned middle. */
static char *map_aligned(struct hz_region *r, int prot, const char *which)
{
	char *res = mmap(NULL, r->len + HZ_PMD, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (res == MAP_FAILED) {
		hz_fail(r->o, which, errno, "mmap of the reservation");
		return NULL;
	}
	char *at = (char *)(((uintptr_t)res + HZ_PMD - 1) &
			    ~(uintptr_t)(HZ_PMD - 1));
	char *m = mmap(at, r->len, prot, MAP_SHARED | MAP_FIXED, r->fd, 0);

	if (m == MAP_FAILED) {
		hz_fail(r->o, which, errno, "mmap MAP_SHARED|MAP_FIXED");
		return NULL;
	}
	/* the reservation's ends; a failure leaves only address space */
	if ((at > res && munmap(res, at - res) < 0) ||
	    munmap(at + r->len, res + HZ_PMD - at) < 0) {
		hz_fail(r->o, which, errno, "munmap of the reservation's ends");
		return NULL;
	}
	return m;
}

static int open_uffd(struct hz_region *r, uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API };
	int probe = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	/* the first UFFDIO_API on a descriptor says what the kernel has;
	 * a second descriptor asks for what this hazard wants of it */
	if (probe < 0 && errno == EPERM) {
		r->o->na = 1;
		snprintf(r->o->note, sizeof(r->o->note),
			 "userfaultfd: EPERM "
			 "(needs root or vm.unprivileged_userfaultfd=1)");
		return -1;
	}
	if (probe < 0)
		return hz_fail(r->o, "userfaultfd", errno, "open_uffd");
	if (ioctl(probe, UFFDIO_API, &api) < 0) {
		close(probe);
		return hz_fail(r->o, "UFFDIO_API", errno, "features 0");
	}
	close(probe);
	r->features = api.features;
	if ((features & api.features) != features) {
		r->o->na = 1;
		snprintf(r->o->note, sizeof(r->o->note),
			 "the kernel lacks uffd "
			 "features %#llx",
			 (unsigned long long)(features & ~api.features));
		return -1;
	}
	r->uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (r->uffd < 0)
		return hz_fail(r->o, "userfaultfd", errno, "the second one");
	api = (struct uffdio_api){ .api = UFFD_API, .features = features };
	if (ioctl(r->uffd, UFFDIO_API, &api) < 0)
		return hz_fail(r->o, "UFFDIO_API", errno,
			       "the features wanted");
	return 0;
}

static int open_file(struct hz_region *r, int huge)
{
	snprintf(r->o->backing, sizeof(r->o->backing), "%s",
		 huge ? "huge" : "memfd");
	if (!huge) {
		r->fd = memfd_create("residctl-hazard", MFD_CLOEXEC);
		return r->fd < 0 ? hz_fail(r->o, "memfd_create", errno,
					   "the region") :
				   0;
	}
	/* this child's own namespace: the machine's /tmp stays as it is */
	if (huge_leg_enter("/tmp", r->o->note, sizeof(r->o->note)) < 0) {
		r->o->error = 1;
		return -1;
	}
	r->fd = open("/tmp/region", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
		     0600);
	return r->fd < 0 ? hz_fail(r->o, "open /tmp/region", errno,
				   "the huge tmpfs") :
			   0;
}

int hz_open(struct hz_region *r, struct hz_out *o, size_t len, int huge,
	    uint64_t mode, uint64_t features)
{
	struct uffdio_register reg = { .mode = mode };

	memset(r, 0, sizeof(*r));
	r->fd = r->uffd = r->pagemap = -1;
	r->o = o;
	r->len = len;
	if (open_uffd(r, features) < 0 || open_file(r, huge) < 0)
		return -1;
	if (ftruncate(r->fd, len) < 0)
		return hz_fail(o, "ftruncate", errno, "the region's size");
	r->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (r->pagemap < 0)
		return hz_fail(o, "open /proc/self/pagemap", errno, "hz_open");
	if (!(r->a = map_aligned(r, PROT_READ, "A")) ||
	    !(r->b = map_aligned(r, PROT_READ | PROT_WRITE, "B")))
		return -1;
	/* A as the pager has it; EINVAL: no THP, nothing to forbid */
	if (madvise(r->a, len, MADV_NOHUGEPAGE) < 0 && errno != EINVAL)
		return hz_fail(o, "madvise(A, MADV_NOHUGEPAGE)", errno,
			       "hz_open");
	reg.range.start = (uintptr_t)r->a;
	reg.range.len = len;
	if (ioctl(r->uffd, UFFDIO_REGISTER, &reg) < 0)
		return hz_fail(o, "UFFDIO_REGISTER of A", errno, "hz_open");
	return 0;
}

int hz_fill(struct hz_region *r, size_t first, size_t n)
{
	for (size_t off = first * HZ_PAGE; off < (first + n) * HZ_PAGE; off++)
		r->b[off] = (char)hz_byte(off);
	return 0;
}

int hz_write(struct hz_region *r, size_t first, size_t n)
{
	uint8_t page[HZ_PAGE];

	for (size_t p = first; p < first + n; p++) {
		for (size_t i = 0; i < HZ_PAGE; i++)
			page[i] = hz_byte(p * HZ_PAGE + i);
		if (pwrite(r->fd, page, HZ_PAGE, (off_t)(p * HZ_PAGE)) !=
		    (ssize_t)HZ_PAGE)
			return hz_fail(r->o, "pwrite into the file", errno,
				       "hz_write");
	}
	return 0;
}

int hz_continue(struct hz_region *r, size_t first, size_t n, int64_t *mapped)
{
	struct uffdio_continue c = {
		.range = { .start = (uintptr_t)r->a + first * HZ_PAGE,
			   .len = n * HZ_PAGE },
	};
	int rc = ioctl(r->uffd, UFFDIO_CONTINUE, &c);

	*mapped = c.mapped;
	return rc < 0 ? errno : 0;
}

int hz_continue_ok(struct hz_region *r, size_t first, size_t n)
{
	int64_t mapped;
	int err = hz_continue(r, first, n, &mapped);

	return err ? hz_fail(r->o, "UFFDIO_CONTINUE", err, "the setup's") : 0;
}

int hz_punch(struct hz_region *r, size_t first, size_t n)
{
	if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      first * HZ_PAGE, n * HZ_PAGE) < 0)
		return hz_fail(r->o, "fallocate(PUNCH_HOLE)", errno,
			       "hz_punch");
	return 0;
}

int hz_advise(char *map, size_t first, size_t n, int advice)
{
	return madvise(map + first * HZ_PAGE, n * HZ_PAGE, advice) < 0 ? errno :
									 0;
}

int hz_present(struct hz_region *r, size_t first, size_t n)
{
	int count = 0;

	for (size_t i = first; i < first + n; i++) {
		uint64_t e;
		off_t at = ((uintptr_t)r->a / HZ_PAGE + i) * sizeof(e);

		if (pread(r->pagemap, &e, sizeof(e), at) != sizeof(e))
			return hz_fail(r->o, "pread /proc/self/pagemap", errno,
				       "hz_present");
		count += (int)(e >> 63);
	}
	return count;
}

int hz_read_mapped(struct hz_region *r, size_t first, size_t n, int *zero,
		   int *right)
{
	*zero = *right = 0;
	for (size_t i = first; i < first + n; i++) {
		int p = hz_present(r, i, 1), z = 1, ok = 1;

		if (p < 0)
			return -1;
		if (!p) /* a read would fault */
			continue;
		for (size_t off = i * HZ_PAGE; off < (i + 1) * HZ_PAGE; off++) {
			uint8_t v = (uint8_t)r->a[off];

			z &= v == 0;
			ok &= v == hz_byte(off);
		}
		*zero += z;
		*right += ok;
	}
	return 0;
}

int64_t hz_blocks(struct hz_region *r)
{
	struct stat st;

	if (fstat(r->fd, &st) < 0)
		return hz_fail(r->o, "fstat", errno, "hz_blocks");
	return st.st_blocks;
}

static void *toucher(void *arg)
{
	struct hz_touch *t = arg;

	t->value = *(volatile uint8_t *)(t->r->a + t->page * HZ_PAGE);
	atomic_store((_Atomic int *)&t->done, 1);
	return NULL;
}

int hz_touch_start(struct hz_touch *t, struct hz_region *r, size_t page)
{
	pthread_t th;
	int rc;

	t->r = r;
	t->page = page;
	t->done = 0;
	rc = pthread_create(&th, NULL, toucher, t);
	if (rc)
		return hz_fail(r->o, "pthread_create", rc, "the toucher");
	t->thread = (unsigned long)th;
	return pthread_detach(th) ?
		       hz_fail(r->o, "pthread_detach", rc, "the toucher") :
		       0;
}

int hz_touch_wait(struct hz_touch *t, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (atomic_load((_Atomic int *)&t->done))
			return 1;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	return atomic_load((_Atomic int *)&t->done);
}

int hz_fault(struct hz_region *r, int ms, char kind[16], size_t *page)
{
	struct pollfd p = { .fd = r->uffd, .events = POLLIN };
	struct uffd_msg m;
	int rc = poll(&p, 1, ms);

	if (rc < 0)
		return hz_fail(r->o, "poll of the userfaultfd", errno,
			       "hz_fault");
	if (!rc)
		return 0;
	if (read(r->uffd, &m, sizeof(m)) != sizeof(m))
		return errno == EAGAIN ?
			       0 :
			       hz_fail(r->o, "read of the userfaultfd", errno,
				       "hz_fault");
	if (m.event != UFFD_EVENT_PAGEFAULT)
		return hz_fail(r->o, "a uffd event other than a page fault", 0,
			       "hz_fault");
	snprintf(kind, 16, "%s",
		 m.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_MINOR ? "minor" :
		 m.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP    ? "wp" :
								     "missing");
	*page = (m.arg.pagefault.address - (uintptr_t)r->a) / HZ_PAGE;
	return 1;
}

/* Long enough for a loaded emulator to schedule the toucher. */
#define FAULT_MS 30000

int hz_touch_answer(struct hz_region *r, size_t page, const char **what)
{
	struct hz_touch t;
	size_t at;
	int got = hz_present(r, page, 1);

	if (got < 0)
		return -1;
	/* mapped: the touch cannot fault, no need to wait for one */
	if (got) {
		snprintf(r->o->fault, sizeof(r->o->fault), "none");
		uint8_t v = *(volatile uint8_t *)(r->a + page * HZ_PAGE);

		*what = v == hz_byte(page * HZ_PAGE) ? "right" :
			v                            ? "wrong" :
						       "zero";
		return 0;
	}
	if (hz_touch_start(&t, r, page) < 0)
		return -1;
	got = hz_fault(r, FAULT_MS, r->o->fault, &at);
	if (got < 0)
		return -1;
	if (!got) {
		snprintf(r->o->fault, sizeof(r->o->fault), "none");
	} else {
		if (at != page)
			return hz_fail(r->o, "a fault on another page", 0,
				       "hz_touch_answer");
		/* what the pager does: a missing page is fetched first */
		if (!strcmp(r->o->fault, "missing"))
			hz_fill(r, page, 1);
		if (hz_continue_ok(r, page, 1) < 0)
			return -1;
	}
	if (!hz_touch_wait(&t, FAULT_MS))
		return hz_fail(r->o,
			       "the touch did not return after the "
			       "answer",
			       0, "hz_touch_answer");
	*what = t.value == hz_byte(page * HZ_PAGE) ? "right" :
		t.value                            ? "wrong" :
						     "zero";
	return 0;
}
