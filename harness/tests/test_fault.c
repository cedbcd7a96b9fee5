/* The fault plan and the fault seam over a stub kernel: spec parsing, the
 * decision stream (Nth call, probability, seed replay, threads, a run's own
 * stream), what each point does to its op, fitting a plan to a run, and
 * instances that share nothing. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fiu-control.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/clock.h"
#include "fault/fault.h"
#include "scenarios/scenario.h"
#include "tests/suites.h"

#define NOW 123456789ull /* the stub's clock */
#define ENV "RESIDCTL_FAULTS"

/* What the stub kernel was asked; every op succeeds but CONTINUE can be
 * told to fail. */
struct stub {
	unsigned preads, continues, wakes, reads, texts, yields, writes;
	unsigned waits, locks, unlocks;
	_Atomic unsigned punches; /* punched from several threads */
	int pread_fd;
	size_t pread_len, write_len;
	uint64_t cont_len;
	int cont_rc; /* what CONTINUE returns */
	uint64_t slept_ns;
};

static struct stub st;
static struct resid_seam stub;
static struct fault_plan plan;
static struct fault_seam *inst;
static const struct resid_seam *fs;
static uint64_t seed = 1;
static resid_cond cond;
static resid_mutex mutex;

static long stub_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	struct stub *s = ctx;

	(void)buf;
	(void)off;
	s->preads++;
	s->pread_fd = fd;
	s->pread_len = len;
	return (long)len;
}

static long stub_write(void *ctx, int fd, const void *buf, size_t len,
		       uint64_t off)
{
	struct stub *s = ctx;

	(void)fd;
	(void)buf;
	(void)off;
	s->writes++;
	s->write_len = len;
	return (long)len;
}

static int stub_continue(void *ctx, int fd, uint64_t addr, uint64_t len,
			 int64_t *mapped)
{
	struct stub *s = ctx;

	(void)fd;
	(void)addr;
	s->continues++;
	s->cont_len = len;
	/* The seam defines mapped only for a failure. */
	if (s->cont_rc)
		*mapped = s->cont_rc;
	return s->cont_rc;
}

static int stub_wake(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	(void)fd;
	(void)addr;
	(void)len;
	((struct stub *)ctx)->wakes++;
	return 0;
}

static int stub_punch(void *ctx, int fd, uint64_t off, uint64_t len)
{
	(void)fd;
	(void)off;
	(void)len;
	atomic_fetch_add(&((struct stub *)ctx)->punches, 1);
	return 0;
}

static long stub_read(void *ctx, int fd, struct uffd_msg *msgs, size_t n)
{
	(void)fd;
	(void)msgs;
	((struct stub *)ctx)->reads++;
	return (long)n;
}

static long stub_text(void *ctx, const char *path, char *buf, size_t cap)
{
	(void)path;
	(void)buf;
	(void)cap;
	((struct stub *)ctx)->texts++;
	return 0;
}

static uint64_t stub_clock(void *ctx)
{
	(void)ctx;
	return NOW;
}

static void stub_sleep(void *ctx, uint64_t ns)
{
	((struct stub *)ctx)->slept_ns += ns;
}

static void stub_wait(void *ctx, resid_cond *c, resid_mutex *m)
{
	(void)c;
	(void)m;
	((struct stub *)ctx)->waits++;
}

static void stub_lock(void *ctx, resid_mutex *m)
{
	(void)m;
	((struct stub *)ctx)->locks++;
}

static void stub_unlock(void *ctx, resid_mutex *m)
{
	(void)m;
	((struct stub *)ctx)->unlocks++;
}

static void stub_yield(void *ctx, const char *what)
{
	(void)what;
	((struct stub *)ctx)->yields++;
}

static int init(void)
{
	stub = resid_seam_linux;
	stub.name = "stub";
	stub.ctx = &st;
	stub.backing_pread = stub_pread;
	stub.uffd_continue = stub_continue;
	stub.memfd_write = stub_write;
	stub.uffd_wake = stub_wake;
	stub.punch = stub_punch;
	stub.uffd_read = stub_read;
	stub.read_text = stub_text;
	stub.clock_ns = stub_clock;
	stub.sleep_ns = stub_sleep;
	stub.cond_wait = stub_wait;
	stub.lock = stub_lock;
	stub.unlock = stub_unlock;
	stub.yield = stub_yield;
	return 0;
}

