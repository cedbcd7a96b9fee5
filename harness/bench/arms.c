/* residctl bench arms: the arms of SPEC §8 on the synthetic cyclic layer
 * scan, at equal budgets, swept over budget ratios. Primary figure: bytes
 * the arm's process read from the disk (/proc/self/io read_bytes), with
 * the pager's own fetch_bytes beside it as the cross-check, and OPT from
 * Belady over the reference trace the scan itself wrote. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "belady.h"
#include "bench.h"
#include "cli.h"
#include "invariants.h"

#define MAX_RATIOS 16
#define PAGER_SLACK (64 * MiB) /* pager arms: the pager's budget binds */

static const char usage[] =
	"usage: residctl bench arms [--chunk BYTES] [--chunks N] [--passes P]\n"
	"                           [--threads T] [--ratios R,R..] [--arms LIST]\n"
	"                           [--prefetch N] [--margin BYTES] [--dir DIR]\n"
	"                           [--seed N] [--csv FILE]\n"
	"  A file of N chunks (default 16 of 8M) is read in order for P passes\n"
	"  (default 4) by T threads (default 1), every word summed and checked,\n"
	"  once per arm and budget ratio (default 0.25,0.375,0.5,0.625,0.75 of\n"
	"  the file), each run in its own process and memory cgroup:\n"
	"    A-seq, A-random, A-normal  kernel mmap with that madvise, cgroup\n"
	"                 limit = budget + --margin (default 4M); 'A' = seq,random\n"
	"    C  pager + lru     D  pager + layer_order_declared\n"
	"    E  D + prefetch (--prefetch, default 1)\n"
	"    D-ahead  D + evict ahead of need\n"
	"  (--arms default A,C,D,E). OPT is Belady over the scan's own trace.\n"
	"  Bytes read are /proc/self/io read_bytes of the arm's process; the\n"
	"  page cache of the file is emptied before every run (fsync,\n"
	"  POSIX_FADV_DONTNEED, checked with mincore). The file goes in --dir\n"
	"  (default build; not tmpfs) and is removed at the end. Prints a\n"
	"  progress line per run on stderr and markdown tables on stdout; --csv\n"
	"  writes every run. Exit 0, 1 when a run failed, 2 on bad input.\n";

struct arm {
	const char *name;
	int advice;              /* arm A: madvise; -1: a pager arm */
	enum resid_policy policy;
	int prefetch, evict_ahead;
};

static const struct arm arms[] = {
	{ "A-seq", MADV_SEQUENTIAL, 0, 0, 0 },
	{ "A-random", MADV_RANDOM, 0, 0, 0 },
	{ "A-normal", MADV_NORMAL, 0, 0, 0 },
	{ "C", -1, RESID_POLICY_LRU, 0, 0 },
	{ "D", -1, RESID_POLICY_DECLARED, 0, 0 },
	{ "E", -1, RESID_POLICY_DECLARED, 1, 0 },
	{ "D-ahead", -1, RESID_POLICY_DECLARED, 0, 1 },
};
#define NARMS (int)(sizeof(arms) / sizeof(arms[0]))

struct opts {
	uint64_t chunk, nchunks, passes, threads, prefetch, margin, seed;
	double ratio[MAX_RATIOS];
	int nratios;
	int use[NARMS];
	const char *dir, *csv;
};

struct job {
	const struct opts *o;
	const struct arm *arm;
	const struct bench_file *f;
	uint64_t budget;
};

struct result {
	uint64_t io_bytes, io_first, opt_bytes, opt_misses, accesses;
	uint64_t faults, evicted_bytes, sink, mismatches, violations;
	double seconds;
	struct resid_stats st;
	char drop[32];           /* how the page cache was emptied */
	int ok;
};

static uint64_t violations;

static void on_violation(int id, const char *msg, void *arg)
{
	(void)arg;
	if (!violations++)
		fprintf(stderr, "residctl bench: I-%d (%s): %s\n", id,
			inv_title(id), msg);
}

