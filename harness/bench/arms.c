/* residctl bench arms: the arms of design.md §8 on the cyclic layer scan (equal
 * chunks, or a real layout from --table), at equal budgets, swept over
 * budget ratios. Primary figure: bytes the arm's process read from the disk
 * (/proc/self/io read_bytes), with the pager's own fetch_bytes beside it as
 * the cross-check, against the lower bound and furthest-next-use over the
 * reference trace the scan itself wrote. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/page_cache.h"
#include "bench/arms.h"
#include "workload/huge_leg.h"

static const char about[] =
	"  A file of N chunks (default 16 of 8M), or of the layers of a layout\n"
	"  (--table: 'offset length' lines or a safetensors file; chunks derived\n"
	"  as in 'residctl verify --help'), is read layer by layer for P passes\n"
	"  (default 4) by T threads (default 1), every byte summed and checked,\n"
	"  once per arm and budget ratio (default 0.25,0.375,0.5,0.625,0.75 of\n"
	"  the file), each run in its own process and memory cgroup:\n"
	"    A-seq, A-random, A-normal  kernel mmap with that madvise, cgroup\n"
	"                 limit = budget + --margin (default 4M); 'A' = seq,random\n"
	"    C  pager + lru     D  pager + layer_order_declared\n"
	"    E  D + prefetch (--prefetch, default 1)\n"
	"    D-ahead  D + evict ahead of need\n"
	"    D-touched  D announcing every chunk a layer touches, not only its\n"
	"                own (differs from D only where layers straddle chunks)\n"
	"    D-whole  D reading each chunk whole before mapping it (fetch_piece\n"
	"             0; D maps it 1 MiB at a time as it is read)\n"
	"    E-overlap  E with overlap_evict: the scan announces its progress\n"
	"             through each chunk (resid_notify_consumed, per MiB with\n"
	"             one thread, per layer with more), the consumed pieces\n"
	"             make room for the next chunk's prefetch as they go\n"
	"    D-huge, E-overlap-huge  D and E-overlap with B in huge folios:\n"
	"             each run mounts a tmpfs with huge=always in its own mount\n"
	"             namespace (every chunk must start on a multiple of the\n"
	"             huge page; the machine's THP settings stay as they are)\n"
	"  device  the file read once with O_DIRECT (no workload)\n"
	"  (--arms default A,C,D,E). Over the scan's own trace: 'bound', a true\n"
	"  lower bound on any pager's bytes; 'FNU', furthest-next-use (Belady's\n"
	"  optimum on equal chunks, a heuristic on unequal ones); 'exact', the\n"
	"  optimum, for layouts of at most 12 chunks.\n"
	"  Bytes read are /proc/self/io read_bytes of the arm's process; the\n"
	"  page cache of the file is emptied before every run (fsync,\n"
	"  POSIX_FADV_DONTNEED, checked with mincore). The file goes in --dir\n"
	"  (default build; not tmpfs) and is removed at the end. Prints a\n"
	"  progress line per run on stderr and markdown tables on stdout; --csv\n"
	"  writes every run. --reps N (default 1, at most 9) runs each arm N\n"
	"  times, interleaved, and reports the median wall time. --device\n"
	"  measures the device's own limit before and after the sweep with fio\n"
	"  on the same file (O_DIRECT, chunk and 1 MiB blocks, queue depth\n"
	"  1..16) beside the pager's fetch rate (fio must be installed:\n"
	"  apt-get install -y fio). The arm 'device' reads the file once with\n"
	"  O_DIRECT (8M blocks) in the sweep's rotation: the device measured run\n"
	"  by run beside the pager. --device-class C runs every arm's cgroup\n"
	"  with the reads of the file's block device held to C (sata, nvme3,\n"
	"  nvme4, RATE[,IOPS]; host: none) and adds the arm 'device': its rate\n"
	"  is the device_mbps of every row. Exit 0, 1 when a run failed, 2 on\n"
	"  bad input.\n";

static const char about_decode[] =
	"  The arms of 'residctl bench arms' on a decode-shaped workload: the\n"
	"  file holds f32 weights, and each layer, read as a matrix of --cols\n"
	"  columns (default 4096; the last row may be short), is multiplied into\n"
	"  a vector by T threads splitting its rows (--threads, default 2), as\n"
	"  CPU LLM decoding does; one pass over every layer is one token. Each\n"
	"  layer's output is checked against its reference, computed beforehand\n"
	"  from pread of the file (a wrong byte is a wrong output). Reports\n"
	"  tokens/s per arm and budget ratio (median of --reps runs, the spread\n"
	"  beside it), and bytes read as bench arms does. Default 16 chunks of\n"
	"  32M, 8 passes, arms A,C,D,E ('A' is A-seq,A-normal here: A-random\n"
	"  faults 4K at a time). --device-class as bench arms. Exit 0, 1 when\n"
	"  a run failed or an output was wrong, 2 on bad input.\n";

/* Pager arms: advice -1. */
#define PAGER .advice = -1
#define DECLARED PAGER, .policy = RESID_POLICY_DECLARED
const struct arm arms[NARMS] = {
	[ARM_A_SEQ] = { "A-seq", .advice = MADV_SEQUENTIAL },
	[ARM_A_RANDOM] = { "A-random", .advice = MADV_RANDOM },
	[ARM_A_NORMAL] = { "A-normal", .advice = MADV_NORMAL },
	[ARM_C] = { "C", PAGER, .policy = RESID_POLICY_LRU },
	[ARM_D] = { "D", DECLARED },
	[ARM_E] = { "E", DECLARED, .prefetch = 1 },
	[ARM_D_AHEAD] = { "D-ahead", DECLARED, .evict_ahead = 1 },
	[ARM_D_TOUCHED] = { "D-touched", DECLARED, .touched = 1 },
	[ARM_D_WHOLE] = { "D-whole", DECLARED, .whole = 1 },
	[ARM_E_OVERLAP] = { "E-overlap", DECLARED, .prefetch = 1,
			    .overlap = 1 },
	[ARM_D_HUGE] = { "D-huge", DECLARED, .huge = 1 },
	[ARM_E_OVERLAP_HUGE] = { "E-overlap-huge", DECLARED, .prefetch = 1,
				 .overlap = 1, .huge = 1 },
	[ARM_DEVICE] = { "device", PAGER, .reader = 1 },
};
#undef DECLARED
#undef PAGER