/* A new instance of the plan as it is: its counts start at zero. */
static void rewrap(void)
{
	fault_seam_free(inst);
	inst = fault_seam_new(&stub, &plan, seed, NULL, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
	fs = fault_seam_ops(inst);
}

static void off(void)
{
	memset(&plan, 0, sizeof(plan));
	rewrap();
}

static void fresh(void)
{
	seed = 1;
	memset(&st, 0, sizeof(st));
	off();
}

static int clean(void)
{
	fault_seam_free(inst);
	inst = NULL;
	return 0;
}

static void on(const char *spec)
{
	char err[512] = "";

	CU_ASSERT_EQUAL_FATAL(fault_plan_add(&plan, "fault", spec, err,
					     sizeof(err)),
			      0);
	CU_ASSERT_STRING_EQUAL(err, "");
	rewrap();
}

static uint64_t fired(int p)
{
	return fault_seam_fired(inst, p);
}

static uint64_t calls(int p)
{
	return fault_seam_calls(inst, p);
}

static long pread_len(int fd, size_t len)
{
	return fs->backing_pread(fs->ctx, fd, NULL, len, 0);
}

static int cont(uint64_t len, int64_t *mapped)
{
	return fs->uffd_continue(fs->ctx, 5, 0x10000, len, mapped);
}

static int wake(void)
{
	return fs->uffd_wake(fs->ctx, 5, 0x10000, 4096);
}

static int punch(void)
{
	return fs->punch(fs->ctx, 6, 0, 4096);
}

/* spec fails with one line holding needle, and enables nothing. */
static void refused(const char *spec, const char *needle)
{
	char err[1024] = "";

	CU_ASSERT_EQUAL(fault_plan_add(&plan, "fault", spec, err, sizeof(err)),
			-1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
	CU_ASSERT_PTR_NULL(strchr(err, '\n'));
	CU_ASSERT_EQUAL(plan.on, 0);
}

static void parse_errors(void)
{
	char err[1024] = "";

	CU_ASSERT_EQUAL(fault_plan_add(&plan, "fault", "bogus=0.1", err,
				       sizeof(err)),
			-1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown point \"bogus\""));
	for (int p = 0; p < FP_COUNT; p++)
		CU_ASSERT_PTR_NOT_NULL(
			strstr(err, fault_name(p) + strlen("resid/")));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "all"));
	CU_ASSERT_PTR_NULL(strchr(err, '\n'));

	refused("resid/bogus@1", "unknown point \"resid/bogus\"");
	refused("wake=1.5", "probability \"1.5\"");
	refused("wake=1.5", "wake=0.01");
	refused("wake=1.0000001", "probability \"1.0000001\"");
	refused("wake=-0.1", "probability \"-0.1\"");
	refused("wake=nan", "probability \"nan\"");
	refused("wake=1e-2", "probability \"1e-2\"");
	refused("wake=0.5x", "probability \"0.5x\"");
	refused("wake=.", "probability \".\"");
	refused("wake=", "probability \"\"");
	refused("wake@0", "calls \"0\"");
	refused("wake@0", "wake@3");
	refused("wake@-1", "calls \"-1\"");
	refused("wake@3x", "calls \"3x\"");
	refused("wake@", "calls \"\"");
	refused("wake@3+", "calls \"3+\"");
	refused("wake@3+3", "each once");
	refused("wake", "no value");
	refused("", "empty spec");
	/* A list is all or nothing. */
	refused("punch=1,bogus@1", "unknown point \"bogus\"");
	refused("punch=1,,wake@1", "empty spec");
	refused("punch=1,", "empty spec");
	CU_ASSERT_EQUAL(punch(), 0);
	CU_ASSERT_EQUAL(fired(FP_PUNCH), 0);
}

static void nth_call_fires_once(void)
{
	on("wake@5");
	for (int i = 1; i <= 10; i++)
		CU_ASSERT_EQUAL(wake(), i == 5 ? -EIO : 0);
	CU_ASSERT_EQUAL(st.wakes, 9);
	CU_ASSERT_EQUAL(fired(FP_WAKE), 1);
	CU_ASSERT_EQUAL(calls(FP_WAKE), 10);
	/* A new instance counts from its own start. */
	on("wake@2");
	CU_ASSERT_EQUAL(wake(), 0);
	CU_ASSERT_EQUAL(wake(), -EIO);
	CU_ASSERT_EQUAL(fired(FP_WAKE), 1);
}

