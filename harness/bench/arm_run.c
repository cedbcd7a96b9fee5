/* One run of one arm at one budget, in its child process: open the arm
 * (the file mapped for A, a region for the pager), scan, count the bytes the
 * process read, close, and the references (furthest-next-use, the lower
 * bound, the exact optimum of small layouts) over the trace the scan
 * wrote. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "analysis/belady.h"
#include "base/clock.h"
#include "bench/arms.h"
#include "invariants.h"
#include "workload/huge_leg.h"

static uint64_t violations;

static void on_violation(int id, const char *msg, void *arg)
{
	(void)arg;
	if (!violations++)
		fprintf(stderr, "residctl bench: I-%d (%s): %s\n", id,
			inv_title(id), msg);
}

/* Arm A: the file mapped, the kernel's page cache under the cgroup limit. */
static int open_kernel(const struct arm_job *j, struct scan *s, char *err,
		       size_t n)
{
	uint64_t len = j->o->region;
	int fd = open(j->f->path, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0) {
		snprintf(err, n, "cannot open %s: %s", j->f->path,
			 strerror(errno));
		return -1;
	}
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED || madvise(m, len, j->arm->advice)) {
		snprintf(err, n, "cannot map %s: %s", j->f->path,
			 strerror(errno));
		if (m != MAP_FAILED)
			munmap(m, len);
		return -1;
	}
	s->base = m;
	return 0;
}

static int open_pager(const struct arm_job *j, struct scan *s, char *err,
		      size_t n)
{
	struct resid_config cfg;
	char why[RESID_ERRLEN];

	resid_config_init(&cfg);
	cfg.region_len = j->o->region;
	cfg.chunk_size = 0;
	cfg.table = j->o->lay.chunks;
	cfg.table_len = j->o->lay.nchunks;
	cfg.budget_bytes = j->budget;
	cfg.backing = RESID_BACKING_FILE;
	cfg.path = j->f->path;
	cfg.policy = j->arm->policy;
	cfg.signal = RESID_SIGNAL_BEFORE_READ;
	cfg.prefetch_depth = j->arm->prefetch ? (uint32_t)j->o->prefetch : 0;
	cfg.evict_ahead = j->arm->evict_ahead;
	cfg.overlap_evict = j->arm->overlap;
	if (j->arm->whole)
		cfg.fetch_piece = 0;
	if (j->arm->huge) {
		cfg.huge_dir = j->o->huge_mnt;
		if (huge_leg_enter(cfg.huge_dir, err, n) < 0)
			return -1;
	}
	cfg.phase_timers = 1;
	inv_set_handler(on_violation, NULL);
	s->r = resid_open(&cfg, why);
	if (!s->r) {
		snprintf(err, n, "cannot open the region: %s", why);
		return -1;
	}
	if (j->arm->huge && !resid_huge(s->r)) {
		snprintf(err, n, "the region took 4 KiB pages in B");
		resid_close(s->r);
		s->r = NULL;
		return -1;
	}
	s->base = resid_base(s->r);
	return 0;
}

/* Bytes of the file still cached at the end: what A read and kept. */
static uint64_t cached_bytes(const uint8_t *m, uint64_t len)
{
	uint64_t pages = len / RESID_PAGE, in = 0;
	unsigned char *vec = malloc(pages);

	if (vec && mincore((void *)m, len, vec) == 0)
		for (uint64_t i = 0; i < pages; i++)
			in += vec[i] & 1;
	free(vec);
	return in * RESID_PAGE;
}

static uint64_t faults_of(const struct rusage *u)
{
	return (uint64_t)u->ru_majflt + (uint64_t)u->ru_minflt;
}

/* Closes the arm; the pager's counters, or A's faults and evictions. */
static void close_arm(struct scan *s, uint64_t len, struct arm_result *res)
{
	if (s->r) {
		resid_check_quiescent(s->r);
		resid_get_stats(s->r, &res->st);
		resid_close(s->r);
		res->faults = res->st.faults_missing + res->st.faults_minor;
		res->evicted_bytes = res->st.evicted_bytes;
		return;
	}
	uint64_t kept = cached_bytes(s->base, len);

	res->evicted_bytes = res->io_bytes > kept ? res->io_bytes - kept : 0;
	munmap((void *)s->base, len);
}

/* The references over the trace the scan wrote, at capacity = budget;
 * chunk sizes in whole pages, as the pager fetches them. */
static int refs_of(const struct scan *s, uint64_t budget,
		   struct arm_result *res, char *err, size_t n)
{
	const struct layout *l = s->lay;
	struct trace t = {
		.kind = TRACE_REFERENCE,
		.nchunks = l->nchunks,
		.seq = s->trace,
		.n = s->accesses,
	};
	struct belady_result b;
	int rc;