static int parse_ratios(void *dst, const char *where, const char *v, char *err,
			size_t n)
{
	struct arms_opts *o = dst;
	char buf[256], *save = NULL;

	(void)where;
	snprintf(err, n,
		 "bad ratios '%s'; give up to 16 numbers in (0, 1], "
		 "e.g. 0.25,0.5",
		 v);
	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	o->nratios = 0;
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		char *end;
		double r = strtod(t, &end);

		if (*end || !(r > 0 && r <= 1) || o->nratios == MAX_RATIOS)
			return -1;
		o->ratio[o->nratios++] = r;
	}
	return o->nratios ? 0 : -1;
}

static int parse_arms(void *dst, const char *where, const char *v, char *err,
		      size_t n)
{
	struct arms_opts *o = dst;
	char buf[256], *save = NULL;

	(void)where;
	snprintf(err, n,
		 "bad arm list '%s'; use A, A-seq, A-random, A-normal, "
		 "C, D, E, D-ahead, D-touched, D-whole, E-overlap, D-huge, "
		 "E-overlap-huge, device, "
		 "comma-separated",
		 v);
	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	memset(o->use, 0, sizeof(o->use));
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int found = 0;

		for (int a = 0; a < NARMS; a++)
			if (!strcmp(t, arms[a].name) ||
			    (!strcmp(t, "A") && a <= ARM_A_NORMAL &&
			     (o->decode ? a != 1 : a != 2)))
				o->use[a] = found = 1;
		if (!found)
			return -1;
	}
	return 0;
}

