/* The simulated kernel and the deterministic scheduler (harness/sim/): a
 * tiny pager scenario passes under every seed of both strategies; a seed,
 * or a recorded schedule, replays the same run; the quiescence classifier
 * names a deadlock, a lost wakeup and a missing signal in tiny broken
 * programs; CONTINUE keeps the kernel's errno rules. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fault/bugs.h"
#include "fault/fault.h"
#include "invariants.h"
#include "resid_harness.h"
#include "seam.h"
#include "sim/explore.h"
#include "sim/sim.h"
#include "tests/suites.h"

#define PAGE RESID_PAGE
#define CHUNK (16u << 10)
#define NCHUNKS 4
#define SEED 7
#define SEEDS 200

/* ---- the tiny pager scenario ---- */

struct scen {
	void (*app)(void *arg); /* the application threads' body */
	struct sim *s;
	struct fault_seam *fs; /* the pager's seam over the sim's */
	struct resid_region *r;
	struct resid_stats st;
	uintptr_t base;
};

static void inv_to_sim(int id, const char *msg, void *arg)
{
	sim_fail(arg, "I-%d: %s", id, msg);
}

/* Reads every chunk twice through the simulated kernel. */
static void app(void *arg)
{
	struct scen *sc = arg;
	uint8_t buf[CHUNK];

	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < NCHUNKS; i++) {
			uint64_t off, len, bad;

			if (resid_chunk_range(sc->r, i, &off, &len) < 0 ||
			    resid_notify_access(sc->r, i) < 0 ||
			    sim_read(sc->s, resid_base(sc->r) + off, buf, len) <
				    0) {
				sim_fail(sc->s, "chunk %u: SIGBUS", i);
				return;
			}
			bad = resid_content_mismatches(buf, off, len, SEED);
			if (bad)
				sim_fail(sc->s, "chunk %u: %llu bytes differ",
					 i, (unsigned long long)bad);
		}
}

/* Reads chunk 0, drops A's entry of its page 1 (the application's
 * MADV_DONTNEED), reads chunk 0 again: the page refaults MINOR under a
 * RESIDENT chunk (budget 2, one chunk read). */
static void drop_app(void *arg)
{
	struct scen *sc = arg;
	uint8_t buf[CHUNK];
	uint64_t off, len;

	for (int pass = 0; pass < 2; pass++) {
		if (resid_chunk_range(sc->r, 0, &off, &len) < 0 ||
		    sim_read(sc->s, resid_base(sc->r) + off, buf, len) < 0) {
			sim_fail(sc->s, "chunk 0: SIGBUS");
			return;
		}
		if (resid_content_mismatches(buf, off, len, SEED))
			sim_fail(sc->s, "chunk 0: bytes differ");
		if (!pass &&
		    sim_drop(sc->s, resid_base(sc->r) + off + PAGE, PAGE) < 0)
			sim_fail(sc->s, "sim_drop refused");
	}
}

static void scenario(void *arg)
{
	struct scen *sc = arg;
	struct resid_config c;
	struct resid_harness h;
	char err[RESID_ERRLEN];

	resid_config_init(&c);
	c.region_len = NCHUNKS * CHUNK;
	c.chunk_size = CHUNK;
	c.budget_bytes = 2 * CHUNK;
	c.backing = RESID_BACKING_SYNTHETIC;
	c.seed = SEED;
	c.policy = RESID_POLICY_DECLARED;
	c.fetch_workers = 2;
	c.prefetch_depth = 1;
	resid_harness_init(&h);
	h.eager_reconcile = 1;
	h.seam = fault_seam_ops(sc->fs);
	c.harness = &h;
	sc->r = resid_open(&c, err);
	if (!sc->r) {
		sim_fail(sc->s, "resid_open: %s", err);
		return;
	}
	sc->base = (uintptr_t)resid_base(sc->r);
	for (int i = 0; i < 2; i++)
		if (sim_spawn(sc->s, sc->app, sc, "app") < 0)
			sim_fail(sc->s, "sim_spawn failed");
	sim_join_apps(sc->s);
	if (resid_check_quiescent(sc->r))
		sim_fail(sc->s, "resid_check_quiescent found violations");
	resid_get_stats(sc->r, &sc->st);
	uint64_t made = sc->st.continues_ok - sc->st.lazy_fetches +
			sc->st.refaults_served + sc->st.lazy_maps;

	if (made != sim_continues_ok(sc->s))
		sim_fail(sc->s, "pager counts %llu CONTINUEs, kernel %llu",
			 (unsigned long long)made,
			 (unsigned long long)sim_continues_ok(sc->s));
	resid_close(sc->r);
}

