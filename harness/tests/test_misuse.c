/* The library under failure and misuse (design.md §9): a backing store that keeps
 * failing raises SIGBUS in the reader, never zeros or a hang, on the real
 * kernel (in a child, where SIGBUS can be watched and a hang is cut by an
 * alarm) and on the simulated one; dispatcher errors reach the region; each
 * bad argument is refused with a line that names the API field. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault/fault.h"
#include "oracles/contract.h"
#include "resid_harness.h"
#include "seam.h"
#include "sim/sim.h"
#include "tests/suites.h"
#include "workload/read_check.h"

#define MiB (1ull << 20)
#define SEED 5
#define BAD_CHUNK 2
#define CHILD_SECONDS 60

/* storms/cmd_storm.c: a command of tool/commands.def, which tool/main.c
 * declares. */
int cmd_storm(int argc, char **argv);

/* ---- a seam that breaks one thing ---- */

static struct resid_seam inner, broken;
/* Reads of BAD_CHUNK fail with EIO or EINTR, or deliver 0 (the file
 * ended). */
static int eio_chunk_on, eintr_chunk_on, eof_chunk_on;
static int no_poison, poll_errno, read_errno;
static uint64_t chunk_bytes;
static int wake_failures; /* the next this many wakes fail */
static int read_eintrs;   /* the next this many uffd reads are interrupted */
/* The next this many reads of BAD_CHUNK past its first page fail, and
 * punches of BAD_CHUNK (fetch_piece: pieces mapped one at a time). */
static int tail_read_failures, punch_failures;
static uint64_t fetch_piece;

static long broken_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	if (__atomic_load_n(&tail_read_failures, __ATOMIC_RELAXED) > 0 &&
	    off / chunk_bytes == BAD_CHUNK && off % chunk_bytes) {
		__atomic_sub_fetch(&tail_read_failures, 1, __ATOMIC_RELAXED);
		return -EIO;
	}
	if (off / chunk_bytes == BAD_CHUNK && eintr_chunk_on)
		return -EINTR;
	if (off / chunk_bytes == BAD_CHUNK && (eio_chunk_on || eof_chunk_on))
		return eio_chunk_on ? -EIO : 0;
	return inner.backing_pread(ctx, fd, buf, len, off);
}

static int broken_api(void *ctx, int fd, struct uffdio_api *api)
{
	int rc = inner.uffd_api(ctx, fd, api);

	if (no_poison)
		api->features &= ~(uint64_t)UFFD_FEATURE_POISON;
	return rc;
}

static int broken_wait(void *ctx, int a, int b, int timeout_ms)
{
	if (poll_errno)
		return -poll_errno;
	return inner.wait_readable(ctx, a, b, timeout_ms);
}

static long broken_read(void *ctx, int fd, struct uffd_msg *m, size_t n)
{
	int e = __atomic_load_n(&read_errno, __ATOMIC_SEQ_CST);

	if (e)
		return -e;
	if (__atomic_load_n(&read_eintrs, __ATOMIC_RELAXED) > 0) {
		__atomic_sub_fetch(&read_eintrs, 1, __ATOMIC_RELAXED);
		return -EINTR;
	}
	return inner.uffd_read(ctx, fd, m, n);
}

static int broken_wake(void *ctx, int fd, uint64_t addr, uint64_t len)
{
	if (__atomic_load_n(&wake_failures, __ATOMIC_RELAXED) > 0) {
		__atomic_sub_fetch(&wake_failures, 1, __ATOMIC_RELAXED);
		return -EIO;
	}
	return inner.uffd_wake(ctx, fd, addr, len);
}

static int broken_punch(void *ctx, int fd, uint64_t off, uint64_t len)
{
	if (__atomic_load_n(&punch_failures, __ATOMIC_RELAXED) > 0 &&
	    off / chunk_bytes == BAD_CHUNK) {
		__atomic_sub_fetch(&punch_failures, 1, __ATOMIC_RELAXED);
		return -EIO;
	}
	return inner.punch(ctx, fd, off, len);
}

static const struct resid_seam *breaking(const struct resid_seam *k)
{
	inner = *k;
	broken = *k;
	broken.backing_pread = broken_pread;
	broken.uffd_api = broken_api;
	broken.wait_readable = broken_wait;
	broken.uffd_read = broken_read;
	broken.uffd_wake = broken_wake;
	broken.punch = broken_punch;
	return &broken;
}

static void unbreak(void)
{
	eio_chunk_on = eintr_chunk_on = eof_chunk_on = no_poison = 0;
	poll_errno = read_errno = 0;
	wake_failures = tail_read_failures = punch_failures = read_eintrs = 0;
	fetch_piece = 0;
}

/* ---- the real kernel, in a child ---- */

static sigjmp_buf jump;
static volatile sig_atomic_t bus_signo, bus_code;
static void *volatile bus_addr;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	bus_signo = sig;
	bus_code = si->si_code;
	bus_addr = si->si_addr;
	siglongjmp(jump, 1);
}

/* Reads the byte at p: 1 when it raised SIGBUS. */
static int touch(const volatile uint8_t *p, uint8_t *out)
{
	if (sigsetjmp(jump, 1))
		return 1;
	*out = *p;
	return 0;
}

