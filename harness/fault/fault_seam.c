/* The fault seam (design.md §5.2): an instance that wraps a seam, the kernel or
 * the simulated kernel, and consults its plan on every call that has a
 * point. Its state is its own: counts, fired calls and the decision
 * stream (a hash of seed, point and call number, thread-safe; or the
 * simulation's stream). libfiu names the points, so in a run that injects
 * faults its own control (fiu_enable) can fail them too. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FIU_ENABLE 1
#include <fiu.h>

#include "base/clock.h"
#include "base/rng.h"
#include "fault/fault.h"
#include "resid.h"

/* Relaxed: a count must not order the pager's threads, or ThreadSanitizer
 * would miss the races the storms run it for. */
struct point {
	_Atomic uint64_t calls;       /* calls the point belongs to */
	_Atomic uint64_t fired;       /* faults injected */
	uint64_t at[FAULT_MAX_CALLS]; /* the first calls that fired */
};

struct fault_seam {
	struct resid_seam ops; /* ctx is this instance */
	struct resid_seam in;  /* the wrapped seam */
	struct fault_plan plan;
	uint64_t seed;
	fault_draw_fn draw;
	void *draw_arg;
	struct point pt[FP_COUNT];
};

/* libfiu's table is the process's: initialised once, for every instance. */
static pthread_once_t fiu_once = PTHREAD_ONCE_INIT;

static void fiu_start(void)
{
	if (fiu_init(0) < 0)
		fprintf(stderr, "residctl: libfiu failed to initialise; faults "
				"come only from the harness's own plans\n");
}

/* Uniform in [0, 2^64) per (seed, point, n). The seed is mixed first so
 * nearby seeds give unrelated streams. */
static uint64_t decision_hash(uint64_t s, int point, uint64_t n)
{
	s = rng_next(&s) ^ ((uint64_t)point << 56) ^ n;
	return rng_next(&s);
}

/* Whether call n of point p fires by the plan. */
static int planned(struct fault_seam *f, int p, uint64_t n)
{
	const struct fault_rule *r = &f->plan.rule[p];
	uint64_t d;

	if (!(f->plan.on & 1u << p))
		return 0;
	if (!r->prob[0]) {
		for (uint16_t i = 0; i < r->ncalls && r->calls[i] <= n; i++)
			if (r->calls[i] == n)
				return 1;
		return 0;
	}
	d = f->draw ? f->draw(f->draw_arg) : decision_hash(f->seed, p, n);
	return d >> 11 < r->threshold;
}

/* Asks every point first..last of an op, whatever the others decide, so a
 * point's call numbers do not depend on which other points are on.
 * Returns a bit per point that would fire, with each one's call number.
 * A run with an empty plan only passes calls on: no count, no libfiu
 * lookup (a lock and a hash), nothing that would change the timing the
 * storms' races depend on. */
static uint32_t ask(struct fault_seam *f, int first, int last, uint64_t *n)
{
	uint32_t fire = 0;

	if (!f->plan.on)
		return 0;
	for (int p = first; p <= last; p++) {
		n[p - first] = atomic_fetch_add_explicit(&f->pt[p].calls, 1,
							 memory_order_relaxed) +
			       1;
		if (planned(f, p, n[p - first]) || fiu_fail(fault_name(p)))
			fire |= 1u << p;
	}
	return fire;
}

/* Whether point p fires; counted only here, where its fault is injected,
 * so a fault masked by another of the same call is not counted. */
static int inject(struct fault_seam *f, uint32_t fire, int p, uint64_t n)
{
	uint64_t k;

	if (!(fire & 1u << p))
		return 0;
	k = atomic_fetch_add_explicit(&f->pt[p].fired, 1, memory_order_relaxed);
	if (k < FAULT_MAX_CALLS)
		f->pt[p].at[k] = n;
	return 1;
}

/* One point's op: asks it and says whether it fires. */
static int one(struct fault_seam *f, int p)
{
	uint64_t n;
	uint32_t fire = ask(f, p, p, &n);

	return inject(f, fire, p, n);
}