/* The faults run_pager injects: none but in schedule_replays. */
static struct fault_plan faults;
/* Its application threads' body: app but in drop_refaults. */
static void (*app_fn)(void *arg) = app;

static uint64_t draw(void *s)
{
	return sim_draw(s);
}

struct outcome {
	enum sim_verdict v;
	uint64_t fired;
	uint64_t hash, lock_hash, steps, preemptions;
	uint16_t *sched;
	size_t n;
	struct resid_stats st;
	uintptr_t base;
	char why[256];
};

static void run_pager(const struct sim_config *cfg, struct outcome *o)
{
	struct scen sc = { .app = app_fn, .s = sim_create(cfg) };
	const uint16_t *sched;

	memset(o, 0, sizeof(*o));
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc.s);
	sc.fs = fault_seam_new(sim_seam(sc.s), &faults, cfg->seed, draw, sc.s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc.fs);
	inv_set_handler(inv_to_sim, sc.s);
	o->v = sim_run(sc.s, scenario, &sc);
	inv_set_handler(NULL, NULL);
	o->hash = sim_log_hash(sc.s);
	o->lock_hash = sim_lock_order_hash(sc.s);
	o->steps = sim_steps(sc.s);
	o->preemptions = sim_preemptions(sc.s);
	o->st = sc.st;
	snprintf(o->why, sizeof(o->why), "%s", sim_why(sc.s));
	sched = sim_schedule(sc.s, &o->n);
	o->sched = malloc(o->n * sizeof(*o->sched) + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o->sched);
	memcpy(o->sched, sched, o->n * sizeof(*o->sched));
	o->base = sc.base;
	for (int p = 0; p < FP_COUNT; p++)
		o->fired += fault_seam_fired(sc.fs, p);
	fault_seam_free(sc.fs);
	sim_destroy(sc.s);
}

static struct sim_config config(uint64_t seed, enum sim_strategy st)
{
	struct sim_config c = {
		.seed = seed,
		.strategy = st,
		.pct_depth = 3,
		.pct_steps = 800,
	};

	return c;
}

static void sweep(enum sim_strategy st)
{
	uint64_t preemptions = 0, evictions = 0, prefetches = 0;
	unsigned failures = 0;

	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct sim_config c = config(seed, st);
		struct outcome o;

		run_pager(&c, &o);
		preemptions += o.preemptions;
		evictions += o.st.evictions;
		prefetches += o.st.prefetch_jobs;
		free(o.sched);
		/* The first failure names the seed; the rest would only
		 * take the suite's time. */
		if (o.v != SIM_PASS) {
			fprintf(stderr, "\n  seed %llu %s: %s: %s\n",
				(unsigned long long)seed,
				st == SIM_PCT ? "pct" : "random",
				sim_verdict_name(o.v), o.why);
			failures++;
			break;
		}
	}
	CU_ASSERT_EQUAL_FATAL(failures, 0);
	/* The runs interleaved, evicted and prefetched. */
	CU_ASSERT(preemptions > SEEDS);
	CU_ASSERT(evictions > SEEDS);
	CU_ASSERT(prefetches > 0);
}

static void pager_passes_random(void)
{
	sweep(SIM_RANDOM);
}

static void pager_passes_pct(void)
{
	sweep(SIM_PCT);
}

/* A drop of A's entry under a RESIDENT chunk, then a read: the fault is
 * served with a CONTINUE (refaults_served). With bug 11 (a wake only) the
 * thread faults for ever, which the simulation calls a livelock. */
