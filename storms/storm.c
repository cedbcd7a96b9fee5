#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/coverage.h"
#include "base/rng.h"
#include "cgroup/cgroup_scope.h"
#include "oracles/contract.h"
#include "oracles/oracle.h"
#include "proc/child.h"
#include "proc/thread_dump.h"
#include "storm.h"
#include "workload/budget_share.h"
#include "workload/content_file.h"
#include "workload/huge_leg.h"
#include "workload/read_check.h"
#include "workload/unequal_table.h"

#define MAX_THREADS 64
#define MAX_TABLE 4096
#define PIECE_MAX (256u << 10)
/* The share of one CPU a stalled process must burn to be called live. */
#define LIVELOCK_CPU 0.5
/* Chunks the hands' prelude drops entries of and reads again. */
#define PRELUDE_CHUNKS 2

struct storm {
	const struct storm_config *c;
	struct resid_config cfg;
	struct resid_harness h;
	struct resid_region *r;
	struct storm_result *out;
	uint64_t deadline_ns;
	uint64_t grace_end_ns; /* deadline_ns + the dedup grace */
	int dedup_seen;        /* both dedup counters > 0, seen past deadline */
	pthread_mutex_t msg_lock;
	/* What the stall watchdog watches: bytes checked, and the main
	 * thread's steps once the readers run (the joins, close). */
	uint64_t steps;
	int reported; /* the result went to the parent */
	uint64_t hot; /* where a reader read last (hands_main) */
	int fd;       /* the pipe to the parent */
	struct fault_seam *fs;
	uint64_t *mark; /* code probe counts at the child's start */
};

struct reader {
	struct storm *s;
	uint32_t id;
	pthread_t th;
};

/* Where a reader's SIGBUS goes: set only around its read through A. */
static __thread sigjmp_buf *sigbus_jump;

/* A failed chunk's SIGBUS (design.md §9) lands in the read that raised it; one
 * anywhere else is a crash, so it ends the child as before and the parent
 * says the storm process died. */
static void on_sigbus(int sig)
{
	if (sigbus_jump)
		siglongjmp(*sigbus_jump, 1);
	if (signal(sig, SIG_DFL) == SIG_ERR || raise(sig) != 0)
		abort();
}

static void note(struct storm *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct storm *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->msg_lock);
	if (!s->out->message[0]) {
		va_start(ap, fmt);
		vsnprintf(s->out->message, sizeof(s->out->message), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&s->msg_lock);
}

static void say(void *s, const char *line)
{
	note(s, "%s", line);
}

/* Whether the readers go on: until the deadline, then while the dedup
 * grace lasts and a dedup counter is still 0. */
