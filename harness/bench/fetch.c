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

#include "cli.h"
#include "fetch.h"

#define SLACK (64 * MiB)     /* cgroup limit over what the mode holds */

static const char usage[] =
	"usage: residctl bench fetch [--sizes B,B..] [--total BYTES] [--reps N]\n"
	"                            [--workers N] [--prefetch N] [--dir DIR]\n"
	"                            [--pin yes|no] [--piece BYTES] [--csv FILE]\n"
	"                            [--modes LIST] [--huge-dir DIR]\n"
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
	"plain", "warm", "pager", "ahead", "prefetch", "device", "huge",
	"huge-ahead",
};

/* --modes: names to a mask; 0 when one is unknown. */
static unsigned parse_modes(const char *v)
{
	char buf[256], *save = NULL;
	unsigned mask = 0;

	snprintf(buf, sizeof(buf), "%s", v);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int k = 0;

		while (k < NMODES && strcmp(t, mode_name[k]))
			k++;
		if (k == NMODES)
			return 0;
		mask |= 1u << k;
	}
	return mask;
}

static int parse(int argc, char **argv, struct fetch_opts *o)
{
	static const struct option opts[] = {
		CLI_HELP_OPTION,
		CLI_VALUE("sizes", 'z'),
		CLI_VALUE("total", 'T'),
		CLI_VALUE("reps", 'r'),
		CLI_VALUE("workers", 'w'),
		CLI_VALUE("prefetch", 'f'),
		CLI_VALUE("pin", 'P'),
		CLI_VALUE("dir", 'd'),
		CLI_VALUE("csv", 'o'),
		CLI_VALUE("piece", 'p'),
		CLI_VALUE("modes", 'm'),
		CLI_VALUE("huge-dir", 'H'),
		{ 0 },
	};
	struct cli c = { .cmd = "bench fetch", .usage = usage, .argc = argc,
			 .argv = argv, .opts = opts, .operands = 0 };
	const char *v;
	int opt;

	while ((opt = cli_next(&c)) != CLI_END) {
		v = c.arg;
		switch (opt) {
		case CLI_EXIT:
			return c.status;
		case 'z':
			o->nsizes = bench_sizes(v, o->size, MAX_SIZES);
			for (int k = 0; k < o->nsizes; k++)
				if (!o->size[k] || o->size[k] % RESID_PAGE)
					o->nsizes = -1;
			if (o->nsizes < 0)
				return bench_bad("fetch", "sizes", v,
						 "give up to 16 multiples of 4K, "
						 "e.g. 2M,8M");
			break;
		case 'T':
			if (cli_bytes(v, &o->total) || o->total % RESID_PAGE)
				return bench_bad("fetch", "file size", v,
						 "give a multiple of 4K, e.g. 1G");
			break;
		case 'r':
			if (cli_u64(v, &o->reps) || !o->reps || o->reps > 100)
				return bench_bad("fetch", "rep count", v,
						 "give 1..100");
			break;
		case 'w':
			if (cli_u64(v, &o->workers) || !o->workers ||
			    o->workers > 256)
				return bench_bad("fetch", "worker count", v,
						 "give 1..256");
			break;
		case 'f':
			if (cli_u64(v, &o->prefetch) || !o->prefetch ||
			    o->prefetch > 64)
				return bench_bad("fetch", "prefetch depth", v,
						 "give 1..64");
			break;
		case 'P':
			if (strcmp(v, "yes") && strcmp(v, "no"))
				return bench_bad("fetch", "pin", v,
						 "give yes or no");
			o->pin = !strcmp(v, "yes");
			break;
		case 'd':
			o->dir = v;
			break;
		case 'o':
			o->csv = v;
			break;
		case 'm':
			if (!(o->modes = parse_modes(v)))
				return bench_bad("fetch", "mode list", v,
						 "name modes of plain, warm, "
						 "pager, ahead, prefetch, device, "
						 "huge, huge-ahead");
			break;
		case 'H':
			o->huge_dir = v;
			break;
		case 'p':
			if (cli_bytes(v, &o->piece) || o->piece % RESID_PAGE)
				return bench_bad("fetch", "piece size", v,
						 "give a multiple of 4K, or 0");
			break;
		}
	}
	return -1;
}

/* Every mode at every size, reps interleaved so that a noisy moment hits
 * every mode alike. 0, or 1 when a run failed or stopped. */
static int sweep(const struct fetch_opts *o, struct bench_file *f,
		 struct fres *all)
{
	int failed = 0, done = 0, total = o->nsizes *
		__builtin_popcount(o->modes) * (int)o->reps;
	char err[600], tag[32];

	for (int i = 0; i < o->nsizes && !child_stop_signal(); i++)
		for (uint64_t rep = 0; rep < o->reps && !child_stop_signal(); rep++)
			for (int k = 0; k < NMODES && !child_stop_signal(); k++) {
				if (!(o->modes & 1u << k))
					continue;
				struct fetch_job j = { o, f, (enum mode)k, o->size[i] };
				uint64_t limit = (k <= M_WARM || k == M_DEVICE ? 1 :
						  fetch_budget_chunks(&j)) * j.size + SLACK;
				struct fres *r = fetch_run_of(all, o, i, k, rep);

				done++;
				snprintf(tag, sizeof(tag), "bench-fetch-%s",
					 mode_name[k]);
				if (!bench_drop_cache(f, err, sizeof(err)) ||
				    bench_in_child(tag, limit, fetch_run, &j, r,
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
	return failed || child_stop_signal();
}

int bench_fetch(int argc, char **argv)
{
	struct fetch_opts o = {
		.size = { 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 32 * MiB,
			  64 * MiB, 128 * MiB },
		.nsizes = 7, .total = 1024 * MiB, .reps = 3, .workers = 4,
		.prefetch = 2, .pin = 1, .dir = "build", .modes = MODES_ALL,
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
	snprintf(o.huge_mnt, sizeof(o.huge_mnt), "/tmp/residctl-huge-XXXXXX");
	if (!o.huge_dir && o.modes & (1u << M_HUGE | 1u << M_HUGE_AHEAD) &&
	    !mkdtemp(o.huge_mnt)) {
		fprintf(stderr, "residctl bench fetch: cannot make %s: %s\n",
			o.huge_mnt, strerror(errno));
		bench_file_remove(&f);
		free(all);
		return 1;
	}
	rc = sweep(&o, &f, all);
	if (strchr(o.huge_mnt, 'X') == NULL)
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