	t.sizes = malloc(l->nchunks * sizeof(*t.sizes));
	if (!t.sizes) {
		snprintf(err, n, "no memory for the trace");
		return -1;
	}
	for (uint32_t i = 0; i < l->nchunks; i++)
		t.sizes[i] = (l->chunks[i].len + 4095) & ~4095ull;
	rc = belady(&t, budget, &b, err, n);
	if (!rc) {
		res->fnu_bytes = b.bytes_missed;
		rc = belady_bound(&t, budget, &b, err, n);
	}
	if (!rc) {
		res->bound_bytes = b.bytes_missed;
		if (l->nchunks <= BELADY_EXACT_MAX_CHUNKS) {
			rc = belady_exact(&t, budget, &b, err, n);
			res->have_exact = !rc;
			res->exact_bytes = rc ? 0 : b.bytes_missed;
		}
	}
	free(t.sizes);
	return rc;
}

/* The "device" arm: the file read once in order with O_DIRECT, blocks of
 * READER_BLOCK into one buffer, one read at a time; the bytes and the
 * time. */
#define READER_BLOCK (8 * MiB)

static int read_device(const struct arm_job *j, struct arm_result *res,
		       char *err, size_t n)
{
	int fd = open(j->f->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	void *buf = mmap(NULL, READER_BLOCK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t io0 = 0, io1 = 0, off = 0, size = j->o->region / 4096 * 4096;
	double t0;
	int rc = 0;

	if (fd < 0 || buf == MAP_FAILED) {
		snprintf(err, n, "device: cannot open %s or map a buffer: %s",
			 j->f->path, strerror(errno));
		rc = -1;
		goto out;
	}
	madvise(buf, READER_BLOCK, MADV_HUGEPAGE);
	memset(buf, 0, READER_BLOCK); /* its pages exist before the clock */
	t0 = mono_now();
	if (bench_read_bytes(&io0))
		rc = -1;
	while (!rc && off < size) {
		uint64_t len = size - off < READER_BLOCK ? size - off :
							   READER_BLOCK;

		rc = bench_pread_full(fd, buf, len, off);
		off += len;
	}
	res->seconds = mono_now() - t0;
	if (rc || bench_read_bytes(&io1)) {
		snprintf(err, n, "device: cannot read %s: %s", j->f->path,
			 strerror(errno));
		rc = -1;
	}
	res->io_bytes = io1 - io0;
	res->mibps[0] = res->seconds > 0 ? mib(off) / res->seconds : 0;
out:
	if (fd >= 0)
		close(fd);
	if (buf != MAP_FAILED)
		munmap(buf, READER_BLOCK);
	res->ok = !rc;
	return rc;
}

/* In the child: one run of one arm at one budget. */
int arm_run(void *arg, void *out, char *err, size_t n)
{
	const struct arm_job *j = arg;
	const struct arms_opts *o = j->o;
	struct arm_result *res = out;
	struct scan s = {
		.lay = &o->lay,
		.passes = (uint32_t)o->passes,
		.threads = (uint32_t)o->threads,
		.touched = j->arm->touched,
		.overlap = j->arm->overlap,
		.seed = j->f->seed,
		.dec = o->decode ? &o->dec : NULL,
	};
	uint64_t io0 = 0, io1 = 0;
	struct rusage u0, u1;
	int rc;

	if (j->arm->reader)
		return read_device(j, res, err, n);
	s.trace = malloc(o->passes * 2 * o->lay.nlayers * sizeof(*s.trace));
	if (!s.trace) {
		snprintf(err, n, "no memory for the trace");
		return -1;
	}
	rc = j->arm->advice >= 0 ? open_kernel(j, &s, err, n) :
				   open_pager(j, &s, err, n);
	if (rc) {
		free(s.trace);
		return -1;
	}
	double t0 = mono_now();

	if (getrusage(RUSAGE_SELF, &u0) || bench_read_bytes(&io0)) {
		snprintf(err, n, "cannot read /proc/self/io or rusage");
		rc = -1;
	}
	if (!rc)
		rc = scan_run(&s, err, n);
	if (s.r)
		resid_quiesce(s.r); /* prefetches still in flight count */
	res->seconds = mono_now() - t0;
	if (!rc && (getrusage(RUSAGE_SELF, &u1) || bench_read_bytes(&io1))) {
		snprintf(err, n, "cannot read /proc/self/io or rusage");
		rc = -1;
	}
	if (!rc) {
		res->io_bytes = io1 - io0;
		res->io_first = s.io_first_pass > io0 ? s.io_first_pass - io0 :
							0;
		res->faults = faults_of(&u1) - faults_of(&u0);
		res->first_s = s.t_first_pass - t0;
	}
	close_arm(&s, o->region, res);
	if (s.r && res->st.fetch_ns)
		res->mibps[0] = mib(res->st.fetch_bytes) /
				((double)res->st.fetch_ns / 1e9);
	res->sink = s.sink;
	res->mismatches = s.mismatches;
	res->accesses = s.accesses;
	res->violations = violations;
	if (!rc)
		rc = refs_of(&s, j->budget, res, err, n);
	free(s.trace);
	res->ok = !rc;
	return rc;
}
