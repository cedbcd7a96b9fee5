/* residctl bench arms, shared by its files: the arms, the options, one
 * run's figures. arms.c parses and sweeps, arm_run.c is one run in its
 * child process, arms_report.c writes the tables and the CSV. */
#ifndef HARNESS_BENCH_ARMS_H
#define HARNESS_BENCH_ARMS_H

#include <stdint.h>

#include "bench/bench.h"
#include "bench/decode.h"
#include "bench/device.h"
#include "workload/budget_share.h"

#define MAX_RATIOS 16
#define PAGER_SLACK (64 * MiB) /* pager arms: the pager's budget binds */
#define MAX_REPS 9

struct arm {
	const char *name;
	int advice; /* arm A: madvise; -1: a pager arm */
	enum resid_policy policy;
	int prefetch, evict_ahead;
	int touched; /* announce every chunk a layer touches */
	int whole;   /* fetch_piece 0: a chunk read whole */
	int reader;  /* no workload: the file read by O_DIRECT */
	int overlap; /* overlap_evict, the scan announcing its
				  * progress through each chunk */
	int huge;    /* B in huge folios: a tmpfs with huge=always
				  * mounted in the run's own mount namespace */
};

/* The A arms first (the kernel's mmap), then the pager's, and last
 * "device" (the file read once with O_DIRECT, in the sweep's rotation so
 * the device is measured run by run beside the pager); the tables name C,
 * D, E. */
enum {
	ARM_A_SEQ,
	ARM_A_RANDOM,
	ARM_A_NORMAL,
	ARM_C,
	ARM_D,
	ARM_E,
	ARM_D_AHEAD,
	ARM_D_TOUCHED,
	ARM_D_WHOLE,
	ARM_E_OVERLAP,
	ARM_D_HUGE,
	ARM_E_OVERLAP_HUGE,
	ARM_DEVICE,
	NARMS
};
extern const struct arm arms[NARMS];

static inline int arm_is_pager(const struct arm *a)
{
	return a->advice < 0 && !a->reader;
}

/* The layout scanned: equal chunks (chunk x nchunks), or a table from a
 * file (table names it); lay.chunks cover region bytes, a whole number of
 * pages. */
struct arms_opts {
	const char *name; /* "arms", or "decode" (the workload) */
	uint64_t chunk, nchunks, passes, threads, prefetch, margin, seed;
	uint64_t reps; /* runs of each arm and ratio, interleaved */
	int device;    /* measure the device's limit with fio */
	int decode;    /* the decode workload (decode.h) */
	uint64_t cols;
	struct decode_job dec;
	struct device_limit dev;
	const char *table;
	struct layout lay;
	uint64_t region;
	double ratio[MAX_RATIOS];
	int nratios;
	int use[NARMS];
	const char *dir, *csv;
	struct bench_class cls; /* --device-class: every run under it */
	char huge_mnt[32];      /* the huge arms' mount point, made once */
};

struct arm_job {
	const struct arms_opts *o;
	const struct arm *arm;
	const struct bench_file *f;
	uint64_t budget;
};

/* The references over the scan's own trace (pager/belady.h): fnu the
 * furthest-next-use rule (Belady's optimum on equal chunks, a heuristic on
 * unequal ones), bound the lower bound, exact the optimum when the layout
 * has at most BELADY_EXACT_MAX_CHUNKS chunks (have_exact). */
struct arm_result {
	uint64_t io_bytes, io_first, accesses;
	uint64_t fnu_bytes, bound_bytes, exact_bytes;
	int have_exact;
	uint64_t faults, evicted_bytes, sink, mismatches, violations;
	double seconds; /* the median of secs */
	double secs[MAX_REPS];
	double first_s;         /* the first pass (cold for every arm) */
	double mibps[MAX_REPS]; /* pager: fetch rate; device: read rate */
	struct resid_stats st;
	char drop[32]; /* how the page cache was emptied */
	int ok;
};

static inline uint64_t arms_budget(const struct arms_opts *o, double ratio)
{
	return budget_share(o->region, ratio, 0);
}

static inline double mib(uint64_t b)
{
	return (double)b / (double)MiB;
}

/* arm_run.c: in the child, one run of one arm (a bench_fn). */
int arm_run(void *arg, void *out, char *err, size_t n);

/* arms_report.c */
void arms_print(const struct arms_opts *o, struct arm_result (*res)[NARMS],
		const char *drops);
int arms_write_csv(const struct arms_opts *o, struct arm_result (*res)[NARMS]);

#endif