struct verdict {
	int opened, bus_first, bus_again, other_ok;
	int signo, code;
	uint64_t addr_off;
	int err;
	uint32_t chunk;
	uint64_t io_errors, failed_chunks, failed_faults;
	/* oracle_sigbus_contract of BAD_CHUNK and of chunk 0 */
	int contract_bad, contract_good;
	char why[RESID_ERRLEN];
};

static void child_report(int fd, const struct verdict *v)
{
	_exit(write(fd, v, sizeof(*v)) == (ssize_t)sizeof(*v) ? 0 : 3);
}

/* Runs fn in a child with a SIGBUS handler and an alarm: a hang kills it. */
static int in_child(void (*fn)(struct verdict *), struct verdict *v)
{
	int p[2], status;
	pid_t pid;

	memset(v, 0, sizeof(*v));
	CU_ASSERT_FATAL(pipe(p) == 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct sigaction sa = { .sa_sigaction = on_sigbus,
					.sa_flags = SA_SIGINFO };
		struct verdict mine = { 0 };

		close(p[0]);
		alarm(CHILD_SECONDS);
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGSEGV, &sa, NULL);
		fn(&mine);
		child_report(p[1], &mine);
	}
	close(p[1]);
	ssize_t n = read(p[0], v, sizeof(*v));

	close(p[0]);
	CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status))
		fprintf(stderr, "\n    child died of signal %d%s ",
			WTERMSIG(status),
			WTERMSIG(status) == SIGALRM ? " (a hang)" : "");
	return n == (ssize_t)sizeof(*v) && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static void real_config(struct resid_config *c, struct resid_harness *h)
{
	resid_config_init(c);
	c->region_len = 4 * MiB;
	c->chunk_size = MiB;
	c->budget_bytes = 2 * MiB;
	c->fetch_workers = 2;
	chunk_bytes = MiB;
	resid_harness_init(h);
	h->allow_swap = 1;
	h->seam = breaking(&resid_seam_linux);
	c->harness = h;
}

/* Reads the bad chunk twice (SIGBUS both times), then chunk 0. */
static void read_around(struct resid_region *r, struct verdict *v,
			uint8_t want0)
{
	const uint8_t *a = resid_base(r);
	uint8_t x = 0;

	v->opened = 1;
	v->bus_first = touch(a + BAD_CHUNK * MiB + 100, &x);
	v->signo = bus_signo;
	v->code = bus_code;
	v->addr_off = (uint64_t)((const uint8_t *)bus_addr - a);
	v->bus_again = touch(a + BAD_CHUNK * MiB + 8192, &x);
	v->other_ok = !touch(a + 4096, &x) && x == want0;
	v->err = resid_failure(r, &v->chunk);

	struct resid_stats s;

	resid_get_stats(r, &s);
	v->io_errors = s.io_errors;
	v->failed_chunks = s.failed_chunks;
	v->failed_faults = s.failed_faults;
}

static char file_path[64];

static void truncated_child(struct verdict *v)
{
	struct resid_config c;
	struct resid_harness h;

	real_config(&c, &h);
	c.backing = RESID_BACKING_FILE;
	c.path = file_path;
	struct resid_region *r = resid_open(&c, v->why);

	if (!r)
		return;
	uint8_t x;

	if (touch(resid_base(r) + 4096, &x) || truncate(file_path, MiB) < 0)
		return;
	read_around(r, v, 0x5a);
	resid_close(r);
}

static void eio_child(struct verdict *v)
{
	struct resid_config c;
	struct resid_harness h;

	real_config(&c, &h);
	c.backing = RESID_BACKING_SYNTHETIC;
	c.seed = SEED;
	eio_chunk_on = !eintr_chunk_on;
	struct resid_region *r = resid_open(&c, v->why);

	if (!r)
		return;
	uint8_t want[8];

	resid_content_fill(want, 4096, 8, SEED);
	read_around(r, v, want[0]);
	resid_close(r);
}

/* The kernel's own answer, and no hot loop: at most IO_RETRIES + 1 reads
 * per fetch, FETCH_FAILURES fetches (fetch.c). */
static void check_failed(const struct verdict *v, int err, int code)
{
	CU_ASSERT(v->opened);
	if (v->why[0])
		fprintf(stderr, "\n    resid_open: %s ", v->why);
	CU_ASSERT(v->bus_first);
	CU_ASSERT(v->bus_again);
	CU_ASSERT(v->other_ok);
	CU_ASSERT_EQUAL(v->err, err);
	CU_ASSERT_EQUAL(v->chunk, BAD_CHUNK);
	if (code == SI_TKILL) {
		CU_ASSERT_EQUAL(v->code, SI_TKILL);
		CU_ASSERT(v->failed_faults >= 2); /* one per access */
	} else {
		/* The fault the poison answered; the second access is the
		 * kernel's alone. */
		CU_ASSERT_EQUAL(v->failed_faults, 1);
		/* A poison marker: the kernel's fault, with the address. */
		CU_ASSERT(v->code == BUS_ADRERR || v->code == BUS_MCEERR_AR);
		CU_ASSERT_EQUAL(v->addr_off, BAD_CHUNK * MiB + 100);
	}
	CU_ASSERT(v->io_errors > 0 && v->io_errors <= 9 * 8);
	CU_ASSERT_EQUAL(v->failed_chunks, 1);
}

