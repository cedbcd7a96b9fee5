/* The semantics of residctl run (docs/run.md), as a program meets them:
 * it maps FILE as real programs do and compares every byte it reads with
 * pread of FILE. ci/run.sh runs it under residctl run and under nothing;
 * MAPTEST_EXPECT=pager|kernel says who must be serving the mappings it is
 * told are served (read from /proc/self/maps: the pager's memfd, or FILE).
 *
 *   maptest sum FILE [PASSES]   whole file, MAP_POPULATE: "sum HEX"
 *   maptest semantics FILE      one "ok NAME" or "FAIL NAME: why" a case
 *   maptest replace FILE NEW    renames NEW over FILE, then maps FILE
 *   maptest truncate FILE       truncates FILE by a page, then maps it
 *   maptest mkgguf OUT          a small GGUF v3 file, tensors out of order
 *
 * Exit 0 when every case passed, 1 otherwise. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096ul

static const char *file;
static unsigned char *want; /* the whole file, by pread */
static size_t size;
static int failed;

static void load(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "maptest: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	size = (size_t)st.st_size;
	want = malloc(size + 1);
	for (size_t got = 0; got < size;) {
		ssize_t k = pread(fd, want + got, size - got, (off_t)got);

		if (k <= 0) {
			fprintf(stderr, "maptest: pread %s: %s\n", path,
				strerror(errno));
			exit(2);
		}
		got += (size_t)k;
	}
	close(fd);
	file = path;
}

/* The first wrong byte of p against the file from off, or -1; the page
 * tail past the end must read as zeros. */
static long wrong(const unsigned char *p, size_t off, size_t len)
{
	size_t end = off + len;

	if (end >= size) /* the last page's tail reads as zeros */
		end = (size + PAGE - 1) & ~(PAGE - 1);
	for (size_t i = 0; off + i < end; i++)
		if (p[i] != (off + i < size ? want[off + i] : 0))
			return (long)i;
	return -1;
}

/* Who serves the mapping at p: "pager" (its memfd), "kernel" (FILE), or
 * what /proc/self/maps names. */
static const char *who(const void *p)
{
	static __thread char name[4200];
	char line[4400];
	FILE *f = fopen("/proc/self/maps", "r");

	snprintf(name, sizeof(name), "unmapped");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		int at = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &a, &b, &at) <
			    2 ||
		    (unsigned long)p < a || (unsigned long)p >= b)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(name, sizeof(name), "%s", at ? line + at : "");
		if (strstr(name, "memfd:residctl"))
			snprintf(name, sizeof(name), "pager");
		else if (!strncmp(name, file, strlen(file)))
			snprintf(name, sizeof(name), "kernel");
	}
	if (f)
		fclose(f);
	return name;
}

static void result(const char *name, const char *why)
{
	if (why) {
		failed = 1;
		printf("FAIL %s: %s\n", name, why);
	} else {
		printf("ok %s\n", name);
	}
	fflush(stdout);
}

/* A served view: right bytes and the expected server. NULL or why not. */
static const char *view_ok(const unsigned char *p, size_t off, size_t len,
			   const char *expect)
{
	static __thread char why[512];
	long w;

	if (p == MAP_FAILED) {
		snprintf(why, sizeof(why), "mmap failed: %s", strerror(errno));
		return why;
	}
	w = wrong(p, off, len);
	if (w >= 0) {
		snprintf(why, sizeof(why),
			 "byte %zu reads %#x, the file has %#x",
			 off + (size_t)w, p[w],
			 off + (size_t)w < size ? want[off + (size_t)w] : 0);
		return why;
	}
	if (expect && strcmp(who(p), expect)) {
		snprintf(why, sizeof(why), "served by %s, not %s", who(p),
			 expect);
		return why;
	}
	return NULL;
}

static int openf(int flags)
{
	int fd = open(file, flags | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "maptest: open %s: %s\n", file,
			strerror(errno));
		exit(2);
	}
	return fd;
}

static unsigned char *map(size_t len, int prot, int flags, off_t off)
{
	int fd = openf(O_RDONLY);
	void *p = mmap(NULL, len, prot, flags, fd, off);

	close(fd);
	return p;
}

static uint64_t fnv(const unsigned char *p, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* A mapping made before main, as a library's constructor would. */
static const char *ctor_why;
__attribute__((constructor)) static void early(void)
{
	const char *f = getenv("MAPTEST_CTOR");
	static char why[600];

	if (!f)
		return;
	load(f);
	unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);
	const char *w = view_ok(p, 0, size, getenv("MAPTEST_EXPECT"));

	if (w) {
		snprintf(why, sizeof(why), "%s", w);
		ctor_why = why;
	}
	if (p != MAP_FAILED)
		munmap(p, size);
}

static const char *expect;