/* Arm A: the file mapped, the kernel's page cache under the cgroup limit. */
static int open_kernel(const struct job *j, struct scan *s, char *err,
		       size_t n)
{
	uint64_t len = s->chunk * s->nchunks;
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

static int open_pager(const struct job *j, struct scan *s, char *err,
		      size_t n)
{
	struct resid_config cfg;
	char why[RESID_ERRLEN];

	resid_config_init(&cfg);
	cfg.region_len = s->chunk * s->nchunks;
	cfg.chunk_size = s->chunk;
	cfg.budget_bytes = j->budget;
	cfg.backing = RESID_BACKING_FILE;
	cfg.path = j->f->path;
	cfg.policy = j->arm->policy;
	cfg.signal = RESID_SIGNAL_BEFORE_READ;
	cfg.prefetch_depth = j->arm->prefetch ? (uint32_t)j->o->prefetch : 0;
	cfg.evict_ahead = j->arm->evict_ahead;
	inv_set_handler(on_violation, NULL);
	s->r = resid_open(&cfg, why);
	if (!s->r) {
		snprintf(err, n, "cannot open the region: %s", why);
		return -1;
	}
	s->base = resid_base(s->r);
	return 0;
}

/* Bytes of the file still cached at the end: what A read and kept. */
static uint64_t cached_bytes(const uint8_t *m, uint64_t len)
{
	uint64_t pages = len / 4096, in = 0;
	unsigned char *vec = malloc(pages);

	if (vec && mincore((void *)m, len, vec) == 0)
		for (uint64_t i = 0; i < pages; i++)
			in += vec[i] & 1;
	free(vec);
	return in * 4096;
}

static uint64_t faults_of(const struct rusage *u)
{
	return (uint64_t)u->ru_majflt + (uint64_t)u->ru_minflt;
}

/* Closes the arm; the pager's counters, or A's faults and evictions. */
static void close_arm(struct scan *s, uint64_t len, struct result *res)
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

/* OPT: Belady over the trace the scan wrote, at capacity = budget. */
static int opt_of(const struct scan *s, uint64_t budget, struct result *res,
		  char *err, size_t n)
{
	struct trace t = {
		.kind = TRACE_REFERENCE, .nchunks = s->nchunks,
		.seq = s->trace, .n = s->accesses,
	};
	struct belady_result b;
	int rc;

	t.sizes = malloc(s->nchunks * sizeof(*t.sizes));
	if (!t.sizes) {
		snprintf(err, n, "no memory for the trace");
		return -1;
	}
	for (uint32_t i = 0; i < s->nchunks; i++)
		t.sizes[i] = s->chunk;
	rc = belady(&t, budget, &b, err, n);
	if (!rc) {
		res->opt_bytes = b.bytes_missed;
		res->opt_misses = b.misses;
	}
	free(t.sizes);
	return rc;
}

/* In the child: one run of one arm at one budget. */
static int run_arm(void *arg, void *out, char *err, size_t n)
{
	const struct job *j = arg;
	const struct opts *o = j->o;
	struct result *res = out;
	struct scan s = {
		.chunk = o->chunk, .nchunks = (uint32_t)o->nchunks,
		.passes = (uint32_t)o->passes, .threads = (uint32_t)o->threads,
		.seed = j->f->seed,
	};
	uint64_t io0 = 0, io1 = 0;
	struct rusage u0, u1;
	int rc;

	s.trace = malloc(o->passes * o->nchunks * sizeof(*s.trace));
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
	double t0 = bench_now();

	if (getrusage(RUSAGE_SELF, &u0) || bench_read_bytes(&io0)) {
		snprintf(err, n, "cannot read /proc/self/io or rusage");
		rc = -1;
	}
	if (!rc)
		rc = scan_run(&s, err, n);
	if (s.r)
		resid_quiesce(s.r); /* prefetches still in flight count */
	res->seconds = bench_now() - t0;
	if (!rc && (getrusage(RUSAGE_SELF, &u1) || bench_read_bytes(&io1))) {
		snprintf(err, n, "cannot read /proc/self/io or rusage");
		rc = -1;
	}
	if (!rc) {
		res->io_bytes = io1 - io0;
		res->io_first = s.io_first_pass > io0 ? s.io_first_pass - io0 :
			0;
		res->faults = faults_of(&u1) - faults_of(&u0);
	}
	close_arm(&s, o->chunk * o->nchunks, res);
	res->sink = s.sink;
	res->mismatches = s.mismatches;
	res->accesses = s.accesses;
	res->violations = violations;
	if (!rc)
		rc = opt_of(&s, j->budget, res, err, n);
	free(s.trace);
	res->ok = !rc;
	return rc;
}

static int parse_ratios(const char *v, struct opts *o)
{
	char buf[256], *save = NULL;

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

static int parse_arms(const char *v, struct opts *o)
{
	char buf[256], *save = NULL;

	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	memset(o->use, 0, sizeof(o->use));
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int found = 0;

		for (int a = 0; a < NARMS; a++)
			if (!strcmp(t, arms[a].name) ||
			    (!strcmp(t, "A") && (a == 0 || a == 1)))
				o->use[a] = found = 1;
		if (!found)
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
			return bench_bad("arms", "argument", a,
					 "see residctl bench arms --help");
		if (!(v = cli_value("bench arms", argc, argv, &i)))
			return 2;
		if (!strncmp(a, "--chunks", 8)) {
			if (cli_u64(v, &o->nchunks) || o->nchunks < 2 ||
			    o->nchunks > 1u << 20)
				return bench_bad("arms", "chunk count", v,
						 "give 2..1048576");
		} else if (!strncmp(a, "--chunk", 7)) {
			if (cli_bytes(v, &o->chunk) || !o->chunk ||
			    o->chunk % 4096)
				return bench_bad("arms", "chunk size", v,
						 "give a multiple of 4K, e.g. 8M");
		} else if (!strncmp(a, "--passes", 8)) {
			if (cli_u64(v, &o->passes) || !o->passes ||
			    o->passes > 10000)
				return bench_bad("arms", "pass count", v,
						 "give 1..10000");
		} else if (!strncmp(a, "--threads", 9)) {
			if (cli_u64(v, &o->threads) || !o->threads ||
			    o->threads > 64)
				return bench_bad("arms", "thread count", v,
						 "give 1..64");
		} else if (!strncmp(a, "--prefetch", 10)) {
			if (cli_u64(v, &o->prefetch) || !o->prefetch ||
			    o->prefetch > 64)
				return bench_bad("arms", "prefetch depth", v,
						 "give 1..64");
		} else if (!strncmp(a, "--margin", 8)) {
			if (cli_bytes(v, &o->margin) || o->margin % 4096)
				return bench_bad("arms", "margin", v,
						 "give a multiple of 4K, e.g. 4M");
		} else if (!strncmp(a, "--ratios", 8)) {
			if (parse_ratios(v, o))
				return bench_bad("arms", "ratios", v,
						 "give up to 16 numbers in (0, 1], "
						 "e.g. 0.25,0.5");
		} else if (!strncmp(a, "--arms", 6)) {
			if (parse_arms(v, o))
				return bench_bad("arms", "arm list", v,
						 "use A, A-seq, A-random, A-normal, "
						 "C, D, E, D-ahead, comma-separated");
		} else if (!strncmp(a, "--seed", 6)) {
			if (cli_u64(v, &o->seed))
				return bench_bad("arms", "seed", v,
						 "give a decimal number");
		} else if (!strncmp(a, "--dir", 5)) {
			o->dir = v;
		} else if (!strncmp(a, "--csv", 5)) {
			o->csv = v;
		} else {
			return bench_bad("arms", "option", a,
					 "see residctl bench arms --help");
		}
	}
	return -1;
}

static uint64_t budget_of(const struct opts *o, double ratio)
{
	return (uint64_t)(ratio * (double)(o->chunk * o->nchunks)) & ~4095ull;
}

static double mib(uint64_t b)
{
	return (double)b / (double)MiB;
}

static void csv_row(FILE *f, const struct opts *o, double ratio,
		    uint64_t budget, const struct arm *arm,
		    const struct result *r)
{
	int pager = arm->advice < 0;

	fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%"
		PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",", o->chunk, o->nchunks,
		o->passes, o->threads, ratio, budget, arm->name, r->io_bytes,
		r->io_first);
	if (pager)
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",", r->st.fetch_bytes,
			r->st.fetches);
	else
		fputs(",,", f);
	fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%"
		PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n", r->opt_bytes,
		r->accesses, r->faults, r->evicted_bytes, r->seconds,
		r->mismatches, r->violations,
		pager ? budget + PAGER_SLACK : budget + o->margin, r->drop);
}