/* A short read as the kernel gives one: an aligned read (O_DIRECT) of two
 * pages or more comes back short by whole pages; an unaligned one (the
 * buffered read of a file's unaligned tail, or a read resumed after such
 * a short read) by any number of bytes, here half. */
static void short_read(struct fault_seam *f, uint32_t fire, uint64_t n,
		       uint64_t off, size_t *len)
{
	int aligned = !(off % RESID_PAGE) && !(*len % RESID_PAGE);

	if (*len < (aligned ? 2 * RESID_PAGE : 2) ||
	    !inject(f, fire, FP_READ_SHORT, n))
		return;
	*len = aligned ? *len / 2 / RESID_PAGE * RESID_PAGE : *len / 2;
}

static long fw_backing_pread(void *ctx, int fd, void *buf, size_t len,
			     uint64_t off)
{
	struct fault_seam *f = ctx;
	uint64_t n[4], ms;
	uint32_t fire = ask(f, FP_READ_EIO, FP_READ_DELAY, n);

	if (inject(f, fire, FP_READ_EIO, n[0]))
		return -EIO;
	if (inject(f, fire, FP_READ_EINTR, n[1]))
		return -EINTR;
	if (inject(f, fire, FP_READ_DELAY, n[3])) {
		/* 1..3 ms, chosen by seed and offset so a seed replays. */
		ms = 1 + decision_hash(f->seed, FP_READ_DELAY, off) % 3;
		f->in.sleep_ns(f->in.ctx, ms * NS_PER_MS);
	}
	short_read(f, fire, n[2], off, &len);
	return f->in.backing_pread(f->in.ctx, fd, buf, len, off);
}

/* A write into the memfd fails as a memory cgroup's charge does (ENOMEM),
 * or stops halfway as one a signal interrupts. */
static long fw_memfd_write(void *ctx, int fd, const void *buf, size_t len,
			   uint64_t off)
{
	struct fault_seam *f = ctx;
	uint64_t n[2];
	uint32_t fire = ask(f, FP_WRITE_ENOMEM, FP_WRITE_SHORT, n);

	if (inject(f, fire, FP_WRITE_ENOMEM, n[0]))
		return -ENOMEM;
	if (len >= 2 && inject(f, fire, FP_WRITE_SHORT, n[1]))
		len /= 2;
	return f->in.memfd_write(f->in.ctx, fd, buf, len, off);
}

static int fw_uffd_continue(void *ctx, int fd, uint64_t addr, uint64_t len,
			    int64_t *mapped)
{
	struct fault_seam *f = ctx;
	uint64_t n[3], half = len / 2 / RESID_PAGE * RESID_PAGE;
	uint32_t fire = ask(f, FP_CONT_EAGAIN, FP_CONT_EFAULT, n);
	int rc;

	if (inject(f, fire, FP_CONT_EFAULT, n[2])) {
		*mapped = -EFAULT;
		return -EFAULT;
	}
	if (inject(f, fire, FP_CONT_EEXIST, n[1])) {
		*mapped = -EEXIST;
		return -EEXIST;
	}
	/* Partial progress needs at least one page left undone. */
	if (len < 2 * RESID_PAGE || !inject(f, fire, FP_CONT_EAGAIN, n[0]))
		return f->in.uffd_continue(f->in.ctx, fd, addr, len, mapped);
	rc = f->in.uffd_continue(f->in.ctx, fd, addr, half, mapped);
	if (rc)
		return rc;
	*mapped = (int64_t)half;
	return -EAGAIN;
}

static int fw_uffd_wake(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	struct fault_seam *f = ctx;

	if (one(f, FP_WAKE))
		return -EIO;
	return f->in.uffd_wake(f->in.ctx, fd, addr, len);
}

static int fw_punch(void *ctx, int fd, uint64_t off, uint64_t len)
{
	struct fault_seam *f = ctx;

	if (one(f, FP_PUNCH))
		return -EIO;
	return f->in.punch(f->in.ctx, fd, off, len);
}