static void several_calls(void)
{
	struct fault_plan got;

	on("wake@7+2+4");
	for (int i = 1; i <= 8; i++)
		CU_ASSERT_EQUAL(wake(), i == 2 || i == 4 || i == 7 ? -EIO : 0);
	CU_ASSERT_EQUAL(fired(FP_WAKE), 3);
	/* What fired, as calls: the plan a shrunk replay line carries. */
	CU_ASSERT_EQUAL(fault_seam_fired_plan(inst, &got), 0);
	CU_ASSERT_EQUAL(got.on, 1u << FP_WAKE);
	CU_ASSERT_EQUAL(got.rule[FP_WAKE].ncalls, 3);
	CU_ASSERT_EQUAL(got.rule[FP_WAKE].calls[0], 2);
	CU_ASSERT_EQUAL(got.rule[FP_WAKE].calls[2], 7);
}

static void zero_never_one_always(void)
{
	on("punch=0");
	CU_ASSERT_NOT_EQUAL(plan.on, 0);
	for (int i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(punch(), 0);
	CU_ASSERT_EQUAL(st.punches, 1000);
	CU_ASSERT_EQUAL(fired(FP_PUNCH), 0);
	on("punch=1");
	for (int i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(punch(), -EIO);
	CU_ASSERT_EQUAL(st.punches, 1000);
	CU_ASSERT_EQUAL(fired(FP_PUNCH), 1000);
	CU_ASSERT_EQUAL(calls(FP_PUNCH), 1000);
}

static void probability_in_band(void)
{
	unsigned eintr = 0;

	on("uffd_read/eintr=0.3");
	for (int i = 0; i < 10000; i++) {
		long rc = fs->uffd_read(fs->ctx, 4, NULL, 1);

		CU_ASSERT(rc == 1 || rc == -EINTR);
		eintr += rc == -EINTR;
	}
	/* The sd is 46: the band is six of them either side. */
	CU_ASSERT(eintr >= 2700 && eintr <= 3300);
	CU_ASSERT_EQUAL(fired(FP_UFFD_EINTR), eintr);
	CU_ASSERT_EQUAL(st.reads, 10000 - eintr);
}

static void pattern(uint64_t s, char *out, int n)
{
	seed = s;
	off();
	on("resid/punch=0.5");
	for (int i = 0; i < n; i++)
		out[i] = punch() == -EIO;
}

static void seed_replays(void)
{
	enum { N = 2000 };
	static char a[N], b[N], c[N];
	int ones = 0;

	pattern(42, a, N);
	pattern(42, b, N);
	pattern(43, c, N);
	CU_ASSERT_EQUAL(memcmp(a, b, N), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(a, c, N), 0);
	for (int i = 0; i < N; i++)
		ones += a[i];
	CU_ASSERT(ones > 800 && ones < 1200);
}

struct job {
	int n;
	unsigned eio;
};

static void *punch_many(void *arg)
{
	struct job *j = arg;

	for (int i = 0; i < j->n; i++)
		j->eio += punch() == -EIO;
	return NULL;
}

/* A decision depends on its call number only, so threads racing for the
 * numbers fire exactly as often as one thread making all the calls. */
static void threads_share_no_generator(void)
{
	enum { THREADS = 4, CALLS = 5000 };
	struct job alone = { THREADS * CALLS, 0 }, jobs[THREADS];
	pthread_t t[THREADS];
	unsigned eio = 0;

	on("punch=0.3");
	punch_many(&alone);
	fresh();
	on("punch=0.3");
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ CALLS, 0 };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, punch_many,
						     &jobs[i]),
				      0);
	}
	for (int i = 0; i < THREADS; i++) {
		CU_ASSERT_EQUAL(pthread_join(t[i], NULL), 0);
		eio += jobs[i].eio;
	}
	CU_ASSERT(alone.eio > 0);
	CU_ASSERT_EQUAL(eio, alone.eio);
	CU_ASSERT_EQUAL(fired(FP_PUNCH), eio);
	CU_ASSERT_EQUAL(calls(FP_PUNCH), THREADS * CALLS);
	CU_ASSERT_EQUAL(st.punches, THREADS * CALLS - eio);
}

static void read_errors(void)
{
	on("backing_read/eio@1,backing_read/eintr@2");
	CU_ASSERT_EQUAL(pread_len(3, 8192), -EIO);
	CU_ASSERT_EQUAL(pread_len(-1, 8192), -EINTR);
	CU_ASSERT_EQUAL(st.preads, 0);
	CU_ASSERT_EQUAL(pread_len(-1, 8192), 8192);
	CU_ASSERT_EQUAL(st.pread_fd, -1);
	/* Every read reaches all four read points. */
	for (int p = FP_READ_EIO; p <= FP_READ_DELAY; p++)
		CU_ASSERT_EQUAL(calls(p), 3);
	CU_ASSERT_EQUAL(fired(FP_READ_EIO), 1);
	CU_ASSERT_EQUAL(fired(FP_READ_EINTR), 1);
}