static int write_csv(const struct opts *o, struct result (*res)[NARMS])
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", o->csv);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "residctl bench arms: cannot write %s: %s\n",
			o->csv, strerror(errno));
		return -1;
	}
	fputs("chunk_bytes,chunks,passes,threads,ratio,budget_bytes,arm,"
	      "bytes_read,bytes_first_pass,pager_fetch_bytes,pager_fetches,"
	      "opt_bytes,accesses,"
	      "faults,evicted_bytes,wall_s,mismatches,violations,"
	      "cgroup_limit,cache_drop\n", f);
	for (int i = 0; i < o->nratios; i++) {
		uint64_t budget = budget_of(o, o->ratio[i]);
		struct result opt = { 0 };

		for (int a = 0; a < NARMS; a++) {
			if (!o->use[a] || !res[i][a].ok)
				continue;
			csv_row(f, o, o->ratio[i], budget, &arms[a],
				&res[i][a]);
			opt = res[i][a];
		}
		if (opt.ok)
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%.3f,%" PRIu64 ",OPT,%" PRIu64 ",,,,%" PRIu64
				",%" PRIu64 ",,,,,,,\n", o->chunk, o->nchunks,
				o->passes, o->threads, o->ratio[i], budget,
				opt.opt_bytes, opt.opt_bytes, opt.accesses);
	}
	if (fclose(f) || rename(tmp, o->csv)) {
		fprintf(stderr, "residctl bench arms: cannot write %s\n",
			o->csv);
		unlink(tmp);
		return -1;
	}
	return 0;
}

