/* resid.h, "What the application may do to its mapping": each call an
 * application can make on resid_base()'s range gets what a read-only
 * MAP_SHARED mmap of the file would give, or a refusal, never a hang and
 * never a wrong byte; on a resident chunk and on an absent one, with 4 KiB
 * pages and (given a directory for a huge tmpfs) with huge folios. Each
 * case runs in a process of its own: one that hangs is killed and
 * reported, the others still run.
 *
 *	hands FILE [HUGE_DIR]	(HUGE_DIR: an empty directory; needs root) */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "client.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define LEN (8 * MiB)
#define BUDGET (4 * MiB)
#define PAGE 4096ull
#define CASE_SECONDS 3
/* ci/contract.sh kills a client after 60 s: cases not begun by then are
 * reported, not lost */
#define ALL_SECONDS 50

static const char *file, *huge_dir;
static time_t start;

/* One region and the chunk a case works on. */
struct ctx {
	struct resid_region *r;
	uint8_t *a;
	uint64_t chunk, off; /* the chunk: its length and offset */
	int huge;
	int adv; /* the call's advice, where it is one */
};

/* The bytes of [from, to) that differ from the file's; a page that
 * faults counts whole. */
static uint64_t wrong(const struct ctx *x, uint64_t from, uint64_t to)
{
	uint64_t bad = 0;

	for (uint64_t at = from; at < to; at++) {
		uint8_t v;

		if (at % PAGE == 0 || at == from) {
			if (touch(x->a + at, &v, NULL)) {
				uint64_t end = (at / PAGE + 1) * PAGE;

				bad += (end < to ? end : to) - at;
				at = (end < to ? end : to) - 1;
				continue;
			}
		}
		bad += x->a[at] != byte_at(at, 29);
	}
	return bad;
}

/* The chunk, then the whole region (more than the budget: the chunk is
 * evicted and fetched again), then the chunk again. */
static int all_right(const struct ctx *x, char *why, size_t n)
{
	uint64_t b1 = wrong(x, x->off, x->off + x->chunk);
	uint64_t b2 = wrong(x, 0, LEN);
	uint64_t b3 = wrong(x, x->off, x->off + x->chunk);

	if (b1 || b2 || b3)
		snprintf(why, n,
			 "%llu, then %llu in the region, then %llu "
			 "wrong bytes",
			 (unsigned long long)b1, (unsigned long long)b2,
			 (unsigned long long)b3);
	return !(b1 || b2 || b3);
}

static int advise(const struct ctx *x, uint64_t from, uint64_t len, int adv)
{
	return madvise(x->a + from, len, adv) ? -errno : 0;
}

/* The calls. Each does its call on the chunk and checks what follows; 1
 * when it is mmap's outcome, else 0 with why. */
typedef int (*call_fn)(struct ctx *x, char *why, size_t n);

static int c_advice(struct ctx *x, char *why, size_t n)
{
	int rc = advise(x, x->off, x->chunk, x->adv);

	if (rc) {
		snprintf(why, n, "madvise: %s", strerror(-rc));
		return 0;
	}
	return all_right(x, why, n);
}

/* MADV_FREE is for private anonymous memory: a file's mapping refuses. */
static int c_free(struct ctx *x, char *why, size_t n)
{
	int rc = advise(x, x->off, x->chunk, MADV_FREE);

	if (rc != -EINVAL) {
		snprintf(why, n, "madvise: %s, not EINVAL", strerror(-rc));
		return 0;
	}
	return all_right(x, why, n);
}

/* Advice on part of the chunk splits the mapping inside it. */
static int c_random(struct ctx *x, char *why, size_t n)
{
	int rc = advise(x, x->off + PAGE, x->chunk / 2, MADV_RANDOM);

	if (!rc)
		rc = advise(x, x->off + x->chunk / 2 + PAGE, PAGE,
			    MADV_SEQUENTIAL);
	if (rc) {
		snprintf(why, n, "madvise: %s", strerror(-rc));
		return 0;
	}
	return all_right(x, why, n);
}