/* Both fire on the first read: EIO wins and EINTR is not counted. */
static void masked_fault_not_counted(void)
{
	on("backing_read/eio@1,backing_read/eintr@1");
	CU_ASSERT_EQUAL(pread_len(3, 4096), -EIO);
	CU_ASSERT_EQUAL(fired(FP_READ_EIO), 1);
	CU_ASSERT_EQUAL(fired(FP_READ_EINTR), 0);
}

static void short_read_keeps_pages(void)
{
	on("backing_read/short=1");
	CU_ASSERT_EQUAL(pread_len(3, 16384), 8192);
	CU_ASSERT_EQUAL(st.pread_len, 8192);
	CU_ASSERT_EQUAL(pread_len(-1, 12288), 4096);
	CU_ASSERT_EQUAL(st.pread_fd, -1);
	CU_ASSERT_EQUAL(pread_len(3, 8192), 4096);
	/* One page cannot be shorter and stay O_DIRECT. */
	CU_ASSERT_EQUAL(pread_len(3, 4096), 4096);
	CU_ASSERT_EQUAL(fired(FP_READ_SHORT), 3);
	CU_ASSERT_EQUAL(st.preads, 4);
}

/* A buffered read (an unaligned tail, or one resumed after such a short
 * read) may come back short by any number of bytes. */
static void short_read_unaligned(void)
{
	on("backing_read/short=1");
	CU_ASSERT_EQUAL(fs->backing_pread(fs->ctx, 4, NULL, 10001, 0), 5000);
	CU_ASSERT_EQUAL(fs->backing_pread(fs->ctx, 4, NULL, 8192, 100), 4096);
	CU_ASSERT_EQUAL(fs->backing_pread(fs->ctx, 4, NULL, 3, 4096), 1);
	CU_ASSERT_EQUAL(fs->backing_pread(fs->ctx, 4, NULL, 1, 4097), 1);
	CU_ASSERT_EQUAL(st.pread_fd, 4);
	CU_ASSERT_EQUAL(fired(FP_READ_SHORT), 3);
}

static void delayed_read(void)
{
	on("backing_read/delay@1");
	CU_ASSERT_EQUAL(pread_len(3, 8192), 8192);
	CU_ASSERT(st.slept_ns >= 1 * NS_PER_MS && st.slept_ns <= 3 * NS_PER_MS);
	CU_ASSERT_EQUAL(st.pread_len, 8192);
	CU_ASSERT_EQUAL(pread_len(3, 8192), 8192);
	CU_ASSERT(st.slept_ns <= 3 * NS_PER_MS);
	CU_ASSERT_EQUAL(fired(FP_READ_DELAY), 1);
}

static void continue_partial(void)
{
	int64_t mapped = 0;

	on("continue/eagain=1");
	CU_ASSERT_EQUAL(cont(16384, &mapped), -EAGAIN);
	CU_ASSERT_EQUAL(mapped, 8192);
	CU_ASSERT_EQUAL(st.cont_len, 8192);
	CU_ASSERT_EQUAL(cont(12288, &mapped), -EAGAIN);
	CU_ASSERT_EQUAL(mapped, 4096);
	CU_ASSERT_EQUAL(st.cont_len, 4096);
	/* One page has no partial progress. */
	CU_ASSERT_EQUAL(cont(4096, &mapped), 0);
	CU_ASSERT_EQUAL(st.cont_len, 4096);
	CU_ASSERT_EQUAL(fired(FP_CONT_EAGAIN), 2);
	/* The kernel's own failure over the half is passed on. */
	st.cont_rc = -EFAULT;
	CU_ASSERT_EQUAL(cont(8192, &mapped), -EFAULT);
	CU_ASSERT_EQUAL(mapped, -EFAULT);
	CU_ASSERT_EQUAL(st.cont_len, 4096);
	CU_ASSERT_EQUAL(st.continues, 4);
}