/* Only reference tracing drops A's entries. */
static int fw_drop_a(void *ctx, void *addr, uint64_t len)
{
	struct fault_seam *f = ctx;

	if (one(f, FP_DROP_A))
		return -EAGAIN;
	return f->in.drop_a(f->in.ctx, addr, len);
}

static long fw_uffd_read(void *ctx, int fd, struct uffd_msg *msgs, size_t n)
{
	struct fault_seam *f = ctx;

	if (one(f, FP_UFFD_EINTR))
		return -EINTR;
	return f->in.uffd_read(f->in.ctx, fd, msgs, n);
}

static int fw_wait_readable(void *ctx, int fd_a, int fd_b, int timeout_ms)
{
	struct fault_seam *f = ctx;

	if (one(f, FP_POLL))
		return -ENOMEM;
	return f->in.wait_readable(f->in.ctx, fd_a, fd_b, timeout_ms);
}

/* Only cgroup reads belong to the point, not /proc/meminfo and the like. */
static long fw_read_text(void *ctx, const char *path, char *buf, size_t cap)
{
	struct fault_seam *f = ctx;

	if ((strstr(path, "cgroup") || strstr(path, "memory.stat")) &&
	    one(f, FP_CGROUP_READ))
		return -EIO;
	return f->in.read_text(f->in.ctx, path, buf, cap);
}

/* Yields are everywhere; only a worker about to run its job can stall. */
static void fw_yield(void *ctx, const char *what)
{
	struct fault_seam *f = ctx;

	if (what && !strcmp(what, "worker-job") && one(f, FP_SLOW_WORKER))
		f->in.sleep_ns(f->in.ctx, 2 * NS_PER_MS);
	f->in.yield(f->in.ctx, what);
}

static void fw_cond_wait(void *ctx, resid_cond *c, resid_mutex *m)
{
	struct fault_seam *f = ctx;

	if (!one(f, FP_SPURIOUS_WAKEUP)) {
		f->in.cond_wait(f->in.ctx, c, m);
		return;
	}
	/* What a spurious wakeup leaves the waiter: m given up and taken
	 * again (others may run between), no signal. */
	f->in.unlock(f->in.ctx, m);
	f->in.lock(f->in.ctx, m);
}

/* Every other op goes straight to the wrapped seam, with its ctx. */
#define PASS(ret, op, params, ...)                       \
	static ret pass_##op params                      \
	{                                                \
		struct fault_seam *f = ctx;              \
		return f->in.op(f->in.ctx, __VA_ARGS__); \
	}
#define PASS_VOID(op, params, ...)                \
	static void pass_##op params              \
	{                                         \
		struct fault_seam *f = ctx;       \
		f->in.op(f->in.ctx, __VA_ARGS__); \
	}

PASS(int, uffd_open, (void *ctx, int flags), flags)
PASS(int, uffd_api, (void *ctx, int fd, struct uffdio_api *api), fd, api)
PASS(int, uffd_register, (void *ctx, int fd, struct uffdio_register *reg), fd,
     reg)
PASS(int, uffd_poison, (void *ctx, int fd, uint64_t addr, uint64_t len), fd,
     addr, len)
PASS(int, sigbus_thread, (void *ctx, uint32_t tid), tid)
PASS(int, protect_none, (void *ctx, void *addr, uint64_t len), addr, len)
PASS(int, notify_signal, (void *ctx, int fd), fd)
PASS(int, memfd_create, (void *ctx, const char *name), name)
PASS(int, tmpfile_create, (void *ctx, const char *dir), dir)
PASS(int, ftruncate, (void *ctx, int fd, uint64_t len), fd, len)
PASS(int, fstat_blocks, (void *ctx, int fd, uint64_t *blocks), fd, blocks)
PASS(int, memfd_present, (void *ctx, int fd, uint64_t *bytes), fd, bytes)
PASS(int, map, (void *ctx, int fd, uint64_t len, int prot, void **out), fd, len,
     prot, out)
