/* The userfaultfd and the notifier as descriptors (design.md §2.7): open,
 * API, register, the fault messages a read takes, and poll over them. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

#define OFFERED_FEATURES                                         \
	(UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM | \
	 UFFD_FEATURE_THREAD_ID | UFFD_FEATURE_POISON)
#define API_IOCTLS                                                   \
	((1ull << _UFFDIO_REGISTER) | (1ull << _UFFDIO_UNREGISTER) | \
	 (1ull << _UFFDIO_API))
#define RANGE_IOCTLS                                       \
	((1ull << _UFFDIO_WAKE) | (1ull << _UFFDIO_COPY) | \
	 (1ull << _UFFDIO_ZEROPAGE) | (1ull << _UFFDIO_POISON))
#define REG_MODES (UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR)

static void poll_block(struct sim *s, int fd_a, int fd_b, int timed,
		       uint64_t deadline)
{
	struct sim_thread *me = sched_self(s);

	me->poll_fd[0] = fd_a;
	me->poll_fd[1] = fd_b;
	sched_block(s, W_POLL, 0, timed, deadline);
}

int kernel_uffd_open(void *ctx, int flags)
{
	struct sim *s = ctx;
	int fd;

	sched_point(s, OP_UFFD_OPEN, (uint64_t)flags);
	if (flags & ~(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	fd = kernel_file_new(s, FK_UFFD);
	if (fd >= 0)
		s->files[fd - SIM_FD_BASE].nonblock = !!(flags & O_NONBLOCK);
	return fd;
}

int kernel_uffd_api(void *ctx, int fd, struct uffdio_api *api)
{
	struct sim *s = ctx;
	struct sim_file *f;

	sched_point(s, OP_UFFD_API, (uint64_t)fd);
	f = kernel_file_of(s, fd, FK_UFFD);
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

int kernel_uffd_register(void *ctx, int fd, struct uffdio_register *reg)
{
	struct sim *s = ctx;
	struct sim_file *f;
	struct sim_memfd *mf;
	uint64_t off;

	sched_point(s, OP_UFFD_REGISTER, (uint64_t)fd);
	f = kernel_file_of(s, fd, FK_UFFD);
	if (!f)
		return -EBADF;
	if (!f->api_done || !reg->mode || (reg->mode & ~REG_MODES))
		return -EINVAL;
	/* The sim registers a whole mapping A, nothing else. */
	mf = kernel_memfd_of_a(s, reg->range.start, &off);
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

long kernel_uffd_read(void *ctx, int fd, struct uffd_msg *msgs, size_t n)
{
	struct sim *s = ctx;
	struct sim_file *f;
	size_t got = 0;

	sched_point(s, OP_UFFD_READ, (uint64_t)fd);
	if (!n)
		return -EINVAL;
	for (;;) {
		f = kernel_file_of(s, fd, FK_UFFD);
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

/* poll's view: a negative fd is ignored, a bad one is ready (POLLNVAL). */
static int readable(struct sim *s, int fd)
{
	struct sim_file *f;

	if (fd < 0)
		return 0;
	if ((f = kernel_file_of(s, fd, FK_UFFD)))
		return f->nqueued > 0;
	if ((f = kernel_file_of(s, fd, FK_NOTIFY)))
		return f->count > 0;
	return 1;
}

int kernel_wait_readable(void *ctx, int fd_a, int fd_b, int timeout_ms)
{
	struct sim *s = ctx;
	uint64_t deadline =
		sched_deadline(s, (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) *
					  1000000ull);

	sched_point(s, OP_POLL,
		    ((uint64_t)(uint32_t)fd_a << 32) | (uint32_t)fd_b);
	for (int woke = 0;; woke = 1) {
		int mask = readable(s, fd_a) | readable(s, fd_b) << 1;

		if (mask || !timeout_ms || (woke && s->cur->timed_out))
			return mask;
		poll_block(s, fd_a, fd_b, timeout_ms > 0, deadline);
	}
}

int kernel_notify_open(void *ctx)
{
	struct sim *s = ctx;

	sched_point(s, OP_NOTIFY_OPEN, 0);
	return kernel_file_new(s, FK_NOTIFY);
}

int kernel_notify_signal(void *ctx, int fd)
{
	struct sim *s = ctx;
	struct sim_file *f;

	sched_point(s, OP_NOTIFY_SIGNAL, (uint64_t)fd);
	f = kernel_file_of(s, fd, FK_NOTIFY);
	if (!f)
		return -EBADF;
	f->count++;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait == W_POLL &&
		    (t->poll_fd[0] == fd || t->poll_fd[1] == fd))
			sched_wake(t);
	}
	return 0;
}
