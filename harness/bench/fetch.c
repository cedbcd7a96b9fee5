/* residctl bench fetch: the pager's fetch path against the platform limit,
 * a plain O_DIRECT pread of the same bytes into a freshly punched memfd,
 * side by side per chunk size, with each fetch broken down by the pager's
 * phase timers. Modes, each in its own process and memory cgroup:
 *   plain     pread into a memfd punched before every read (the limit)
 *   warm      pread into memfd pages that are already there
 *   pager     demand fetches, budget 2 chunks: each fault punches a victim
 *   ahead     the same with evict ahead of need (evict_ahead)
 *   prefetch  prefetch depth D, budget D + 2 chunks, several workers
 * The first two chunks of every run fill the budget and are not timed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "invariants.h"
#include "seam.h"

#define MAX_SIZES 16
#define WARMUP 2             /* chunks not timed */
#define SLACK (64 * MiB)     /* cgroup limit over what the mode holds */

static const char usage[] =
	"usage: residctl bench fetch [--sizes B,B..] [--total BYTES] [--reps N]\n"
	"                            [--workers N] [--prefetch N] [--dir DIR]\n"
	"                            [--pin yes|no] [--csv FILE]\n"
	"  For each chunk size (default 2M,4M,8M,16M,32M,64M,128M), chunks of a\n"
	"  --total byte file (default 1G, at least 4 chunks of the largest\n"
	"  size) are read in order, --reps times (default 3), in five modes side\n"
	"  by side: plain (O_DIRECT pread into a freshly punched memfd: the\n"
	"  platform limit), warm (into populated pages), pager (demand fetches,\n"
	"  budget 2 chunks, eviction on the fault's path), ahead (the same,\n"
	"  evicting ahead of need), prefetch (depth --prefetch, default 2,\n"
	"  --workers, default 4). Prints per-chunk latency and throughput, the\n"
	"  breakdown of a fetch (reserve with its punch, read, CONTINUE, the rest\n"
	"  of the fault path, bookkeeping after CONTINUE) and how many reads\n"
	"  overlap; --csv writes every run, the tables show each mode's median\n"
	"  run. --pin yes (default) runs the application thread on one CPU and\n"
	"  the pager's threads on the others. The file goes in --dir (default\n"
	"  build; not tmpfs) and is removed at the end. Exit 0, 1 when a run\n"
	"  failed, 2 on bad input.\n";

enum mode { M_PLAIN, M_WARM, M_PAGER, M_AHEAD, M_PREFETCH, NMODES };

static const char *const mode_name[NMODES] = {
	"plain", "warm", "pager", "ahead", "prefetch",
};

struct opts {
	uint64_t size[MAX_SIZES];
	int nsizes;
	uint64_t total, reps, workers, prefetch;
	int pin;
	const char *dir, *csv;
};

struct job {
	const struct opts *o;
	const struct bench_file *f;
	enum mode mode;
	uint64_t size;
};

/* One run's figures. bad: wrong words and invariant violations. */
struct fres {
	uint64_t samples, lat_ns, lat_min_ns;
	uint64_t punch_ns, punched;   /* plain: punches of a populated memfd */
	uint64_t wall_ns;             /* from the first timed chunk to the last */
	uint64_t io_bytes, fetch_bytes;
	uint64_t bad, sink;
	uint64_t reads_max;           /* most backing reads at once */
	uint64_t read_sum_ns, read_busy_ns; /* summed, and while any ran */
	struct resid_stats d;         /* pager modes: over the timed chunks */
};

static uint64_t now_ns(void)
{
	return (uint64_t)(bench_now() * 1e9);
}

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

			if (sched_setaffinity(t, sizeof(app), t == me ? &app :
					      &pager))
				rc = -1;
		}
	closedir(d);
	return rc;
}

/* Sums every word (the sink) and checks one word per page: a page mapped
 * from the wrong place shows. */
static void consume(const uint8_t *p, uint64_t off, uint64_t len,
		    uint64_t seed, struct fres *res)
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