static void real_truncated_file(void)
{
	struct verdict v;
	uint8_t *buf = malloc(4 * MiB);
	int fd;

	snprintf(file_path, sizeof(file_path), "/tmp/resid-misuse-XXXXXX");
	fd = mkstemp(file_path);
	CU_ASSERT_FATAL(fd >= 0 && buf);
	memset(buf, 0x5a, 4 * MiB);
	CU_ASSERT_FATAL(write(fd, buf, 4 * MiB) == (ssize_t)(4 * MiB));
	close(fd);
	free(buf);
	CU_ASSERT(in_child(truncated_child, &v));
	check_failed(&v, ENODATA, BUS_ADRERR);
	unlink(file_path);
	unbreak();
}

/* A read interrupted for good is a failure like EIO: backed off, bounded,
 * then SIGBUS (it used to be retried at once, forever: a hang). */
static void eintr_child(struct verdict *v)
{
	eintr_chunk_on = 1;
	eio_child(v);
}

static void real_eintr_persistent(void)
{
	struct verdict v;

	CU_ASSERT(in_child(eintr_child, &v));
	check_failed(&v, EINTR, BUS_ADRERR);
	unbreak();
}

static void real_eio_poisoned(void)
{
	struct verdict v;

	CU_ASSERT(in_child(eio_child, &v));
	check_failed(&v, EIO, BUS_ADRERR);
	unbreak();
}

/* A kernel without UFFDIO_POISON (6.1): tgkill to the faulting thread. */
static void real_eio_without_poison(void)
{
	struct verdict v;

	no_poison = 1;
	CU_ASSERT(in_child(eio_child, &v));
	check_failed(&v, EIO, SI_TKILL);
	unbreak();
}

/* read(uffd) fails for good: with poison every chunk not resident raises
 * SIGBUS; without, SIGSEGV (PROT_NONE). Chunk 0 is read first, so it is
 * resident when the dispatcher dies and stays readable. */
static void dead_dispatcher_child(struct verdict *v)
{
	struct resid_config c;
	struct resid_harness h;
	uint8_t x, want[8];

	real_config(&c, &h);
	c.backing = RESID_BACKING_SYNTHETIC;
	c.seed = SEED;
	struct resid_region *r = resid_open(&c, v->why);

	if (!r || touch(resid_base(r) + 4096, &x))
		return;
	__atomic_store_n(&read_errno, EFAULT, __ATOMIC_SEQ_CST);
	resid_content_fill(want, 4096, 8, SEED);
	read_around(r, v, want[0]);
	v->chunk = v->chunk == RESID_NO_CHUNK ? BAD_CHUNK : v->chunk + 1000;
	resid_close(r);
}

static void real_dead_dispatcher(void)
{
	struct verdict v;

	CU_ASSERT(in_child(dead_dispatcher_child, &v));
	CU_ASSERT(v.bus_first && v.bus_again && v.other_ok);
	CU_ASSERT_EQUAL(v.signo, SIGBUS);
	CU_ASSERT_EQUAL(v.err, EFAULT);
	CU_ASSERT_EQUAL(v.chunk, BAD_CHUNK); /* RESID_NO_CHUNK */
	no_poison = 1;
	CU_ASSERT(in_child(dead_dispatcher_child, &v));
	CU_ASSERT(v.bus_first && v.bus_again && v.other_ok);
	CU_ASSERT_EQUAL(v.signo, SIGSEGV);
	CU_ASSERT_EQUAL(v.err, EFAULT);
	unbreak();
}

/* The contract's SIGBUS (oracle_sigbus_contract), on a fault seam over
 * the broken kernel: with `injected` the seam fails every backing read,
 * else the kernel below it fails BAD_CHUNK's, an error nobody injected. */
static int injected;

static void contract_child(struct verdict *v)
{
	struct resid_config c;
	struct resid_harness h;
	struct fault_plan plan = { 0 };
	char err[256];
	uint8_t x;

	real_config(&c, &h);
	c.backing = RESID_BACKING_SYNTHETIC;
	c.seed = SEED;
	c.prefetch_depth = 0;
	eio_chunk_on = !injected;
	if (injected && fault_plan_add(&plan, "test", "backing_read/eio=1", err,
				       sizeof(err)) < 0)
		return;
	struct fault_seam *fs = fault_seam_new(h.seam, &plan, SEED, NULL, NULL);

	if (!fs)
		return;
	h.seam = fault_seam_ops(fs);
	struct resid_region *r = resid_open(&c, v->why);

	if (!r)
		return;
	v->opened = 1;
	v->bus_first = touch(resid_base(r) + BAD_CHUNK * MiB + 100, &x);
	v->contract_bad = oracle_sigbus_contract(r, BAD_CHUNK, fs, v->why,
						 sizeof(v->why));
	/* Chunk 0: read fine without injection, not touched with it. */
	v->other_ok = injected || !touch(resid_base(r) + 4096, &x);
	v->contract_good = oracle_sigbus_contract(r, 0, fs, err, sizeof(err));
	resid_close(r);
	fault_seam_free(fs);
}