PASS(int, unmap, (void *ctx, void *addr, uint64_t len), addr, len)
PASS(int, nohugepage, (void *ctx, void *addr, uint64_t len), addr, len)
PASS(int, hugepage, (void *ctx, void *addr, uint64_t len), addr, len)
PASS(int, folio_census,
     (void *ctx, const void *addr, uint64_t len, uint64_t *large), addr, len,
     large)
PASS(int, close, (void *ctx, int fd), fd)
PASS(int, backing_open,
     (void *ctx, const char *path, int direct, uint64_t *size), path, direct,
     size)
PASS(int, backing_dontneed, (void *ctx, int fd, uint64_t off, uint64_t len), fd,
     off, len)
/* A reader's job calls back through the region's seam, this one, so its
 * reads meet the read points like any other. */
PASS(int, reader_open,
     (void *ctx, resid_reader *rd, resid_read_fn fn, void *arg), rd, fn, arg)
PASS_VOID(read_start,
	  (void *ctx, resid_reader rd, void *buf, size_t len, uint64_t off), rd,
	  buf, len, off)
PASS(long, read_wait, (void *ctx, resid_reader rd), rd)
PASS_VOID(reader_close, (void *ctx, resid_reader rd), rd)
PASS_VOID(sleep_ns, (void *ctx, uint64_t ns), ns)
PASS(int, thread_start,
     (void *ctx, resid_thread *t, void *(*fn)(void *), void *arg,
      const char *name),
     t, fn, arg, name)
PASS(int, thread_join, (void *ctx, resid_thread t), t)
PASS_VOID(mutex_init, (void *ctx, resid_mutex *m), m)
PASS_VOID(mutex_destroy, (void *ctx, resid_mutex *m), m)
PASS_VOID(lock, (void *ctx, resid_mutex *m), m)
PASS(int, trylock, (void *ctx, resid_mutex *m), m)
PASS_VOID(unlock, (void *ctx, resid_mutex *m), m)
PASS_VOID(cond_init, (void *ctx, resid_cond *c), c)
PASS_VOID(cond_destroy, (void *ctx, resid_cond *c), c)
PASS_VOID(cond_signal, (void *ctx, resid_cond *c), c)
PASS_VOID(cond_broadcast, (void *ctx, resid_cond *c), c)

/* The ops without arguments besides ctx. */
static int pass_notify_open(void *ctx)
{
	struct fault_seam *f = ctx;

	return f->in.notify_open(f->in.ctx);
}

static int pass_process_id(void *ctx)
{
	struct fault_seam *f = ctx;

	return f->in.process_id(f->in.ctx);
}

static uint64_t pass_clock_ns(void *ctx)
{
	struct fault_seam *f = ctx;

	return f->in.clock_ns(f->in.ctx);
}

static const struct resid_seam wrapper = {
	.uffd_open = pass_uffd_open,
	.uffd_api = pass_uffd_api,
	.uffd_register = pass_uffd_register,
	.uffd_read = fw_uffd_read,
	.uffd_continue = fw_uffd_continue,
	.uffd_wake = fw_uffd_wake,
	.uffd_poison = pass_uffd_poison,
	.sigbus_thread = pass_sigbus_thread,
	.protect_none = pass_protect_none,
	.wait_readable = fw_wait_readable,
	.notify_open = pass_notify_open,
	.notify_signal = pass_notify_signal,
	.memfd_create = pass_memfd_create,
	.tmpfile_create = pass_tmpfile_create,
	.ftruncate = pass_ftruncate,
	.punch = fw_punch,
	.fstat_blocks = pass_fstat_blocks,
	.memfd_present = pass_memfd_present,
	.map = pass_map,
	.unmap = pass_unmap,
	.nohugepage = pass_nohugepage,
	.drop_a = fw_drop_a,
	.memfd_write = fw_memfd_write,
	.hugepage = pass_hugepage,
	.folio_census = pass_folio_census,
	.close = pass_close,
	.backing_open = pass_backing_open,
	.backing_pread = fw_backing_pread,
	.backing_dontneed = pass_backing_dontneed,
	.reader_open = pass_reader_open,
	.read_start = pass_read_start,
	.read_wait = pass_read_wait,
	.reader_close = pass_reader_close,
	.read_text = fw_read_text,
	.process_id = pass_process_id,
	.clock_ns = pass_clock_ns,
	.sleep_ns = pass_sleep_ns,
	.thread_start = pass_thread_start,
	.thread_join = pass_thread_join,
	.mutex_init = pass_mutex_init,
	.mutex_destroy = pass_mutex_destroy,
	.lock = pass_lock,
	.trylock = pass_trylock,
	.unlock = pass_unlock,
	.cond_init = pass_cond_init,
	.cond_destroy = pass_cond_destroy,
	.cond_wait = fw_cond_wait,
	.cond_signal = pass_cond_signal,
	.cond_broadcast = pass_cond_broadcast,
	.yield = fw_yield,
};

