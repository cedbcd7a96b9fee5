/* Fault injection (SPEC §5.2). libfiu names the points and lets outside
 * tools see them; the decision whether a call fails is ours: a hash of
 * (seed, point, call number), so a seed replays and threads share no
 * generator (libfiu's own is global and not thread-safe, SPEC §2.7). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIU_ENABLE 1
#include <fiu.h>
#include <fiu-control.h>

#include "cli.h"
#include "fault.h"
#include "rng.h"

#define PREFIX "resid/"
#define PREFIX_LEN (sizeof(PREFIX) - 1)
/* O_DIRECT reads and CONTINUE work in whole pages. */
#define PAGE 4096u
#define MS 1000000ull

static const char *const names[FP_COUNT] = {
	[FP_READ_EIO] = PREFIX "backing_read/eio",
	[FP_READ_EINTR] = PREFIX "backing_read/eintr",
	[FP_READ_SHORT] = PREFIX "backing_read/short",
	[FP_READ_DELAY] = PREFIX "backing_read/delay",
	[FP_CONT_EAGAIN] = PREFIX "continue/eagain",
	[FP_CONT_EEXIST] = PREFIX "continue/eexist",
	[FP_CONT_EFAULT] = PREFIX "continue/efault",
	[FP_WAKE] = PREFIX "wake",
	[FP_PUNCH] = PREFIX "punch",
	[FP_UFFD_EINTR] = PREFIX "uffd_read/eintr",
	[FP_CGROUP_READ] = PREFIX "cgroup_read",
	[FP_SLOW_WORKER] = PREFIX "worker/slow",
	[FP_SPURIOUS_WAKEUP] = PREFIX "cond/spurious",
};

struct point {
	_Atomic uint64_t calls;     /* wrapped calls the point belongs to */
	_Atomic uint64_t n;         /* decisions since enable or reset */
	_Atomic uint64_t fired;     /* faults injected */
	_Atomic uint64_t nth;       /* fire on decision nth only; 0: by p */
	_Atomic uint64_t threshold; /* fire when hash >> 11 is below */
};

static struct point points[FP_COUNT];
static _Atomic uint64_t seed;
static _Atomic uint32_t enabled; /* a bit per point enabled here */

static pthread_once_t fiu_once = PTHREAD_ONCE_INIT;
static int fiu_rc;

static void fiu_start(void)
{
	fiu_rc = fiu_init(0);
}

const char *fault_name(int point)
{
	return point >= 0 && point < FP_COUNT ? names[point] : NULL;
}

/* The point called name[0..len), with or without the prefix; -1 if none. */
static int point_index(const char *name, size_t len)
{
	if (len > PREFIX_LEN && !memcmp(name, PREFIX, PREFIX_LEN)) {
		name += PREFIX_LEN;
		len -= PREFIX_LEN;
	}
	for (int p = 0; p < FP_COUNT; p++) {
		const char *s = names[p] + PREFIX_LEN;

		if (strlen(s) == len && !memcmp(s, name, len))
			return p;
	}
	return -1;
}

/* Uniform in [0, 2^64) per (seed, point, n). The seed is mixed first so
 * nearby seeds give unrelated streams. */
static uint64_t decision_hash(uint64_t s, int point, uint64_t n)
{
	s = rng_next(&s) ^ ((uint64_t)point << 56) ^ n;
	return rng_next(&s);
}

/* libfiu's external callback: runs inside fiu_fail() for enabled points. */
static int decide(const char *name, int *failnum, void **failinfo,
		  unsigned int *flags)
{
	int p = point_index(name, strlen(name));
	uint64_t n, nth;

	(void)failnum;
	(void)failinfo;
	(void)flags;
	if (p < 0)
		return 0;
	n = atomic_fetch_add(&points[p].n, 1) + 1;
	nth = atomic_load(&points[p].nth);
	if (nth)
		return n == nth;
	return decision_hash(atomic_load(&seed), p, n) >> 11 <
	       atomic_load(&points[p].threshold);
}