/* A SIGBUS passes as the contract's only on a chunk the pager reports
 * failed, and only when every error was injected: the same EIO from the
 * kernel itself is a failure still. */
static void real_sigbus_contract(void)
{
	struct verdict v;

	injected = 1;
	CU_ASSERT(in_child(contract_child, &v));
	CU_ASSERT(v.opened && v.bus_first);
	CU_ASSERT_EQUAL(v.contract_bad, 1);
	CU_ASSERT_EQUAL(v.contract_good, 0); /* never read: not failed */
	injected = 0;
	CU_ASSERT(in_child(contract_child, &v));
	CU_ASSERT(v.opened && v.bus_first && v.other_ok);
	CU_ASSERT_EQUAL(v.contract_bad, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.why, "not every error was injected"));
	CU_ASSERT_EQUAL(v.contract_good, 0);
	unbreak();
}

/* A storm round whose every fetch fails by injection (each CONTINUE
 * refused) passes: its readers' SIGBUSes are the contract's, counted as
 * refused reads, not a crash of the storm's child. */
static void real_storm_refused_reads(void)
{
	char json[64];
	char *argv[] = { "storm",     "--rounds",
			 "1",         "--round",
			 "1",         "--seed",
			 "7",         "--no-swarm",
			 "--fault",   "continue/eexist=1",
			 "--backing", "synthetic",
			 "--json",    json,
			 NULL };
	char buf[8192];
	FILE *f;
	size_t n;

	snprintf(json, sizeof(json), "/tmp/resid-misuse-storm-%d.json",
		 (int)getpid());
	CU_ASSERT_EQUAL(cmd_storm(14, argv), 0);
	f = fopen(json, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	CU_ASSERT_EQUAL(fclose(f), 0);
	CU_ASSERT_EQUAL(unlink(json), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"failed_rounds\": 0,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"refused_rounds\": 1,"));
	CU_ASSERT_PTR_NULL(strstr(buf, "\"refused_reads\": 0,"));
}

/* ---- the simulated kernel ---- */

#define SIM_CHUNK (16ull << 10)
#define SIM_CHUNKS 4

struct simrun {
	struct sim *s;
	int bus_bad, bus_again, good_ok;
	int err;
	uint32_t chunk;
	struct resid_stats st;
	int unquiet; /* violations at quiescence (resid_check_quiescent) */
};

static struct resid_region *sim_open(struct simrun *sr)
{
	struct resid_config c;
	struct resid_harness h;
	char err[RESID_ERRLEN];

	resid_config_init(&c);
	c.region_len = SIM_CHUNKS * SIM_CHUNK;
	c.chunk_size = SIM_CHUNK;
	c.budget_bytes = 2 * SIM_CHUNK;
	c.backing = RESID_BACKING_SYNTHETIC;
	c.seed = SEED;
	c.fetch_workers = 2;
	c.fetch_piece = fetch_piece ? fetch_piece : c.fetch_piece;
	resid_harness_init(&h);
	h.seam = &broken;
	c.harness = &h;
	struct resid_region *r = resid_open(&c, err);

	if (!r)
		sim_fail(sr->s, "resid_open: %s", err);
	return r;
}

static void sim_close(struct simrun *sr, struct resid_region *r)
{
	sr->err = resid_failure(r, &sr->chunk);
	/* A chunk failed for good holds no reservation, pin or page. */
	sr->unquiet = resid_check_quiescent(r);
	resid_get_stats(r, &sr->st);
	resid_close(r);
}

/* The bad chunk twice, then a good one. */
static void sim_program(void *arg)
{
	struct simrun *sr = arg;
	struct resid_region *r = sim_open(sr);
	uint8_t buf[SIM_CHUNK];

	if (!r)
		return;
	const uint8_t *a = resid_base(r);

	sr->bus_bad = sim_read(sr->s, a + BAD_CHUNK * SIM_CHUNK, buf, 64) < 0;
	sr->bus_again = sim_read(sr->s, a + BAD_CHUNK * SIM_CHUNK + 4096, buf,
				 64) < 0;
	sr->good_ok = sim_read(sr->s, a + SIM_CHUNK, buf, SIM_CHUNK) == 0 &&
		      resid_content_mismatches(buf, SIM_CHUNK, SIM_CHUNK,
					       SEED) == 0;
	sim_close(sr, r);
}

/* Every chunk but `skip` once, counting the SIGBUSes, checking the rest. */
static void read_chunks(struct simrun *sr, struct resid_region *r,
			uint32_t skip)
{
	uint8_t buf[SIM_CHUNK];

	sr->good_ok = 1;
	for (uint32_t i = 0; i < SIM_CHUNKS; i++) {
		if (i == skip)
			continue;
		int bus = sim_read(sr->s, resid_base(r) + i * SIM_CHUNK, buf,
				   SIM_CHUNK) < 0;

		sr->bus_bad += bus;
		if (!bus && resid_content_mismatches(buf, i * SIM_CHUNK,
						     SIM_CHUNK, SEED))
			sr->good_ok = 0;
	}
}