static int parse(int argc, char **argv, struct arms_opts *o)
{
	int chunks = 0, chunk = 0, rc;
	struct cli_opt opts[] = {
		{ "chunks", CLI_U64, &o->nchunks, .arg = "N", .min = 2,
		  .max = 1u << 20, .what = "chunk count", .seen = &chunks,
		  .help = "chunks in the file" },
		{ "chunk", CLI_BYTES, &o->chunk, .arg = "BYTES", .min = 1,
		  .align = RESID_PAGE, .what = "chunk size", .seen = &chunk,
		  .help = "the chunk size" },
		{ "table", CLI_TEXT, &o->table, .arg = "FILE",
		  .help = "the layers of a layout instead of equal chunks" },
		{ "passes", CLI_U64, &o->passes, .arg = "P", .min = 1,
		  .max = 10000, .what = "pass count",
		  .help = "passes over the layers" },
		{ "threads", CLI_U64, &o->threads, .arg = "T", .min = 1,
		  .max = 64, .what = "thread count",
		  .help = "threads reading each layer" },
		{ "ratios", CLI_CALL, o, .arg = "R,R..", .parse = parse_ratios,
		  .help = "budgets as ratios of the file" },
		{ "arms", CLI_CALL, o, .arg = "LIST", .parse = parse_arms,
		  .help = "the arms to run (default A,C,D,E)" },
		{ "prefetch", CLI_U64, &o->prefetch, .arg = "N", .min = 1,
		  .max = 64, .what = "prefetch depth",
		  .help = "arm E's prefetch depth (default 1)" },
		{ "margin", CLI_BYTES, &o->margin, .arg = "BYTES",
		  .align = RESID_PAGE, .what = "margin",
		  .help = "the A arms' cgroup limit over the budget" },
		{ "dir", CLI_TEXT, &o->dir, .arg = "DIR",
		  .help = "where the file goes (default build; not tmpfs)" },
		CLI_SEED(&o->seed, "the file's content (default 1)"),
		{ "csv", CLI_TEXT, &o->csv, .arg = "FILE",
		  .help = "write every run" },
		{ "reps", CLI_U64, &o->reps, .arg = "N", .min = 1,
		  .max = MAX_REPS, .what = "repetition count",
		  .help = "runs of each arm, the median reported" },
		{ "device", CLI_FLAG, &o->device,
		  .help = "measure the device's limit with fio" },
		DEVCLASS_OPT(&o->cls.dc),
		{ "cols", CLI_U64, &o->cols, .arg = "N", .min = 1,
		  .max = DECODE_MAX_COLS, .what = "column count",
		  .help = "columns of each layer's matrix (default 4096)" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = o->decode ? "bench decode" : "bench arms",
		.about = o->decode ? about_decode : about,
		.opts = opts,
	};

	/* the last: --cols is decode's */
	if (!o->decode)
		opts[sizeof(opts) / sizeof(opts[0]) - 2] = (struct cli_opt){ 0 };
	if ((rc = cli_parse(&spec, argc, argv)) != CLI_RUN)
		return rc;
	if (o->device && !device_have_fio())
		return bench_bad(o->name, "option", "--device",
				 "it needs fio, which is not installed; run: "
				 "apt-get install -y fio");
	if (o->cls.dc.name[0]) /* the device alone, in the rotation */
		o->use[ARM_DEVICE] = 1;
	if (o->table && (chunk || chunks))
		return bench_bad(o->name, "option with --table",
				 chunk ? "--chunk" : "--chunks",
				 "the table gives the "
				 "chunks; drop --chunk and --chunks");
	return -1;
}

/* The layout scanned, its chunks padded to a whole page at the end (the
 * backing file is written to that size, so every fetch is O_DIRECT). */
static int make_layout(struct arms_opts *o, char *err, size_t n)
{
	struct layout *l = &o->lay;
	uint32_t cap = 0;

	if (o->table) {
		if (layout_read(o->table, l, err, n))
			return -1;
	} else {
		for (uint64_t i = 0; i < o->nchunks; i++)
			if (layout_add(l, &cap, i * o->chunk, o->chunk,
				       "--chunk", "chunk", err, n))
				return -1;
		if (layout_derive(l, err, n))
			return -1;
	}
	o->region = (l->region_len + 4095) & ~4095ull;
	l->chunks[l->nchunks - 1].len += o->region - l->region_len;
	return 0;
}

/* One run of arm a at ratio i into r; 0, or -1 with the reason printed. */
static int run_one(const struct arms_opts *o, struct bench_file *f, int i,
		   int a, struct arm_result *r, char *drops, size_t dn)
{
	struct arm_job j = { o, &arms[a], f, arms_budget(o, o->ratio[i]) };
	char err[600], tag[32];
	const char *how = page_cache_drop(f->fd, f->path, f->size, err,
					  sizeof(err));

	memset(r, 0, sizeof(*r));
	snprintf(tag, sizeof(tag), "bench-%s-%d", arms[a].name, i);
	if (!how ||
	    bench_in_child_class(tag,
				 j.budget + (arms[a].advice >= 0 ? o->margin :
								   PAGER_SLACK),
				 &o->cls, arm_run, &j, r, sizeof(*r), err,
				 sizeof(err))) {
		memset(r, 0, sizeof(*r));
		fprintf(stderr, "residctl bench %s: ratio %.3f arm %s: %s\n",
			o->name, o->ratio[i], arms[a].name, err);
		return -1;
	}
	snprintf(r->drop, sizeof(r->drop), "%s", how);
	if (!strstr(drops, how))
		snprintf(drops + strlen(drops), dn - strlen(drops), "%s%s",
			 drops[0] ? ", " : "", how);
	return 0;
}

static void progress(const struct arms_opts *o, int i, int a, int done,
		     int total, const struct arm_result *r)
{
	fprintf(stderr, "  [%d/%d] ", done, total);
	if (o->table)
		fprintf(stderr, "%s", o->table);
	else
		fprintf(stderr, "%" PRIu64 " MiB chunks", o->chunk / MiB);
	fprintf(stderr, ", ratio %.3f, %-9s %8.1f MiB read", o->ratio[i],
		arms[a].name, mib(r->io_bytes));
	if (arm_is_pager(&arms[a]))
		fprintf(stderr, " (pager %.1f)", mib(r->st.fetch_bytes));
	if (arms[a].reader || (arm_is_pager(&arms[a]) && r->mibps[0] > 0))
		fprintf(stderr, ", %.0f MiB/s", r->mibps[0]);
	if (o->decode && !arms[a].reader)
		fprintf(stderr, ", %.3f tokens/s",
			(double)o->passes / r->seconds);
	fprintf(stderr, ", bound %.1f, FNU %.1f, %.2f s\n", mib(r->bound_bytes),
		mib(r->fnu_bytes), r->seconds);
}

/* Every run of the sweep, each ratio's arms rep by rep, so that load on
 * the machine falls on all of them alike; an arm's figures are its first
 * run's, its wall time the median. 0, 1 when a run failed or stopped. */
static int sweep(const struct arms_opts *o, struct bench_file *f,
		 struct arm_result (*res)[NARMS], char *drops, size_t dn)
{
	int total = 0, done = 0, failed = 0;
	struct arm_result run;

	for (int a = 0; a < NARMS; a++)
		total += o->use[a] * o->nratios * (int)o->reps;
	for (int i = 0; i < o->nratios && !child_stop_signal(); i++) {
		for (uint64_t k = 0; k < o->reps && !child_stop_signal(); k++) {
			for (int a = 0; a < NARMS && !child_stop_signal();
			     a++) {
				struct arm_result *r = &res[i][a];

				if (!o->use[a] || (k && !r->ok))
					continue;
				done++;
				if (run_one(o, f, i, a, &run, drops, dn)) {
					r->ok = 0;
					failed = 1;
					continue;
				}
				progress(o, i, a, done, total, &run);
				if (run.mismatches || run.violations) {
					fprintf(stderr,
						"residctl bench %s: "
						"%s read %" PRIu64
						" wrong %s, %" PRIu64
						" invariant violations\n",
						o->name, arms[a].name,
						run.mismatches,
						o->decode ? "outputs" : "words",
						run.violations);
					failed = 1;
				}
				if (k && run.io_bytes != r->io_bytes)
					fprintf(stderr,
						"  note: %s read %.1f MiB "
						"in run 1, %.1f in run %" PRIu64
						"\n",
						arms[a].name, mib(r->io_bytes),
						mib(run.io_bytes), k + 1);
				if (!k)
					*r = run;
				r->secs[k] = run.seconds;
				r->mibps[k] = run.mibps[0];
			}
		}
		for (int a = 0; a < NARMS; a++) {
			struct arm_result *r = &res[i][a];
			double v[MAX_REPS];

			if (!r->ok)
				continue;
			memcpy(v, r->secs, sizeof(v));
			qsort(v, o->reps, sizeof(v[0]), bench_cmp_double);
			r->seconds = v[o->reps / 2];
		}
	}
	return failed || child_stop_signal();
}

/* fio on the file, once before the sweep and once after; the best. */
static int device_limit(struct arms_opts *o, struct bench_file *f)
{
	char err[600];

	if (!o->device)
		return 0;
	o->dev.bs[0] = o->table ? layout_largest_chunk(&o->lay) : o->chunk;
	o->dev.bs[1] = o->dev.bs[0] > MiB ? MiB : 0;
	if (device_measure(f->path, f->size, &o->dev, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "residctl bench %s: device limit: %s\n", o->name, err);
	return 1;
}

/* Decode: x and every layer's reference output, from pread of the file. */
static int decode_setup(struct arms_opts *o, const struct bench_file *f,
			char *err, size_t n)
{
	float *x = malloc(o->cols * sizeof(*x));
	uint64_t *ref = calloc(o->lay.nlayers, sizeof(*ref));

	o->dec = (struct decode_job){ (uint32_t)o->cols, x, ref };
	if (!x || !ref) {
		snprintf(err, n, "no memory for the decode's vector");
		return -1;
	}
	decode_x(x, (uint32_t)o->cols);
	return decode_reference(f->path, &o->lay, (uint32_t)o->cols, x, ref,
				err, n);
}

/* The huge arms need the kernel's THP and every chunk on a huge page
 * boundary (so that no punch splits a folio); their mount point is made
 * here, once. 0, 2 said on bad input, 1 on a system error. */
static int huge_arms_setup(struct arms_opts *o)
{
	uint64_t folio = huge_leg_folio();
	char why[600], fix[800];
	int a = 0;

	while (a < NARMS && !(o->use[a] && arms[a].huge))
		a++;
	if (a == NARMS)
		return 0;
	if (!huge_leg_available(why, sizeof(why))) {
		snprintf(fix, sizeof(fix),
			 "this machine cannot run it (%s); "
			 "leave it out",
			 why);
		return bench_bad(o->name, "arm", arms[a].name, fix);
	}
	for (uint32_t c = 0; c < o->lay.nchunks; c++)
		if (o->lay.chunks[c].off % folio) {
			snprintf(fix, sizeof(fix),
				 "chunk %u starts at %" PRIu64
				 ", not a multiple of the %" PRIu64 " KiB huge "
				 "page; leave it out",
				 c, o->lay.chunks[c].off, folio >> 10);
			return bench_bad(o->name, "arm", arms[a].name, fix);
		}
	if (huge_leg_mountpoint(o->huge_mnt, sizeof(o->huge_mnt)) < 0) {
		fprintf(stderr, "residctl bench %s: cannot make %s: %s\n",
			o->name, o->huge_mnt, strerror(errno));
		o->huge_mnt[0] = '\0';
		return 1;
	}
	return 0;
}

static int arms_main(int argc, char **argv, struct arms_opts o)
{
	struct arm_result(*res)[NARMS] = NULL;
	struct bench_file f;
	char err[1200], drops[64] = ""; /* room for a tensor's name */
	int rc = parse(argc, argv, &o), swept = 0;

	if (rc >= 0)
		return rc;
	if (make_layout(&o, err, sizeof(err))) {
		fprintf(stderr, "residctl bench %s: %s\n", o.name, err);
		return 2;
	}
	for (int i = 0; i < o.nratios; i++)
		if (arms_budget(&o, o.ratio[i]) <
		    layout_largest_chunk(&o.lay)) {
			char v[32];

			snprintf(v, sizeof(v), "%.3f", o.ratio[i]);
			layout_free(&o.lay);
			return bench_bad(o.name, "ratio", v,
					 "a budget must "
					 "hold the largest chunk: raise it");
		}
	if ((rc = huge_arms_setup(&o))) {
		layout_free(&o.lay);
		return rc;
	}
	if (bench_dir_check(o.dir, o.region, err, sizeof(err))) {
		fprintf(stderr, "residctl bench %s: %s\n", o.name, err);
		rc = 2;
		goto out;
	}
	if ((rc = bench_class_setup(o.name, &o.cls, o.dir)))
		goto out;
	res = calloc((size_t)o.nratios, sizeof(*res));
	if (!res) {
		fprintf(stderr, "residctl bench %s: no memory\n", o.name);
		rc = 1;
		goto out;
	}
	child_stop_softly();
	fprintf(stderr,
		"bench %s: writing a %.1f MiB file in %s (%" PRIu32
		" layers, %" PRIu32 " chunks)\n",
		o.name, mib(o.region), o.dir, o.lay.nlayers, o.lay.nchunks);
	if (bench_file_create(&f, o.dir, o.region, o.seed,
			      o.decode ? decode_fill : resid_content_fill, err,
			      sizeof(err)) ||
	    (o.decode && decode_setup(&o, &f, err, sizeof(err)))) {
		fprintf(stderr, "residctl bench %s: %s\n", o.name, err);
		bench_file_remove(&f);
		rc = 1;
		goto out;
	}
	rc = device_limit(&o, &f);
	if (!rc) {
		rc = sweep(&o, &f, res, drops, sizeof(drops));
		swept = 1;
	}
	if (!rc && !child_stop_signal())
		rc = device_limit(&o, &f);
	bench_file_remove(&f);
	if (child_stop_signal()) {
		fprintf(stderr,
			"residctl bench %s: interrupted; the file "
			"is removed, nothing written\n",
			o.name);
	} else if (swept) {
		arms_print(&o, res, drops);
		if (o.csv && arms_write_csv(&o, res))
			rc = 1;
	}
out:
	if (o.huge_mnt[0])
		rmdir(o.huge_mnt);
	free((void *)o.dec.x);
	free((void *)o.dec.ref);
	free(res);
	layout_free(&o.lay);
	return rc;
}

int bench_arms(int argc, char **argv)
{
	return arms_main(argc, argv,
			 (struct arms_opts){
				 .name = "arms",
				 .chunk = 8 * MiB,
				 .nchunks = 16,
				 .passes = 4,
				 .threads = 1,
				 .prefetch = 1,
				 .margin = 4 * MiB,
				 .seed = 1,
				 .reps = 1,
				 .ratio = { 0.25, 0.375, 0.5, 0.625, 0.75 },
				 .nratios = 5,
				 .use = { 1, 1, 0, 1, 1, 1 },
				 .dir = "build",
			 });
}

int bench_decode(int argc, char **argv)
{
	return arms_main(argc, argv,
			 (struct arms_opts){
				 .name = "decode",
				 .decode = 1,
				 .cols = 4096,
				 .chunk = 32 * MiB,
				 .nchunks = 16,
				 .passes = 8,
				 .threads = 2,
				 .prefetch = 1,
				 .margin = 4 * MiB,
				 .seed = 1,
				 .reps = 1,
				 .ratio = { 0.25, 0.375, 0.5, 0.625, 0.75 },
				 .nratios = 5,
				 .use = { 1, 0, 1, 1, 1, 1 },
				 .dir = "build",
			 });
}