/* A message too long for err is cut, still one line. */
__attribute__((format(printf, 3, 4)))
static int bad(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A plain decimal in [0, 1] as a threshold on 53 hash bits. 0 or -1. */
static int parse_probability(const char *s, uint64_t *threshold)
{
	char *end;
	double p;

	/* Digits and dots only: no sign, exponent, hex, inf or nan. */
	if (s[strspn(s, "0123456789.")] || !strpbrk(s, "0123456789"))
		return -1;
	p = strtod(s, &end);
	if (*end || p > 1)
		return -1;
	*threshold = (uint64_t)(p * 0x1p53);
	return 0;
}

static int unknown(const char *where, const char *s, size_t len, size_t k,
		   char *err, size_t n)
{
	char known[FP_COUNT * 24];
	size_t used = 0;

	for (int p = 0; p < FP_COUNT; p++) {
		int w = snprintf(known + used, sizeof(known) - used, "%s, ",
				 names[p] + PREFIX_LEN);

		if (w < 0 || (size_t)w >= sizeof(known) - used)
			break;
		used += (size_t)w;
	}
	return bad(err, n, "%s \"%.*s\": unknown point \"%.*s\"; use one of "
		   "%sall (the \"" PREFIX "\" prefix is optional)", where,
		   (int)len, s, (int)k, s, known);
}

/* Checks the spec s[0..len) and, when apply is set, enables it. */
static int enable_one(const char *where, const char *s, size_t len, int apply,
		      char *err, size_t n)
{
	size_t k = strcspn(s, "=@,");
	uint64_t nth = 0, threshold = 0;
	const char *v = s + k + 1;
	uint32_t mask;
	char val[32];
	size_t vlen;
	int p;

	if (!len)
		return bad(err, n, "%s: an empty spec; write NAME=P or NAME@N, "
			   "several separated by single commas", where);
	if (k >= len)
		return bad(err, n, "%s \"%.*s\": no value; write NAME=P "
			   "(probability 0..1) or NAME@N (the Nth call, "
			   "N >= 1), e.g. wake=0.01", where, (int)len, s);
	if (k == 3 && !memcmp(s, "all", 3)) {
		mask = (1u << FP_COUNT) - 1;
	} else {
		p = point_index(s, k);
		if (p < 0)
			return unknown(where, s, len, k, err, n);
		mask = 1u << p;
	}
	vlen = len - k - 1;
	if (vlen < sizeof(val)) {
		memcpy(val, v, vlen);
		val[vlen] = '\0';
	}
	if (s[k] == '@') {
		if (vlen >= sizeof(val) || cli_u64(val, &nth) || !nth)
			return bad(err, n, "%s \"%.*s\": call \"%.*s\" is "
				   "not a whole number >= 1; write e.g. %.*s@3",
				   where, (int)len, s, (int)vlen, v, (int)k, s);
	} else if (vlen >= sizeof(val) || parse_probability(val, &threshold)) {
		return bad(err, n, "%s \"%.*s\": probability \"%.*s\" is "
			   "not a decimal from 0 to 1; write e.g. %.*s=0.01",
			   where, (int)len, s, (int)vlen, v, (int)k, s);
	}
	if (!apply)
		return 0;
	for (p = 0; p < FP_COUNT; p++) {
		if (!(mask & 1u << p))
			continue;
		atomic_store(&points[p].nth, nth);
		atomic_store(&points[p].threshold, threshold);
		/* NAME@N counts from here: a re-enabled point starts over. */
		atomic_store(&points[p].n, 0);
		/* libfiu 1.1 leaks a name enabled twice; -1 if it was not. */
		(void)fiu_disable(names[p]);
		if (fiu_enable_external(names[p], 1, NULL, 0, decide) < 0)
			return bad(err, n, "%s: libfiu could not enable %s "
				   "(out of memory?)", where, names[p]);
		atomic_fetch_or(&enabled, 1u << p);
	}
	return 0;
}

/* Every item is checked before any is enabled, so an error enables none. */
static int enable_list(const char *where, const char *list, char *err,
		       size_t n)
{
	pthread_once(&fiu_once, fiu_start);
	if (fiu_rc < 0)
		return bad(err, n, "%s: libfiu failed to initialise", where);
	for (int apply = 0; apply < 2; apply++) {
		const char *s = list;

		for (;;) {
			size_t len = strcspn(s, ",");

			if (enable_one(where, s, len, apply, err, n))
				return -1;
			if (!s[len])
				break;
			s += len + 1;
		}
	}
	return 0;
}

int fault_enable(const char *spec, char *err, size_t n)
{
	return enable_list("fault", spec, err, n);
}

int fault_enable_env(char *err, size_t n)
{
	const char *v = getenv("RESIDCTL_FAULTS");

	/* Set but empty is how a user clears it. */
	if (!v || !*v)
		return 0;
	return enable_list("RESIDCTL_FAULTS", v, err, n);
}

void fault_disable_all(void)
{
	uint32_t mask = atomic_exchange(&enabled, 0);

	for (int p = 0; p < FP_COUNT; p++)
		if (mask & 1u << p)
			/* -1 only if someone else already disabled it. */
			(void)fiu_disable(names[p]);
}

int fault_any_enabled(void)
{
	return atomic_load(&enabled) != 0;
}

void fault_reset(uint64_t s)
{
	atomic_store(&seed, s);
	for (int p = 0; p < FP_COUNT; p++) {
		atomic_store(&points[p].calls, 0);
		atomic_store(&points[p].n, 0);
		atomic_store(&points[p].fired, 0);
	}
}

uint64_t fault_fired(int point)
{
	return fault_name(point) ? atomic_load(&points[point].fired) : 0;
}

uint64_t fault_calls(int point)
{
	return fault_name(point) ? atomic_load(&points[point].calls) : 0;
}

/* The wrapped seam. Ops are copied, so wrappers call through `in`. */
static struct resid_seam in, wrapped;

/* Asks every point first..last of an op, whatever the others decide, so a
 * point's calls and decision stream do not depend on which other points are
 * enabled. Returns a bit per point that would fire. */
static uint32_t ask(int first, int last)
{
	uint32_t fire = 0;

	for (int p = first; p <= last; p++) {
		atomic_fetch_add(&points[p].calls, 1);
		if (fiu_fail(fault_name(p)))
			fire |= 1u << p;
	}
	return fire;
}

/* Whether point p fires; counted only here, where its fault is injected,
 * so a fault masked by another of the same call is not counted. */
static int inject(uint32_t fire, int p)
{
	if (!(fire & 1u << p))
		return 0;
	atomic_fetch_add(&points[p].fired, 1);
	return 1;
}

static long fw_backing_pread(void *ctx, int fd, void *buf, size_t len,
			     uint64_t off)
{
	uint32_t fire = ask(FP_READ_EIO, FP_READ_DELAY);
	uint64_t ms;

	if (inject(fire, FP_READ_EIO))
		return -EIO;
	if (inject(fire, FP_READ_EINTR))
		return -EINTR;
	if (inject(fire, FP_READ_DELAY)) {
		/* 1..3 ms, chosen by seed and offset so a seed replays. */
		ms = 1 + decision_hash(atomic_load(&seed), FP_READ_DELAY,
				       off) % 3;
		in.sleep_ns(ctx, ms * MS);
	}
	/* Only a read of two pages or more can come back short by whole
	 * pages, as O_DIRECT requires. */
	if (len >= 2 * PAGE && inject(fire, FP_READ_SHORT))
		len = len / 2 / PAGE * PAGE;
	return in.backing_pread(ctx, fd, buf, len, off);
}

static int fw_uffd_continue(void *ctx, int fd, uint64_t addr, uint64_t len,
			    int64_t *mapped)
{
	uint32_t fire = ask(FP_CONT_EAGAIN, FP_CONT_EFAULT);
	uint64_t half = len / 2 / PAGE * PAGE;
	int rc;

	if (inject(fire, FP_CONT_EFAULT)) {
		*mapped = -EFAULT;
		return -EFAULT;
	}
	if (inject(fire, FP_CONT_EEXIST)) {
		*mapped = -EEXIST;
		return -EEXIST;
	}
	/* Partial progress needs at least one page left undone. */
	if (len < 2 * PAGE || !inject(fire, FP_CONT_EAGAIN))
		return in.uffd_continue(ctx, fd, addr, len, mapped);
	rc = in.uffd_continue(ctx, fd, addr, half, mapped);
	if (rc)
		return rc;
	*mapped = (int64_t)half;
	return -EAGAIN;
}

static int fw_uffd_wake(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	if (inject(ask(FP_WAKE, FP_WAKE), FP_WAKE))
		return -EIO;
	return in.uffd_wake(ctx, fd, addr, len);
}

static int fw_punch(void *ctx, int fd, uint64_t off, uint64_t len)
{
	if (inject(ask(FP_PUNCH, FP_PUNCH), FP_PUNCH))
		return -EIO;
	return in.punch(ctx, fd, off, len);
}

static long fw_uffd_read(void *ctx, int fd, struct uffd_msg *msgs, size_t n)
{
	if (inject(ask(FP_UFFD_EINTR, FP_UFFD_EINTR), FP_UFFD_EINTR))
		return -EINTR;
	return in.uffd_read(ctx, fd, msgs, n);
}

/* Only cgroup reads belong to the point, not /proc/meminfo and the like. */
static long fw_read_text(void *ctx, const char *path, char *buf, size_t cap)
{
	if ((strstr(path, "cgroup") || strstr(path, "memory.stat")) &&
	    inject(ask(FP_CGROUP_READ, FP_CGROUP_READ), FP_CGROUP_READ))
		return -EIO;
	return in.read_text(ctx, path, buf, cap);
}

/* Yields are everywhere; only a worker about to run its job can stall. */
static void fw_yield(void *ctx, const char *what)
{
	if (what && !strcmp(what, "worker-job") &&
	    inject(ask(FP_SLOW_WORKER, FP_SLOW_WORKER), FP_SLOW_WORKER))
		in.sleep_ns(ctx, 2 * MS);
	in.yield(ctx, what);
}

static void fw_cond_wait(void *ctx, resid_cond *c, resid_mutex *m)
{
	if (!inject(ask(FP_SPURIOUS_WAKEUP, FP_SPURIOUS_WAKEUP),
		    FP_SPURIOUS_WAKEUP)) {
		in.cond_wait(ctx, c, m);
		return;
	}
	/* A deadline of now returns at once with m held again, as a
	 * spurious wakeup does; -ETIMEDOUT is the expected answer. */
	(void)in.cond_timedwait(ctx, c, m, in.clock_ns(ctx));
}

const struct resid_seam *fault_seam(const struct resid_seam *inner)
{
	/* Wrapping the wrapper would make every op call itself. */
	if (inner == &wrapped)
		return &wrapped;
	in = *inner;
	wrapped = *inner;
	wrapped.backing_pread = fw_backing_pread;
	wrapped.uffd_continue = fw_uffd_continue;
	wrapped.uffd_wake = fw_uffd_wake;
	wrapped.punch = fw_punch;
	wrapped.uffd_read = fw_uffd_read;
	wrapped.read_text = fw_read_text;
	wrapped.yield = fw_yield;
	wrapped.cond_wait = fw_cond_wait;
	return &wrapped;
}