/* Every chunk once. */
static void sim_reader_all(void *arg)
{
	struct simrun *sr = arg;
	struct resid_region *r = sim_open(sr);

	if (r) {
		read_chunks(sr, r, RESID_NO_CHUNK);
		sim_close(sr, r);
	}
}

static enum sim_verdict sim_go(struct simrun *sr, void (*program)(void *))
{
	struct sim_config sc = { .seed = 3, .strategy = SIM_RANDOM };
	enum sim_verdict v;

	sr->s = sim_create(&sc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sr->s);
	chunk_bytes = SIM_CHUNK;
	breaking(sim_seam(sr->s));
	v = sim_run(sr->s, program, sr);
	if (v != SIM_PASS)
		fprintf(stderr, "\n    sim: %s: %s ", sim_verdict_name(v),
			sim_why(sr->s));
	sim_destroy(sr->s);
	unbreak();
	return v;
}

static void sim_check_failed(struct simrun *sr, int err)
{
	CU_ASSERT_EQUAL(sim_go(sr, sim_program), SIM_PASS);
	CU_ASSERT(sr->bus_bad);
	CU_ASSERT(sr->bus_again);
	CU_ASSERT(sr->good_ok);
	CU_ASSERT_EQUAL(sr->err, err);
	CU_ASSERT_EQUAL(sr->chunk, BAD_CHUNK);
	CU_ASSERT_EQUAL(sr->st.failed_chunks, 1);
	CU_ASSERT(sr->st.io_errors <= 9 * 8);
	CU_ASSERT_EQUAL(sr->unquiet, 0);
}

static void sim_eio_poisoned(void)
{
	struct simrun sr = { 0 };

	eio_chunk_on = 1;
	sim_check_failed(&sr, EIO);
	/* The fault that asked for the fetch, answered by the poison; the
	 * second access's SIGBUS is the kernel's alone. */
	CU_ASSERT_EQUAL(sr.st.failed_faults, 1);
}

static void sim_truncated_poisoned(void)
{
	struct simrun sr = { 0 };

	eof_chunk_on = 1;
	sim_check_failed(&sr, ENODATA);
}

static void sim_eio_without_poison(void)
{
	struct simrun sr = { 0 };

	eio_chunk_on = 1;
	no_poison = 1;
	sim_check_failed(&sr, EIO);
	CU_ASSERT(sr.st.failed_faults >= 2); /* one SIGBUS per access */
}

/* ---- dispatcher errors (simulated kernel) ---- */

/* poll failing for good (EINVAL, EFAULT, ENOMEM) is only a hint lost: the
 * dispatcher drains each tick and every byte arrives. */
static void poll_errors_survived(void)
{
	static const int errs[] = { EINVAL, EFAULT, ENOMEM };

	for (unsigned i = 0; i < 3; i++) {
		struct simrun sr = { 0 };

		poll_errno = errs[i];
		CU_ASSERT_EQUAL(sim_go(&sr, sim_reader_all), SIM_PASS);
		CU_ASSERT_EQUAL(sr.bus_bad, 0);
		CU_ASSERT(sr.good_ok);
		CU_ASSERT(sr.st.poll_errors > 0);
		CU_ASSERT_EQUAL(sr.err, 0);
	}
}

/* read(uffd) interrupted more times in a row than a failing read may be
 * retried: an interrupt is no failure, the region goes on. */
static void uffd_read_eintr_survived(void)
{
	struct simrun sr = { 0 };

	read_eintrs = 20;
	CU_ASSERT_EQUAL(sim_go(&sr, sim_reader_all), SIM_PASS);
	CU_ASSERT_EQUAL(sr.bus_bad, 0);
	CU_ASSERT(sr.good_ok);
	CU_ASSERT_EQUAL(sr.st.uffd_eintr, 20);
	CU_ASSERT_EQUAL(sr.err, 0);
}

/* read(uffd) failing for good: the region fails, the readers get SIGBUS
 * instead of sleeping forever. */
static void uffd_read_error_fails_region(void)
{
	struct simrun sr = { 0 };

	read_errno = EFAULT;
	CU_ASSERT_EQUAL(sim_go(&sr, sim_reader_all), SIM_PASS);
	CU_ASSERT_EQUAL(sr.bus_bad, SIM_CHUNKS);
	CU_ASSERT_EQUAL(sr.err, EFAULT);
	CU_ASSERT_EQUAL(sr.chunk, RESID_NO_CHUNK);
	CU_ASSERT(sr.st.uffd_errors > 0);
}

/* The same without UFFDIO_POISON: the chunks not resident are made
 * inaccessible (SIGSEGV on the kernel), so no access waits for good. */
static void uffd_read_error_without_poison(void)
{
	struct simrun sr = { 0 };

	read_errno = EFAULT;
	no_poison = 1;
	CU_ASSERT_EQUAL(sim_go(&sr, sim_reader_all), SIM_PASS);
	CU_ASSERT_EQUAL(sr.bus_bad, SIM_CHUNKS);
	CU_ASSERT_EQUAL(sr.err, EFAULT);
	CU_ASSERT_EQUAL(sr.chunk, RESID_NO_CHUNK);
}

