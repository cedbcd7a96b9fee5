/* One run of one mode at one chunk size, in its child process: plain
 * O_DIRECT reads into a memfd, or a region read through the pager, timed
 * chunk by chunk, with the pager's counters over the timed chunks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/clock.h"
#include "bench/fetch.h"
#include "invariants.h"
#include "seam.h"
#include "workload/huge_leg.h"

/* The application thread on the first CPU it may use, every other thread
 * (the pager's) on the rest: otherwise a faulter woken by CONTINUE can take
 * the CPU of the worker that woke it, which then finishes its fetch, and
 * evicts ahead, only when the application faults again. 1 when pinned, 0
 * with fewer than 2 CPUs, -1 on an error. */
static int pin_threads(void)
{
	cpu_set_t all, app, pager;
	pid_t me = gettid();
	int first = -1, rc = 1;
	struct dirent *e;
	DIR *d;

	if (sched_getaffinity(0, sizeof(all), &all) || CPU_COUNT(&all) < 2)
		return 0;
	CPU_ZERO(&app);
	pager = all;
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &all))
			first = c;
	CPU_SET(first, &app);
	CPU_CLR(first, &pager);
	d = opendir("/proc/self/task");
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			pid_t t = (pid_t)atoi(e->d_name);

			if (sched_setaffinity(t, sizeof(app),
					      t == me ? &app : &pager))
				rc = -1;
		}
	closedir(d);
	return rc;
}

/* Sums every word (the sink) and checks one word per page: a page mapped
 * from the wrong place shows. */
static void consume(const uint8_t *p, uint64_t off, uint64_t len, uint64_t seed,
		    struct fres *res)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < len / 8; i++)
		sum += w[i];
	for (uint64_t i = 0; i < len / 8; i += 512)
		res->bad += w[i] != resid_content_word(off + i * 8, seed);
	res->sink += sum;
}

static void sample(struct fres *res, uint64_t ns)
{
	if (!res->samples || ns < res->lat_min_ns)
		res->lat_min_ns = ns;
	res->samples++;
	res->lat_ns += ns;
}