static void drop_refaults(void)
{
	uint64_t served = 0;
	unsigned bad = 0, caught = 0;
	unsigned saved = bugs_enabled();

	app_fn = drop_app;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim_config c = config(seed, SIM_RANDOM);
		struct outcome o;

		bugs_enable(0);
		run_pager(&c, &o);
		free(o.sched);
		served += o.st.refaults_served;
		if (o.v != SIM_PASS && bad++ < 3)
			fprintf(stderr, "\n  seed %llu: %s: %s\n",
				(unsigned long long)seed, sim_verdict_name(o.v),
				o.why);
		bugs_enable(1u << 11);
		run_pager(&c, &o);
		free(o.sched);
		caught += o.v == SIM_LIVELOCK;
	}
	bugs_enable(saved);
	app_fn = app;
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(served >= 20);
	CU_ASSERT_EQUAL(caught, 20);
}

/* A page held where the first run's mapping A was makes the rerun map it
 * elsewhere: the log holds offsets and ids, never addresses. */
static void seed_replays(void)
{
	struct sim_config c = config(42, SIM_RANDOM);
	struct outcome a, b, d;
	void *hold;

	run_pager(&c, &a);
	hold = mmap((void *)a.base, PAGE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CU_ASSERT_FATAL(hold == (void *)a.base);
	run_pager(&c, &b);
	CU_ASSERT_EQUAL(munmap(hold, PAGE), 0);
	c.seed = 43;
	run_pager(&c, &d);
	CU_ASSERT_EQUAL(a.v, SIM_PASS);
	CU_ASSERT_EQUAL(a.hash, b.hash);
	CU_ASSERT_EQUAL(a.lock_hash, b.lock_hash);
	CU_ASSERT_EQUAL(a.n, b.n);
	CU_ASSERT(a.n == b.n && !memcmp(a.sched, b.sched, a.n * 2));
	CU_ASSERT_NOT_EQUAL(a.hash, d.hash);
	free(a.sched);
	free(b.sched);
	free(d.sched);
}

/* With injected faults the stream decides them too: a replay still draws
 * the strategy's numbers, so the same seed and schedule give the same run,
 * faults and all. */
static void schedule_replays(void)
{
	struct sim_config c;
	struct outcome a, b;
	char err[256];
	uint64_t seed;

	CU_ASSERT_EQUAL_FATAL(fault_plan_add(&faults, "test",
					     "backing_read/short=0.5,"
					     "backing_read/eintr=0.2",
					     err, sizeof(err)),
			      0);
	/* The first seed from 5 whose run fires both faults: which one does
	 * depends on how many reads a run makes, not on what is tested. */
	for (seed = 5; seed < 64; seed++) {
		c = config(seed, SIM_RANDOM);
		run_pager(&c, &a);
		if (a.st.io_short && a.fired > a.st.io_short)
			break;
		free(a.sched);
	}
	CU_ASSERT_FATAL(seed < 64);
	c.replay = a.sched;
	c.nreplay = a.n;
	run_pager(&c, &b);
	memset(&faults, 0, sizeof(faults));
	CU_ASSERT_EQUAL(a.v, SIM_PASS);
	CU_ASSERT_EQUAL(b.fired, a.fired);
	CU_ASSERT_EQUAL(b.hash, a.hash);
	CU_ASSERT_EQUAL(b.steps, a.steps);
	free(a.sched);
	free(b.sched);
}

/* Another seed, even another strategy, follows a recorded schedule. */
static void schedule_replays_other_seed(void)
{
	struct sim_config c = config(8, SIM_RANDOM);
	struct outcome a, b;

	run_pager(&c, &a);
	c.replay = a.sched;
	c.nreplay = a.n;
	c.seed = 1234;
	c.strategy = SIM_PCT;
	run_pager(&c, &b);
	CU_ASSERT_EQUAL(a.v, SIM_PASS);
	CU_ASSERT_EQUAL(b.v, SIM_PASS);
	CU_ASSERT_EQUAL(b.hash, a.hash);
	CU_ASSERT_EQUAL(b.lock_hash, a.lock_hash);
	free(a.sched);
	free(b.sched);
}

/* ---- tiny broken programs ---- */

struct prog {
	struct sim *s;
	const struct resid_seam *k;
	resid_mutex a, b;
	resid_cond c;
	int flag, mode, uffd, memfd;
	uint8_t *ma, *mb;
	int rc[16];
	int64_t mapped[16];
	uint64_t v[8];
	uint8_t got[8];
};

#define SEAM(p, op, ...) ((p)->k->op((p)->k->ctx, ##__VA_ARGS__))

static void ab(void *arg)
{
	struct prog *p = arg;

	SEAM(p, lock, &p->a);
	SEAM(p, lock, &p->b);
	SEAM(p, unlock, &p->b);
	SEAM(p, unlock, &p->a);
}

static void ba(void *arg)
{
	struct prog *p = arg;

	SEAM(p, lock, &p->b);
	SEAM(p, lock, &p->a);
	SEAM(p, unlock, &p->a);
	SEAM(p, unlock, &p->b);
}

static void two_locks(void *arg)
{
	struct prog *p = arg;

	SEAM(p, mutex_init, &p->a);
	SEAM(p, mutex_init, &p->b);
	sim_spawn(p->s, ab, p, "ab");
	sim_spawn(p->s, ba, p, "ba");
	sim_join_apps(p->s);
}

static enum sim_verdict run_prog(struct prog *p, struct sim_config *c,
				 void (*fn)(void *), char *why, size_t n)
{
	enum sim_verdict v;

	p->s = sim_create(c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p->s);
	p->k = sim_seam(p->s);
	v = sim_run(p->s, fn, p);
	snprintf(why, n, "%s", sim_why(p->s));
	sim_destroy(p->s);
	return v;
}

static void deadlock_found(void)
{
	char why[1024] = "";
	int found = 0, passed = 0;

	for (uint64_t seed = 1; seed <= 100; seed++) {
		struct sim_config c = config(seed, SIM_RANDOM);
		struct prog p = { 0 };
		char w[1024];
		enum sim_verdict v = run_prog(&p, &c, two_locks, w, sizeof(w));

		passed += v == SIM_PASS;
		if (v == SIM_DEADLOCK && !found++)
			snprintf(why, sizeof(why), "%s", w);
	}
	CU_ASSERT(found > 0);
	CU_ASSERT(passed > 0);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(why, "(ab) holds lock 0, waits for lock 1"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(why, "(ba) holds lock 1, waits for lock 0"));
}

/* A region of 4 pages, A registered for MISSING and MINOR faults. */
static void region(struct prog *p)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING |
					       UFFDIO_REGISTER_MODE_MINOR };
	void *a = NULL, *b = NULL;

	p->uffd = SEAM(p, uffd_open, O_CLOEXEC | O_NONBLOCK);
	p->memfd = SEAM(p, memfd_create, "t");
	if (p->uffd < 0 || p->memfd < 0 || SEAM(p, uffd_api, p->uffd, &api) ||
	    SEAM(p, ftruncate, p->memfd, 4 * PAGE) ||
	    SEAM(p, map, p->memfd, 4 * PAGE, PROT_READ, &a) ||
	    SEAM(p, map, p->memfd, 4 * PAGE, PROT_READ | PROT_WRITE, &b)) {
		sim_fail(p->s, "region setup failed");
		return;
	}
	p->ma = a;
	p->mb = b;
	reg.range.start = (uintptr_t)a;
	reg.range.len = 4 * PAGE;
	if (SEAM(p, uffd_register, p->uffd, &reg) ||
	    !(reg.ioctls & (1ull << _UFFDIO_CONTINUE)))
		sim_fail(p->s, "UFFDIO_REGISTER failed");
}