static void case_whole(void)
{
	unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);

	result("whole file, MAP_SHARED", view_ok(p, 0, size, expect));
	munmap(p, size);
	p = map(size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, 0);
	result("whole file, MAP_PRIVATE | MAP_POPULATE",
	       view_ok(p, 0, size, expect));
	munmap(p, size);
}

static void case_parts(void)
{
	size_t off = 5 * PAGE, len = 3 * PAGE + 100, tail = size & ~(PAGE - 1);
	unsigned char *p = map(len, PROT_READ, MAP_SHARED, (off_t)off);

	result("a sub-range at a page offset", view_ok(p, off, len, expect));
	munmap(p, len);
	p = map(size - tail, PROT_READ, MAP_PRIVATE, (off_t)tail);
	result("the last page, zeros past the end",
	       view_ok(p, tail, size - tail, expect));
	munmap(p, size - tail);
}

static void case_twice(void)
{
	unsigned char *a = map(size, PROT_READ, MAP_SHARED, 0);
	unsigned char *b = map(size, PROT_READ, MAP_SHARED, 0);
	const char *w = view_ok(a, 0, size, expect);

	w = w ? w : view_ok(b, 0, size, expect);
	munmap(a, size);
	w = w ? w : view_ok(b, 0, size, expect);
	result("the file mapped twice, one unmapped", w);
	munmap(b, size);
}

static void case_partial_munmap(void)
{
	unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);
	const char *w = view_ok(p, 0, size, expect);

	/* the header's pages, as llama.cpp unmaps them */
	if (!w && munmap(p, 2 * PAGE))
		w = "munmap of the first pages failed";
	w = w ? w : view_ok(p + 2 * PAGE, 2 * PAGE, size - 2 * PAGE, expect);
	if (!w && munmap(p + 8 * PAGE, 4 * PAGE))
		w = "munmap of a middle range failed";
	w = w ? w : view_ok(p + 2 * PAGE, 2 * PAGE, 6 * PAGE, expect);
	w = w ? w : view_ok(p + 12 * PAGE, 12 * PAGE, size - 12 * PAGE, expect);
	munmap(p + 2 * PAGE, 6 * PAGE);
	munmap(p + 12 * PAGE, size - 12 * PAGE);
	result("partial munmaps (head, middle), the rest reads", w);
}

static void case_madvise(void)
{
	static const struct {
		int advice;
		const char *name;
	} adv[] = {
		{ MADV_DONTNEED, "DONTNEED" },
		{ MADV_PAGEOUT, "PAGEOUT" },
		{ MADV_COLD, "COLD" },
		{ MADV_WILLNEED, "WILLNEED" },
		{ MADV_RANDOM, "RANDOM" },
		{ MADV_SEQUENTIAL, "SEQUENTIAL" },
		{ MADV_NORMAL, "NORMAL" },
		{ MADV_POPULATE_READ, "POPULATE_READ" },
	};
	unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);
	const char *w = view_ok(p, 0, size, expect);
	static char why[600];

	for (size_t i = 0; !w && i < sizeof(adv) / sizeof(adv[0]); i++) {
		/* all of it, then a part: the mapping split */
		if (madvise(p, size, adv[i].advice) ||
		    madvise(p + 3 * PAGE, 5 * PAGE, adv[i].advice)) {
			snprintf(why, sizeof(why), "MADV_%s: %s", adv[i].name,
				 strerror(errno));
			w = why;
		}
		w = w ? w : view_ok(p, 0, size, expect);
	}
	/* advice the interposer withholds, and posix_madvise */
	madvise(p, size, MADV_HUGEPAGE);
	madvise(p, size, 25 /* MADV_COLLAPSE */);
	w = w ? w : view_ok(p, 0, size, expect);
	if (!w && (posix_madvise(p, size, POSIX_MADV_WILLNEED) ||
		   posix_madvise(p, size, POSIX_MADV_RANDOM) ||
		   posix_madvise(p, size, POSIX_MADV_DONTNEED)))
		w = "posix_madvise failed";
	w = w ? w : view_ok(p, 0, size, expect);
	munmap(p, size);
	result("madvise and posix_madvise, then every byte again", w);
}

static void case_mprotect(void)
{
	unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);
	const char *w = view_ok(p, 0, size, expect);

	if (!w && mprotect(p + 4 * PAGE, 4 * PAGE, PROT_NONE))
		w = "mprotect PROT_NONE failed";
	if (!w && mprotect(p + 4 * PAGE, 4 * PAGE, PROT_READ))
		w = "mprotect PROT_READ failed";
	w = w ? w : view_ok(p, 0, size, expect);
	if (!w &&
	    (mprotect(p, PAGE, PROT_READ | PROT_WRITE) == 0 || errno != EACCES))
		w = "mprotect PROT_WRITE of a MAP_SHARED read-only view did not fail with EACCES";
	w = w ? w : view_ok(p, 0, size, expect);
	munmap(p, size);
	result("mprotect NONE and back, WRITE refused", w);
}