/* plain and warm: the same bytes, no pager. */
static int run_plain(const struct fetch_job *j, struct fres *res, char *err,
		     size_t n)
{
	uint64_t s = j->size, chunks = j->o->total / s;
	int fd = open(j->f->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	int mfd = memfd_create("bench-plain", MFD_CLOEXEC);
	uint8_t *m = MAP_FAILED;
	int rc = -1;

	if (j->mode == M_DEVICE) /* one buffer, its pages kept: no page work */
		m = mmap(NULL, s, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	else if (fd >= 0 && mfd >= 0 && ftruncate(mfd, (off_t)s) == 0)
		m = mmap(NULL, s, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	/* EINVAL: no THP in this kernel (PREEMPT_RT), nothing to forbid */
	if (m == MAP_FAILED || fd < 0 ||
	    (madvise(m, s,
		     j->mode == M_DEVICE ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
	     errno != EINVAL) ||
	    (j->o->pin && pin_threads() < 0)) {
		snprintf(err, n, "plain read setup: %s", strerror(errno));
		goto out;
	}
	for (uint64_t i = 0; i < chunks; i++) {
		uint64_t t0 = mono_ns(), t1;

		if (j->mode == M_PLAIN && i > 0) {
			if (fallocate(mfd,
				      FALLOC_FL_PUNCH_HOLE |
					      FALLOC_FL_KEEP_SIZE,
				      0, (off_t)s)) {
				snprintf(err, n, "punch: %s", strerror(errno));
				goto out;
			}
			t1 = mono_ns();
			res->punch_ns += t1 - t0;
			res->punched += s / RESID_PAGE;
		}
		t0 = mono_ns();
		if (bench_pread_full(fd, m, s, i * s)) {
			snprintf(err, n, "O_DIRECT read of %s: %s", j->f->path,
				 strerror(errno));
			goto out;
		}
		t1 = mono_ns();
		if (i >= WARMUP) {
			sample(res, t1 - t0);
			res->wall_ns += t1 - t0;
		}
		consume(m, i * s, s, j->f->seed, res);
	}
	rc = 0;
out:
	if (m != MAP_FAILED)
		munmap(m, s);
	if (mfd >= 0)
		close(mfd);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The Linux seam with its backing reads watched, to see how many overlap:
 * the most at once, and the summed read time over the time any ran. */
static struct resid_seam watched;
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t in_flight, busy_since;
static struct fres *watch_res;

static long watched_pread(void *ctx, int fd, void *buf, size_t len,
			  uint64_t off)
{
	uint64_t t0 = mono_ns(), t1;
	long n;

	pthread_mutex_lock(&watch_lock);
	if (in_flight++ == 0)
		busy_since = t0;
	if (in_flight > watch_res->reads_max)
		watch_res->reads_max = in_flight;
	pthread_mutex_unlock(&watch_lock);
	n = resid_seam_linux.backing_pread(ctx, fd, buf, len, off);
	t1 = mono_ns();
	pthread_mutex_lock(&watch_lock);
	watch_res->read_sum_ns += t1 - t0;
	if (--in_flight == 0)
		watch_res->read_busy_ns += t1 - busy_since;
	pthread_mutex_unlock(&watch_lock);
	return n;
}

static void stats_delta(struct resid_stats *d, const struct resid_stats *a,
			const struct resid_stats *b)
{
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	uint64_t *z = (uint64_t *)d;

	for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		z[i] = y[i] - x[i];
}

uint64_t fetch_budget_chunks(const struct fetch_job *j)
{
	return j->mode == M_PREFETCH ? j->o->prefetch + 2 : 2;
}

static void count_violation(int id, const char *msg, void *arg)
{
	struct fres *res = arg;

	if (!res->bad++)
		fprintf(stderr, "residctl bench fetch: I-%d (%s): %s\n", id,
			inv_title(id), msg);
}

/* The region's configuration for J's mode, the huge leg entered when the
 * mode wants one, and the seam watched through harness H. */
static int pager_config(const struct fetch_job *j, struct resid_config *cfg,
			struct resid_harness *h, struct fres *res, char *err,
			size_t n)
{
	const struct fetch_opts *o = j->o;
	uint64_t s = j->size, chunks = o->total / s;

	resid_config_init(cfg);
	cfg->region_len = chunks * s;
	cfg->chunk_size = s;
	cfg->budget_bytes = fetch_budget_chunks(j) * s;
	cfg->backing = RESID_BACKING_FILE;
	cfg->path = j->f->path;
	cfg->policy = RESID_POLICY_DECLARED;
	cfg->signal = RESID_SIGNAL_BEFORE_READ;
	cfg->fetch_workers = (uint32_t)o->workers;
	cfg->prefetch_depth = j->mode == M_PREFETCH ? (uint32_t)o->prefetch : 0;
	cfg->evict_ahead = j->mode != M_PAGER && j->mode != M_HUGE;
	cfg->fetch_piece = o->piece;
	if (j->mode == M_HUGE || j->mode == M_HUGE_AHEAD) {
		cfg->huge_dir = o->huge_dir ? o->huge_dir : o->huge_mnt;
		if (!o->huge_dir && huge_leg_enter(o->huge_mnt, err, n) < 0)
			return -1;
	}
	cfg->phase_timers = 1;
	watched = resid_seam_linux;
	watched.backing_pread = watched_pread;
	watch_res = res;
	resid_harness_init(h);
	h->seam = &watched;
	cfg->harness = h;
	return 0;
}

/* Touches every page of every chunk in order, the chunks after WARMUP
 * timed; S0 takes the counters where the timing starts. */
static void timed_scan(const struct fetch_job *j, struct resid_region *r,
		       struct fres *res, struct resid_stats *s0)
{
	uint64_t s = j->size, chunks = j->o->total / s, t_first = 0;
	const volatile uint8_t *a = resid_base(r);

	for (uint64_t i = 0; i < chunks; i++) {
		if (i == WARMUP) {
			/* A fetch's tail (commit, stats) may still run. A
			 * prefetch run keeps its pipeline instead. */
			if (j->mode != M_PREFETCH)
				resid_quiesce(r);
			resid_get_stats(r, s0);
			t_first = mono_ns();
		}
		resid_notify_access(r, (uint32_t)i);
		uint64_t t0 = mono_ns(), t1;

		/* The fault; its first piece lands, then the rest. */
		res->sink += a[i * s];
		t1 = mono_ns();
		for (uint64_t p = RESID_PAGE; p < s; p += RESID_PAGE)
			res->sink += a[i * s + p];
		if (i >= WARMUP) {
			sample(res, mono_ns() - t0);
			res->first_ns += t1 - t0;
		}
		if (j->mode != M_PREFETCH)
			consume((const uint8_t *)a + i * s, i * s, s,
				j->f->seed, res);
	}
	res->wall_ns = mono_ns() - t_first;
}

/* pager, ahead, prefetch: an application thread touches each chunk, a
 * byte in every page (the wait is the whole chunk's, however it is mapped:
 * first_ns is the first byte's alone) and, unless prefetching, consumes
 * it. */
static int run_pager(const struct fetch_job *j, struct fres *res, char *err,
		     size_t n)
{
	struct resid_stats s0, s1;
	struct resid_config cfg;
	struct resid_harness h;
	char why[RESID_ERRLEN];

	if (pager_config(j, &cfg, &h, res, err, n) < 0)
		return -1;
	inv_set_handler(count_violation, res);
	struct resid_region *r = resid_open(&cfg, why);

	if (!r) {
		snprintf(err, n, "cannot open the region: %s", why);
		return -1;
	}
	if (!!cfg.huge_dir != !!resid_huge(r)) {
		snprintf(err, n, "the region took %s pages in B",
			 resid_huge(r) ? "huge" : "4 KiB");
		resid_close(r);
		return -1;
	}
	if (j->o->pin && pin_threads() < 0) {
		snprintf(err, n, "cannot pin the threads: %s", strerror(errno));
		resid_close(r);
		return -1;
	}
	timed_scan(j, r, res, &s0);
	if (j->mode != M_PREFETCH)
		resid_quiesce(r);
	resid_get_stats(r, &s1);
	stats_delta(&res->d, &s0, &s1);
	resid_quiesce(r);
	resid_check_quiescent(r);
	resid_get_stats(r, &s1);
	res->fetch_bytes = s1.fetch_bytes;
	resid_close(r);
	inv_set_handler(NULL, NULL);
	return 0;
}

/* In the child: one mode at one size. */
int fetch_run(void *arg, void *out, char *err, size_t n)
{
	const struct fetch_job *j = arg;
	struct fres *res = out;
	uint64_t io0, io1;
	int rc;

	memset(res, 0, sizeof(*res));
	if (bench_read_bytes(&io0)) {
		snprintf(err, n, "cannot read /proc/self/io");
		return -1;
	}
	rc = j->mode <= M_WARM || j->mode == M_DEVICE ?
		     run_plain(j, res, err, n) :
		     run_pager(j, res, err, n);
	if (!rc && bench_read_bytes(&io1) == 0)
		res->io_bytes = io1 - io0;
	return rc;
}