static void reader(void *arg)
{
	struct prog *p = arg;

	if (sim_read(p->s, p->ma + 2 * PAGE + 8, p->got, sizeof(p->got)) < 0)
		sim_fail(p->s, "SIGBUS in the reader");
}

/* Takes one message from the uffd, polling with the dispatcher's tick. */
static struct uffd_msg take_message(struct prog *p)
{
	struct uffd_msg m = { 0 };

	while (SEAM(p, uffd_read, p->uffd, &m, 1) != 1)
		SEAM(p, wait_readable, p->uffd, -1, 50);
	return m;
}

/* mode 0: nobody reads the uffd; 1: the message is read and dropped, then
 * the server polls forever; 2: the server populates and CONTINUEs. */
static void fault_served(void *arg)
{
	struct prog *p = arg;
	struct uffd_msg m;
	int64_t mapped;

	region(p);
	sim_spawn(p->s, reader, p, "reader");
	if (p->mode == 0) {
		sim_join_apps(p->s);
		return;
	}
	m = take_message(p);
	p->v[0] = m.arg.pagefault.flags;
	p->v[1] = m.arg.pagefault.address - (uintptr_t)p->ma;
	if (p->mode == 1)
		for (;;)
			SEAM(p, wait_readable, p->uffd, -1, 50);
	if (SEAM(p, backing_pread, -1, p->mb + 2 * PAGE, PAGE, 2 * PAGE) !=
	    PAGE)
		sim_fail(p->s, "backing read failed");
	memset(p->mb + 2 * PAGE, 0x5a, PAGE);
	if (SEAM(p, uffd_continue, p->uffd, (uintptr_t)p->ma + 2 * PAGE, PAGE,
		 &mapped) ||
	    mapped != PAGE)
		sim_fail(p->s, "CONTINUE failed");
	sim_join_apps(p->s);
}

