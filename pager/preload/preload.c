/* residctl run's interposer (docs/run.md, design.md §11): an unmodified
 * program's read-only mappings of one file are served from a pager region
 * (the whole file, one region, opened at its first mapping); every other
 * call goes to libc untouched.
 *
 * A mapping of the file returns resid_base() + offset: the region's mapping
 * A is the only one, so views of it alias. Each page of A counts the views
 * that cover it; munmap lowers the counts and never unmaps A (a new mapping
 * there would not be registered with the pager, and would read zeros), and
 * the region closes when no page is counted any more. What the region
 * cannot serve goes to the kernel's mmap with one line on stderr. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define PAGE RESID_PAGE
#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

static uint64_t up(uint64_t v)
{
	return (v + PAGE - 1) & ~(PAGE - 1);
}

/* libc's functions, found after this library; raw system calls until they
 * are (an allocator's mmap may come first, from inside dlsym). */
static struct {
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	int (*madvise)(void *, size_t, int);
	int (*mprotect)(void *, size_t, int);
	void *(*mremap)(void *, size_t, size_t, int, ...);
} real;
static int resolved; /* 0 none, 1 resolving, 2 done */

static void resolve(void)
{
	int none = 0;
	void *p;

	if (!__atomic_compare_exchange_n(&resolved, &none, 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	p = dlsym(RTLD_NEXT, "mmap");
	memcpy(&real.mmap, &p, sizeof(p));
	p = dlsym(RTLD_NEXT, "munmap");
	memcpy(&real.munmap, &p, sizeof(p));
	p = dlsym(RTLD_NEXT, "madvise");
	memcpy(&real.madvise, &p, sizeof(p));
	p = dlsym(RTLD_NEXT, "mprotect");
	memcpy(&real.mprotect, &p, sizeof(p));
	p = dlsym(RTLD_NEXT, "mremap");
	memcpy(&real.mremap, &p, sizeof(p));
	__atomic_store_n(&resolved, 2, __ATOMIC_RELEASE);
}

static int ready(void *fn)
{
	return __atomic_load_n(&resolved, __ATOMIC_ACQUIRE) == 2 && fn;
}

/* The pass-throughs; the production objects' own calls are renamed to
 * them (Makefile), so the pager never enters the interposer. */
HIDDEN void *resid_sys_mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	return ready(real.mmap) ? real.mmap(a, l, p, f, fd, o) :
				  (void *)syscall(SYS_mmap, a, l, p, f, fd, o);
}

HIDDEN int resid_sys_munmap(void *a, size_t l)
{
	return ready(real.munmap) ? real.munmap(a, l) :
				    (int)syscall(SYS_munmap, a, l);
}

HIDDEN int resid_sys_madvise(void *a, size_t l, int advice)
{
	return ready(real.madvise) ? real.madvise(a, l, advice) :
				     (int)syscall(SYS_madvise, a, l, advice);
}

HIDDEN int resid_sys_mprotect(void *a, size_t l, int prot)
{
	return ready(real.mprotect) ? real.mprotect(a, l, prot) :
				      (int)syscall(SYS_mprotect, a, l, prot);
}

HIDDEN void *resid_sys_mremap(void *a, size_t ol, size_t nl, int f, void *na)
{
	return ready(real.mremap) ?
		       real.mremap(a, ol, nl, f, na) :
		       (void *)syscall(SYS_mremap, a, ol, nl, f, na);
}

/* One line on stderr; write(2) only, as it may run anywhere. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char buf[1200];
	va_list ap;
	int k = snprintf(buf, sizeof(buf),
			 "residctl run: pid %d: ", (int)getpid());

	va_start(ap, fmt);
	vsnprintf(buf + k, sizeof(buf) - (size_t)k - 1, fmt, ap);
	va_end(ap);
	k = (int)strlen(buf);
	buf[k++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)k) < 0)
		return; /* nowhere to say it */
}