static void case_mremap(void)
{
	unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0), *q;
	const char *w = view_ok(p, 0, size, expect);
	size_t half = size / 2 & ~(PAGE - 1);

	q = w ? p : mremap(p, size, half, 0);
	if (!w && q != p)
		w = "mremap shrinking in place moved the mapping";
	w = w ? w : view_ok(q, 0, half, expect);
	q = w ? q : mremap(q, half, size, MREMAP_MAYMOVE);
	if (!w && q == MAP_FAILED)
		w = "mremap growing back failed";
	w = w ? w : view_ok(q, 0, size, expect);
	munmap(q, size);
	result("mremap shrink, grow back", w);
}

#define THREADS 8
static pthread_barrier_t bar;

static void *thread(void *arg)
{
	size_t t = (size_t)arg, piece = size / THREADS;
	const char *w;

	pthread_barrier_wait(&bar);
	unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);

	w = view_ok(p, 0, size, NULL);
	w = w ? w : view_ok(p + t * piece, t * piece, piece, expect);
	if (p != MAP_FAILED)
		munmap(p, size);
	return (void *)w;
}

static void case_threads(void)
{
	pthread_t th[THREADS];
	const char *w = NULL;

	pthread_barrier_init(&bar, NULL, THREADS);
	for (size_t t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, thread, (void *)t);
	for (size_t t = 0; t < THREADS; t++) {
		void *r;

		pthread_join(th[t], &r);
		w = w ? w : r;
	}
	result("8 threads map and read at once", w);
}