/* 150 wakes in a row fail, more than wake_range's retries: the wake of
 * the first abandoned fetch of the bad chunk is owed and paid by the
 * dispatcher's tick, and its faulter goes on to its SIGBUS instead of
 * sleeping forever. */
static void failed_wakes_are_paid(void)
{
	struct simrun sr = { 0 };

	eio_chunk_on = 1;
	wake_failures = 150;
	sim_check_failed(&sr, EIO);
	CU_ASSERT(sr.st.wake_errors >= 150);
}

/* The bad chunk's first page, then every other chunk, checked. */
static void sim_read_past_bad(void *arg)
{
	struct simrun *sr = arg;
	struct resid_region *r = sim_open(sr);
	uint8_t buf[SIM_CHUNK];

	if (!r)
		return;
	sr->bus_bad = sim_read(sr->s, resid_base(r) + BAD_CHUNK * SIM_CHUNK,
			       buf, 64) < 0;
	read_chunks(sr, r, BAD_CHUNK);
	sim_close(sr, r);
}

/* The bad chunk's fetch maps its first piece (its faulter reads it), then
 * its second piece's reads fail past the retries: the fetch is abandoned,
 * and the punch of the piece it wrote fails 101 times, once more than the
 * abandon's retries. The punch is owed and its reservation kept until the
 * dispatcher's tick pays it: every reconcile while the other chunks are
 * read, and quiescence, find the memfd's pages accounted for (before, the
 * reservation was released with the page still there: I-7). */
static void failed_punches_are_paid(void)
{
	struct simrun sr = { 0 };

	fetch_piece = 4096;
	tail_read_failures = 9;
	punch_failures = 101;
	CU_ASSERT_EQUAL(sim_go(&sr, sim_read_past_bad), SIM_PASS);
	CU_ASSERT_EQUAL(sr.bus_bad, 0);
	CU_ASSERT(sr.good_ok);
	CU_ASSERT_EQUAL(sr.unquiet, 0);
	CU_ASSERT_EQUAL(sr.st.abandoned, 1);
	CU_ASSERT_EQUAL(sr.st.punch_errors, 101);
	CU_ASSERT_EQUAL(sr.st.reconcile_failures, 0);
}

/* ---- misuse: each refused with the API field named ---- */

static struct resid_harness knobs;

static void good(struct resid_config *c)
{
	resid_config_init(c);
	c->region_len = 23 * 64 * 1024;
	c->chunk_size = 64 * 1024;
	c->budget_bytes = 4 * 64 * 1024;
	c->backing = RESID_BACKING_SYNTHETIC;
	resid_harness_init(&knobs);
	knobs.allow_swap = 1;
	c->harness = &knobs;
}

static void refused(const struct resid_config *c, const char *field,
		    const char *also)
{
	char err[RESID_ERRLEN];
	struct resid_region *r = resid_open(c, err);

	CU_ASSERT_PTR_NULL(r);
	if (r) {
		resid_close(r);
		return;
	}
	if (!strstr(err, field) || (also && !strstr(err, also)) ||
	    strstr(err, "--")) {
		fprintf(stderr, "\n    expected '%s'%s%s, no flag, in: %s ",
			field, also ? " and " : "", also ? also : "", err);
		CU_FAIL("the line does not name the field");
	}
}

static void path_without_backing(void)
{
	struct resid_config c;

	resid_config_init(&c); /* there is no default backing */
	c.region_len = 4 * 4096;
	c.chunk_size = 4096;
	c.budget_bytes = 2 * 4096;
	c.path = "/etc/hostname";
	c.harness = &knobs;
	refused(&c, "backing is not set", "RESID_BACKING_FILE");
	good(&c);
	c.path = "/etc/hostname";
	refused(&c, "path", "RESID_BACKING_SYNTHETIC");
}