/* What this process did with the file, for residctl run's summary. */
struct rec {
	uint64_t regions, served, kernel, refused, populate, ignored;
	uint64_t fetch_bytes, faults, fetches, refaults, resident_max, budget;
	uint64_t prefetches;
	/* A failed chunk (resid.h, "Failures after open"): the chunks failed,
	 * the region's first error and its chunk, and where the SIGBUS it
	 * raised hit (an offset of the file; NO_OFF: none caught, or sent
	 * with no address). */
	uint64_t failed, fail_errno, fail_chunk, sigbus_off;
	/* RESIDCTL_RUN_TRACE: drops the kernel refused and records not
	 * written; either may leave the trace short of a reference. */
	uint64_t trace_errors;
	int started; /* a record exists on disk */
	char reason[PRELOAD_ERRLEN];
};

/* The address range of the live region; immutable once published, so a
 * call that misses it needs no lock. Under the lock it is checked again. */
struct span {
	uintptr_t lo, hi;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ident_state; /* 0 unread, 2 read */
static struct preload_ident ident;
static struct span *live;

/* Under lock. */
static struct preload_cfg cfg;
static int cfg_loaded;
static struct resid_region *region;
static uint8_t *base;
static uint64_t rlen;    /* resid_len(): the file's pages */
static uint32_t *count;  /* views covering each page */
static uint64_t counted; /* pages whose count is not 0 */
static int kfd = -1;     /* our own descriptor of the file */
static int tfd = -1;     /* RESIDCTL_RUN_TRACE: REPORT/<pid>.trace */
static struct rec rec = { .fail_chunk = RESID_NO_CHUNK,
			  .sigbus_off = UINT64_MAX };
#define NO_OFF UINT64_MAX

static const struct preload_ident *ident_get(void)
{
	if (__atomic_load_n(&ident_state, __ATOMIC_ACQUIRE) != 2) {
		pthread_mutex_lock(&lock);
		if (!ident_state) {
			preload_ident_read(&ident);
			__atomic_store_n(&ident_state, 2, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&lock);
	}
	return &ident;
}

static int hint(const void *a, size_t len)
{
	struct span *s = __atomic_load_n(&live, __ATOMIC_ACQUIRE);
	uintptr_t lo = (uintptr_t)a;

	return s && lo < s->hi && lo + (len ? len : 1) > s->lo;
}

static void fold(struct rec *into, const struct resid_stats *st)
{
	into->fetch_bytes += st->fetch_bytes;
	into->faults += st->faults_missing + st->faults_minor;
	into->fetches += st->fetches;
	into->refaults += st->refaults_served;
	into->prefetches += st->prefetch_jobs;
	into->failed += st->failed_chunks;
	into->trace_errors += st->trace_drop_errors;
	if (st->resident_max > into->resident_max)
		into->resident_max = st->resident_max;
}

/* The region's first failure, when the record has none yet. */
static void fold_failure(struct rec *into, const struct resid_region *r)
{
	uint32_t chunk;
	int err = r ? resid_failure(r, &chunk) : 0;

	if (err > 0 && !into->fail_errno) {
		into->fail_errno = (uint64_t)err;
		into->fail_chunk = chunk;
	}
}

/* REPORT/<pid>, replaced whole (a reader never sees half of it). */
static void record_write(int final)
{
	struct rec r = rec;
	struct resid_stats st;
	char tmp[4220], dst[4200];
	int fd;

	if (!ident.report[0])
		return;
	if (region && resid_get_stats(region, &st) == 0)
		fold(&r, &st);
	fold_failure(&r, region);
	snprintf(dst, sizeof(dst), "%s/%d", ident.report, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	dprintf(fd,
		"regions %llu\nserved %llu\nkernel %llu\nrefused %llu\n"
		"populate %llu\nignored %llu\nfetch_bytes %llu\nfaults %llu\n"
		"fetches %llu\nrefaults %llu\nresident_max %llu\nbudget %llu\n"
		"prefetches %llu\nfailed %llu\nfail_errno %llu\n"
		"fail_chunk %llu\nsigbus_off %llu\ntrace_errors %llu\n"
		"open %d\nfinal %d\nreason %s\n",
		(unsigned long long)r.regions, (unsigned long long)r.served,
		(unsigned long long)r.kernel, (unsigned long long)r.refused,
		(unsigned long long)r.populate, (unsigned long long)r.ignored,
		(unsigned long long)r.fetch_bytes, (unsigned long long)r.faults,
		(unsigned long long)r.fetches, (unsigned long long)r.refaults,
		(unsigned long long)r.resident_max,
		(unsigned long long)r.budget, (unsigned long long)r.prefetches,
		(unsigned long long)r.failed, (unsigned long long)r.fail_errno,
		(unsigned long long)r.fail_chunk,
		(unsigned long long)r.sigbus_off,
		(unsigned long long)r.trace_errors, region != NULL, final,
		r.reason);
	if (close(fd) == 0 && rename(tmp, dst) == 0)
		rec.started = 1;
}

/* A call the region does not serve: counted, its reason said once. */
static void to_kernel_note(const char *reason)
{
	rec.kernel++;
	if (!rec.reason[0])
		snprintf(rec.reason, sizeof(rec.reason), "%s", reason);
	record_write(0);
}

enum { OTHER, OURS, NAMED };

/* Whether fd is the file: its inode, or (replaced since) its name. */
static int classify(int fd, const struct stat *st)
{
	char link[32], buf[4200];
	const char *gone = " (deleted)";
	ssize_t k;

	if (ident.id_ok && (uint64_t)st->st_dev == ident.dev &&
	    (uint64_t)st->st_ino == ident.ino)
		return OURS;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	k = readlink(link, buf, sizeof(buf) - 1);
	if (k <= 0)
		return OTHER;
	buf[k] = '\0';
	if ((size_t)k > strlen(gone) && !strcmp(buf + k - strlen(gone), gone))
		buf[k - strlen(gone)] = '\0';
	return strcmp(buf, ident.path) ? OTHER : NAMED;
}

/* Why a mapping of the file cannot be served, or NULL. */
static const char *unservable(size_t len, int prot, int flags, off_t off,
			      const struct stat *st, char *why, size_t n)
{
	int type = flags & MAP_TYPE;
	int extra = flags & ~(MAP_TYPE | MAP_POPULATE | MAP_NORESERVE |
			      MAP_NONBLOCK | MAP_DENYWRITE | MAP_EXECUTABLE);

	if (prot != PROT_READ)
		snprintf(why, n,
			 "prot %#x: only PROT_READ is served (the region is read-only)",
			 prot);
	else if (type != MAP_SHARED && type != MAP_PRIVATE &&
		 type != MAP_SHARED_VALIDATE)
		snprintf(why, n,
			 "mapping type %#x is not MAP_SHARED or MAP_PRIVATE",
			 type);
	else if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE))
		snprintf(why, n,
			 "MAP_FIXED: the region's pages stay at its own address");
	else if (extra)
		snprintf(why, n, "flags %#x are not served", extra);
	else if (off < 0 || (uint64_t)off % PAGE)
		snprintf(why, n, "offset %lld is not a multiple of 4096",
			 (long long)off);
	else if (!len)
		snprintf(why, n, "length 0");
	else if ((uint64_t)st->st_size != ident.size)
		snprintf(why, n,
			 "the file is %llu bytes now, %llu when residctl run started: truncated or grown since",
			 (unsigned long long)st->st_size,
			 (unsigned long long)ident.size);
	else if ((uint64_t)off >= up(ident.size) ||
		 up(len) > up(ident.size) - (uint64_t)off)
		snprintf(why, n,
			 "offset + length reach past the end of the file (%llu bytes)",
			 (unsigned long long)ident.size);
	else
		return NULL;
	return why;
}

/* A failed chunk's SIGBUS ends the program (resid.h, "Failures after
 * open"): the record says where first, so residctl run can name the
 * chunk, then the action the program had before the region opened takes
 * over. A fault's SIGBUS comes again when the access is retried on
 * return; one the pager sent (tgkill, no address) is raised again.
 * record_write is not async-signal-safe in general: the thread faulted on
 * a load from the region, not inside libc. Threads that fault meanwhile
 * wait for the record (bounded), so none ends the process mid-write. */
static struct sigaction bus_before;
static int bus_state; /* 0 none, 1 writing the record, 2 written */

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct span *s = __atomic_load_n(&live, __ATOMIC_ACQUIRE);
	uintptr_t a = (uintptr_t)si->si_addr;
	struct timespec ms = { 0, 1000000 };
	int none = 0;

