/* residctl bench fetch, shared by its files: the modes, the options, one
 * run's figures. fetch.c parses and sweeps, fetch_run.c is one run in its
 * child process, fetch_report.c writes the tables and the CSV. */
#ifndef HARNESS_BENCH_FETCH_H
#define HARNESS_BENCH_FETCH_H

#include <stdint.h>

#include "bench/bench.h"

#define MAX_SIZES 16
#define WARMUP 2 /* chunks not timed */

/* device: O_DIRECT into one reused huge-page buffer, no page work (the
 * device's rate); huge, huge-ahead: pager and ahead with huge folios in B
 * (cfg.huge_dir). */
enum mode {
	M_PLAIN,
	M_WARM,
	M_PAGER,
	M_AHEAD,
	M_PREFETCH,
	M_DEVICE,
	M_HUGE,
	M_HUGE_AHEAD,
	NMODES
};
#define MODES_ALL ((1u << NMODES) - 1)
#define MODES_CLASSIC ((1u << M_DEVICE) - 1) /* the 4 KiB tables */

extern const char *const mode_name[NMODES];

struct fetch_opts {
	uint64_t size[MAX_SIZES];
	int nsizes;
	uint64_t total, reps, workers, prefetch;
	uint64_t piece; /* cfg.fetch_piece */
	int pin;
	const char *dir, *csv;
	unsigned modes;         /* a bit per mode run */
	struct bench_class cls; /* --device-class: every run under it */
	/* The huge modes' tmpfs: the user's (--huge-dir), else mounted
	 * with huge=always on huge_mnt in each run's own mount namespace. */
	const char *huge_dir;
	char huge_mnt[64];
};

struct fetch_job {
	const struct fetch_opts *o;
	const struct bench_file *f;
	enum mode mode;
	uint64_t size;
};

/* One run's figures. bad: wrong words and invariant violations. */
struct fres {
	uint64_t samples, lat_ns, lat_min_ns;
	uint64_t first_ns;          /* pager modes: summed first-byte waits */
	uint64_t punch_ns, punched; /* plain: punches of a populated memfd */
	uint64_t wall_ns;           /* from the first timed chunk to the last */
	uint64_t io_bytes, fetch_bytes;
	uint64_t bad, sink;
	uint64_t reads_max;                 /* most backing reads at once */
	uint64_t read_sum_ns, read_busy_ns; /* summed, and while any ran */
	struct resid_stats d; /* pager modes: over the timed chunks */
};

static inline double mean_ms(const struct fres *r)
{
	return r->samples ? (double)r->lat_ns / (double)r->samples / 1e6 : 0;
}

/* MiB/s of the timed chunks: per fetch, or over the scan (prefetch). */
static inline double mibps(const struct fres *r, uint64_t size, int scan)
{
	uint64_t ns = scan ? r->wall_ns : r->lat_ns;

	return ns ? (double)(r->samples * size) / (double)MiB /
			       ((double)ns / 1e9) :
		    0;
}

/* Run `rep` of mode k at size i, in the array of every run. */
static inline struct fres *fetch_run_of(struct fres *all,
					const struct fetch_opts *o, int i,
					int k, uint64_t rep)
{
	return &all[((size_t)i * NMODES + (size_t)k) * o->reps + rep];
}

/* fetch_run.c: chunks a mode's budget holds; one run in the child (a
 * bench_fn). */
uint64_t fetch_budget_chunks(const struct fetch_job *j);
int fetch_run(void *arg, void *out, char *err, size_t n);

/* fetch_report.c: the tables of each mode's median run; every run as CSV. */
void fetch_print(const struct fetch_opts *o, struct fres *all);
int fetch_write_csv(const struct fetch_opts *o, struct fres *all);

#endif