static void continue_errors(void)
{
	int64_t mapped = 0;

	on("continue/eexist@1,continue/efault@2");
	CU_ASSERT_EQUAL(cont(8192, &mapped), -EEXIST);
	CU_ASSERT_EQUAL(mapped, -EEXIST);
	CU_ASSERT_EQUAL(cont(8192, &mapped), -EFAULT);
	CU_ASSERT_EQUAL(mapped, -EFAULT);
	CU_ASSERT_EQUAL(st.continues, 0);
	CU_ASSERT_EQUAL(cont(8192, &mapped), 0);
	CU_ASSERT_EQUAL(st.cont_len, 8192);
	CU_ASSERT_EQUAL(st.continues, 1);
	for (int p = FP_CONT_EAGAIN; p <= FP_CONT_EFAULT; p++)
		CU_ASSERT_EQUAL(calls(p), 3);
}

static void wake_punch_and_uffd_read(void)
{
	on("wake=1,punch=1,uffd_read/eintr=1");
	CU_ASSERT_EQUAL(wake(), -EIO);
	CU_ASSERT_EQUAL(punch(), -EIO);
	CU_ASSERT_EQUAL(fs->uffd_read(fs->ctx, 4, NULL, 1), -EINTR);
	CU_ASSERT_EQUAL(st.wakes + st.punches + st.reads, 0);
	off();
	CU_ASSERT_EQUAL(wake(), 0);
	CU_ASSERT_EQUAL(punch(), 0);
	CU_ASSERT_EQUAL(fs->uffd_read(fs->ctx, 4, NULL, 1), 1);
	CU_ASSERT_EQUAL(st.wakes + st.punches + st.reads, 3);
}

static void memfd_write_faults(void)
{
	on("memfd_write/enomem@1,memfd_write/short@2");
	CU_ASSERT_EQUAL(fs->memfd_write(fs->ctx, 3, NULL, 8192, 0), -ENOMEM);
	CU_ASSERT_EQUAL(st.writes, 0);
	CU_ASSERT_EQUAL(fs->memfd_write(fs->ctx, 3, NULL, 8192, 0), 4096);
	CU_ASSERT_EQUAL(st.write_len, 4096);
	CU_ASSERT_EQUAL(fs->memfd_write(fs->ctx, 3, NULL, 8192, 0), 8192);
	CU_ASSERT_EQUAL(st.writes, 2);
	CU_ASSERT_EQUAL(calls(FP_WRITE_ENOMEM), 3);
	CU_ASSERT_EQUAL(fired(FP_WRITE_ENOMEM), 1);
	CU_ASSERT_EQUAL(fired(FP_WRITE_SHORT), 1);
}

static void cgroup_reads_only(void)
{
	char buf[64];

	on("cgroup_read=1");
	CU_ASSERT_EQUAL(fs->read_text(fs->ctx, "/sys/fs/cgroup/a/memory.max",
				      buf, sizeof(buf)),
			-EIO);
	CU_ASSERT_EQUAL(fs->read_text(fs->ctx, "/x/memory.stat", buf,
				      sizeof(buf)),
			-EIO);
	CU_ASSERT_EQUAL(fs->read_text(fs->ctx, "/proc/meminfo", buf,
				      sizeof(buf)),
			0);
	CU_ASSERT_EQUAL(st.texts, 1);
	CU_ASSERT_EQUAL(calls(FP_CGROUP_READ), 2);
	CU_ASSERT_EQUAL(fired(FP_CGROUP_READ), 2);
}

static void slow_worker(void)
{
	on("worker/slow=1");
	fs->yield(fs->ctx, "ring-push");
	CU_ASSERT_EQUAL(st.slept_ns, 0);
	fs->yield(fs->ctx, "worker-job");
	CU_ASSERT_EQUAL(st.slept_ns, 2 * NS_PER_MS);
	CU_ASSERT_EQUAL(st.yields, 2);
	CU_ASSERT_EQUAL(calls(FP_SLOW_WORKER), 1);
	CU_ASSERT_EQUAL(fired(FP_SLOW_WORKER), 1);
}

static void spurious_wakeup(void)
{
	fs->cond_wait(fs->ctx, &cond, &mutex);
	CU_ASSERT_EQUAL(st.waits, 1);
	on("cond/spurious@2");
	fs->cond_wait(fs->ctx, &cond, &mutex);
	fs->cond_wait(fs->ctx, &cond, &mutex);
	CU_ASSERT_EQUAL(st.waits, 2);
	CU_ASSERT_EQUAL(st.unlocks, 1);
	CU_ASSERT_EQUAL(st.locks, 1);
	CU_ASSERT_EQUAL(calls(FP_SPURIOUS_WAKEUP), 2);
	CU_ASSERT_EQUAL(fired(FP_SPURIOUS_WAKEUP), 1);
}