static void lost_wakeup_found(void)
{
	struct sim_config c = config(3, SIM_RANDOM);
	struct prog p = { 0 };
	char why[1024];

	c.idle_limit_ns = 1000000000ull;
	CU_ASSERT_EQUAL(run_prog(&p, &c, fault_served, why, sizeof(why)),
			SIM_LOST_WAKEUP);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(why, "(reader) sleeps on a fault at offset 0x2000"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "unread"));

	p = (struct prog){ .mode = 1 };
	CU_ASSERT_EQUAL(run_prog(&p, &c, fault_served, why, sizeof(why)),
			SIM_LOST_WAKEUP);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "never answered"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "without progress"));
	CU_ASSERT_EQUAL(p.v[0], 0); /* a hole: MISSING */
	CU_ASSERT_EQUAL(p.v[1], 2 * PAGE);

	/* The control: served, the reader gets the page's bytes. */
	p = (struct prog){ .mode = 2 };
	CU_ASSERT_EQUAL(run_prog(&p, &c, fault_served, why, sizeof(why)),
			SIM_PASS);
	CU_ASSERT_EQUAL(p.got[0], 0x5a);
	CU_ASSERT_EQUAL(p.got[7], 0x5a);
}

static void waiter(void *arg)
{
	struct prog *p = arg;

	SEAM(p, mutex_init, &p->a);
	SEAM(p, cond_init, &p->c);
	SEAM(p, lock, &p->a);
	while (!p->flag)
		SEAM(p, cond_wait, &p->c, &p->a);
	SEAM(p, unlock, &p->a);
}

static void signaller(void *arg)
{
	struct prog *p = arg;

	SEAM(p, lock, &p->a);
	p->flag = 1;
	SEAM(p, cond_signal, &p->c);
	SEAM(p, unlock, &p->a);
}

static void signalled(void *arg)
{
	struct prog *p = arg;

	SEAM(p, mutex_init, &p->a);
	SEAM(p, cond_init, &p->c);
	sim_spawn(p->s, signaller, p, "signaller");
	SEAM(p, lock, &p->a);
	while (!p->flag)
		SEAM(p, cond_wait, &p->c, &p->a);
	SEAM(p, unlock, &p->a);
	sim_join_apps(p->s);
}

static void no_signal_found(void)
{
	struct sim_config c = config(4, SIM_RANDOM);
	struct prog p = { 0 };
	char why[1024];

	CU_ASSERT_EQUAL(run_prog(&p, &c, waiter, why, sizeof(why)),
			SIM_NO_SIGNAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "thread 0 (main) waits on cond 0"));
	for (uint64_t seed = 1; seed <= 20; seed++) {
		c.seed = seed;
		p = (struct prog){ 0 };
		CU_ASSERT_EQUAL(run_prog(&p, &c, signalled, why, sizeof(why)),
				SIM_PASS);
	}
}

static void spinner(void *arg)
{
	struct prog *p = arg;

	while (!__atomic_load_n(&p->flag, __ATOMIC_ACQUIRE))
		SEAM(p, yield, "spin");
}

static void setter(void *arg)
{
	struct prog *p = arg;

	SEAM(p, yield, "set");
	__atomic_store_n(&p->flag, 1, __ATOMIC_RELEASE);
}