static void directory_as_path(void)
{
	struct resid_config c;

	good(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = "/tmp";
	refused(&c, "path", "not a regular file");
}

/* A FIFO's open would wait for a writer: refused at once, in a child whose
 * alarm turns a hang into a failure. */
static void fifo_child(struct verdict *v)
{
	struct resid_config c;
	struct resid_region *r;

	good(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = file_path;
	r = resid_open(&c, v->why);
	v->opened = r != NULL;
	resid_close(r);
}

static void special_files_as_path(void)
{
	struct resid_config c;
	struct verdict v;

	snprintf(file_path, sizeof(file_path), "/tmp/resid-fifo-%d",
		 (int)getpid());
	CU_ASSERT_FATAL(mkfifo(file_path, 0600) == 0);
	CU_ASSERT(in_child(fifo_child, &v));
	unlink(file_path);
	CU_ASSERT(!v.opened);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.why, "a FIFO or socket"));
	CU_ASSERT_PTR_NOT_NULL(strstr(v.why, file_path));
	good(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = "/dev/null";
	refused(&c, "path /dev/null", "a device");
}

/* Every pointer of the API, NULL: an error or a neutral value, no crash. */
static void null_arguments(void)
{
	struct resid_config c;
	struct resid_stats st;
	enum resid_policy p;
	char err[RESID_ERRLEN], buf[64];
	uint64_t off, len;
	uint32_t chunk = 7;

	good(&c);
	errno = 0;
	CU_ASSERT_PTR_NULL(resid_open(&c, NULL));
	CU_ASSERT_EQUAL(errno, EINVAL);
	CU_ASSERT_PTR_NULL(resid_open(NULL, err));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cfg is NULL"));
	CU_ASSERT_EQUAL(resid_headroom(NULL), 0);
	resid_config_init(NULL);
	resid_close(NULL);
	CU_ASSERT_PTR_NULL(resid_base(NULL));
	CU_ASSERT_EQUAL(resid_len(NULL), 0);
	CU_ASSERT_EQUAL(resid_nchunks(NULL), 0);
	CU_ASSERT_EQUAL(resid_chunk_of(NULL, 0), RESID_NO_CHUNK);
	CU_ASSERT_EQUAL(resid_chunk_range(NULL, 0, &off, &len), -EINVAL);
	CU_ASSERT_EQUAL(resid_notify_access(NULL, 0), -EINVAL);
	CU_ASSERT_EQUAL(resid_failure(NULL, &chunk), -EINVAL);
	CU_ASSERT_EQUAL(chunk, RESID_NO_CHUNK);
	CU_ASSERT_EQUAL(resid_get_stats(NULL, &st), -EINVAL);
	CU_ASSERT_EQUAL(resid_manifest_json(NULL, buf, sizeof(buf)), -EINVAL);
	CU_ASSERT_EQUAL(resid_policy_parse(NULL, &p), -1);
	CU_ASSERT_EQUAL(resid_policy_parse("lru", NULL), -1);

	struct resid_region *r = resid_open(&c, err);

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(resid_chunk_range(r, 0, NULL, &len), -EINVAL);
	CU_ASSERT_EQUAL(resid_chunk_range(r, 0, &off, NULL), -EINVAL);
	CU_ASSERT_EQUAL(resid_get_stats(r, NULL), -EINVAL);
	CU_ASSERT_EQUAL(resid_manifest_json(r, NULL, 64), -EINVAL);
	resid_close(r);
}

/* A repeat is refused; an order that leaves chunks out opens (they have
 * no declared time: a table read by rows). */
static void declared_order_bad(void)
{
	static const uint32_t three[] = { 0, 5, 9 };
	uint32_t rep[23];
	struct resid_config c;
	char err[RESID_ERRLEN];
	struct resid_region *r;

	for (uint32_t i = 0; i < 23; i++)
		rep[i] = i == 7 ? 3 : i;
	good(&c);
	c.policy = RESID_POLICY_DECLARED;
	c.declared_seq = three;
	c.declared_len = 3;
	r = resid_open(&c, err);
	CU_ASSERT_PTR_NOT_NULL(r);
	if (r)
		resid_close(r);
	good(&c);
	c.declared_seq = rep;
	c.declared_len = 23;
	refused(&c, "declared_seq[7]", "repeats chunk 3");
}

static void table_bad(void)
{
	static const struct resid_chunk_spec overlap[] = {
		{ 0, 8192 },
		{ 4096, 8192 },
		{ 12288, 4096 },
	};
	static const struct resid_chunk_spec unsorted[] = {
		{ 8192, 8192 },
		{ 0, 8192 },
	};
	struct resid_config c;

	good(&c);
	c.chunk_size = 0;
	c.table_len = 23;
	refused(&c, "table", "table_len is 23");
	good(&c);
	c.chunk_size = 0;
	c.table = overlap;
	c.table_len = 0;
	refused(&c, "table_len is 0", NULL);
	good(&c);
	c.chunk_size = 0;
	refused(&c, "chunk_size", NULL);
	good(&c);
	c.chunk_size = 0;
	c.region_len = 16384;
	c.table = overlap;
	c.table_len = 3;
	refused(&c, "table[1]", "overlaps");
	good(&c);
	c.chunk_size = 0;
	c.region_len = 16384;
	c.table = unsorted;
	c.table_len = 2;
	refused(&c, "table[1]", "out of order");
}

/* A cgroup whose limit leaves less than budget + headroom is refused,
 * naming the number; one that leaves exactly that opens. */
static uint64_t fake_limit;

static long cg_read_text(void *ctx, const char *path, char *buf, size_t cap)
{
	const char *f = strrchr(path, '/');

	if (f &&
	    (!strcmp(f, "/memory.limit_in_bytes") || !strcmp(f, "/memory.max")))
		return snprintf(buf, cap, "%llu\n",
				(unsigned long long)fake_limit);
	if (f && (!strcmp(f, "/memory.usage_in_bytes") ||
		  !strcmp(f, "/memory.current")))
		return snprintf(buf, cap, "%llu\n", 1ull << 20);
	return resid_seam_linux.read_text(ctx, path, buf, cap);
}

static void headroom_refused(void)
{
	struct resid_config c;
	char err[RESID_ERRLEN], num[32];
	struct resid_region *r;

	good(&c);
	breaking(&resid_seam_linux);
	broken.read_text = cg_read_text;
	knobs.seam = &broken;
	uint64_t head = resid_headroom(&c);

	CU_ASSERT(head >= 256 << 10 && head < 16 << 20);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)head);
	fake_limit = (1 << 20) + c.budget_bytes;
	refused(&c, "budget_bytes", num);
	fake_limit = (1 << 20) + c.budget_bytes + head;
	r = resid_open(&c, err);
	CU_ASSERT_PTR_NOT_NULL(r);
	if (!r)
		fprintf(stderr, "\n    resid_open: %s ", err);
	resid_close(r);
	unbreak();
}