/* The last freed seam of this thread, kept for the next: a simulated
 * campaign makes one per run, and munmap's TLB flush cost more than the
 * run. Only its own process reuses it: a child shares the mapping. */
static __thread struct fault_seam *spare;
static __thread pid_t spare_pid;

/* Shared mappings: a scenario's child counts where the parent reads, also
 * when the parent has to kill it. */
struct fault_seam *fault_seam_new(const struct resid_seam *inner,
				  const struct fault_plan *plan, uint64_t seed,
				  fault_draw_fn draw, void *draw_arg)
{
	struct fault_seam *f = spare;

	if (f && spare_pid == getpid()) {
		spare = NULL;
		memset(f, 0, sizeof(*f));
	} else {
		f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (f == MAP_FAILED)
			return NULL;
	}
	pthread_once(&fiu_once, fiu_start);
	f->in = *inner;
	f->ops = wrapper;
	f->ops.name = inner->name;
	f->ops.ctx = f;
	if (plan)
		fault_plan_swarm(plan, seed, &f->plan);
	f->seed = seed;
	f->draw = draw;
	f->draw_arg = draw_arg;
	return f;
}

void fault_seam_free(struct fault_seam *f)
{
	if (!f)
		return;
	if (!spare || spare_pid != getpid()) {
		spare = f;
		spare_pid = getpid();
	} else if (munmap(f, sizeof(*f)) < 0) {
		perror("residctl: munmap(fault seam)");
	}
}

const struct resid_seam *fault_seam_ops(const struct fault_seam *f)
{
	return &f->ops;
}

uint64_t fault_seam_fired(const struct fault_seam *f, int point)
{
	return fault_name(point) ? atomic_load_explicit(&f->pt[point].fired,
							memory_order_relaxed) :
				   0;
}

uint64_t fault_seam_calls(const struct fault_seam *f, int point)
{
	return fault_name(point) ? atomic_load_explicit(&f->pt[point].calls,
							memory_order_relaxed) :
				   0;
}

void fault_seam_fired_all(const struct fault_seam *f, uint64_t fired[FP_COUNT])
{
	for (int p = 0; p < FP_COUNT; p++)
		fired[p] = fault_seam_fired(f, p);
}

int fault_seam_fired_plan(const struct fault_seam *f, struct fault_plan *out)
{
	int complete = 0;

	memset(out, 0, sizeof(*out));
	for (int p = 0; p < FP_COUNT; p++) {
		struct fault_rule *r = &out->rule[p];
		uint64_t k = fault_seam_fired(f, p);

		if (k > FAULT_MAX_CALLS) {
			complete = -1;
			k = FAULT_MAX_CALLS;
		}
		if (!k)
			continue;
		out->on |= 1u << p;
		/* Threads of a real run may record out of order. */
		for (uint64_t i = 0; i < k; i++) {
			uint16_t j = r->ncalls++;

			while (j && r->calls[j - 1] > f->pt[p].at[i]) {
				r->calls[j] = r->calls[j - 1];
				j--;
			}
			r->calls[j] = f->pt[p].at[i];
		}
	}
	return complete;
}