static void spin_until_set(void *arg)
{
	struct prog *p = arg;

	sim_spawn(p->s, spinner, p, "spinner");
	sim_spawn(p->s, setter, p, "setter");
	sim_join_apps(p->s);
}

/* PCT's priorities (depth 1: no change point to demote the spinner) would
 * let a spinner starve its setter forever; the fairness bound runs it. */
static void starved_thread_runs(void)
{
	char why[1024];

	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct sim_config c = config(seed, SIM_PCT);
		struct prog p = { 0 };

		c.pct_depth = 1;
		c.fair_steps = 100;
		c.max_steps = 10000;
		CU_ASSERT_EQUAL(run_prog(&p, &c, spin_until_set, why,
					 sizeof(why)),
				SIM_PASS);
	}
}

static void sleeper(void *arg)
{
	struct prog *p = arg;

	while (!p->flag)
		SEAM(p, sleep_ns, 50000000);
}

static void sleeps_forever(void *arg)
{
	struct prog *p = arg;

	sim_spawn(p->s, sleeper, p, "sleeper");
	sim_join_apps(p->s);
}

/* Only timers fire and nothing progresses: the idle limit ends it. */
static void timer_livelock_is_a_hang(void)
{
	struct sim_config c = config(1, SIM_RANDOM);
	struct prog p = { 0 };
	char why[1024];

	c.idle_limit_ns = 1000000000ull;
	CU_ASSERT_EQUAL(run_prog(&p, &c, sleeps_forever, why, sizeof(why)),
			SIM_STEP_LIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "hang: thread 0 (main) waits for "
					   "the application threads"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "without progress"));
}

/* The errno rules of design.md §2.7 and the fault types, step by step. */
static void continue_rules(void *arg)
{
	struct prog *p = arg;
	uint64_t base, blocks = 0;
	struct uffd_msg m;
	int i = 0;

	region(p);
	base = (uintptr_t)p->ma;
	SEAM(p, backing_pread, -1, p->mb, 2 * PAGE, 0);
	/* pages 0, 1 present: maps them, stops at the hole */
	p->rc[i] = SEAM(p, uffd_continue, p->uffd, base, 4 * PAGE,
			&p->mapped[i]);
	i++;
	p->rc[i] = SEAM(p, uffd_continue, p->uffd, base + 2 * PAGE, 2 * PAGE,
			&p->mapped[i]);
	i++;
	p->rc[i] = SEAM(p, uffd_continue, p->uffd, base, PAGE, &p->mapped[i]);
	i++;
	SEAM(p, fstat_blocks, p->memfd, &blocks);
	p->v[0] = blocks;
	SEAM(p, punch, p->memfd, 0, PAGE);
	SEAM(p, fstat_blocks, p->memfd, &blocks);
	p->v[1] = blocks;
	p->rc[i] = SEAM(p, uffd_continue, p->uffd, base, 2 * PAGE,
			&p->mapped[i]);
	i++;
	SEAM(p, backing_pread, -1, p->mb, PAGE, 0);
	/* page 0 maps, page 1 was mapped all along */
	p->rc[i] = SEAM(p, uffd_continue, p->uffd, base, 2 * PAGE,
			&p->mapped[i]);
	i++;
	p->rc[i] = SEAM(p, uffd_continue, p->uffd, base + 1, PAGE,
			&p->mapped[i]);
	i++;
	/* A reader of page 2 (a hole) raises MISSING; woken after the page
	 * entered the cache, it faults again, MINOR; CONTINUE serves it. */
	sim_spawn(p->s, reader, p, "reader");
	m = take_message(p);
	p->v[2] = m.arg.pagefault.flags;
	SEAM(p, backing_pread, -1, p->mb + 2 * PAGE, PAGE, 2 * PAGE);
	memset(p->mb + 2 * PAGE, 0x77, PAGE);
	p->rc[i++] = SEAM(p, uffd_wake, p->uffd, base + 2 * PAGE, PAGE);
	m = take_message(p);
	p->v[3] = m.arg.pagefault.flags;
	p->rc[i] = SEAM(p, uffd_continue, p->uffd, base + 2 * PAGE, PAGE,
			&p->mapped[i]);
	i++;
	sim_join_apps(p->s);
	p->v[4] = sim_continues_ok(p->s);
}