static void calls_out_of_range(void)
{
	struct resid_config c;
	char err[RESID_ERRLEN];
	uint64_t off = 1, len = 1;

	good(&c);
	c.region_len -= 1000; /* the last chunk ends unaligned */
	struct resid_region *r = resid_open(&c, err);

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(resid_len(r), 23 * 64 * 1024);
	CU_ASSERT_EQUAL(resid_notify_access(r, 9999), -EINVAL);
	CU_ASSERT_EQUAL(resid_notify_access(r, 22), 0);
	CU_ASSERT_EQUAL(resid_chunk_of(r, resid_len(r)), RESID_NO_CHUNK);
	CU_ASSERT_EQUAL(resid_chunk_of(r, resid_len(r) - 1), 22);
	CU_ASSERT_EQUAL(resid_chunk_range(r, 23, &off, &len), -EINVAL);
	CU_ASSERT(off == 1 && len == 1);
	CU_ASSERT_EQUAL(resid_failure(r, NULL), 0);
	/* The tail past region_len reads as zeros. */
	CU_ASSERT_EQUAL(resid_base(r)[resid_len(r) - 1], 0);
	resid_close(r);
}

/* verify's oracle: its own failed or short read is an error of its own,
 * never counted as the pager's mismatches. */
static void verify_oracle_errors(void)
{
	static uint8_t a[3 * 4096];
	char path[] = "/tmp/resid-oracle-XXXXXX";
	uint64_t bad = 0;
	int dir = open("/tmp", O_RDONLY | O_DIRECTORY), fd = mkstemp(path);

	CU_ASSERT_FATAL(dir >= 0 && fd >= 0);
	CU_ASSERT_EQUAL(read_check_file(dir, a, 0, sizeof(a), &bad, NULL),
			-EISDIR);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_FATAL(write(fd, a, 4096) == 4096);
	CU_ASSERT_EQUAL(read_check_file(fd, a, 0, sizeof(a), &bad, NULL),
			-ENODATA); /* the file shrank */
	CU_ASSERT_EQUAL(bad, 0);
	a[100] = 1;
	CU_ASSERT_EQUAL(read_check_file(fd, a, 0, 4096, &bad, NULL), 0);
	CU_ASSERT_EQUAL(bad, 1);
	close(dir);
	close(fd);
	unlink(path);
}

void suite_misuse(void)
{
	CU_pSuite s = CU_add_suite("misuse", NULL, NULL);

	CU_add_test(s, "real: file truncated under the region",
		    real_truncated_file);
	CU_add_test(s, "real: EIO on one chunk, poisoned", real_eio_poisoned);
	CU_add_test(s, "real: EINTR for good on one chunk, backed off",
		    real_eintr_persistent);
	CU_add_test(s, "real: EIO on one chunk, no UFFDIO_POISON",
		    real_eio_without_poison);
	CU_add_test(s, "real: uffd reads fail for good", real_dead_dispatcher);
	CU_add_test(s, "real: SIGBUS is the contract's only when injected",
		    real_sigbus_contract);
	CU_add_test(s, "real: storm passes its injected failed chunks",
		    real_storm_refused_reads);
	CU_add_test(s, "sim: EIO on one chunk, poisoned", sim_eio_poisoned);
	CU_add_test(s, "sim: file truncated, poisoned", sim_truncated_poisoned);
	CU_add_test(s, "sim: EIO on one chunk, no UFFDIO_POISON",
		    sim_eio_without_poison);
	CU_add_test(s, "poll errors survived", poll_errors_survived);
	CU_add_test(s, "interrupted uffd reads survived",
		    uffd_read_eintr_survived);
	CU_add_test(s, "uffd read error fails the region",
		    uffd_read_error_fails_region);
	CU_add_test(s, "uffd read error, no UFFDIO_POISON",
		    uffd_read_error_without_poison);
	CU_add_test(s, "failed wakes are paid", failed_wakes_are_paid);
	CU_add_test(s, "failed punches are paid", failed_punches_are_paid);
	CU_add_test(s, "path without backing", path_without_backing);
	CU_add_test(s, "directory as path", directory_as_path);
	CU_add_test(s, "FIFO and device as path", special_files_as_path);
	CU_add_test(s, "NULL arguments", null_arguments);
	CU_add_test(s, "a declared order may leave chunks out, not repeat them",
		    declared_order_bad);
	CU_add_test(s, "table missing, overlapping, unsorted", table_bad);
	CU_add_test(s, "cgroup headroom refused", headroom_refused);
	CU_add_test(s, "calls out of range", calls_out_of_range);
	CU_add_test(s, "verify's oracle errors are its own",
		    verify_oracle_errors);
}