static int reading(struct storm *s)
{
	struct resid_stats st;
	uint64_t now = mono_ns();

	if (now < s->deadline_ns)
		return 1;
	if (now >= s->grace_end_ns ||
	    __atomic_load_n(&s->dedup_seen, __ATOMIC_RELAXED))
		return 0;
	resid_get_stats(s->r, &st);
	if (!st.dedup_fetching || !st.dedup_resident ||
	    (s->c->hands && !st.refaults_served))
		return 1;
	__atomic_store_n(&s->dedup_seen, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Reads [off, off + take) through A and checks it: 0 with the wrong bytes
 * in *bad, or -1 when the read raised SIGBUS. Its own frame, so that no
 * caller's variable lives across the siglongjmp. */
static int guarded_read(const struct expected *e, struct storm *s, uint64_t off,
			uint64_t take, uint64_t *bad)
{
	sigjmp_buf jump;

	if (sigsetjmp(jump, 1)) {
		sigbus_jump = NULL;
		return -1;
	}
	sigbus_jump = &jump;
	*bad = read_check(e, resid_base(s->r) + off, off, take,
			  &s->out->bytes_checked, &s->out->mismatches);
	sigbus_jump = NULL;
	return 0;
}

/* A read of chunk c raised SIGBUS: counted when the contract says so
 * (the chunk failed for good, every error injected), else the round's
 * failure. */
static void refused(struct storm *s, uint32_t id, uint32_t c, uint64_t off,
		    uint64_t take)
{
	char why[256];

	if (oracle_sigbus_contract(s->r, c, s->fs, why, sizeof(why))) {
		__atomic_add_fetch(&s->out->refused_reads, 1, __ATOMIC_RELAXED);
		return;
	}
	note(s,
	     "reader %u: SIGBUS reading [%" PRIu64 ", +%" PRIu64 ") of "
	     "chunk %u: %s",
	     id, off, take, c, why);
}

/* Reads random pieces, whole chunks now and then, while reading() says. */
static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct storm *s = rd->s;
	uint64_t rng = s->c->seed * 1000003u + rd->id;
	const struct expected e = { .seed = s->cfg.seed, .fd = -1 };
	uint64_t touches = 0, worst = 0;
	uint32_t n = resid_nchunks(s->r);

	while (reading(s)) {
		uint32_t c = (uint32_t)rng_below(&rng, n);
		uint64_t off, len, take, coff;

		resid_chunk_range(s->r, c, &off, &len);
		coff = off;
		if (off + len > s->cfg.region_len)
			len = s->cfg.region_len - off;
		if (rng_below(&rng, 8) == 0) {
			take = len;
		} else {
			uint64_t skip = rng_below(&rng, len);

			off += skip;
			take = 1 + rng_below(&rng, len - skip < PIECE_MAX ?
							   len - skip :
							   PIECE_MAX);
		}
		resid_notify_access(s->r, c);
		__atomic_store_n(&s->hot, off, __ATOMIC_RELAXED);
		uint64_t t0 = mono_ns(), bad;

		if (guarded_read(&e, s, off, take, &bad) < 0) {
			refused(s, rd->id, c, off, take);
			touches++;
			continue;
		}
		/* overlap_evict: the chunk announced consumed up to where
		 * this read ended, though the prefix was not all read: drops
		 * race with the other readers, whose reads of a dropped page
		 * must fetch it again. */
		resid_notify_consumed(s->r, c, off + take - coff);
		uint64_t dt = mono_ns() - t0;

		if (dt > worst)
			worst = dt;
		touches++;
		if (bad) {
			note(s,
			     "reader %u: %" PRIu64 " bytes wrong in [%" PRIu64
			     ", +%" PRIu64 ") of chunk %u",
			     rd->id, bad, off, take, c);
		}
	}
	__atomic_add_fetch(&s->out->touches, touches, __ATOMIC_RELAXED);
	pthread_mutex_lock(&s->msg_lock);
	if (worst > s->out->worst_touch_ns)
		s->out->worst_touch_ns = worst;
	pthread_mutex_unlock(&s->msg_lock);
	return NULL;
}

/* The range may span chunks: the SIGBUS is a failed one's, if any. */
static uint32_t failed_chunk_in(struct resid_region *r, uint64_t off,
				uint64_t len)
{
	uint32_t first = resid_chunk_of(r, off);
	uint32_t last = resid_chunk_of(r, off + len - 1);

	for (uint32_t c = first; c <= last && c != RESID_NO_CHUNK; c++)
		if (resid_chunk_failed(r, c) == 1)
			return c;
	return first;
}

/* What applications and the kernel do to the region, while the readers
 * read: a call every millisecond or so. */
static void *hands_main(void *arg)
{
	struct storm *s = arg;
	uint64_t rng = s->c->seed * 2654435761u + 17;
	const struct timespec pause_ = { 0, 1000000L };

	const struct expected e = { .seed = s->cfg.seed, .fd = -1 };
	uint64_t off, len, bad, end = s->cfg.region_len;

	while (reading(s)) {
		enum hand h = hands_once(s->r, &rng,
					 __atomic_load_n(&s->hot,
							 __ATOMIC_RELAXED),
					 &s->out->hands, &off, &len);

		/* Read again what was advised: dropped entries refault. */
		if (off >= end)
			continue;
		len = len < end - off ? len : end - off;
		if (guarded_read(&e, s, off, len, &bad) < 0)
			refused(s, UINT32_MAX, failed_chunk_in(s->r, off, len),
				off, len);
		else if (bad)
			note(s,
			     "hands: %" PRIu64 " bytes wrong in [%" PRIu64
			     ", +%" PRIu64 ") read again after %s",
			     bad, off, len, hand_name(h));
		nanosleep(&pause_, NULL);
	}
	return NULL;
}

/* Before the readers start, with nothing to evict what it reads: a
 * chunk read, part of its entries dropped, read again. Each second read
 * refaults on a resident chunk, however slow the machine; a pager that
 * never maps such a page again spins here until the stall watchdog
 * names the livelock. */
static void hands_prelude(struct storm *s)
{
	const struct expected e = { .seed = s->cfg.seed, .fd = -1 };
	uint32_t n = resid_nchunks(s->r);
	uint64_t off, len, bad;

	for (uint32_t c = 0; c < n && c < PRELUDE_CHUNKS; c++) {
		resid_chunk_range(s->r, c, &off, &len);
		len = len < s->cfg.region_len - off ? len :
						      s->cfg.region_len - off;
		for (int pass = 0; pass < 2; pass++) {
			if (guarded_read(&e, s, off, len, &bad) < 0) {
				refused(s, UINT32_MAX, c, off, len);
				break;
			}
			if (bad)
				note(s,
				     "hands: %" PRIu64 " bytes wrong in "
				     "chunk %u, read %s its entries were "
				     "dropped",
				     bad, c, pass ? "after" : "before");
			if (!pass && madvise((void *)(resid_base(s->r) + off),
					     len / 2 & ~(RESID_PAGE - 1),
					     MADV_DONTNEED) < 0)
				note(s, "hands: MADV_DONTNEED on chunk %u: %s",
				     c, strerror(errno));
		}
	}
}

/* The file round's backing: written in the child, so its page cache
 * (dropped once written) is charged to the storm's cgroup. 0, or -1 with
 * the message set. */
static int make_file(struct storm *s, char *path, size_t n)
{
	char name[64], err[sizeof(s->out->message)];

	snprintf(name, sizeof(name), "storm-%" PRIu64 ".bin", s->c->seed);
	if (content_file_make(s->c->file_dir, name, s->cfg.region_len,
			      s->cfg.seed, path, n, err, sizeof(err)) < 0) {
		snprintf(s->out->message, sizeof(s->out->message), "%s", err);
		return -1;
	}
	s->cfg.backing = RESID_BACKING_FILE;
	s->cfg.path = path;
	return 0;
}

/* A storm asked for huge folios (equal chunks of the folio in a huge
 * tmpfs) proves it took the huge path: the region chose it, and what is
 * resident at the end sits in large folios (a census of /proc/kpageflags;
 * skipped where it cannot be read). */
static void huge_proof(struct storm *s)
{
	int want = s->c->huge_dir && s->c->chunk_size &&
		   s->c->chunk_size % huge_leg_folio() == 0;

	s->out->huge = resid_huge(s->r);
	if (s->out->huge && resid_folio_census(s->r, &s->out->huge_bytes) < 0)
		return;
	if (want && !s->out->huge)
		note(s, "equal chunks of the folio in a huge tmpfs took 4 KiB "
			"pages in B");
	else if (s->out->huge && s->out->stats.resident && !s->out->huge_bytes)
		note(s,
		     "a region on the huge path holds %" PRIu64 " resident "
		     "bytes, none in a large folio",
		     s->out->stats.resident);
}

/* Sends the result to the parent and exits, once, whoever comes first: the
 * main thread at the end or the stall watchdog. The other waits for the
 * exit. */
static void __attribute__((noreturn)) report(struct storm *s)
{
	struct storm_result *out = s->out;

	while (__atomic_exchange_n(&s->reported, 1, __ATOMIC_ACQ_REL))
		pause();
	if (s->fs)
		fault_seam_fired_all(s->fs, out->fired);
	coverage_since(s->mark, out->probes);
	out->ran = 1;
	if (write(s->fd, out, sizeof(*out)) != (ssize_t)sizeof(*out))
		_exit(3);
	_exit(0);
}

static uint64_t progress_of(struct storm *s)
{
	/* A read refused by SIGBUS was answered: progress too. */
	return __atomic_load_n(&s->out->bytes_checked, __ATOMIC_RELAXED) +
	       __atomic_load_n(&s->out->refused_reads, __ATOMIC_RELAXED) +
	       __atomic_load_n(&s->steps, __ATOMIC_RELAXED);
}

/* CPU time of the whole process: a hang that burns it is a livelock
 * (a fault answered again and again, a spin), one that does not is a
 * deadlock or a lost wakeup. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A hang is no progress for watchdog_seconds: no byte checked by any
 * reader and no step of the main thread. It is caught when it happens,
 * mid-storm or in resid_close, not at the end of a fixed budget. The
 * threads stuck on faults or locks cannot be joined: dump them, report,
 * exit; the kernel frees them. */
static void *stall_watchdog(void *arg)
{
	struct storm *s = arg;
	const struct timespec tick = { 0, 100000000L };
	uint64_t stall_ns = (uint64_t)(s->c->watchdog_seconds * 1e9);
	uint64_t last = progress_of(s), since = mono_ns();
	uint64_t cpu = cpu_ns();
	char dump[sizeof(s->out->message)], why[200] = "";

	for (;;) {
		nanosleep(&tick, NULL);
		if (progress_of(s) != last) {
			last = progress_of(s);
			since = mono_ns();
			cpu = cpu_ns();
		} else if (mono_ns() - since >= stall_ns) {
			break;
		}
	}
	double busy = (double)(cpu_ns() - cpu) / 1e9;

	if (busy >= LIVELOCK_CPU * (double)(mono_ns() - since) / 1e9)
		snprintf(why, sizeof(why),
			 "livelock: %.1f s of CPU burnt in "
			 "the %.0f s no reader made progress (a fault answered "
			 "again and again, or a spin); ",
			 busy, (double)(mono_ns() - since) / 1e9);
	thread_dump(getpid(), dump, sizeof(dump));
	pthread_mutex_lock(&s->msg_lock);
	s->out->hung = 1;
	snprintf(s->out->message, sizeof(s->out->message), "%s%s", why, dump);
	pthread_mutex_unlock(&s->msg_lock);
	fprintf(stderr, "residctl storm: %s\n", dump);
	report(s);
}

/* The region's configuration from the storm's (table: unequal chunks). */
static void configure(struct storm *s, struct resid_chunk_spec *table)
{
	const struct storm_config *c = s->c;
	uint64_t rng = c->seed, max_chunk = c->chunk_size;

	resid_config_init(&s->cfg);
	s->cfg.region_len = c->region_len;
	s->cfg.chunk_size = c->chunk_size;
	s->cfg.seed = c->seed;
	s->cfg.policy = c->policy;
	s->cfg.fetch_workers = c->workers;
	s->cfg.prefetch_depth = c->prefetch_depth;
	s->cfg.backing = RESID_BACKING_SYNTHETIC;
	resid_harness_init(&s->h);
	s->h.eager_reconcile = 1;
	s->cfg.harness = &s->h;
	s->cfg.evict_ahead = c->evict_ahead;
	/* Eviction that overlaps consumption in half the rounds of the
	 * declared policy, a bit of the seed (no draw: the other draws of a
	 * seed stay as they were). */
	s->cfg.overlap_evict = c->policy == RESID_POLICY_DECLARED &&
			       (c->seed >> 5) & 1;
	s->cfg.huge_dir = c->huge_dir;
	if (c->fetching_timeout_ms)
		s->cfg.fetching_timeout_ms = c->fetching_timeout_ms;
	if (!c->chunk_size) {
		s->cfg.table_len = unequal_table(c->region_len, 16 * RESID_PAGE,
						 1024 * RESID_PAGE, &rng, table,
						 MAX_TABLE);
		s->cfg.table = table;
		max_chunk = unequal_largest(table, s->cfg.table_len);
	}
	s->cfg.budget_bytes = budget_share(c->region_len, c->budget_ratio,
					   max_chunk);
}

/* In the child: the round's region opened on a fault seam (its file
 * written first on a file leg), SIGBUS caught, the stall watchdog
 * started; a failure reports and exits. */
static void open_round(struct storm *s, struct resid_chunk_spec *table,
		       char *path, size_t pathn)
{
	const struct storm_config *c = s->c;
	struct storm_result *out = s->out;
	char err[RESID_ERRLEN];
	pthread_t stall;

	configure(s, table);
	if (c->huge_mount &&
	    huge_leg_enter(c->huge_dir, out->message, sizeof(out->message)) < 0)
		report(s);
	/* Every storm runs on a fault seam, faults or not. */
	s->fs = fault_seam_new(&resid_seam_linux, c->faults, c->seed, NULL,
			       NULL);
	if (!s->fs) {
		snprintf(out->message, sizeof(out->message),
			 "out of memory "
			 "for the fault seam");
		report(s);
	}
	s->h.seam = fault_seam_ops(s->fs);
	if (c->file_dir && make_file(s, path, pathn) < 0)
		report(s);
	oracle_invariants_to(&out->violations, say, s);
	s->r = resid_open(&s->cfg, err);
	if (c->file_dir && unlink(path) < 0)
		note(s, "cannot remove %s: %s", path, strerror(errno));
	if (s->r && c->file_dir)
		out->direct = content_file_direct(s->r);
	if (!s->r) {
		snprintf(out->message, sizeof(out->message),
			 "cannot open the "
			 "region: %s",
			 err);
		report(s);
	}
	struct sigaction sa = { .sa_handler = on_sigbus };

	if (sigemptyset(&sa.sa_mask) < 0 || sigaction(SIGBUS, &sa, NULL) < 0) {
		snprintf(out->message, sizeof(out->message),
			 "cannot catch "
			 "SIGBUS: %s",
			 strerror(errno));
		report(s);
	}
	if (pthread_create(&stall, NULL, stall_watchdog, s)) {
		snprintf(out->message, sizeof(out->message),
			 "cannot start the "
			 "stall watchdog");
		report(s);
	}
}

/* The readers and, when drawn, the hands thread, run to the deadline
 * and joined; each join is a step the stall watchdog sees. */
static void run_threads(struct storm *s)
{
	const struct storm_config *c = s->c;
	struct reader rd[MAX_THREADS];
	uint32_t threads = c->threads < MAX_THREADS ? c->threads : MAX_THREADS;
	uint32_t started = 0;

	for (; started < threads; started++) {
		rd[started] = (struct reader){ .s = s, .id = started };
		if (pthread_create(&rd[started].th, NULL, reader_main,
				   &rd[started])) {
			note(s, "cannot start reader %u", started);
			break;
		}
	}
	pthread_t hands;
	int handing = c->hands && !pthread_create(&hands, NULL, hands_main, s);

	if (c->hands && !handing)
		note(s, "cannot start the hands thread");
	for (uint32_t i = 0; i < started; i++) {
		pthread_join(rd[i].th, NULL);
		__atomic_add_fetch(&s->steps, 1, __ATOMIC_RELAXED);
	}
	if (handing) {
		pthread_join(hands, NULL);
		__atomic_add_fetch(&s->steps, 1, __ATOMIC_RELAXED);
	}
}

/* After the threads: the region quiescent, its counters, and the rules
 * that hold for the whole round. */
static void judge(struct storm *s)
{
	const struct storm_config *c = s->c;
	struct storm_result *out = s->out;

	resid_check_quiescent(s->r);
	resid_get_stats(s->r, &out->stats);
	/* The rule holds for the whole round: an error not injected after a
	 * refused read makes that refusal a bug too. */
	fault_seam_fired_all(s->fs, out->fired);
	if (out->refused_reads &&
	    !oracle_errors_injected(&out->stats, out->fired))
		note(s,
		     "%" PRIu64 " reads refused by SIGBUS, and not every "
		     "error of the round was injected (io %" PRIu64
		     ", continue %" PRIu64 ", eagain %" PRIu64 ")",
		     out->refused_reads, out->stats.io_errors,
		     out->stats.continue_errors, out->stats.continue_eagain);
	huge_proof(s);
	/* No fetch outlives the default watchdog time-out in a healthy round:
	 * a reset means a fetch was orphaned or the watchdog misfired. Rounds
	 * drawn with a 1 ms time-out reset on purpose (its code probe). */
	if (out->stats.watchdog_resets && !c->fetching_timeout_ms)
		note(s,
		     "%" PRIu64 " FETCHING watchdog resets: a chunk stayed "
		     "FETCHING, unlocked, past the %u ms time-out",
		     out->stats.watchdog_resets, s->cfg.fetching_timeout_ms);
}

/* In the child: the storm itself. Writes the result to fd and exits. */
static void child(const struct storm_config *c, int fd)
{
	static struct resid_chunk_spec table[MAX_TABLE];
	static char path[4200];
	struct storm_result out;
	uint64_t mark[CP_COUNT]; /* the parent's counts, copied by fork */
	struct storm s = { .c = c, .out = &out, .fd = fd, .mark = mark };

	coverage_mark(mark);
	memset(&out, 0, sizeof(out));
	pthread_mutex_init(&s.msg_lock, NULL);
	open_round(&s, table, path, sizeof(path));
	if (c->hands)
		hands_prelude(&s);
	uint64_t t0 = mono_ns();

	s.deadline_ns = t0 + (uint64_t)(c->seconds * 1e9);
	s.grace_end_ns = s.deadline_ns +
			 (uint64_t)(c->dedup_grace_seconds * 1e9);
	run_threads(&s);
	judge(&s);
	__atomic_add_fetch(&s.steps, 1, __ATOMIC_RELAXED);
	resid_close(s.r);
	out.seconds = (double)(mono_ns() - t0) / 1e9;
	report(&s);
}

/* Reads the child's whole result: 0, -1 on time-out, -2 when a signal
 * asked to stop (child_stop_signal), -3 when the child died without reporting. Reports progress about once a second. */
static int collect(const struct storm_config *c, int fd,
		   struct storm_result *out, int timeout_ms)
{
	size_t got = 0;
	uint64_t start = mono_ns();
	uint64_t end = start + (uint64_t)timeout_ms * 1000000ull;

	while (got < sizeof(*out)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = mono_ns();
		int wait = now >= end ? 0 : (int)((end - now) / 1000000);
		int rc = poll(&p, 1, wait < 1000 ? wait : 1000);

		if (child_stop_signal())
			return -2;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0 && mono_ns() < end) {
			if (c->progress)
				c->progress(c->progress_arg,
					    (double)(mono_ns() - start) / 1e9);
			continue;
		}
		if (rc <= 0)
			return -1;
		ssize_t n = read(fd, (char *)out + got, sizeof(*out) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -3;
		got += (size_t)n;
	}
	return 0;
}

int storm_run(const struct storm_config *c, struct storm_result *out)
{
	struct cg_scope scope;
	char err[512], tag[32];
	int fds[2], status;

	memset(out, 0, sizeof(*out));
	snprintf(tag, sizeof(tag), "storm-%" PRIu64, c->seed);
	if (cg_scope_enter(&scope, tag, c->limit_bytes, err, sizeof(err)) < 0) {
		snprintf(out->message, sizeof(out->message), "%s", err);
		return -1;
	}
	if (pipe(fds) < 0) {
		snprintf(out->message, sizeof(out->message), "pipe: %s",
			 strerror(errno));
		cg_scope_leave(&scope);
		return -1;
	}
	pid_t pid = child_fork();

	if (pid < 0) {
		snprintf(out->message, sizeof(out->message), "fork: %s",
			 strerror(errno));
		close(fds[0]);
		close(fds[1]);
		cg_scope_leave(&scope);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		child(c, fds[1]);
	}
	close(fds[1]);
	/* The child's own watchdog fires first; this one covers a child
	 * whose main thread is stuck too. */
	int budget_ms = (int)((c->seconds + c->dedup_grace_seconds +
			       c->watchdog_seconds) *
			      1000) +
			30000;

	int rc = collect(c, fds[0], out, budget_ms);

	if (rc == -2) {
		memset(out, 0, sizeof(*out));
		out->interrupted = 1;
		kill(pid, SIGKILL);
	} else if (rc == -3) {
		memset(out, 0, sizeof(*out));
	} else if (rc < 0) {
		memset(out, 0, sizeof(*out));
		out->hung = 1;
		thread_dump(pid, out->message, sizeof(out->message));
		kill(pid, SIGKILL);
	} else {
		/* So that the caller's marks see the child's probes. */
		coverage_absorb(out->probes);
	}
	close(fds[0]);
	child_reap(pid, &status, 0);
	if (!out->ran && !out->hung && !out->interrupted)
		snprintf(out->message, sizeof(out->message),
			 "the storm process "
			 "died (status %#x) before it reported",
			 status);
	if (cg_scope_leave(&scope) < 0 && !out->message[0])
		snprintf(out->message, sizeof(out->message),
			 "could not remove "
			 "the storm's cgroup");
	return 0;
}

int storm_passed(const struct storm_result *r)
{
	return r->ran && !r->hung && !r->mismatches && !r->violations &&
	       !r->stats.reconcile_failures && !r->message[0];
}

void storm_describe(const struct storm_config *c, char *buf, size_t n)
{
	snprintf(buf, n,
		 "--seed %" PRIu64 " --region %" PRIu64 " --chunk %" PRIu64
		 " --budget-ratio %.3f --threads %u --workers %u "
		 "--prefetch %u --policy %s --seconds %.1f --dedup-grace %.1f%s "
		 "--fetching-timeout %u --backing %s%s",
		 c->seed, c->region_len, c->chunk_size, c->budget_ratio,
		 c->threads, c->workers, c->prefetch_depth,
		 resid_policy_name(c->policy), c->seconds,
		 c->dedup_grace_seconds, c->evict_ahead ? " --evict-ahead" : "",
		 c->fetching_timeout_ms, c->file_dir ? "file" : "synthetic",
		 c->hands ? " --hands" : "");
}