static void continue_errnos(void)
{
	struct sim_config c = config(6, SIM_RANDOM);
	struct prog p = { 0 };
	char why[1024];

	CU_ASSERT_EQUAL(run_prog(&p, &c, continue_rules, why, sizeof(why)),
			SIM_PASS);
	CU_ASSERT_EQUAL(p.rc[0], -EAGAIN);
	CU_ASSERT_EQUAL(p.mapped[0], 2 * PAGE);
	CU_ASSERT_EQUAL(p.rc[1], -EFAULT);
	CU_ASSERT_EQUAL(p.mapped[1], -EFAULT);
	CU_ASSERT_EQUAL(p.rc[2], -EEXIST);
	CU_ASSERT_EQUAL(p.mapped[2], -EEXIST);
	CU_ASSERT_EQUAL(p.v[0], 16);
	CU_ASSERT_EQUAL(p.v[1], 8);
	CU_ASSERT_EQUAL(p.rc[3], -EFAULT);
	CU_ASSERT_EQUAL(p.rc[4], -EAGAIN);
	CU_ASSERT_EQUAL(p.mapped[4], PAGE);
	CU_ASSERT_EQUAL(p.rc[5], -EINVAL);
	CU_ASSERT_EQUAL(p.v[2], 0);
	CU_ASSERT_EQUAL(p.rc[6], 0);
	CU_ASSERT_EQUAL(p.v[3], UFFD_PAGEFAULT_FLAG_MINOR);
	CU_ASSERT_EQUAL(p.rc[7], 0);
	CU_ASSERT_EQUAL(p.mapped[7], PAGE);
	CU_ASSERT_EQUAL(p.v[4], 1);
	CU_ASSERT_EQUAL(p.got[0], 0x77);
}

/* memory.stat catches up only past the lag; st_blocks is exact. */
static void stat_lags(void *arg)
{
	struct prog *p = arg;
	char buf[512];
	int n = 0;

	region(p);
	SEAM(p, backing_pread, -1, p->mb, PAGE, 0);
	SEAM(p, read_text, "/sys/fs/cgroup/sim/memory.stat", buf, sizeof(buf));
	n += strstr(buf, "\nshmem 0\n") != NULL;
	SEAM(p, backing_pread, -1, p->mb + PAGE, 2 * PAGE, PAGE);
	SEAM(p, read_text, "/sys/fs/cgroup/sim/memory.stat", buf, sizeof(buf));
	n += strstr(buf, "\nshmem 12288\n") != NULL;
	p->v[0] = (uint64_t)n;
}

static void stat_lag(void)
{
	struct sim_config c = config(2, SIM_RANDOM);
	struct prog p = { 0 };
	char why[1024];

	c.stat_lag_bytes = 2 * PAGE;
	CU_ASSERT_EQUAL(run_prog(&p, &c, stat_lags, why, sizeof(why)),
			SIM_PASS);
	CU_ASSERT_EQUAL(p.v[0], 2);
}

/* Every simulated scenario's default faults parse and fit it (explore
 * relies on it), and T-7's failing reads are one of them. */
static void default_faults_fit(void)
{
	struct fault_plan f;
	char err[512];

	for (int i = 0; i < nscenarios; i++)
		if (scenarios[i]->sim)
			CU_ASSERT_EQUAL(simprog_faults(scenarios[i], NULL, &f,
						       err, sizeof(err)),
					0);
	CU_ASSERT_EQUAL_FATAL(simprog_faults(simprog_find("T-7"), NULL, &f, err,
					     sizeof(err)),
			      0);
	CU_ASSERT(f.on & 1u << FP_READ_EIO);
	CU_ASSERT_EQUAL(simprog_faults(simprog_find("self-deadlock"), &f, &f,
				       err, sizeof(err)),
			-1);
}