enum { ARM_C = 3, ARM_D = 4, ARM_E = 5 };

/* a / b as "x.xxx", or "-" when either is missing. */
static const char *quot(char *buf, size_t n, const struct result *a,
			uint64_t av, const struct result *b, uint64_t bv)
{
	if (!a || !b || !a->ok || !b->ok || !bv)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.3f", (double)av / (double)bv);
	return buf;
}

/* The arm-A variant that read the fewest bytes, or NULL. */
static const struct result *best_a(const struct result *r, int *which)
{
	const struct result *best = NULL;

	for (int a = 0; a < NARMS; a++)
		if (arms[a].advice >= 0 && r[a].ok &&
		    (!best || r[a].io_bytes < best->io_bytes)) {
			best = &r[a];
			*which = a;
		}
	return best;
}

/* Any run's OPT (every run of a ratio scanned the same trace). */
static const struct result *any_run(const struct result *r)
{
	for (int a = 0; a < NARMS; a++)
		if (r[a].ok)
			return &r[a];
	return NULL;
}

static void summary_row(const struct opts *o, int i, const struct result *r)
{
	const struct result *opt = any_run(r), *c = &r[ARM_C], *d = &r[ARM_D];
	const struct result *e = &r[ARM_E];
	int which = 0;
	const struct result *a = best_a(r, &which);
	char q[7][16];

	printf("| %.3f | %.0f | %s | ", o->ratio[i],
	       mib(budget_of(o, o->ratio[i])),
	       opt ? (snprintf(q[0], 16, "%.0f", mib(opt->opt_bytes)), q[0]) :
	       "-");
	if (a)
		printf("%.0f (%s) | ", mib(a->io_bytes), arms[which].name + 2);
	else
		printf("- | ");
	for (int k = ARM_C; k <= ARM_E; k++)
		if (r[k].ok)
			printf("%.0f | ", mib(r[k].io_bytes));
		else
			printf("- | ");
	printf("%s | %s | %s | %s | %s | ",
	       quot(q[1], 16, d, d->io_bytes, opt, opt ? opt->opt_bytes : 0),
	       quot(q[2], 16, e, e->io_bytes, opt, opt ? opt->opt_bytes : 0),
	       quot(q[3], 16, c, c->io_bytes, opt, opt ? opt->opt_bytes : 0),
	       quot(q[4], 16, a, a ? a->io_bytes : 0, d, d->io_bytes),
	       quot(q[5], 16, a, a ? a->io_bytes - a->io_first : 0, d,
		    d->io_bytes - d->io_first));
	if (c->ok && c->accesses)
		printf("%.1f %% |\n", 100.0 * (double)c->st.fetches /
		       (double)c->accesses);
	else
		printf("- |\n");
}

