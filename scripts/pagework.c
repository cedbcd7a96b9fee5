/* The fetch's costs without the pager (scripts/bench-pagework.sh): on a
 * file read with O_DIRECT and a memfd, per MiB, median of --reps runs:
 *   device    1 MiB pread into one reused buffer: the device alone
 *   device4   the same in 4 MiB parts
 *   serial    1 MiB pread into a buffer, then pwrite into the memfd
 *   reader    the same with a reader thread and two 1 MiB slots: the next
 *             read in flight while this one is written (the pager's way)
 *   reader4   the same with two 4 MiB slots
 *   pwrite    pwrite of a buffer into punched memfd pages, not counting
 *             the punches
 *   allocate  fallocate of the same pages (allocated and zeroed)
 *   fresh     pwrite of the whole file into B punched 3 s before, nothing
 *             freed meanwhile: pages the machine had time to take back
 *             (a VM that reports free memory to its host, as this one's
 *             virtio-balloon does, makes their first touch a host fault)
 *   punch     the punch of populated pages, by one thread and by two at once
 *   touch     B filled, mapped read-only with its page tables made up front
 *             (MAP_POPULATE, 4 KiB entries, as CONTINUE maps A) and read
 *             word by word the first time (touch) and again (touch2): on a
 *             VM whose host shadows the guest's page tables, the first
 *             read of each new entry is a trip to the host
 * Each read pass punches the memfd two chunks behind, as eviction would.
 * With DIR (a tmpfs mounted with huge=), the memfd is an O_TMPFILE there,
 * filled with huge folios, as B on the pager's huge path.
 * usage: pagework FILE CHUNK_MIB REPS [DIR] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1ul << 20)
#define MAX_REPS 9

static int file_fd, mfd;
/* The read and write size: the pager's bounce slot, or a kind's own. */
static size_t file_len, chunk, part = MIB;

static void die(const char *what)
{
	fprintf(stderr, "pagework: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void punch(size_t off, size_t len)
{
	if (fallocate(mfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) < 0)
		die("punch");
}

static void read_part(uint8_t *dst, size_t off)
{
	if (pread(file_fd, dst, part, (off_t)off) != (ssize_t)part)
		die("pread");
}

static void write_part(const uint8_t *src, size_t off)
{
	if (pwrite(mfd, src, part, (off_t)off) != (ssize_t)part)
		die("pwrite");
}

/* Before the part at off: the chunk two behind is evicted. */
static void evict_behind(size_t off)
{
	if (off % chunk == 0 && off >= 2 * chunk)
		punch(off - 2 * chunk, chunk);
}

/* The reader: reads part `next` into slot next % 2 once the worker has
 * written the part before it in that slot. */
static struct {
	pthread_mutex_t m;
	pthread_cond_t cv;
	size_t next, done, written, parts;
	uint8_t *slots;
} rd = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, NULL };

static void *reader(void *arg)
{
	(void)arg;
	for (size_t p = 0; p < rd.parts; p++) {
		pthread_mutex_lock(&rd.m);
		while (p >= rd.written + 2)
			pthread_cond_wait(&rd.cv, &rd.m);
		pthread_mutex_unlock(&rd.m);
		read_part(rd.slots + (p % 2) * part, p * part);
		pthread_mutex_lock(&rd.m);
		rd.done = p + 1;
		pthread_cond_broadcast(&rd.cv);
		pthread_mutex_unlock(&rd.m);
	}
	return NULL;
}

static double pass_device(uint8_t *buf, int unused)
{
	double t0 = now();

	(void)unused;
	for (size_t off = 0; off < file_len; off += part)
		read_part(buf, off);
	return now() - t0;
}

static double pass_serial(uint8_t *buf, int unused)
{
	double t0;

	(void)unused;
	punch(0, file_len);
	t0 = now();

	for (size_t off = 0; off < file_len; off += part) {
		evict_behind(off);
		read_part(buf, off);
		write_part(buf, off);
	}
	return now() - t0;
}

static double pass_reader(uint8_t *buf, int unused)
{
	pthread_t th;
	double t0;

	(void)unused;
	punch(0, file_len);
	t0 = now();
	rd.slots = buf;
	rd.parts = file_len / part;
	rd.done = rd.written = 0;
	if (pthread_create(&th, NULL, reader, NULL))
		die("pthread_create");
	for (size_t p = 0; p < rd.parts; p++) {
		evict_behind(p * part);
		pthread_mutex_lock(&rd.m);
		while (rd.done <= p)
			pthread_cond_wait(&rd.cv, &rd.m);
		pthread_mutex_unlock(&rd.m);
		write_part(buf + (p % 2) * part, p * part);
		pthread_mutex_lock(&rd.m);
		rd.written = p + 1;
		pthread_cond_broadcast(&rd.cv);
		pthread_mutex_unlock(&rd.m);
	}
	pthread_join(th, NULL);
	return now() - t0;
}

/* The memfd emptied, then filled part by part by pwrite or fallocate, the
 * chunk two behind punched first (not timed): the pages freed are the
 * next ones allocated, as in the pager. */
static double pass_fill(uint8_t *buf, int allocate)
{
	double t = 0;

	punch(0, file_len);
	for (size_t off = 0; off < file_len; off += part) {
		evict_behind(off);
		double t0 = now();

		if (!allocate)
			write_part(buf, off);
		else if (fallocate(mfd, 0, (off_t)off, part) < 0)
			die("fallocate");
		t += now() - t0;
	}
	return t;
}

/* B emptied, then 3 s for the freed memory to go where the machine sends
 * it, then B filled with pwrite, every part into a page not used since. */
static double pass_fresh(uint8_t *buf, int unused)
{
	double t0;

	(void)unused;
	punch(0, file_len);
	sleep(3);
	t0 = now();
	for (size_t off = 0; off < file_len; off += part)
		write_part(buf, off);
	return now() - t0;
}

static uint64_t sink;

/* B filled, then mapped with every entry made; the first read (again: 0)
 * or the second (again: 1) of every word timed. */
static double pass_touch(uint8_t *buf, int again)
{
	const uint64_t *m;
	uint64_t s = 0;
	double t0 = 0;

	for (size_t off = 0; off < file_len; off += part)
		write_part(buf, off);
	m = mmap(NULL, file_len, PROT_READ, MAP_SHARED | MAP_POPULATE, mfd, 0);
	if (m == MAP_FAILED || madvise((void *)m, file_len, MADV_NOHUGEPAGE))
		die("mmap");
	for (int k = 0; k <= again; k++) {
		t0 = now();
		for (size_t i = 0; i < file_len / 8; i++)
			s += m[i];
	}
	t0 = now() - t0;
	sink += s;
	munmap((void *)m, file_len);
	return t0;
}

static void *punch_half(void *arg)
{
	size_t half = file_len / 2;

	punch((size_t)(uintptr_t)arg * half, half);
	return NULL;
}

/* The memfd filled, then punched chunk by chunk, by one or two threads. */
static double pass_punch(uint8_t *buf, int threads)
{
	pthread_t th;
	double t0;

	for (size_t off = 0; off < file_len; off += part)
		write_part(buf, off);
	t0 = now();
	if (threads == 1) {
		for (size_t off = 0; off < file_len; off += chunk)
			punch(off, chunk);
		return now() - t0;
	}
	if (pthread_create(&th, NULL, punch_half, (void *)1))
		die("pthread_create");
	punch_half((void *)0);
	pthread_join(th, NULL);
	return now() - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* ShmemHugePages of /proc/meminfo, kB: the huge folios shmem holds. */
static long shmem_huge_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ShmemHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* The memfd, or with dir an O_TMPFILE on a tmpfs mounted with huge=,
 * whose huge folios are checked once it is filled. */
static void open_memfd(const char *dir)
{
	mfd = dir ? open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) :
		    memfd_create("pagework", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, (off_t)file_len) < 0)
		die(dir ? dir : "memfd");
}