/* Collapse asks the kernel to map huge folios in A: it may refuse or
 * succeed, the bytes must stay the file's. */
static int c_collapse(struct ctx *x, char *why, size_t n)
{
	uint64_t hp = 2 * MiB, from = (x->off + hp - 1) / hp * hp;
	int rc = advise(x, 0, LEN, MADV_HUGEPAGE);

	if (rc) {
		snprintf(why, n, "MADV_HUGEPAGE: %s", strerror(-rc));
		return 0;
	}
	/* the huge folio around the chunk, or the first after it */
	if (x->chunk >= hp)
		from = x->off;
	(void)advise(x, from, hp, MADV_COLLAPSE);
	return all_right(x, why, n);
}

/* Collapse while the chunk's pieces are mapped one by one: what was not
 * mapped yet must not appear as zeros. */
static int c_collapse_fetching(struct ctx *x, char *why, size_t n)
{
	int rc = advise(x, 0, LEN, MADV_HUGEPAGE);
	uint8_t v;

	if (rc) {
		snprintf(why, n, "MADV_HUGEPAGE: %s", strerror(-rc));
		return 0;
	}
	for (int round = 0; round < 8; round++) {
		uint64_t bad;

		/* the first page's piece; the rest is still being read */
		if (touch(x->a + x->off, &v, NULL)) {
			snprintf(why, n, "the first read faulted");
			return 0;
		}
		(void)advise(x, x->off, x->chunk, MADV_COLLAPSE);
		bad = wrong(x, x->off, x->off + x->chunk);
		if (bad) {
			snprintf(why, n, "round %d: %llu wrong bytes", round,
				 (unsigned long long)bad);
			return 0;
		}
		/* evict it: read the rest of the region */
		wrong(x, x->off + x->chunk, LEN);
		wrong(x, 0, x->off);
	}
	return all_right(x, why, n);
}

static int c_populate(struct ctx *x, char *why, size_t n)
{
	int rc = advise(x, x->off, x->chunk, MADV_DONTNEED);

	if (!rc)
		rc = advise(x, x->off, x->chunk, MADV_POPULATE_READ);
	if (rc) {
		snprintf(why, n, "madvise: %s", strerror(-rc));
		return 0;
	}
	return all_right(x, why, n);
}

/* A page in the middle made PROT_NONE: it raises SIGSEGV, the others read
 * right (the chunk's mapping is split in three), then it reads right. */
static int c_mprotect(struct ctx *x, char *why, size_t n)
{
	uint8_t *p = x->a + x->off + x->chunk / 2;
	uint64_t bad;
	uint8_t v;
	int sig;

	if (mprotect(p, PAGE, PROT_NONE)) {
		snprintf(why, n, "mprotect(PROT_NONE): %s", strerror(errno));
		return 0;
	}
	bad = wrong(x, x->off, x->off + x->chunk / 2);
	sig = touch(p, &v, NULL);
	if (mprotect(p, PAGE, PROT_READ)) {
		snprintf(why, n, "mprotect(PROT_READ): %s", strerror(errno));
		return 0;
	}
	if (bad || sig != SIGSEGV) {
		snprintf(why, n,
			 "under PROT_NONE: %llu wrong bytes before the "
			 "page, its read raised signal %d",
			 (unsigned long long)bad, sig);
		return 0;
	}
	return all_right(x, why, n);
}

/* A page in the middle unmapped: SIGSEGV there, the chunk's other pages
 * right; then anonymous memory mapped over the hole reads as such. */
