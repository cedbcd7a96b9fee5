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
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/page_cache.h"
#include "bench/fetch.h"
#include "workload/huge_leg.h"

#define SLACK (64 * MiB) /* cgroup limit over what the mode holds */

static const char about[] =
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
	"  build; not tmpfs) and is removed at the end. --piece (default 1M,\n"
	"  the library's; 0 reads a chunk whole) is cfg.fetch_piece. A pager\n"
	"  mode's wait is the time to touch a byte in every page of the chunk;\n"
	"  the first byte's wait is shown apart. Three more modes: device\n"
	"  (O_DIRECT into one reused huge-page buffer: the device, no page\n"
	"  work), huge and huge-ahead (pager and ahead with huge folios in B,\n"
	"  from --huge-dir, a tmpfs mounted with huge=, or else a tmpfs with\n"
	"  huge=always each run mounts in its own mount namespace). --modes\n"
	"  runs only those named (default all).\n"
	"  Exit 0, 1 when a run failed, 2 on bad input.\n";

const char *const mode_name[NMODES] = {
	"plain",    "warm",   "pager", "ahead",
	"prefetch", "device", "huge",  "huge-ahead",
};

/* --modes: names to a mask. */
static int parse_modes(void *dst, const char *where, const char *v, char *err,
		       size_t n)
{
	char buf[256], *save = NULL;
	unsigned mask = 0;

	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int k = 0;

		while (k < NMODES && strcmp(t, mode_name[k]))
			k++;
		if (k == NMODES) {
			snprintf(err, n,
				 "bad mode list '%s'; name modes of "
				 "plain, warm, pager, ahead, prefetch, device, "
				 "huge, huge-ahead",
				 v);
			return -1;
		}
		mask |= 1u << k;
	}
	(void)where;
	*(unsigned *)dst = mask;
	return 0;
}

/* --sizes: up to MAX_SIZES multiples of 4K. */
static int parse_sizes(void *dst, const char *where, const char *v, char *err,
		       size_t n)
{
	struct fetch_opts *o = dst;

	(void)where;
	o->nsizes = bench_sizes(v, o->size, MAX_SIZES);
	for (int k = 0; k < o->nsizes; k++)
		if (!o->size[k] || o->size[k] % RESID_PAGE)
			o->nsizes = -1;
	if (o->nsizes > 0)
		return 0;
	snprintf(err, n,
		 "bad sizes '%s'; give up to 16 multiples of 4K, e.g. "
		 "2M,8M",
		 v);
	return -1;
}

static int parse(int argc, char **argv, struct fetch_opts *o)
{
	static const char *const yes_no[] = { "no", "yes", NULL };
	struct cli_opt opts[] = {
		{ "sizes", CLI_CALL, o, .arg = "B,B..", .parse = parse_sizes,
		  .help = "chunk sizes (default 2M,4M,8M,16M,32M,64M,128M)" },
		{ "total", CLI_BYTES, &o->total, .arg = "BYTES",
		  .align = RESID_PAGE, .what = "file size",
		  .help = "the file's size (default 1G)" },
		{ "reps", CLI_U64, &o->reps, .arg = "N", .min = 1, .max = 100,
		  .what = "rep count",
		  .help = "runs of each mode (default 3)" },
		{ "workers", CLI_U64, &o->workers, .arg = "N", .min = 1,
		  .max = 256, .what = "worker count",
		  .help = "prefetch mode's workers (default 4)" },
		{ "prefetch", CLI_U64, &o->prefetch, .arg = "N", .min = 1,
		  .max = 64, .what = "prefetch depth",
		  .help = "prefetch mode's depth (default 2)" },
		{ "pin", CLI_CHOICE, &o->pin, .choices = yes_no,
		  .help = "the application on one CPU, the pager on the others "
			  "(default yes)" },
		{ "dir", CLI_TEXT, &o->dir, .arg = "DIR",
		  .help = "where the file goes (default build; not tmpfs)" },
		{ "csv", CLI_TEXT, &o->csv, .arg = "FILE",
		  .help = "write every run" },
		{ "piece", CLI_BYTES, &o->piece, .arg = "BYTES",
		  .align = RESID_PAGE, .what = "piece size",
		  .help = "cfg.fetch_piece (default 1M; 0: a chunk whole)" },
		{ "modes", CLI_CALL, &o->modes, .arg = "LIST",
		  .parse = parse_modes,
		  .help = "run only those (default all)" },
		{ "huge-dir", CLI_TEXT, &o->huge_dir, .arg = "DIR",
		  .help = "a tmpfs mounted with huge=, for the huge modes" },
		DEVCLASS_OPT(&o->cls.dc),
		{ 0 },
	};
	const struct cli_spec spec = { .cmd = "bench fetch",
				       .about = about,
				       .opts = opts };

	return cli_parse(&spec, argc, argv);
}

/* Every mode at every size, reps interleaved so that a noisy moment hits
 * every mode alike. 0, or 1 when a run failed or stopped. */