	(void)uc;
	if (__atomic_compare_exchange_n(&bus_state, &none, 1, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (si->si_code > 0 && s && a >= s->lo && a < s->hi)
			rec.sigbus_off = a - s->lo;
		record_write(0);
		__atomic_store_n(&bus_state, 2, __ATOMIC_RELEASE);
	}
	for (int i = 0;
	     i < 1000 && __atomic_load_n(&bus_state, __ATOMIC_ACQUIRE) == 1;
	     i++)
		nanosleep(&ms, NULL);
	sigaction(sig, &bus_before, NULL);
	if (si->si_code <= 0)
		raise(sig);
}

static void catch_sigbus(void)
{
	static int installed;
	struct sigaction sa;

	if (installed++)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &bus_before) < 0)
		say("cannot catch SIGBUS (%s): a failed chunk's SIGBUS leaves no record of its chunk",
		    strerror(errno));
}

/* resid_config.trace_fn: one chunk id a line, on the dispatcher thread. */
static void reference(void *arg, uint32_t chunk)
{
	char line[16];
	int k = snprintf(line, sizeof(line), "%u\n", chunk);

	(void)arg;
	if (write(tfd, line, (size_t)k) != k)
		__atomic_add_fetch(&rec.trace_errors, 1, __ATOMIC_RELAXED);
}