static void names_and_all(void)
{
	int64_t mapped;

	for (int p = 0; p < FP_COUNT; p++)
		CU_ASSERT_EQUAL(strncmp(fault_name(p), "resid/", 6), 0);
	CU_ASSERT_PTR_NULL(fault_name(FP_COUNT));
	on("resid/wake@1");
	CU_ASSERT_EQUAL(wake(), -EIO);
	fresh();
	on("all=1");
	CU_ASSERT_EQUAL(wake(), -EIO);
	CU_ASSERT_EQUAL(punch(), -EIO);
	CU_ASSERT_EQUAL(pread_len(3, 8192), -EIO);
	CU_ASSERT_EQUAL(cont(8192, &mapped), -EFAULT);
	fs->cond_wait(fs->ctx, &cond, &mutex);
	CU_ASSERT_EQUAL(st.unlocks, 1);
	off();
	CU_ASSERT_EQUAL(wake(), 0);
	CU_ASSERT_EQUAL(pread_len(3, 8192), 8192);
}

/* Every op it does not wrap reaches the inner seam with the inner's ctx. */
static void passes_the_rest(void)
{
	CU_ASSERT_PTR_EQUAL(fs->ctx, inst);
	CU_ASSERT_PTR_EQUAL(fs->name, stub.name);
	CU_ASSERT_EQUAL(fs->clock_ns(fs->ctx), NOW);
	fs->sleep_ns(fs->ctx, 5);
	CU_ASSERT_EQUAL(st.slept_ns, 5);
	CU_ASSERT_EQUAL(punch(), 0);
	CU_ASSERT_EQUAL(st.punches, 1);
	/* An empty plan only passes calls on. */
	CU_ASSERT_EQUAL(calls(FP_PUNCH), 0);
}