static int sweep(const struct fetch_opts *o, struct bench_file *f,
		 struct fres *all)
{
	int failed = 0, done = 0,
	    total = o->nsizes * __builtin_popcount(o->modes) * (int)o->reps;
	char err[600], tag[32];

	for (int i = 0; i < o->nsizes && !child_stop_signal(); i++)
		for (uint64_t rep = 0; rep < o->reps && !child_stop_signal();
		     rep++)
			for (int k = 0; k < NMODES && !child_stop_signal();
			     k++) {
				if (!(o->modes & 1u << k))
					continue;
				struct fetch_job j = { o, f, (enum mode)k,
						       o->size[i] };
				uint64_t limit = (k <= M_WARM || k == M_DEVICE ?
							  1 :
							  fetch_budget_chunks(
								  &j)) *
							 j.size +
						 SLACK;
				struct fres *r = fetch_run_of(all, o, i, k,
							      rep);

				done++;
				snprintf(tag, sizeof(tag), "bench-fetch-%s",
					 mode_name[k]);
				if (!page_cache_drop(f->fd, f->path, f->size,
						     err, sizeof(err)) ||
				    bench_in_child_class(tag, limit, &o->cls,
							 fetch_run, &j, r,
							 sizeof(*r), err,
							 sizeof(err))) {
					fprintf(stderr,
						"residctl bench fetch: %" PRIu64
						" MiB %s: %s\n",
						j.size / MiB, mode_name[k],
						err);
					failed = 1;
					continue;
				}
				if (r->bad)
					failed = 1;
				fprintf(stderr,
					"  [%d/%d] %3" PRIu64 " MiB %-8s "
					"rep %" PRIu64
					": %.2f ms per chunk, %.0f "
					"MiB/s%s\n",
					done, total, j.size / MiB, mode_name[k],
					rep + 1, mean_ms(r),
					mibps(r, j.size, k == M_PREFETCH),
					r->bad ? ", WRONG BYTES" : "");
			}
	return failed || child_stop_signal();
}

int bench_fetch(int argc, char **argv)
{
	struct fetch_opts o = {
		.size = { 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 32 * MiB,
			  64 * MiB, 128 * MiB },
		.nsizes = 7,
		.total = 1024 * MiB,
		.reps = 3,
		.workers = 4,
		.prefetch = 2,
		.pin = 1,
		.dir = "build",
		.modes = MODES_ALL,
	};
	struct resid_config lib;
	struct fres *all;
	struct bench_file f;
	char err[600];
	int rc;

	resid_config_init(&lib);
	o.piece = lib.fetch_piece;
	rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.cls.dc.name[0]) /* the device alone, in the rotation */
		o.modes |= 1u << M_DEVICE;
	for (int i = 0; i < o.nsizes; i++)
		if (o.total / o.size[i] < 2 * WARMUP) {
			char v[32];

			snprintf(v, sizeof(v), "%" PRIu64, o.total);
			return bench_bad("fetch", "file size", v,
					 "give at "
					 "least 4 chunks of the largest size");
		}
	if (bench_dir_check(o.dir, o.total, err, sizeof(err))) {
		fprintf(stderr, "residctl bench fetch: %s\n", err);
		return 2;
	}
	if ((rc = bench_class_setup("fetch", &o.cls, o.dir)))
		return rc;
	all = calloc((size_t)o.nsizes * NMODES * o.reps, sizeof(*all));
	if (!all) {
		fprintf(stderr, "residctl bench fetch: no memory\n");
		return 1;
	}
	child_stop_softly();
	fprintf(stderr, "bench fetch: writing a %" PRIu64 " MiB file in %s\n",
		o.total / MiB, o.dir);
	if (bench_file_create(&f, o.dir, o.total, 1, resid_content_fill, err,
			      sizeof(err))) {
		fprintf(stderr, "residctl bench fetch: %s\n", err);
		free(all);
		return 1;
	}
	/* Made only for the huge modes without --huge-dir; empty otherwise. */
	if (!o.huge_dir && o.modes & (1u << M_HUGE | 1u << M_HUGE_AHEAD) &&
	    huge_leg_mountpoint(o.huge_mnt, sizeof(o.huge_mnt)) < 0) {
		fprintf(stderr, "residctl bench fetch: cannot make %s: %s\n",
			o.huge_mnt, strerror(errno));
		bench_file_remove(&f);
		free(all);
		return 1;
	}
	rc = sweep(&o, &f, all);
	if (o.huge_mnt[0])
		rmdir(o.huge_mnt);
	bench_file_remove(&f);
	if (child_stop_signal()) {
		fprintf(stderr, "residctl bench fetch: interrupted; the file "
				"is removed, nothing written\n");
	} else {
		fetch_print(&o, all);
		if (o.csv && fetch_write_csv(&o, all))
			rc = 1;
	}
	free(all);
	return rc;
}