/* A line carries its faults: written, read back, written again. */
static void line_carries_faults(void)
{
	uint16_t sched[] = { 0, 0, 0, 1, 2, 2 };
	struct replay rp = { .p = simprog_find("T-7"),
			     .strategy = SIM_DFS,
			     .seed = 9,
			     .ops = 2,
			     .schedule = sched,
			     .nschedule = 6 };
	struct replay back;
	char err[512], *a, *b;

	CU_ASSERT_EQUAL_FATAL(fault_plan_add(&rp.faults, "t",
					     "backing_read/eio@3+9,wake=0.25",
					     err, sizeof(err)),
			      0);
	a = replay_encode(&rp);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL(strstr(a, "/backing_read:eio@3+9,wake=0.25/"
					 "0*3.1.2*2"));
	CU_ASSERT_EQUAL_FATAL(replay_decode(a, &back, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(back.faults.on, rp.faults.on);
	CU_ASSERT_EQUAL(back.faults.rule[FP_READ_EIO].calls[1], 9);
	b = replay_encode(&back);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_STRING_EQUAL(a, b);
	free(a);
	free(b);
	replay_free(&back);
}

/* A reader's read runs inside read_wait, once. A wait with none started
 * (mode 1), a second start with one in flight (2) or a close with one in
 * flight (3) fails the run. */
static long count_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct prog *p = arg;

	(void)buf;
	p->v[0]++;
	return (long)(len + off);
}

static void reader_use(void *arg)
{
	struct prog *p = arg;
	resid_reader rd;

	if (SEAM(p, reader_open, &rd, count_read, p)) {
		sim_fail(p->s, "reader_open failed");
		return;
	}
	SEAM(p, read_start, rd, NULL, 10, 5);
	p->v[1] = p->v[0];
	if (p->mode == 2)
		SEAM(p, read_start, rd, NULL, 1, 0);
	if (p->mode != 3)
		p->v[2] = (uint64_t)SEAM(p, read_wait, rd);
	if (p->mode == 1)
		SEAM(p, read_wait, rd);
	SEAM(p, reader_close, rd);
}

static void reader_runs_in_wait(void)
{
	static const char *const why[] = {
		NULL,
		"a reader waited for a read never started",
		"a reader's read started with one in flight",
		"a reader closed with a read in flight",
	};

	for (int mode = 0; mode < 4; mode++) {
		struct sim_config c = config(1, SIM_RANDOM);
		struct prog p = { .mode = mode };
		char w[1024];
		enum sim_verdict v = run_prog(&p, &c, reader_use, w, sizeof(w));

		if (!mode) {
			CU_ASSERT_EQUAL(v, SIM_PASS);
			CU_ASSERT_EQUAL(p.v[1], 0);
			CU_ASSERT_EQUAL(p.v[0], 1);
			CU_ASSERT_EQUAL(p.v[2], 15);
			continue;
		}
		CU_ASSERT_EQUAL(v, SIM_FAILED);
		CU_ASSERT_PTR_NOT_NULL(strstr(w, why[mode]));
	}
}

void suite_sim(void)
{
	CU_pSuite s = CU_add_suite("sim", NULL, NULL);

	if (!s)
		return;
	CU_add_test(s, "pager passes 200 seeds (random)", pager_passes_random);
	CU_add_test(s, "pager passes 200 seeds (PCT d=3)", pager_passes_pct);
	CU_add_test(s, "a dropped entry refaults and is served", drop_refaults);
	CU_add_test(s, "a seed replays its run", seed_replays);
	CU_add_test(s, "a schedule replays its run", schedule_replays);
	CU_add_test(s, "a schedule replays under another seed",
		    schedule_replays_other_seed);
	CU_add_test(s, "lock-order inversion is a deadlock", deadlock_found);
	CU_add_test(s, "an unserved fault is a lost wakeup", lost_wakeup_found);
	CU_add_test(s, "an unsignalled wait is no-signal", no_signal_found);
	CU_add_test(s, "a starved thread runs (fairness)", starved_thread_runs);
	CU_add_test(s, "a timer-only livelock is a hang",
		    timer_livelock_is_a_hang);
	CU_add_test(s, "CONTINUE keeps the kernel's errno rules",
		    continue_errnos);
	CU_add_test(s, "memory.stat lags, st_blocks is exact", stat_lag);
	CU_add_test(s, "a reader's read runs in its wait", reader_runs_in_wait);
	CU_add_test(s, "default faults fit their scenarios",
		    default_faults_fit);
	CU_add_test(s, "a replay line carries its faults", line_carries_faults);
}