/* Two runs' instances share nothing: plans, counts, streams. */
static void instances_share_nothing(void)
{
	struct fault_plan other = { 0 };
	struct fault_seam *b;
	const struct resid_seam *bs;
	char err[256];

	on("punch=1");
	CU_ASSERT_EQUAL_FATAL(fault_plan_add(&other, "x", "wake@1", err,
					     sizeof(err)),
			      0);
	b = fault_seam_new(&stub, &other, 9, NULL, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	bs = fault_seam_ops(b);
	CU_ASSERT_EQUAL(bs->punch(bs->ctx, 6, 0, 4096), 0);
	CU_ASSERT_EQUAL(punch(), -EIO);
	CU_ASSERT_EQUAL(bs->uffd_wake(bs->ctx, 5, 0x10000, 4096), -EIO);
	CU_ASSERT_EQUAL(wake(), 0);
	CU_ASSERT_EQUAL(fault_seam_fired(b, FP_PUNCH), 0);
	CU_ASSERT_EQUAL(fault_seam_fired(b, FP_WAKE), 1);
	CU_ASSERT_EQUAL(fired(FP_PUNCH), 1);
	CU_ASSERT_EQUAL(fired(FP_WAKE), 0);
	fault_seam_free(b);
}

static uint64_t fixed_draw(void *arg)
{
	return *(uint64_t *)arg;
}

/* The simulation's stream decides probabilities, not the hash. */
static void draws_from_a_stream(void)
{
	uint64_t v = 0;
	struct fault_seam *b;
	const struct resid_seam *bs;

	on("punch=0.5");
	b = fault_seam_new(&stub, &plan, 1, fixed_draw, &v);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	bs = fault_seam_ops(b);
	for (int i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(bs->punch(bs->ctx, 6, 0, 4096), -EIO);
	v = UINT64_MAX;
	for (int i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(bs->punch(bs->ctx, 6, 0, 4096), 0);
	CU_ASSERT_EQUAL(fault_seam_fired(b, FP_PUNCH), 10);
	fault_seam_free(b);
}

/* A point a run cannot fire is refused with one line; all=P keeps what
 * it can fire; the plan writes back as it was given. */
static void fit_and_format(void)
{
	char err[512] = "", buf[512];

	on("punch=0.25,wake@3+5");
	CU_ASSERT_EQUAL(fault_plan_format(&plan, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "wake@3+5,punch=0.25");
	CU_ASSERT_EQUAL(fault_plan_fit(&plan, 1u << FP_PUNCH, "T-9", err,
				       sizeof(err)),
			-1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "wake cannot fire in T-9"));
	CU_ASSERT_PTR_NULL(strchr(err, '\n'));
	CU_ASSERT_EQUAL(fault_plan_fit(&plan, FAULT_ALL, "T-1", err,
				       sizeof(err)),
			0);
	CU_ASSERT_EQUAL(plan.on, 1u << FP_PUNCH | 1u << FP_WAKE);
	off();
	on("all=0.5");
	CU_ASSERT_EQUAL(fault_plan_fit(&plan, 0, "T-5", err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "T-5"));
	CU_ASSERT_EQUAL(fault_plan_fit(&plan, 1u << FP_WAKE, "T-1", err,
				       sizeof(err)),
			0);
	CU_ASSERT_EQUAL(fault_plan_format(&plan, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "wake=0.5");
	/* A report row counts what fired per point the plan names. */
	struct scen_result res = { 0 };
	uint64_t f[FP_COUNT] = { [FP_WAKE] = 3 };

	fault_report(&plan, f, &res);
	fault_report(&plan, f, &res);
	CU_ASSERT_EQUAL(res.ncounters, 1);
	CU_ASSERT_STRING_EQUAL(res.counters[0].name, "fired:wake");
	CU_ASSERT_EQUAL(res.counters[0].value, 6);
}

/* A swarm: per seed a subset of the points, each at a
 * probability from 0.01 to its ceiling; the same seed the same draw; a
 * rule the plan names wins; it formats as "swarm" and parses back; fitted,
 * it keeps what the run can fire and is never refused. */
static void swarm_draws(void)
{
	char err[512] = "", buf[512];
	struct fault_plan a, b;
	uint32_t seen = 0, differ = 0;

	on("swarm,wake=0.25");
	CU_ASSERT_EQUAL(plan.swarm, FAULT_ALL);
	CU_ASSERT_EQUAL(fault_plan_format(&plan, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "swarm,wake=0.25");
	for (uint64_t s = 1; s <= 64; s++) {
		fault_plan_swarm(&plan, s, &a);
		fault_plan_swarm(&plan, s, &b);
		CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof(a)), 0);
		CU_ASSERT_EQUAL(a.swarm, 0);
		CU_ASSERT_STRING_EQUAL(a.rule[FP_WAKE].prob, "0.25");
		seen |= a.on;
		fault_plan_swarm(&plan, s + 1, &b);
		differ |= a.on ^ b.on;
		for (int p = 0; p < FP_COUNT; p++) {
			double v = atof(a.rule[p].prob);
			double hi = p == FP_CONT_EEXIST || p == FP_CONT_EFAULT ?
					    0.03 :
				    p == FP_CGROUP_READ ? 0.1 :
							  0.5;

			if (!(a.on & 1u << p) || p == FP_WAKE)
				continue;
			CU_ASSERT(v >= 0.01 && v <= hi);
		}
	}
	CU_ASSERT_EQUAL(seen, FAULT_ALL);
	CU_ASSERT_NOT_EQUAL(differ, 0);
	CU_ASSERT(fault_plan_fit(&plan, 1u << FP_PUNCH, "T-9", err,
				 sizeof(err)) == -1); /* wake: a named rule */
	off();
	on("swarm");
	CU_ASSERT_EQUAL(fault_plan_fit(&plan, 0, "T-5", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(plan.swarm, 0);
	off();
	on("swarm");
	CU_ASSERT_EQUAL(fault_plan_fit(&plan, 1u << FP_PUNCH, "T-1", err,
				       sizeof(err)),
			0);
	CU_ASSERT_EQUAL(plan.swarm, 1u << FP_PUNCH);
	/* A seed that turns punch on: its seam, which draws from the same
	 * seed, fails punches. */
	for (seed = 1; seed < 64; seed++) {
		fault_plan_swarm(&plan, seed, &a);
		if (a.on)
			break;
	}
	CU_ASSERT_EQUAL_FATAL(a.on, 1u << FP_PUNCH);
	rewrap();
	for (int i = 0; i < 2000 && !fired(FP_PUNCH); i++)
		(void)punch();
	CU_ASSERT(fired(FP_PUNCH) > 0);
	CU_ASSERT_EQUAL(fault_swarm_chunk(7), fault_swarm_chunk(7));
}

/* Points are libfiu's: in a run that injects faults its own control
 * reaches them too. */
static void libfiu_control(void)
{
	on("punch=0");
	CU_ASSERT_EQUAL_FATAL(fiu_enable("resid/wake", 1, NULL, 0), 0);
	CU_ASSERT_EQUAL(wake(), -EIO);
	CU_ASSERT_EQUAL(fired(FP_WAKE), 1);
	CU_ASSERT_EQUAL(fiu_disable("resid/wake"), 0);
	CU_ASSERT_EQUAL(wake(), 0);
}

static void from_environment(void)
{
	struct cli_opt opts[] = { CLI_FAULT(&plan, ""), { 0 } };
	const struct cli_spec spec = { .cmd = "test", .opts = opts };
	char *argv[] = { "test" }, err[512] = "";

	CU_ASSERT_EQUAL_FATAL(unsetenv(ENV), 0);
	CU_ASSERT_EQUAL(cli_parse(&spec, 1, argv), CLI_RUN);
	CU_ASSERT_EQUAL_FATAL(setenv(ENV, "", 1), 0);
	CU_ASSERT_EQUAL(cli_parse(&spec, 1, argv), CLI_RUN);
	CU_ASSERT_EQUAL(plan.on, 0);
	CU_ASSERT_EQUAL_FATAL(setenv(ENV, "wake@2,bogus=1", 1), 0);
	CU_ASSERT_EQUAL(cli_parse(&spec, 1, argv), 2);
	CU_ASSERT_EQUAL(plan.on, 0);
	CU_ASSERT_EQUAL(fault_plan_opt(&plan, ENV, "wake@2,bogus=1", err,
				       sizeof(err)),
			-1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ENV));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "\"bogus\""));
	CU_ASSERT_EQUAL(plan.on, 0);
	CU_ASSERT_EQUAL_FATAL(setenv(ENV, "wake@2,punch=1", 1), 0);
	CU_ASSERT_EQUAL(cli_parse(&spec, 1, argv), CLI_RUN);
	CU_ASSERT_EQUAL(unsetenv(ENV), 0);
	rewrap();
	CU_ASSERT_EQUAL(wake(), 0);
	CU_ASSERT_EQUAL(wake(), -EIO);
	CU_ASSERT_EQUAL(punch(), -EIO);
}

void suite_fault(void)
{
	CU_pSuite s = CU_add_suite_with_setup_and_teardown("fault injection",
							   init, clean, fresh,
							   NULL);

	CU_add_test(s, "parse errors name the value and the fix", parse_errors);
	CU_add_test(s, "NAME@N fires on the Nth call only",
		    nth_call_fires_once);
	CU_add_test(s, "NAME@N+M+.. fires on those calls", several_calls);
	CU_add_test(s, "P=0 never fires, P=1 always", zero_never_one_always);
	CU_add_test(s, "P=0.3 fires about 30%", probability_in_band);
	CU_add_test(s, "a seed replays, another differs", seed_replays);
	CU_add_test(s, "threads share no generator",
		    threads_share_no_generator);
	CU_add_test(s, "read EIO and EINTR", read_errors);
	CU_add_test(s, "a masked fault is not counted",
		    masked_fault_not_counted);
	CU_add_test(s, "short read keeps whole pages", short_read_keeps_pages);
	CU_add_test(s, "an unaligned read comes back short by bytes",
		    short_read_unaligned);
	CU_add_test(s, "delayed read sleeps 1..3 ms", delayed_read);
	CU_add_test(s, "CONTINUE EAGAIN maps half", continue_partial);
	CU_add_test(s, "CONTINUE EEXIST and EFAULT", continue_errors);
	CU_add_test(s, "WAKE, punch and uffd read", wake_punch_and_uffd_read);
	CU_add_test(s, "memfd write: ENOMEM and short", memfd_write_faults);
	CU_add_test(s, "only cgroup reads fail", cgroup_reads_only);
	CU_add_test(s, "slow worker", slow_worker);
	CU_add_test(s, "spurious wakeup", spurious_wakeup);
	CU_add_test(s, "short names and all", names_and_all);
	CU_add_test(s, "the other ops pass through", passes_the_rest);
	CU_add_test(s, "instances share nothing", instances_share_nothing);
	CU_add_test(s, "a run's own stream decides", draws_from_a_stream);
	CU_add_test(s, "fit to a run, format back", fit_and_format);
	CU_add_test(s, "swarm: a draw per seed", swarm_draws);
	CU_add_test(s, "libfiu's control reaches the points", libfiu_control);
	CU_add_test(s, "RESIDCTL_FAULTS", from_environment);
}