static int c_munmap(struct ctx *x, char *why, size_t n)
{
	uint64_t hole = x->off + x->chunk / 2;
	uint8_t *p = x->a + hole, v;
	uint64_t b1, b2, b3;
	int sig;

	if (munmap(p, PAGE)) {
		snprintf(why, n, "munmap: %s", strerror(errno));
		return 0;
	}
	sig = touch(p, &v, NULL);
	b1 = wrong(x, x->off, hole) + wrong(x, hole + PAGE, x->off + x->chunk);
	if (mmap(p, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p) {
		snprintf(why, n, "mmap MAP_FIXED: %s", strerror(errno));
		return 0;
	}
	p[1] = 7;
	b2 = wrong(x, 0, hole) + wrong(x, hole + PAGE, LEN);
	b3 = wrong(x, x->off, hole) + wrong(x, hole + PAGE, x->off + x->chunk);
	if (sig != SIGSEGV || b1 || b2 || b3 || p[0] || p[1] != 7) {
		snprintf(why, n,
			 "the hole raised signal %d; %llu, %llu, %llu "
			 "wrong bytes around it; the new page holds %u %u",
			 sig, (unsigned long long)b1, (unsigned long long)b2,
			 (unsigned long long)b3, p[0], p[1]);
		return 0;
	}
	return 1;
}

/* A page in the middle moved elsewhere (mremap): the hole it leaves
 * raises SIGSEGV and the rest of the region still reads right. The moved
 * page is no longer the region's (resid.h): it is not read here. */
static int c_mremap(struct ctx *x, char *why, size_t n)
{
	uint64_t hole = x->off + x->chunk / 2, b1, b2;
	uint8_t *p = x->a + hole, v;
	void *to = mmap(NULL, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	int sig;

	if (to == MAP_FAILED ||
	    mremap(p, PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, to) !=
		    to) {
		snprintf(why, n, "mremap: %s", strerror(errno));
		return 0;
	}
	sig = touch(p, &v, NULL);
	b1 = wrong(x, x->off, hole) + wrong(x, hole + PAGE, x->off + x->chunk);
	b2 = wrong(x, 0, hole) + wrong(x, hole + PAGE, LEN);
	if (sig != SIGSEGV || b1 || b2) {
		snprintf(why, n,
			 "the hole raised signal %d; %llu, then %llu "
			 "wrong bytes around it",
			 sig, (unsigned long long)b1, (unsigned long long)b2);
		return 0;
	}
	return 1;
}

/* write() from A to a pipe: the kernel's copy faults through the pager. */
static int c_write(struct ctx *x, char *why, size_t n)
{
	uint64_t len = x->chunk < 64 * 1024 ? x->chunk : 64 * 1024;
	uint64_t at = x->off + x->chunk - len;
	static uint8_t buf[64 * 1024];
	int fd[2];
	ssize_t w, got = 0;

	if (advise(x, x->off, x->chunk, MADV_DONTNEED) || pipe(fd)) {
		snprintf(why, n, "setup: %s", strerror(errno));
		return 0;
	}
	fcntl(fd[1], F_SETPIPE_SZ, (int)len);
	w = write(fd[1], x->a + at, len);
	while (w > 0 && got < w) {
		ssize_t k = read(fd[0], buf + got, (size_t)(w - got));

		if (k <= 0)
			break;
		got += k;
	}
	close(fd[0]);
	close(fd[1]);
	uint64_t bad = 0;

	for (ssize_t i = 0; i < got; i++)
		bad += buf[i] != byte_at(at + (uint64_t)i, 29);
	if (w != (ssize_t)len || got != w || bad) {
		snprintf(why, n,
			 "write returned %zd (%s), %zd bytes came out, "
			 "%llu wrong",
			 w, w < 0 ? strerror(errno) : "", got,
			 (unsigned long long)bad);
		return 0;
	}
	return all_right(x, why, n);
}

/* read() into A: the mapping is read-only, EFAULT, nothing changes. */
static int c_read(struct ctx *x, char *why, size_t n)
{
	int fd[2];
	ssize_t got;

	if (pipe(fd) || write(fd[1], "abcdefgh", 8) != 8) {
		snprintf(why, n, "pipe: %s", strerror(errno));
		return 0;
	}
	got = read(fd[0], x->a + x->off + PAGE, 8);
	int e = errno;

	close(fd[0]);
	close(fd[1]);
	if (got != -1 || e != EFAULT) {
		snprintf(why, n, "read returned %zd (%s), not EFAULT", got,
			 strerror(e));
		return 0;
	}
	return all_right(x, why, n);
}

/* Another process advises the region (a helper forked after resid_open:
 * it has no mapping of it, MADV_DONTFORK). */
static int c_other(struct ctx *x, char *why, size_t n)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct iovec iov = { x->a + x->off, x->chunk };
		int pidfd = (int)syscall(SYS_pidfd_open, getppid(), 0);

		if (pidfd < 0)
			_exit(2);
		_exit(syscall(SYS_process_madvise, pidfd, &iov, 1, x->adv, 0) ==
				      (long)x->chunk ?
			      0 :
			      3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		snprintf(why, n, "the helper: %s",
			 pid < 0                  ? strerror(errno) :
			 WEXITSTATUS(status) == 2 ? "pidfd_open failed" :
						    "process_madvise failed");
		return 0;
	}
	return all_right(x, why, n);
}

enum { BOTH, SMALL, HUGE, ABSENT_ONLY = 4 };

static const struct call {
	const char *name, *outcome;
	call_fn fn;
	int where, adv;
} calls[] = {
	{ "MADV_DONTNEED", "reads the file's bytes again", c_advice, BOTH,
	  MADV_DONTNEED },
	{ "MADV_FREE", "refused (EINVAL), bytes unchanged", c_free, BOTH, 0 },
	{ "MADV_PAGEOUT", "reads the file's bytes", c_advice, BOTH,
	  MADV_PAGEOUT },
	{ "MADV_COLD", "reads the file's bytes", c_advice, BOTH, MADV_COLD },
	{ "MADV_WILLNEED", "reads the file's bytes", c_advice, BOTH,
	  MADV_WILLNEED },
	{ "MADV_RANDOM/MADV_SEQUENTIAL on part of a chunk",
	  "reads the file's bytes", c_random, BOTH, 0 },
	{ "MADV_HUGEPAGE then MADV_COLLAPSE", "reads the file's bytes",
	  c_collapse, BOTH, 0 },
	{ "MADV_HUGEPAGE then MADV_COLLAPSE while the chunk is fetched",
	  "never maps a byte before it is fetched", c_collapse_fetching,
	  HUGE | ABSENT_ONLY, 0 },
	{ "MADV_DONTNEED then MADV_POPULATE_READ", "reads the file's bytes",
	  c_populate, BOTH, 0 },
	{ "mprotect PROT_NONE on a page then PROT_READ",
	  "SIGSEGV there meanwhile, then the file's bytes", c_mprotect, BOTH,
	  0 },
	{ "munmap of a page then mmap MAP_FIXED over it",
	  "SIGSEGV there, then the new mapping; the file's bytes around",
	  c_munmap, BOTH, 0 },
	{ "mremap moving and growing a page out of the middle",
	  "SIGSEGV in the hole; the file's bytes around", c_mremap, BOTH, 0 },
	{ "write() from the region (after MADV_DONTNEED)",
	  "writes the file's bytes", c_write, BOTH, 0 },
	{ "read() into the region", "EFAULT, bytes unchanged", c_read, BOTH,
	  0 },
	{ "process_madvise MADV_COLD from another process",
	  "reads the file's bytes", c_other, BOTH, MADV_COLD },
	{ "process_madvise MADV_PAGEOUT from another process",
	  "reads the file's bytes", c_other, BOTH, MADV_PAGEOUT },
};

/* In the case's own process: the region, the chunk made resident or not,
 * the call. Prints the verdict; 0 or 1. */
static int run_case(const struct call *c, int huge, int resident,
		    const char *promise)
{
	char err[RESID_ERRLEN], why[512] = "";
	struct resid_config cfg;
	struct ctx x = { .huge = huge, .adv = c->adv };

	resid_config_init(&cfg);
	cfg.backing = RESID_BACKING_FILE;
	cfg.path = file;
	cfg.region_len = LEN;
	cfg.chunk_size = huge ? 2 * MiB : 256 * 1024;
	cfg.budget_bytes = BUDGET;
	cfg.huge_dir = huge ? huge_dir : NULL;
	/* pieces: a collapse has time to come between them */
	cfg.fetch_piece = 64 * 1024;
	x.r = resid_open(&cfg, err);
	if (!x.r) {
		verdict(0, promise, "resid_open: %s", err);
		return 1;
	}
	if (huge) {
		char json[8192];

		if (resid_manifest_json(x.r, json, sizeof(json)) ||
		    !strstr(json, "2048 KiB")) {
			verdict(0, promise, "not the huge path: %s", json);
			return 1;
		}
	}
	x.a = (uint8_t *)resid_base(x.r);
	x.chunk = cfg.chunk_size;
	x.off = huge ? 2 * MiB : 5 * x.chunk;
	if (resident && wrong(&x, x.off, x.off + x.chunk)) {
		verdict(0, promise, "wrong bytes before the call");
		return 1;
	}
	int ok = c->fn(&x, why, sizeof(why));

	verdict(ok, promise, "%s", why);
	if (ok)
		resid_close(x.r);
	return !ok;
}

/* Each case in a child; a hang is killed after CASE_SECONDS. */
static void one(const struct call *c, int huge, int resident)
{
	char promise[256];
	int status;
	pid_t pid;

	snprintf(promise, sizeof(promise), "%s, %s path, %s chunk: %s", c->name,
		 huge ? "huge" : "4 KiB", resident ? "resident" : "absent",
		 c->outcome);
	if (time(NULL) - start > ALL_SECONDS) {
		verdict(0, promise, "not run: the cases before took %d s",
			ALL_SECONDS);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(run_case(c, huge, resident, promise));
	if (pid < 0) {
		verdict(0, promise, "fork: %s", strerror(errno));
		return;
	}
	for (int t = 0; t < CASE_SECONDS * 20; t++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (WIFSIGNALED(status))
				verdict(0, promise, "died of signal %d",
					WTERMSIG(status));
			else if (WEXITSTATUS(status))
				failures++;
			return;
		}
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	verdict(0, promise, "hung: killed after %d s", CASE_SECONDS);
}

/* A tmpfs mounted huge=always on dir, in a mount namespace of our own. */
static int huge_mount(const char *dir)
{
	return unshare(CLONE_NEWNS) ||
			       mount(NULL, "/", NULL, MS_REC | MS_PRIVATE,
				     NULL) ||
			       mount("resid-hands", dir, "tmpfs",
				     MS_NOSUID | MS_NODEV,
				     "huge=always,size=64m") ?
		       -1 :
		       0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || make_file(argv[1], LEN, 29) < 0) {
		fprintf(stderr, "usage: hands FILE [HUGE_DIR]\n");
		return 2;
	}
	file = argv[1];
	start = time(NULL);
	huge_dir = argc == 3 ? argv[2] : NULL;
	if (huge_dir && huge_mount(huge_dir)) {
		verdict(0, "the huge path: a tmpfs huge=always",
			"mount on %s: "
			"%s",
			huge_dir, strerror(errno));
		huge_dir = NULL;
	}
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		for (int huge = 0; huge <= (huge_dir != NULL); huge++)
			for (int res = 1; res >= 0; res--) {
				int w = calls[i].where;

				if ((huge && !(w & HUGE) && (w & 3) != BOTH) ||
				    (!huge && (w & 3) == HUGE) ||
				    (res && (w & ABSENT_ONLY)))
					continue;
				one(&calls[i], huge, res);
			}
	return finish();
}