static void case_fork(void)
{
	unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);
	const char *w = view_ok(p, 0, size / 2, expect);
	int status;
	pid_t pid;

	if (w) {
		result("fork: the child reads the parent's view", w);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(view_ok(p, 0, size, NULL) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		w = "the child read a wrong byte or died";
	w = w ? w : view_ok(p, 0, size, expect);
	munmap(p, size);
	result("fork: the child reads the parent's view", w);
}

static void case_exec(const char *self)
{
	char out[128] = "", line[64];
	int fds[2], status;
	pid_t pid;

	snprintf(line, sizeof(line), "sum %016" PRIx64 "\n",
		 fnv(want, size, 1469598103934665603ull));
	if (pipe(fds))
		return result("exec: a child process maps the file too",
			      "pipe failed");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		execl("/proc/self/exe", self, "sum", file, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ssize_t k = read(fds[0], out, sizeof(out) - 1);

	out[k > 0 ? k : 0] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	result("exec: a child process maps the file too",
	       !WIFEXITED(status) || WEXITSTATUS(status) ? "the child failed" :
	       strcmp(out, line) ? "the child's checksum differs" :
				   NULL);
}

static void case_refused(void)
{
	unsigned char *p = map(2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			       0);
	const char *w = p == MAP_FAILED ? "mmap PROT_WRITE MAP_PRIVATE failed" :
					  NULL;

	if (!w) {
		p[0] ^= 0xff; /* copy-on-write: the file is untouched */
		if (p[0] != (unsigned char)(want[0] ^ 0xff))
			w = "a write to the private mapping did not read back";
		else if (strcmp(who(p), "kernel"))
			w = "PROT_WRITE was not given to the kernel's mmap";
		munmap(p, 2 * PAGE);
	}
	result("PROT_WRITE MAP_PRIVATE goes to the kernel", w);
	p = map(PAGE, PROT_READ, MAP_SHARED, 100);
	result("an unaligned offset fails with EINVAL",
	       p != MAP_FAILED || errno != EINVAL ?
		       "mmap at offset 100 did not fail with EINVAL" :
		       NULL);
	p = map(size + 2 * PAGE, PROT_READ, MAP_SHARED, 0);
	w = p == MAP_FAILED ? "mmap past the end failed" :
			      view_ok(p, 0, size, "kernel");
	if (p != MAP_FAILED)
		munmap(p, size + 2 * PAGE);
	result("a mapping past the file's end goes to the kernel", w);
}

static void case_other_fds(void)
{
	int fd = openf(O_RDWR);
	unsigned char *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	char tmp[] = "/tmp/maptest-other-XXXXXX";
	int o = mkstemp(tmp);
	const char *w = view_ok(p, 0, size, expect);

	close(fd);
	if (p != MAP_FAILED)
		munmap(p, size);
	result("an O_RDWR descriptor of the file, PROT_READ", w);
	w = o < 0 || write(o, "other", 5) != 5 ?
		    "cannot write a temporary file" :
		    NULL;
	p = w ? MAP_FAILED : mmap(NULL, 5, PROT_READ, MAP_SHARED, o, 0);
	if (!w && (p == MAP_FAILED || memcmp(p, "other", 5) ||
		   !strstr(who(p), "maptest-other")))
		w = "another file was not the kernel's mapping of it";
	if (p != MAP_FAILED)
		munmap(p, 5);
	close(o);
	unlink(tmp);
	result("another file goes to the kernel, silently", w);
}

static int semantics(const char *self)
{
	expect = getenv("MAPTEST_EXPECT");
	if (getenv("MAPTEST_CTOR"))
		result("mapped in a constructor, before main", ctor_why);
	case_whole();
	case_parts();
	case_twice();
	case_partial_munmap();
	case_madvise();
	case_mprotect();
	case_mremap();
	case_threads();
	case_fork();
	case_exec(self);
	case_refused();
	case_other_fds();
	return failed;
}

static int sum(int passes)
{
	unsigned char *p = map(size, PROT_READ, MAP_SHARED | MAP_POPULATE, 0);
	const char *w = view_ok(p, 0, size, getenv("MAPTEST_EXPECT"));
	uint64_t h = 1469598103934665603ull;

	for (int i = 1; !w && i < passes; i++)
		w = view_ok(p, 0, size, NULL);
	if (w) {
		fprintf(stderr, "maptest sum: %s\n", w);
		return 1;
	}
	printf("sum %016" PRIx64 "\n", fnv(p, size, h));
	return 0;
}

/* A GGUF v3 file: one metadata pair (general.alignment 64), F32 tensors
 * stored out of read order (output first, then blocks 1, 0, then the
 * embeddings and the norm), sizes unequal and not page multiples. */
static int mkgguf(const char *out)
{
	static const struct {
		const char *name;
		uint64_t ne0, ne1;
	} t[] = {
		{ "output.weight", 1000, 700 },
		{ "blk.1.attn_q.weight", 512, 1100 },
		{ "blk.1.ffn_up.weight", 512, 900 },
		{ "blk.0.attn_q.weight", 512, 1100 },
		{ "blk.0.ffn_up.weight", 512, 900 },
		{ "token_embd.weight", 1000, 600 },
		{ "output_norm.weight", 1000, 1 },
	};
	FILE *f = fopen(out, "wb");
	uint64_t off = 0, n = sizeof(t) / sizeof(t[0]), kv = 1, len;
	uint32_t u;

	if (!f)
		return 2;
	fwrite("GGUF", 1, 4, f);
	u = 3;
	fwrite(&u, 4, 1, f);
	fwrite(&n, 8, 1, f);
	fwrite(&kv, 8, 1, f);
	len = strlen("general.alignment");
	fwrite(&len, 8, 1, f);
	fwrite("general.alignment", 1, len, f);
	u = 4; /* uint32 */
	fwrite(&u, 4, 1, f);
	u = 64;
	fwrite(&u, 4, 1, f);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t dims[2] = { t[i].ne0, t[i].ne1 };

		len = strlen(t[i].name);
		fwrite(&len, 8, 1, f);
		fwrite(t[i].name, 1, len, f);
		u = 2;
		fwrite(&u, 4, 1, f);
		fwrite(dims, 8, 2, f);
		u = 0; /* F32 */
		fwrite(&u, 4, 1, f);
		fwrite(&off, 8, 1, f);
		off += (t[i].ne0 * t[i].ne1 * 4 + 63) / 64 * 64;
	}
	long pos = ftell(f);

	for (long pad = (pos + 63) / 64 * 64; pos < pad; pos++)
		fputc(0, f);
	for (uint64_t i = 0; i < off; i++)
		fputc((int)((i * 2654435761u) >> 13 & 0xff), f);
	return fclose(f) ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "mkgguf"))
		return mkgguf(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "replace")) {
		if (rename(argv[3], argv[2]))
			return 2;
		load(argv[2]);
		unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);
		const char *w = view_ok(p, 0, size, "kernel");

		result("the file replaced before the mapping: the kernel serves the new one",
		       w);
		return failed;
	}
	if (argc >= 3 && !strcmp(argv[1], "truncate")) {
		load(argv[2]);
		if (truncate(argv[2], (off_t)(size - PAGE)))
			return 2;
		free(want);
		load(argv[2]);
		unsigned char *p = map(size, PROT_READ, MAP_SHARED, 0);

		result("the file truncated before the mapping: the kernel serves it",
		       view_ok(p, 0, size, "kernel"));
		return failed;
	}
	if (argc < 3 ||
	    (strcmp(argv[1], "sum") && strcmp(argv[1], "semantics"))) {
		fprintf(stderr,
			"usage: maptest sum|semantics FILE | replace FILE NEW | truncate FILE | mkgguf OUT\n");
		return 2;
	}
	if (!file)
		load(argv[2]);
	if (!strcmp(argv[1], "sum"))
		return sum(argc > 3 ? atoi(argv[3]) : 1);
	return semantics(argv[0]);
}