static void check_huge(const uint8_t *buf, long before)
{
	for (size_t off = 0; off < file_len; off += part)
		write_part(buf, off);
	if (shmem_huge_kb() - before < (long)(file_len / 2 / 1024)) {
		fprintf(stderr,
			"pagework: the file in the tmpfs did not get "
			"huge folios: mount it with huge=within_size\n");
		exit(2);
	}
	punch(0, file_len);
}

/* The kinds, in the order they run and print; part: their read and
 * write size. */
static const struct kind {
	const char *name;
	double (*pass)(uint8_t *buf, int arg);
	int arg;
	size_t part;
} kinds[] = {
	{ "device", pass_device, 0, MIB },
	{ "device4", pass_device, 0, 4 * MIB },
	{ "serial", pass_serial, 0, MIB },
	{ "reader", pass_reader, 0, MIB },
	{ "reader4", pass_reader, 0, 4 * MIB },
	{ "pwrite", pass_fill, 0, MIB },
	{ "allocate", pass_fill, 1, MIB },
	{ "fresh", pass_fresh, 0, MIB },
	{ "punch", pass_punch, 1, MIB },
	{ "punch2", pass_punch, 2, MIB },
	{ "touch", pass_touch, 0, MIB },
	{ "touch2", pass_touch, 1, MIB },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

int main(int argc, char **argv)
{
	double t[NKINDS][MAX_REPS];
	struct stat st;
	uint8_t *buf;
	int reps;

	if ((argc != 4 && argc != 5) || atoi(argv[2]) < 1 ||
	    atoi(argv[3]) < 1 || atoi(argv[3]) > MAX_REPS) {
		fprintf(stderr,
			"usage: pagework FILE CHUNK_MIB REPS (1..%d) "
			"[DIR]\n",
			MAX_REPS);
		return 2;
	}
	chunk = (size_t)atoi(argv[2]) * MIB;
	reps = atoi(argv[3]);
	file_fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (file_fd < 0 || fstat(file_fd, &st) < 0)
		die(argv[1]);
	file_len = (size_t)st.st_size / chunk * chunk;
	if (file_len < 4 * chunk) {
		fprintf(stderr, "pagework: %s holds fewer than 4 chunks\n",
			argv[1]);
		return 2;
	}
	long huge_before = shmem_huge_kb();

	open_memfd(argc == 5 ? argv[4] : NULL);
	buf = aligned_alloc(2 * MIB, 8 * MIB);
	if (!buf)
		die("aligned_alloc");
	madvise(buf, 8 * MIB, MADV_HUGEPAGE); /* as the pager's, best effort */
	memset(buf, 1, 8 * MIB);
	if (argc == 5)
		check_huge(buf, huge_before);
	/* The kinds interleaved rep by rep, so a noisy moment hits them all. */
	for (int r = 0; r < reps; r++)
		for (size_t k = 0; k < NKINDS; k++) {
			part = kinds[k].part;
			t[k][r] = kinds[k].pass(buf, kinds[k].arg);
		}
	for (size_t k = 0; k < NKINDS; k++) {
		qsort(t[k], (size_t)reps, sizeof(double), cmp);
		double s = t[k][reps / 2];

		printf("%s,%s,%zu,%.3f,%.0f\n", argc == 5 ? "huge" : "4k",
		       kinds[k].name, chunk / MIB,
		       s * 1e3 / (double)(file_len / MIB),
		       (double)(file_len / MIB) / s);
	}
	return 0;
}