static void print_tables(const struct opts *o, struct result (*res)[NARMS],
			 const char *drops)
{
	char q[16];

	printf("### %" PRIu64 " chunks of %" PRIu64 " MiB, %" PRIu64
	       " passes, %" PRIu64 " application thread%s\n\n", o->nchunks,
	       o->chunk / MiB, o->passes, o->threads, o->threads > 1 ? "s" : "");
	printf("Bytes read from the disk by the arm's process (/proc/self/io "
	       "read_bytes, delta around the scan), MiB. Budget = ratio x "
	       "%.0f MiB file; arm A's cgroup limit is the budget + %" PRIu64
	       " MiB; the pager arms' cgroups get budget + %" PRIu64 " MiB (the "
	       "pager's budget binds). Page cache emptied before every run "
	       "(%s; mincore: 0 pages cached). OPT: Belady over the scan's "
	       "own reference trace. E prefetches %" PRIu64 " chunk%s ahead. "
	       "A/D after pass 1 leaves out the cold first pass.\n\n",
	       mib(o->chunk * o->nchunks), o->margin / MiB, PAGER_SLACK / MiB,
	       drops, o->prefetch, o->prefetch > 1 ? "s" : "");
	printf("| ratio | budget MiB | OPT | A (best) | C | D | E | D/OPT | "
	       "E/OPT | C/OPT | A/D | A/D after pass 1 | C misses |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nratios; i++)
		summary_row(o, i, res[i]);
	printf("\nEvery run (pager MiB: the pager's own fetch_bytes, the "
	       "cross-check; faults: the pager's fault messages, or the "
	       "process's major + minor faults for A; evicted: punched by "
	       "the pager, or for A read minus still cached at the end):\n\n"
	       "| ratio | arm | MiB read | x OPT | pager MiB | faults | "
	       "evicted MiB | wall s | bad words |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nratios; i++)
		for (int a = 0; a < NARMS; a++) {
			const struct result *r = &res[i][a];

			if (!r->ok)
				continue;
			printf("| %.3f | %s | %.1f | %s | ", o->ratio[i],
			       arms[a].name, mib(r->io_bytes),
			       quot(q, sizeof(q), r, r->io_bytes, r,
				    r->opt_bytes));
			if (arms[a].advice < 0)
				printf("%.1f | ", mib(r->st.fetch_bytes));
			else
				printf("- | ");
			printf("%" PRIu64 " | %.1f | %.2f | %" PRIu64 " |\n",
			       r->faults, mib(r->evicted_bytes), r->seconds,
			       r->mismatches);
		}
	printf("\n");
}

/* Every run of the sweep; 0, 1 when a run failed or stopped. */
static int sweep(const struct opts *o, struct bench_file *f,
		 struct result (*res)[NARMS], char *drops, size_t dn)
{
	int total = 0, done = 0, failed = 0;
	char err[600], tag[32];

	for (int a = 0; a < NARMS; a++)
		total += o->use[a] * o->nratios;
	for (int i = 0; i < o->nratios && !bench_stop; i++) {
		for (int a = 0; a < NARMS && !bench_stop; a++) {
			struct result *r = &res[i][a];
			struct job j = { o, &arms[a], f, budget_of(o, o->ratio[i]) };
			const char *how;

			if (!o->use[a])
				continue;
			done++;
			how = bench_drop_cache(f, err, sizeof(err));
			snprintf(tag, sizeof(tag), "bench-%s-%d", arms[a].name,
				 i);
			if (!how || bench_in_child(tag, j.budget +
					(arms[a].advice >= 0 ? o->margin :
					 PAGER_SLACK), run_arm, &j, r,
					sizeof(*r), err, sizeof(err))) {
				memset(r, 0, sizeof(*r));
				fprintf(stderr, "residctl bench arms: ratio %.3f "
					"arm %s: %s\n", o->ratio[i],
					arms[a].name, err);
				failed = 1;
				continue;
			}
			snprintf(r->drop, sizeof(r->drop), "%s", how);
			if (!strstr(drops, how))
				snprintf(drops + strlen(drops),
					 dn - strlen(drops), "%s%s",
					 drops[0] ? ", " : "", how);
			fprintf(stderr, "  [%d/%d] %" PRIu64 " MiB chunks, ratio "
				"%.3f, %-8s %8.1f MiB read", done, total,
				o->chunk / MiB, o->ratio[i], arms[a].name,
				mib(r->io_bytes));
			if (arms[a].advice < 0)
				fprintf(stderr, " (pager %.1f)",
					mib(r->st.fetch_bytes));
			fprintf(stderr, ", OPT %.1f, %.2f s\n",
				mib(r->opt_bytes), r->seconds);
			if (r->mismatches || r->violations) {
				fprintf(stderr, "residctl bench arms: %s read %"
					PRIu64 " wrong words, %" PRIu64
					" invariant violations\n",
					arms[a].name, r->mismatches,
					r->violations);
				failed = 1;
			}
		}
	}
	return failed || bench_stop;
}

int bench_arms(int argc, char **argv)
{
	struct opts o = {
		.chunk = 8 * MiB, .nchunks = 16, .passes = 4, .threads = 1,
		.prefetch = 1, .margin = 4 * MiB, .seed = 1,
		.ratio = { 0.25, 0.375, 0.5, 0.625, 0.75 }, .nratios = 5,
		.use = { 1, 1, 0, 1, 1, 1 }, .dir = "build",
	};
	struct result (*res)[NARMS];
	struct bench_file f;
	char err[600], drops[64] = "";
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	for (int i = 0; i < o.nratios; i++)
		if (budget_of(&o, o.ratio[i]) < o.chunk) {
			char v[32];

			snprintf(v, sizeof(v), "%.3f", o.ratio[i]);
			return bench_bad("arms", "ratio", v, "a budget must "
					 "hold one chunk: raise it or --chunks");
		}
	if (bench_dir_check(o.dir, o.chunk * o.nchunks, err, sizeof(err))) {
		fprintf(stderr, "residctl bench arms: %s\n", err);
		return 2;
	}
	res = calloc((size_t)o.nratios, sizeof(*res));
	if (!res) {
		fprintf(stderr, "residctl bench arms: no memory\n");
		return 1;
	}
	bench_catch_signals();
	fprintf(stderr, "bench arms: writing a %" PRIu64 " MiB file in %s\n",
		o.chunk * o.nchunks / MiB, o.dir);
	if (bench_file_create(&f, o.dir, o.chunk * o.nchunks, o.seed, err,
			      sizeof(err))) {
		fprintf(stderr, "residctl bench arms: %s\n", err);
		free(res);
		return 1;
	}
	rc = sweep(&o, &f, res, drops, sizeof(drops));
	bench_file_remove(&f);
	if (bench_stop) {
		fprintf(stderr, "residctl bench arms: interrupted; the file "
			"is removed, nothing written\n");
	} else {
		print_tables(&o, res, drops);
		if (o.csv && write_csv(&o, res))
			rc = 1;
	}
	free(res);
	return rc;
}