/* REPORT/<pid>.trace for the references, when asked. 0, or -1 with the
 * reason in why. */
static int trace_open(char *why, size_t n)
{
	char path[4220];

	if (!cfg.trace)
		return 0;
	if (!ident.report[0]) {
		snprintf(why, n,
			 "RESIDCTL_RUN_TRACE needs RESIDCTL_RUN_REPORT, where the references go; residctl run sets both");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%d.trace", ident.report,
		 (int)getpid());
	tfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		   0644);
	if (tfd < 0) {
		snprintf(why, n, "cannot write the references to %.200s: %s",
			 path, strerror(errno));
		return -1;
	}
	return 0;
}

static void trace_close(void)
{
	if (tfd >= 0)
		close(tfd);
	tfd = -1;
}

/* Opens the region on fd's file. 0, or -1 with the reason in why. */
static int region_open(int fd, char *why, size_t n)
{
	struct resid_config c;
	char path[40], err[RESID_ERRLEN];
	struct span *s;

	if (!cfg_loaded) {
		preload_cfg_read(&cfg, ident.size);
		cfg_loaded = 1;
	}
	if (!cfg.ok) {
		snprintf(why, n, "%s", cfg.err);
		return -1;
	}
	if (trace_open(why, n))
		return -1;
	/* our own descriptor of the same inode: the program may close its */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	kfd = open(path, O_RDONLY | O_CLOEXEC);
	if (kfd < 0) {
		snprintf(why, n, "cannot open %s again: %s", path,
			 strerror(errno));
		trace_close();
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", kfd);
	resid_config_init(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = path;
	c.region_len = ident.size;
	c.table = cfg.table;
	c.table_len = cfg.nchunks;
	c.budget_bytes = cfg.budget;
	c.policy = cfg.policy;
	c.declared_seq = cfg.order;
	c.declared_len = cfg.order_len;
	c.signal = RESID_SIGNAL_BEFORE_READ;
	c.prefetch_depth = cfg.prefetch;
	c.huge_dir = cfg.huge_dir[0] ? cfg.huge_dir : NULL;
	c.trace_fn = cfg.trace ? reference : NULL;
	region = resid_open(&c, err);
	s = region ? malloc(sizeof(*s)) : NULL;
	count = region ? calloc(up(ident.size) / PAGE, sizeof(*count)) : NULL;
	if (!region || !s || !count) {
		snprintf(why, n, "resid_open: %s",
			 region ? "no memory for the page counts" : err);
		resid_close(region);
		region = NULL;
		free(s);
		free(count);
		count = NULL;
		close(kfd);
		kfd = -1;
		trace_close();
		return -1;
	}
	base = (uint8_t *)resid_base(region);
	rlen = resid_len(region);
	counted = 0;
	s->lo = (uintptr_t)base;
	s->hi = (uintptr_t)base + rlen;
	__atomic_store_n(&live, s, __ATOMIC_RELEASE); /* never freed: a
		* reader may hold it; one per region opened */
	rec.regions++;
	rec.budget = cfg.budget;
	catch_sigbus();
	record_write(0);
	return 0;
}

/* Under lock: the region closes when no view is left. */
static void region_close_if_unmapped(void)
{
	struct resid_stats st;

	if (!region || counted)
		return;
	__atomic_store_n(&live, NULL, __ATOMIC_RELEASE);
	if (resid_get_stats(region, &st) == 0)
		fold(&rec, &st);
	fold_failure(&rec, region);
	resid_close(region);
	region = NULL;
	trace_close();
	free(count);
	count = NULL;
	close(kfd);
	kfd = -1;
	record_write(0);
}

/* Under lock: views over the pages of [off, off + len) of the region, one
 * more (add) or one fewer. */
static void views(uint64_t off, uint64_t len, int add)
{
	uint64_t end = up(off + len) > rlen ? rlen : up(off + len);

	for (uint64_t p = off / PAGE; p < end / PAGE; p++) {
		if (add) {
			if (count[p] == UINT32_MAX)
				continue; /* saturated: never closes */
			counted += !count[p]++;
		} else if (count[p] && count[p] != UINT32_MAX) {
			counted -= !--count[p];
		}
	}
}

static void *to_kernel(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off, const char *why)
{
	say("mmap of %s (offset %lld, %zu bytes) goes to the kernel: %s",
	    ident.path, (long long)off, len, why);
	pthread_mutex_lock(&lock);
	to_kernel_note(why);
	pthread_mutex_unlock(&lock);
	return resid_sys_mmap(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	char why[PRELOAD_ERRLEN];
	const char *no;
	struct stat st;
	int saved = errno, kind;
	void *p = NULL;

	resolve();
	if (fd < 0 || (flags & MAP_ANONYMOUS) || !ident_get()->set ||
	    fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (kind = classify(fd, &st)) == OTHER) {
		errno = saved;
		return resid_sys_mmap(addr, len, prot, flags, fd, off);
	}
	if (kind == NAMED && ident.id_ok)
		snprintf(why, sizeof(why),
			 "the file was replaced since residctl run started (inode %llu then, %llu now)",
			 (unsigned long long)ident.ino,
			 (unsigned long long)st.st_ino);
	else if (kind == NAMED)
		snprintf(why, sizeof(why), "%s", ident.err);
	no = kind == NAMED ? why : NULL;
	if (kind != NAMED)
		no = unservable(len, prot, flags, off, &st, why, sizeof(why));
	if (no) {
		errno = saved;
		return to_kernel(addr, len, prot, flags, fd, off, no);
	}
	pthread_mutex_lock(&lock);
	if (region || region_open(fd, why, sizeof(why)) == 0) {
		views((uint64_t)off, len, 1);
		rec.served++;
		rec.populate += !!(flags & MAP_POPULATE);
		p = base + off;
		if (rec.served == 1 || !rec.started)
			record_write(0);
	}
	pthread_mutex_unlock(&lock);
	errno = saved;
	return p ? p : to_kernel(addr, len, prot, flags, fd, off, why);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off) __attribute__((alias("mmap")));

/* Under lock: the parts of [a, a + len) outside the region, as two ranges
 * (either may be empty); the part inside as an offset and length. */
static void split(uintptr_t a, uint64_t len, uintptr_t out[4], uint64_t *in_off,
		  uint64_t *in_len)
{
	uintptr_t lo = (uintptr_t)base, hi = lo + rlen, e = a + up(len);
	uintptr_t ilo = a > lo ? a : lo, ihi = e < hi ? e : hi;

	out[0] = a;
	out[1] = a < lo ? (e < lo ? e : lo) : a;
	out[2] = e > hi ? (a > hi ? a : hi) : e;
	out[3] = e;
	*in_off = ilo < ihi ? ilo - lo : 0;
	*in_len = ilo < ihi ? ihi - ilo : 0;
}

EXPORT int munmap(void *addr, size_t len)
{
	uintptr_t out[4];
	uint64_t off, in;
	int rc = 0;

	resolve();
	if (!hint(addr, len) || (uintptr_t)addr % PAGE || !len)
		return resid_sys_munmap(addr, len);
	pthread_mutex_lock(&lock);
	if (!region) {
		pthread_mutex_unlock(&lock);
		return resid_sys_munmap(addr, len);
	}
	split((uintptr_t)addr, len, out, &off, &in);
	if (out[1] > out[0])
		rc |= resid_sys_munmap((void *)out[0], out[1] - out[0]);
	if (out[3] > out[2])
		rc |= resid_sys_munmap((void *)out[2], out[3] - out[2]);
	if (in)
		views(off, in, 0);
	region_close_if_unmapped();
	pthread_mutex_unlock(&lock);
	return rc ? -1 : 0;
}

/* Advice that would map pages the pager never filled (a collapse reads
 * holes as zeros, design.md §2.7) or hand A to a child: not given to A. */
static int withheld(int advice)
{
	return advice == MADV_HUGEPAGE || advice == MADV_COLLAPSE ||
	       advice == MADV_DOFORK;
}

EXPORT int madvise(void *addr, size_t len, int advice)
{
	uintptr_t out[4];
	uint64_t off, in;
	int rc = 0;

	resolve();
	if (!withheld(advice) || !hint(addr, len) || (uintptr_t)addr % PAGE)
		return resid_sys_madvise(addr, len, advice);
	pthread_mutex_lock(&lock);
	if (!region) {
		pthread_mutex_unlock(&lock);
		return resid_sys_madvise(addr, len, advice);
	}
	split((uintptr_t)addr, len, out, &off, &in);
	if (out[1] > out[0])
		rc |= resid_sys_madvise((void *)out[0], out[1] - out[0],
					advice);
	if (out[3] > out[2])
		rc |= resid_sys_madvise((void *)out[2], out[3] - out[2],
					advice);
	rec.ignored += in != 0;
	pthread_mutex_unlock(&lock);
	return rc ? -1 : 0;
}

EXPORT int mprotect(void *addr, size_t len, int prot)
{
	int ours;

	resolve();
	if (!(prot & PROT_WRITE) || !hint(addr, len))
		return resid_sys_mprotect(addr, len, prot);
	pthread_mutex_lock(&lock);
	ours = region != NULL;
	if (ours) {
		rec.refused++;
		to_kernel_note(
			"mprotect PROT_WRITE of a view: the region is read-only (EACCES)");
	}
	pthread_mutex_unlock(&lock);
	if (!ours)
		return resid_sys_mprotect(addr, len, prot);
	say("mprotect(%p, %zu, %#x) of a view of %s refused with EACCES: the region is read-only",
	    addr, len, prot, ident.path);
	errno = EACCES;
	return -1;
}

/* Under lock: a view moved out of the region, to the kernel's mapping of
 * the file at the same offset. */
static void *moved(uint64_t off, size_t old_len, size_t new_len, int flags,
		   void *new_addr, const char *why)
{
	void *p = resid_sys_mmap(flags & MREMAP_FIXED ? new_addr : NULL,
				 new_len, PROT_READ,
				 MAP_SHARED |
					 (flags & MREMAP_FIXED ? MAP_FIXED : 0),
				 kfd, (off_t)off);

	say("mremap of a view of %s (offset %llu, %zu to %zu bytes) goes to the kernel's mmap: %s",
	    ident.path, (unsigned long long)off, old_len, new_len, why);
	to_kernel_note(why);
	if (p != MAP_FAILED && old_len && !(flags & MREMAP_DONTUNMAP))
		views(off, old_len, 0);
	return p;
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL, *p = old;
	uint64_t off;
	va_list ap;

	va_start(ap, flags);
	if (flags & MREMAP_FIXED)
		new_addr = va_arg(ap, void *);
	va_end(ap);
	resolve();
	if (!hint(old, old_len))
		return resid_sys_mremap(old, old_len, new_len, flags, new_addr);
	pthread_mutex_lock(&lock);
	if (!region) {
		pthread_mutex_unlock(&lock);
		return resid_sys_mremap(old, old_len, new_len, flags, new_addr);
	}
	off = (uintptr_t)old - (uintptr_t)base;
	if ((uintptr_t)old < (uintptr_t)base || (uintptr_t)old % PAGE ||
	    off + up(old_len) > rlen) {
		p = MAP_FAILED; /* across the region's border: as the kernel */
		errno = (uintptr_t)old % PAGE ? EINVAL : EFAULT;
	} else if (!new_len || ((flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) &&
				!(flags & MREMAP_MAYMOVE))) {
		p = MAP_FAILED;
		errno = EINVAL;
	} else if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		p = moved(off, old_len, new_len, flags, new_addr,
			  "MREMAP_FIXED or MREMAP_DONTUNMAP: the region's pages stay at its own address");
	} else if (off + up(new_len) <= rlen) {
		/* in place: the region holds the bytes either side */
		if (!old_len)
			views(off, new_len, 1);
		else if (up(new_len) > up(old_len))
			views(off + up(old_len), up(new_len) - up(old_len), 1);
		else if (up(new_len) < up(old_len))
			views(off + up(new_len), up(old_len) - up(new_len), 0);
	} else if (flags & MREMAP_MAYMOVE) {
		p = moved(off, old_len, new_len, flags, NULL,
			  "it grows past the end of the file's region");
	} else {
		p = MAP_FAILED;
		errno = ENOMEM;
	}
	region_close_if_unmapped();
	pthread_mutex_unlock(&lock);
	return p;
}

static void before_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

/* The region stays the parent's (resid.h, "fork()": A is not inherited);
 * the child's views become the kernel's mapping of the file at the same
 * addresses, so it reads the right bytes. Its record is its own. */
static void after_fork_child(void)
{
	if (region) {
		if (resid_sys_mmap(base, rlen, PROT_READ,
				   MAP_SHARED | MAP_FIXED, kfd,
				   0) == MAP_FAILED)
			say("the forked child cannot map %s at its views: a read there raises SIGSEGV",
			    ident.path);
		__atomic_store_n(&live, NULL, __ATOMIC_RELEASE);
		resid_close(region); /* in a child: its copies only */
		region = NULL;
		free(count);
		count = NULL;
		close(kfd);
		kfd = -1;
	}
	memset(&rec, 0, sizeof(rec));
	rec.fail_chunk = RESID_NO_CHUNK;
	rec.sigbus_off = NO_OFF;
	pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void preload_init(void)
{
	resolve();
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	if (!ident_get()->set)
		say("libresid-preload.so is loaded but RESIDCTL_RUN_FILE is not set: it serves nothing; start the program with residctl run");
	else if (getenv("RESIDCTL_RUN_REPORT") && !ident.report[0])
		say("RESIDCTL_RUN_REPORT is not an absolute path: this process leaves no record for residctl run's summary");
}

/* At exit the record gets its final counters; the region is left to the
 * kernel, as threads of the program may still read it. */
__attribute__((destructor)) static void preload_fini(void)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 100; i++) {
		if (pthread_mutex_trylock(&lock) == 0) {
			if (rec.started || region)
				record_write(1);
			pthread_mutex_unlock(&lock);
			return;
		}
		nanosleep(&ms, NULL);
	}
}