static int read_full(int fd, uint8_t *dst, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, dst, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		dst += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* plain and warm: the same bytes, no pager. */
static int run_plain(const struct job *j, struct fres *res, char *err,
		     size_t n)
{
	uint64_t s = j->size, chunks = j->o->total / s;
	int fd = open(j->f->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	int mfd = memfd_create("bench-plain", MFD_CLOEXEC);
	uint8_t *m = MAP_FAILED;
	int rc = -1;

	if (fd >= 0 && mfd >= 0 && ftruncate(mfd, (off_t)s) == 0)
		m = mmap(NULL, s, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (m == MAP_FAILED || madvise(m, s, MADV_NOHUGEPAGE) ||
	    (j->o->pin && pin_threads() < 0)) {
		snprintf(err, n, "plain read setup: %s", strerror(errno));
		goto out;
	}
	for (uint64_t i = 0; i < chunks; i++) {
		uint64_t t0 = now_ns(), t1;

		if (j->mode == M_PLAIN && i > 0) {
			if (fallocate(mfd, FALLOC_FL_PUNCH_HOLE |
				      FALLOC_FL_KEEP_SIZE, 0, (off_t)s)) {
				snprintf(err, n, "punch: %s", strerror(errno));
				goto out;
			}
			t1 = now_ns();
			res->punch_ns += t1 - t0;
			res->punched += s / 4096;
		}
		t0 = now_ns();
		if (read_full(fd, m, s, i * s)) {
			snprintf(err, n, "O_DIRECT read of %s: %s", j->f->path,
				 strerror(errno));
			goto out;
		}
		t1 = now_ns();
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
	uint64_t t0 = now_ns(), t1;
	long n;

	pthread_mutex_lock(&watch_lock);
	if (in_flight++ == 0)
		busy_since = t0;
	if (in_flight > watch_res->reads_max)
		watch_res->reads_max = in_flight;
	pthread_mutex_unlock(&watch_lock);
	n = resid_seam_linux.backing_pread(ctx, fd, buf, len, off);
	t1 = now_ns();
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

static uint64_t budget_chunks(const struct job *j)
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

/* pager, ahead, prefetch: an application thread touches each chunk (the
 * fault fetches all of it) and, unless prefetching, consumes it. */
static int run_pager(const struct job *j, struct fres *res, char *err,
		     size_t n)
{
	uint64_t s = j->size, chunks = j->o->total / s, t_first = 0;
	struct resid_stats s0, s1;
	struct resid_config cfg;
	char why[RESID_ERRLEN];

	resid_config_init(&cfg);
	cfg.region_len = chunks * s;
	cfg.chunk_size = s;
	cfg.budget_bytes = budget_chunks(j) * s;
	cfg.backing = RESID_BACKING_FILE;
	cfg.path = j->f->path;
	cfg.policy = RESID_POLICY_DECLARED;
	cfg.signal = RESID_SIGNAL_BEFORE_READ;
	cfg.fetch_workers = (uint32_t)j->o->workers;
	cfg.prefetch_depth = j->mode == M_PREFETCH ? (uint32_t)j->o->prefetch : 0;
	cfg.evict_ahead = j->mode != M_PAGER;
	cfg.phase_timers = 1;
	watched = resid_seam_linux;
	watched.backing_pread = watched_pread;
	watch_res = res;
	cfg.seam = &watched;
	inv_set_handler(count_violation, res);
	struct resid_region *r = resid_open(&cfg, why);

	if (!r) {
		snprintf(err, n, "cannot open the region: %s", why);
		return -1;
	}
	if (j->o->pin && pin_threads() < 0) {
		snprintf(err, n, "cannot pin the threads: %s", strerror(errno));
		resid_close(r);
		return -1;
	}
	const volatile uint8_t *a = resid_base(r);

	for (uint64_t i = 0; i < chunks; i++) {
		if (i == WARMUP) {
			/* A fetch's tail (commit, stats) may still run. A
			 * prefetch run keeps its pipeline instead. */
			if (j->mode != M_PREFETCH)
				resid_quiesce(r);
			resid_get_stats(r, &s0);
			t_first = now_ns();
		}
		resid_notify_access(r, (uint32_t)i);
		uint64_t t0 = now_ns();

		res->sink += a[i * s]; /* the fault: the whole chunk lands */
		if (i >= WARMUP)
			sample(res, now_ns() - t0);
		if (j->mode != M_PREFETCH)
			consume((const uint8_t *)a + i * s, i * s, s,
				j->f->seed, res);
	}
	res->wall_ns = now_ns() - t_first;
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
static int run_mode(void *arg, void *out, char *err, size_t n)
{
	const struct job *j = arg;
	struct fres *res = out;
	uint64_t io0, io1;
	int rc;

	memset(res, 0, sizeof(*res));
	if (bench_read_bytes(&io0)) {
		snprintf(err, n, "cannot read /proc/self/io");
		return -1;
	}
	rc = j->mode <= M_WARM ? run_plain(j, res, err, n) :
		run_pager(j, res, err, n);
	if (!rc && bench_read_bytes(&io1) == 0)
		res->io_bytes = io1 - io0;
	return rc;
}

static double mean_ms(const struct fres *r)
{
	return r->samples ? (double)r->lat_ns / (double)r->samples / 1e6 : 0;
}

/* MiB/s of the timed chunks: per fetch, or over the scan (prefetch). */
static double mibps(const struct fres *r, uint64_t size, int scan)
{
	uint64_t ns = scan ? r->wall_ns : r->lat_ns;

	return ns ? (double)(r->samples * size) / (double)MiB /
		((double)ns / 1e9) : 0;
}

/* Milliseconds per fetch of a phase counter. */
static double per_fetch(const struct fres *r, uint64_t ns)
{
	return r->d.fetches ? (double)ns / (double)r->d.fetches / 1e6 : 0;
}

/* Run `rep` of mode k at size i, in the array of every run. */
static struct fres *run_of(struct fres *all, const struct opts *o, int i,
			   int k, uint64_t rep)
{
	return &all[((size_t)i * NMODES + (size_t)k) * o->reps + rep];
}

/* For the tables, each mode's median rep by throughput: a noisy moment on
 * a shared machine moves one rep, not the median. */
static void pick_medians(const struct opts *o, struct fres *all,
			 struct fres (*t)[NMODES])
{
	for (int i = 0; i < o->nsizes; i++)
		for (int k = 0; k < NMODES; k++) {
			double v[100];
			uint64_t below, reps = o->reps;

			for (uint64_t r = 0; r < reps; r++)
				v[r] = mibps(run_of(all, o, i, k, r),
					     o->size[i], k == M_PREFETCH);
			for (uint64_t r = 0; r < reps; r++) {
				below = 0;
				for (uint64_t q = 0; q < reps; q++)
					below += v[q] < v[r] ||
						 (v[q] == v[r] && q < r);
				if (below == reps / 2)
					t[i][k] = *run_of(all, o, i, k, r);
			}
		}
}

/* The read's part of the application's wait: what a plain read pays of
 * it, independent of how fast the disk was in that run. */
static double read_share(const struct fres *r)
{
	return mean_ms(r) > 0 ? per_fetch(r, r->d.read_ns) / mean_ms(r) : 0;
}

static void print_tables(const struct opts *o, struct fres (*t)[NMODES])
{
	printf("### Fetch path against the platform limit\n\n"
	       "Per chunk, the mean over a run of the median of %" PRIu64 " runs "
	       "(by throughput) of a %" PRIu64 " MiB file read in order (the first %d chunks of a run fill the budget "
	       "and are not timed). plain: O_DIRECT pread into a memfd punched "
	       "before every read (the platform limit); warm: into populated "
	       "pages; pager: a fault's fetch as the application sees it "
	       "(budget 2 chunks, a punch on the fault's path); ahead: the "
	       "same with evict ahead of need; prefetch: depth %" PRIu64 ", %"
	       PRIu64 " workers, MiB/s over the scan. Read share: the pager's "
	       "read phase over the application's wait (does not depend on the "
	       "disk's speed in that run, unlike a ratio of two runs). Reads at "
	       "once: the most "
	       "backing reads in flight together in the prefetch run, and its "
	       "summed read time over the time any read ran (a wrapper of "
	       "the Linux seam's backing read). Threads: %s.\n\n",
	       o->reps, o->total / MiB, WARMUP, o->prefetch, o->workers,
	       o->pin ? "the application on one CPU, the pager's threads on "
	       "the others (where there are 2 or more)" : "not pinned");
	printf("| chunk MiB | plain ms | plain MiB/s | warm MiB/s | pager ms | "
	       "pager / plain | ahead ms | ahead / plain | ahead gain | "
	       "read share: pager / ahead | prefetch MiB/s | prefetch / plain "
	       "| reads at once: max / mean |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nsizes; i++) {
		uint64_t s = o->size[i];
		const struct fres *m = t[i];
		double plain = mibps(&m[M_PLAIN], s, 0);
		double pf = mibps(&m[M_PREFETCH], s, 1);

		printf("| %" PRIu64 " | %.2f | %.0f | %.0f | %.2f | %.1f %% | "
		       "%.2f | %.1f %% | %.1f %% | %.0f %% / %.0f %% | %.0f | "
		       "%.1f %% | %" PRIu64 " / %.2f |\n",
		       s / MiB, mean_ms(&m[M_PLAIN]), plain,
		       mibps(&m[M_WARM], s, 0), mean_ms(&m[M_PAGER]),
		       100 * mibps(&m[M_PAGER], s, 0) / plain,
		       mean_ms(&m[M_AHEAD]),
		       100 * mibps(&m[M_AHEAD], s, 0) / plain,
		       100 * (1 - mean_ms(&m[M_AHEAD]) / mean_ms(&m[M_PAGER])),
		       100 * read_share(&m[M_PAGER]),
		       100 * read_share(&m[M_AHEAD]), pf, 100 * pf / plain, m[M_PREFETCH].reads_max,
		       m[M_PREFETCH].read_busy_ns ?
		       (double)m[M_PREFETCH].read_sum_ns /
		       (double)m[M_PREFETCH].read_busy_ns : 0);
	}
	printf("\nOne fetch broken down, ms (pager phase timers): reserve "
	       "includes the punch of the victim when the fetch had to make "
	       "room; the rest of the fault path is the application's wait "
	       "minus reserve, read and CONTINUE (fault delivery, dispatcher, "
	       "queue, worker wake-up); it comes out below 0 when the faulter, "
	       "woken by CONTINUE, takes the worker's CPU before the worker "
	       "reads its clock (the CONTINUE timer then runs on past the "
	       "wake; prefetches, with no faulter, show CONTINUE alone). After "
	       "CONTINUE: commit, policy, stats, the prefetch top-up, off the "
	       "faulter's path. Punch per page: plain punches a populated "
	       "memfd between reads.\n\n"
	       "| chunk MiB | mode | app wait | reserve | read | CONTINUE | "
	       "rest of fault path | after CONTINUE | CONTINUE ns/page | "
	       "punch us/page |\n|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nsizes; i++) {
		uint64_t s = o->size[i], pages = s / 4096;
		const struct fres *p = &t[i][M_PLAIN];

		printf("| %" PRIu64 " | plain | %.2f | - | %.2f | - | - | - | - "
		       "| %.3f |\n", s / MiB, mean_ms(p), mean_ms(p),
		       p->punched ? (double)p->punch_ns / (double)p->punched /
		       1e3 : 0);
		for (int k = M_PAGER; k <= M_PREFETCH; k++) {
			const struct fres *r = &t[i][k];
			double res_ = per_fetch(r, r->d.reserve_ns);
			double rd = per_fetch(r, r->d.read_ns);
			double co = per_fetch(r, r->d.continue_ns);
			uint64_t evp = r->d.evicted_bytes / 4096;
			char wait[16] = "-", rest[16] = "-";

			/* A prefetch mostly has no faulter waiting for it. */
			if (k != M_PREFETCH) {
				snprintf(wait, sizeof(wait), "%.2f", mean_ms(r));
				snprintf(rest, sizeof(rest), "%.3f",
					 mean_ms(r) - res_ - rd - co);
			}
			printf("| %" PRIu64 " | %s | %s | %.3f | %.2f | %.3f | "
			       "%s | %.3f | %.0f | %.3f |\n", s / MiB,
			       mode_name[k], wait, res_, rd, co, rest,
			       per_fetch(r, r->d.fetch_ns) - res_ - rd - co,
			       r->d.fetches ? (double)r->d.continue_ns /
			       (double)(r->d.fetches * pages) : 0,
			       evp ? (double)r->d.punch_ns / (double)evp / 1e3 :
			       0);
		}
	}
	printf("\n");
}

static void csv_row(FILE *f, uint64_t size, int k, uint64_t rep,
		    const struct fres *r)
{
	fprintf(f, "%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%"
		PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", size, mode_name[k],
		rep + 1, r->samples, r->samples ? r->lat_ns / r->samples : 0,
		r->lat_min_ns, mibps(r, size, k == M_PREFETCH), r->wall_ns,
		r->d.fetches, r->d.reserve_ns, r->d.read_ns, r->d.continue_ns,
		r->d.fetch_ns, r->d.punch_ns, r->d.evictions,
		r->d.evict_ahead, r->punched, r->punch_ns, r->reads_max,
		r->read_sum_ns, r->read_busy_ns, r->io_bytes, r->fetch_bytes,
		r->bad);
}

/* Every run, not only the medians the tables show. */
static int write_csv(const struct opts *o, struct fres *all)
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", o->csv);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "residctl bench fetch: cannot write %s: %s\n",
			o->csv, strerror(errno));
		return -1;
	}
	fputs("chunk_bytes,mode,rep,samples,lat_mean_ns,lat_min_ns,mib_s,"
	      "wall_ns,fetches,reserve_ns,read_ns,continue_ns,fetch_ns,"
	      "punch_ns,evictions,evict_ahead,punched_pages_plain,"
	      "punch_ns_plain,reads_max,read_sum_ns,read_busy_ns,io_bytes,"
	      "fetch_bytes,bad\n", f);
	for (int i = 0; i < o->nsizes; i++)
		for (int k = 0; k < NMODES; k++)
			for (uint64_t rep = 0; rep < o->reps; rep++)
				csv_row(f, o->size[i], k, rep,
					run_of(all, o, i, k, rep));
	if (fclose(f) || rename(tmp, o->csv)) {
		fprintf(stderr, "residctl bench fetch: cannot write %s\n",
			o->csv);
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	const char *v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (a[0] != '-')
			return bench_bad("fetch", "argument", a,
					 "see residctl bench fetch --help");
		if (!(v = cli_value("bench fetch", argc, argv, &i)))
			return 2;
		if (!strncmp(a, "--sizes", 7)) {
			o->nsizes = bench_sizes(v, o->size, MAX_SIZES);
			for (int k = 0; k < o->nsizes; k++)
				if (!o->size[k] || o->size[k] % 4096)
					o->nsizes = -1;
			if (o->nsizes < 0)
				return bench_bad("fetch", "sizes", v,
						 "give up to 16 multiples of 4K, "
						 "e.g. 2M,8M");
		} else if (!strncmp(a, "--total", 7)) {
			if (cli_bytes(v, &o->total) || o->total % 4096)
				return bench_bad("fetch", "file size", v,
						 "give a multiple of 4K, e.g. 1G");
		} else if (!strncmp(a, "--reps", 6)) {
			if (cli_u64(v, &o->reps) || !o->reps || o->reps > 100)
				return bench_bad("fetch", "rep count", v,
						 "give 1..100");
		} else if (!strncmp(a, "--workers", 9)) {
			if (cli_u64(v, &o->workers) || !o->workers ||
			    o->workers > 256)
				return bench_bad("fetch", "worker count", v,
						 "give 1..256");
		} else if (!strncmp(a, "--prefetch", 10)) {
			if (cli_u64(v, &o->prefetch) || !o->prefetch ||
			    o->prefetch > 64)
				return bench_bad("fetch", "prefetch depth", v,
						 "give 1..64");
		} else if (!strncmp(a, "--pin", 5)) {
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return bench_bad("fetch", "pin", v,
						 "give yes or no");
			o->pin = !strcmp(v, "yes");
		} else if (!strncmp(a, "--dir", 5)) {
			o->dir = v;
		} else if (!strncmp(a, "--csv", 5)) {
			o->csv = v;
		} else {
			return bench_bad("fetch", "option", a,
					 "see residctl bench fetch --help");
		}
	}
	return -1;
}

/* Every mode at every size, reps interleaved so that a noisy moment hits
 * every mode alike. 0, or 1 when a run failed or stopped. */
static int sweep(const struct opts *o, struct bench_file *f,
		 struct fres *all)
{
	int failed = 0, done = 0, total = o->nsizes * NMODES * (int)o->reps;
	char err[600], tag[32];

	for (int i = 0; i < o->nsizes && !bench_stop; i++)
		for (uint64_t rep = 0; rep < o->reps && !bench_stop; rep++)
			for (int k = 0; k < NMODES && !bench_stop; k++) {
				struct job j = { o, f, (enum mode)k, o->size[i] };
				uint64_t limit = (k <= M_WARM ? 1 :
						  budget_chunks(&j)) * j.size + SLACK;
				struct fres *r = run_of(all, o, i, k, rep);

				done++;
				snprintf(tag, sizeof(tag), "bench-fetch-%s",
					 mode_name[k]);
				if (!bench_drop_cache(f, err, sizeof(err)) ||
				    bench_in_child(tag, limit, run_mode, &j, r,
						   sizeof(*r), err, sizeof(err))) {
					fprintf(stderr, "residctl bench fetch: %"
						PRIu64 " MiB %s: %s\n",
						j.size / MiB, mode_name[k], err);
					failed = 1;
					continue;
				}
				if (r->bad)
					failed = 1;
				fprintf(stderr, "  [%d/%d] %3" PRIu64 " MiB %-8s "
					"rep %" PRIu64 ": %.2f ms per chunk, %.0f "
					"MiB/s%s\n", done, total, j.size / MiB,
					mode_name[k], rep + 1, mean_ms(r),
					mibps(r, j.size, k == M_PREFETCH),
					r->bad ? ", WRONG BYTES" : "");
			}
	return failed || bench_stop;
}

int bench_fetch(int argc, char **argv)
{
	struct opts o = {
		.size = { 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 32 * MiB,
			  64 * MiB, 128 * MiB },
		.nsizes = 7, .total = 1024 * MiB, .reps = 3, .workers = 4,
		.prefetch = 2, .pin = 1, .dir = "build",
	};
	struct fres (*t)[NMODES], *all;
	struct bench_file f;
	char err[600];
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	for (int i = 0; i < o.nsizes; i++)
		if (o.total / o.size[i] < 2 * WARMUP) {
			char v[32];

			snprintf(v, sizeof(v), "%" PRIu64, o.total);
			return bench_bad("fetch", "file size", v, "give at "
					 "least 4 chunks of the largest size");
		}
	if (bench_dir_check(o.dir, o.total, err, sizeof(err))) {
		fprintf(stderr, "residctl bench fetch: %s\n", err);
		return 2;
	}
	t = calloc((size_t)o.nsizes, sizeof(*t));
	all = calloc((size_t)o.nsizes * NMODES * o.reps, sizeof(*all));
	if (!t || !all) {
		fprintf(stderr, "residctl bench fetch: no memory\n");
		free(t);
		free(all);
		return 1;
	}
	bench_catch_signals();
	fprintf(stderr, "bench fetch: writing a %" PRIu64 " MiB file in %s\n",
		o.total / MiB, o.dir);
	if (bench_file_create(&f, o.dir, o.total, 1, err, sizeof(err))) {
		fprintf(stderr, "residctl bench fetch: %s\n", err);
		free(t);
		free(all);
		return 1;
	}
	rc = sweep(&o, &f, all);
	bench_file_remove(&f);
	if (bench_stop) {
		fprintf(stderr, "residctl bench fetch: interrupted; the file "
			"is removed, nothing written\n");
	} else {
		pick_medians(&o, all, t);
		print_tables(&o, t);
		if (o.csv && write_csv(&o, all))
			rc = 1;
	}
	free(t);
	free(all);
	return rc;
}
