/* residctl check: the gate. Each scenario runs in its own child memory cgroup
 * (limit set, swap forbidden), which is removed afterwards, also when the
 * scenario fails. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/commands.h"
#include "campaign/campaign.h"
#include "campaign/report.h"
#include "cgroup/cgroup_scope.h"
#include "cli/probe.h"
#include "fault/bugs.h"
#include "fault/fault.h"
#include "scenarios/scenario_child.h"
#include "sim/sim_gate.h"
#include "workload/content_file.h"
#include "workload/workload.h"

#define SCOPE_LIMIT (512ull << 20)
/* A scenario that runs the pager in this process is killed after this
 * long without a byte checked. */
#define STALL_S 30

static const char about[] =
	"  Runs the gate scenarios (all when none is named) on the real kernel\n"
	"  with eager reconcile, each in its own memory cgroup, and prints one\n"
	"  row per scenario and leg: verdict, the backing it read (synthetic,\n"
	"  file O_DIRECT, or file buffered where O_DIRECT was refused), its\n"
	"  chunks (equal or unequal), checks, mismatches, counters, faults\n"
	"  fired per point, seconds. H-1 is T-3's storm while a thread advises\n"
	"  the mapping as applications do and reads it again. T-1, T-2, T-3,\n"
	"  T-6, T-7 and H-1 also read a real file of the content whose size is\n"
	"  not a page multiple (written to a directory under $TMPDIR or /tmp,\n"
	"  removed afterwards); T-1 and T-3 also run on a table of unequal\n"
	"  chunks. T-1, T-2, T-3, T-6, T-7 and H-1\n"
	"  also run with huge folios in B (a tmpfs mounted huge=always in the\n"
	"  child's own mount namespace; chunks of the folio size), T-1 also on\n"
	"  unequal chunks there, which must keep 4 KiB pages; n/a where the\n"
	"  kernel has no THP. --backing, --chunks and --pages keep only those\n"
	"  legs. T-8 runs the real engine (build/engine/llama-driver beside\n"
	"  residctl, make engine) on a tiny GGUF model under residctl run, on\n"
	"  4 KiB pages and the huge tmpfs; UNKNOWN without the engine; --sim\n"
	"  leaves it out.\n"
	"  With --sim each row runs half its schedules as a random walk, half\n"
	"  as PCT depth 3, and a failure prints its shrunk schedule's replay\n"
	"  line; --shard counts the schedules over the scenarios in order. A\n"
	"  fault a named scenario cannot fire (any in T-5) is refused; in the\n"
	"  whole gate such a scenario runs without. A --fault rule for a point\n"
	"  wins over the swarm's draw.\n"
	"  Bounds of --sim: a run ends as no-progress after 200,000 steps\n"
	"  without progress (no byte read, no chunk state change, no thread\n"
	"  ended), or at 1,000,000 steps or 20 s of CPU time; a row stops\n"
	"  exploring after --failures-per-row failures (default 3; with\n"
	"  --report 0, every schedule, as merge wants each shard whole); each\n"
	"  failure's shrink stops at 20 s, 20,000,000 steps, 20,000 runs or\n"
	"  256 MiB of growth, all shrinks together at 30 s, and the best line\n"
	"  so far is printed; the whole campaign stops at --seconds (default\n"
	"  1800), prints its table with the rows it did not finish marked\n"
	"  UNKNOWN, and exits 1 when a row failed. Memory does not grow with\n"
	"  the steps runs take or the failures found: a run keeps its first\n"
	"  65,536 steps' choices, a failing run's pager heap is freed with it,\n"
	"  and a row keeps its first failure only.\n"
	"  Exit 0 only when every row passed; 1 when one failed; 2 on bad\n"
	"  input, when the scenarios cannot run here (see residctl probe), or\n"
	"  when a criterion could not be judged here (an UNKNOWN row).\n";

/* One row of the gate: a scenario on one of its legs. */
struct row {
	const struct scenario *s;
	unsigned leg;
};

/* The legs a row may take: --backing, --chunks and --pages; -1 for all. */
struct leg_filter {
	int file;    /* 0: synthetic only, 1: file only, -1: both */
	int unequal; /* 0: equal only, 1: unequal only, -1: both */
	int huge;    /* 0: 4 KiB pages only, 1: huge tmpfs only, -1: both */
};

static int leg_kept(const struct leg_filter *f, unsigned leg)
{
	return (f->file < 0 || f->file == !!(leg & LEG_FILE)) &&
	       (f->unequal < 0 || f->unequal == !!(leg & LEG_UNEQUAL)) &&
	       (f->huge < 0 || f->huge == !!(leg & LEG_HUGE));
}

/* Appends s's legs (a mask) that f keeps: the synthetic one on equal
 * chunks, then each of its legs alone, then file and unequal together,
 * then the huge leg with each. Returns the count of rows asked for, which
 * past CHECK_MAX_ROWS is more than rows holds. */
static int add_rows(const struct scenario *s, unsigned legs,
		    const struct leg_filter *f, struct row *rows, int n)
{
	static const unsigned order[] = { 0,
					  LEG_FILE,
					  LEG_UNEQUAL,
					  LEG_FILE | LEG_UNEQUAL,
					  LEG_HUGE,
					  LEG_HUGE | LEG_FILE,
					  LEG_HUGE | LEG_UNEQUAL };

	for (int i = 0; i < 7; i++)
		if ((order[i] & legs) == order[i] && leg_kept(f, order[i])) {
			if (n < CHECK_MAX_ROWS)
				rows[n] = (struct row){ s, order[i] };
			n++;
		}
	return n;
}

static const char *leg_name(const struct scenario *s, unsigned leg)
{
	static const char *const names[] = {
		"synthetic, equal chunks",
		"file, equal chunks",
		"synthetic, unequal chunks",
		"file, unequal chunks",
		"synthetic, equal chunks, huge tmpfs",
		"file, equal chunks, huge tmpfs",
		"synthetic, unequal chunks, huge tmpfs",
		"file, unequal chunks, huge tmpfs",
	};

	if (s->reads)
		return leg & LEG_HUGE ? "huge tmpfs" : "4 KiB pages";
	return names[leg & 7];
}

static void list(void)
{
	for (int i = 0; i < nscenarios; i++)
		if (scenarios[i]->run)
			printf("%-4s %s\n", scenarios[i]->id,
			       scenarios[i]->title);
}

/* Fits the user's faults to each scenario. One a scenario named on the
 * command line cannot fire is refused; run as part of the whole gate, a
 * scenario that cannot fire them runs without. -1 with err set. */
static int fit_faults(const struct row *rows, int n, int named, int sim,
		      const struct fault_plan *user, struct fault_plan *fitted,
		      char *err, size_t errn)
{
	int fits = 0;

	for (int i = 0; i < n; i++) {
		uint32_t can = sim ? sim_gate_can_fire(rows[i].s) :
			       rows[i].s->no_seam ? 0 :
						    FAULT_UNTRACED;

		fitted[i] = *user;
		fitted[i].swarm &= can;
		if (!user->on)
			continue;
		if (fault_plan_fit(&fitted[i], can, rows[i].s->id, err, errn) ==
		    0) {
			fits++;
		} else if (named) {
			return -1;
		} else {
			memset(&fitted[i], 0, sizeof(fitted[i]));
		}
	}
	return user->on && !fits ? -1 : 0;
}

static void run_one(const struct scenario *s, const struct run_opts *opts,
		    uint64_t sim_schedules, const struct sim_gate_part *part,
		    struct scen_result *res)
{
	struct run_opts o = *opts;
	struct fault_seam *fs = NULL;
	struct cg_scope scope;
	uint64_t fired[FP_COUNT];
	char err[512];
	double t0 = mono_now();
	int rc = 0;

	memset(res, 0, sizeof(*res));
	res->id = s->id;
	snprintf(res->backing, sizeof(res->backing), "%s",
		 o.leg & LEG_FILE ? "file" : "synthetic");
	snprintf(res->chunks, sizeof(res->chunks), "%s%s",
		 o.leg & LEG_UNEQUAL ? "unequal" : "equal",
		 o.leg & LEG_HUGE ? "+huge" : "");
	if (sim_schedules) {
		rc = sim_gate_run(s, &o, sim_schedules, part, res);
	} else if (!(fs = fault_seam_new(&resid_seam_linux, o.faults, o.seed,
					 NULL, NULL))) {
		scen_fail(res, "out of memory for the fault seam");
		rc = -1;
	} else if (s->needs_cgroup && cg_scope_enter(&scope, s->id, SCOPE_LIMIT,
						     err, sizeof(err)) < 0) {
		scen_fail(res, "%s", err);
		rc = -1;
	} else {
		o.seam = fault_seam_ops(fs);
		rc = s->needs_cgroup ? scen_run_child(s, &o, STALL_S, res) :
				       scen_run_counted(s, &o, res);
		if (s->needs_cgroup && cg_scope_leave(&scope) < 0)
			scen_fail(res, "could not remove its cgroup %s",
				  scope.mem.dir);
	}
	if (fs) {
		fault_seam_fired_all(fs, fired);
		fault_report(o.faults, fired, res);
		fault_seam_free(fs);
	}
	res->seconds = mono_now() - t0;
	res->verdict = scen_verdict(res, rc == 0);
	res->passed = res->verdict == VERDICT_PASS;
}

/* The simulated campaign's report: what decides its schedules. */
static struct campaign *new_campaign(const struct row *rows, int n,
				     uint64_t schedules, uint64_t seed,
				     const struct fault_plan *user,
				     const struct shard *sh)
{
	char id[2400], bugs[24], spec[1024];
	size_t len;
	uint64_t size = 0;

	bugs_format(bugs_enabled(), bugs, sizeof(bugs));
	if (fault_plan_format(user, spec, sizeof(spec)) < 0)
		snprintf(spec, sizeof(spec), "?");
	len = (size_t)snprintf(id, sizeof(id),
			       "schedules=%llu bugs=%s "
			       "faults=%s scenarios=",
			       (unsigned long long)schedules, bugs,
			       spec[0] ? spec : "-");
	for (int i = 0; i < n; i++) {
		if (len < sizeof(id))
			len += (size_t)snprintf(id + len, sizeof(id) - len,
						"%s%s%s", i ? "," : "",
						rows[i].s->id,
						rows[i].leg & LEG_UNEQUAL ?
							"+unequal" :
							"");
		size += sim_gate_units(rows[i].s, schedules);
	}
	return campaign_new("check --sim", id, seed, size, "schedules", sh);
}

/* Everything one gate run is made of: its options, then its rows. */
struct check {
	struct run_opts o;
	struct leg_filter filter;
	const char *json, *junit, *report;
	struct sim_gate_part part;
	struct campaign *camp;
	uint64_t schedules, failures_per_row, seconds;
	int sim, profile, n, named, nrows, files, huge;
	int swarm; /* --swarm 1, --no-swarm 0; -1: on with --sim */
	const struct scenario *chosen[CHECK_MAX_ROWS];
	struct row rows[CHECK_MAX_ROWS];
	struct scen_result res[CHECK_MAX_ROWS];
	struct fault_plan user, fitted[CHECK_MAX_ROWS];
	struct probe p;
	char manifest[2048], dir[4096], huge_dir[4200];
};

/* An operand: adds the gate scenario named v. */
static int choose(void *dst, const char *where, const char *v, char *err,
		  size_t n)
{
	const struct scenario *s = scenario_find(v);
	struct check *k = dst;

	(void)where;
	if (!s)
		snprintf(err, n,
			 "unknown scenario '%s'; see residctl check "
			 "--list",
			 v);
	else if (!s->run)
		snprintf(err, n,
			 "%s runs only on the simulated kernel; use "
			 "residctl explore %s",
			 s->id, s->id);
	else if (k->n < CHECK_MAX_ROWS)
		k->chosen[k->n] = s;
	/* Counted past the limit, for make_rows's refusal. */
	k->n += s && s->run;
	return s && s->run ? 0 : -1;
}

static int parse(struct check *k, int argc, char **argv)
{
	static const char *const profiles[] = { "quick", "full", NULL };
	static const char *const backings[] = { "synthetic", "file", NULL };
	static const char *const chunks[] = { "equal", "unequal", NULL };
	static const char *const pages[] = { "4k", "huge", NULL };
	struct cli_opt opts[] = {
		{ "list", CLI_ACTION, NULL, .act = list,
		  .help = "list the gate scenarios" },
		CLI_SEED(&k->o.seed, "the seed of every run (default 1)"),
		{ "profile", CLI_CHOICE, &k->profile, .choices = profiles,
		  .help = "how long each scenario runs (default quick)" },
		CLI_JSON(&k->json, "write the rows and the kernel manifest"),
		{ "junit", CLI_TEXT, &k->junit, .arg = "FILE",
		  .help = "write the rows as JUnit XML" },
		{ "backing", CLI_CHOICE, &k->filter.file, .choices = backings,
		  .help = "keep only the legs on that backing" },
		{ "chunks", CLI_CHOICE, &k->filter.unequal, .choices = chunks,
		  .help = "keep only the legs on those chunks" },
		{ "pages", CLI_CHOICE, &k->filter.huge, .choices = pages,
		  .help = "keep only the legs on 4 KiB pages or huge folios" },
		{ "sim", CLI_FLAG, &k->sim,
		  .help = "run on the simulated kernel instead" },
		CLI_SCHEDULES(&k->schedules,
			      "schedules per scenario with "
			      "--sim (default 400 quick, 4000 full)"),
		{ "failures-per-row", CLI_U64, &k->failures_per_row, .arg = "N",
		  .min = 0, .max = 1000000000, .what = "--failures-per-row",
		  .help = "with --sim, a row "
			  "stops exploring after N failures (default 3, with --report "
			  "0; 0: never)" },
		{ "seconds", CLI_U64, &k->seconds, .arg = "S", .min = 1,
		  .max = 100000000, .what = "--seconds",
		  .help = "with --sim, "
			  "the whole campaign's time budget (default 1800)" },
		CLI_SHARD(&k->part.shard),
		CLI_REPORT(&k->report),
		CLI_BUG,
		CLI_FAULT(&k->user, "inject faults into every run"),
		{ "swarm", CLI_FLAG, &k->swarm,
		  .help = "draw each run's fault "
			  "points from its seed (default with --sim)" },
		{ "no-swarm", CLI_UNFLAG, &k->swarm,
		  .help = "inject only the --fault rules" },
		{ "chunk", CLI_BYTES, &k->o.storm_chunk, .arg = "BYTES",
		  .what = "chunk size", .min = 1, .max = 16 << 20,
		  .align = RESID_PAGE,
		  .help = "the storms' chunk size on "
			  "their equal legs (default 1M; 16 MiB region)" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "check",
		.synopsis = "[SCENARIO...]",
		.about = about,
		.opts = opts,
		.operands = INT_MAX,
		.operand = { .type = CLI_CALL, .dst = k, .parse = choose },
	};

	k->o.seed = 1;
	k->failures_per_row = UINT64_MAX; /* not given */
	k->filter = (struct leg_filter){ -1, -1, -1 };
	k->swarm = -1;
	return cli_parse(&spec, argc, argv);
}

/* The rows of the scenarios chosen, on the legs the filter keeps. 0, or
 * -1 after one line. */
static int make_rows(struct check *k)
{
	const struct leg_filter *f = &k->filter;

	if (k->n > CHECK_MAX_ROWS) {
		fprintf(stderr,
			"residctl check: %d scenarios named, more than "
			"the %d rows one check runs; name fewer\n",
			k->n, CHECK_MAX_ROWS);
		return -1;
	}
	k->named = k->n > 0;
	if (k->n == 0)
		for (int i = 0; i < nscenarios; i++)
			if (scenarios[i]->run)
				k->chosen[k->n++] = scenarios[i];
	/* The simulated kernel has no files: its legs are the chunks. */
	if (k->sim && f->file == 1) {
		fprintf(stderr,
			"residctl check: --backing file is for the real "
			"kernel; drop it with --sim\n");
		return -1;
	}
	for (int i = 0; i < k->n; i++) {
		if (k->sim && k->chosen[i]->real_only) {
			if (k->named) {
				fprintf(stderr,
					"residctl check: %s runs only "
					"on the real kernel; drop --sim\n",
					k->chosen[i]->id);
				return -1;
			}
			continue;
		}
		k->nrows = add_rows(k->chosen[i],
				    k->sim ? sim_gate_legs(k->chosen[i]) :
					     k->chosen[i]->legs,
				    f, k->rows, k->nrows);
	}
	if (k->nrows > CHECK_MAX_ROWS) {
		fprintf(stderr,
			"residctl check: %d rows (a scenario on a leg) "
			"asked for, more than the %d one check runs; name fewer "
			"scenarios or keep fewer legs (--backing, --chunks, "
			"--pages)\n",
			k->nrows, CHECK_MAX_ROWS);
		return -1;
	}
	if (!k->nrows) {
		fprintf(stderr,
			"residctl check: no leg of the scenarios named "
			"is %s%s%s%s%s; see residctl check --help for which "
			"scenarios have file, unequal and huge legs\n",
			f->file < 0 ? "" :
			f->file     ? "file-backed" :
				      "synthetic",
			f->file >= 0 && f->unequal >= 0 ? " with " : "",
			f->unequal < 0 ? "" :
			f->unequal     ? "unequal chunks" :
					 "equal chunks",
			f->huge >= 0 && (f->file >= 0 || f->unequal >= 0) ?
				", " :
				"",
			f->huge < 0 ? "" :
			f->huge     ? "on huge folios" :
				      "on 4 KiB pages");
		return -1;
	}
	return 0;
}

/* Drops the huge legs where this kernel cannot run them. */
static void drop_huge(struct check *k)
{
	int kept = 0;

	for (int i = 0; i < k->nrows; i++)
		k->huge += !!(k->rows[i].leg & LEG_HUGE);
	if (!k->huge || k->sim || k->p.huge_tmpfs)
		return;
	for (int i = 0; i < k->nrows; i++)
		if (!(k->rows[i].leg & LEG_HUGE)) {
			k->fitted[kept] = k->fitted[i];
			k->rows[kept++] = k->rows[i];
		}
	k->nrows = kept;
	k->huge = 0;
	printf("residctl check: the huge legs are n/a here: %s\n",
	       k->p.huge_why);
}

/* The run the options describe: its rows, their faults, the kernel's
 * manifest, the campaign report. 0, or -1 after one line. */
static int build(struct check *k)
{
	char err[1024];

	k->o.profile = k->profile ? PROFILE_FULL : PROFILE_QUICK;
	if (make_rows(k) < 0)
		return -1;
	if ((k->schedules || k->seconds || k->failures_per_row != UINT64_MAX) &&
	    !k->sim) {
		fprintf(stderr, "residctl check: --%s goes with --sim\n",
			k->schedules ? "schedules" :
			k->seconds   ? "seconds" :
				       "failures-per-row");
		return -1;
	}
	/* merge wants every unit of a report run: no cap unless asked. */
	if (k->failures_per_row == UINT64_MAX)
		k->failures_per_row = k->report ? 0 : SIM_GATE_FAILURES_PER_ROW;
	if (!k->seconds)
		k->seconds = SIM_GATE_SECONDS;
	k->part.failures_per_row = k->failures_per_row;
	if ((k->part.shard.n || k->report) && !k->sim) {
		fprintf(stderr,
			"residctl check: --%s goes with --sim: the real "
			"gate is one run per scenario\n",
			k->report && !k->part.shard.n ? "report" : "shard");
		return -1;
	}
	if (k->sim && !k->schedules)
		k->schedules = k->o.profile == PROFILE_FULL ? 4000 : 400;
	if (k->swarm == 1 || (k->swarm < 0 && k->sim))
		k->user.swarm = FAULT_UNTRACED;
	else if (!k->swarm)
		k->user.swarm = 0;
	if (fit_faults(k->rows, k->nrows, k->named, k->sim, &k->user, k->fitted,
		       err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl check: %s\n", err);
		return -1;
	}
	probe_run(&k->p);
	if (!k->sim && !k->p.can_run) {
		fprintf(stderr, "residctl check: can the pager run here? %s\n",
			k->p.verdict);
		return -1;
	}
	drop_huge(k);
	for (int i = 0; i < k->nrows; i++)
		k->files += !!(k->rows[i].leg & (LEG_FILE | LEG_HUGE));
	probe_json(&k->p, k->manifest, sizeof(k->manifest));
	if (k->report &&
	    !(k->camp = new_campaign(k->rows, k->nrows, k->schedules, k->o.seed,
				     &k->user, &k->part.shard))) {
		fprintf(stderr, "residctl check: out of memory\n");
		return -1;
	}
	return 0;
}

/* The directories the file and huge legs write in; -1 after one line. */
static int make_dirs(struct check *k)
{
	char err[1024];

	if (k->files &&
	    content_dir_make(k->dir, sizeof(k->dir), err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl check: %s\n", err);
		return -1;
	}
	k->o.file_dir = k->dir;
	snprintf(k->huge_dir, sizeof(k->huge_dir), "%s/huge", k->dir);
	if (k->huge && mkdir(k->huge_dir, 0700) < 0) {
		fprintf(stderr, "residctl check: cannot make %s: %s\n",
			k->huge_dir, strerror(errno));
		content_dir_remove(k->dir);
		return -1;
	}
	k->o.huge_dir = k->huge_dir;
	return 0;
}

/* Runs every row; -1 when its files could not be made or removed. */
static int run_rows(struct check *k)
{
	printf("residctl check: %s, seed %" PRIu64 ", profile %s\n",
	       k->sim ? "simulated kernel" : k->p.release, k->o.seed,
	       k->o.profile == PROFILE_FULL ? "full" : "quick");
	if (shard_split(&k->part.shard))
		printf("  shard %" PRIu64 "/%" PRIu64 ": schedule i runs when "
		       "i mod %" PRIu64 " = %" PRIu64 "\n",
		       k->part.shard.k, k->part.shard.n, k->part.shard.n,
		       k->part.shard.k - 1);
	if (make_dirs(k) < 0)
		return -1;
	if (k->sim)
		k->part.deadline = mono_now() + (double)k->seconds;
	for (int i = 0; i < k->nrows; i++) {
		const struct row *r = &k->rows[i];
		uint64_t units = k->sim ? sim_gate_units(r->s, k->schedules) :
					  0;

		printf("  running %s (%s%s%s): %s ...\n", r->s->id,
		       r->s->reads ? r->s->reads : "", r->s->reads ? ", " : "",
		       leg_name(r->s, r->leg), r->s->title);
		fflush(stdout);
		k->o.faults = &k->fitted[i];
		k->o.leg = r->leg;
		if (k->camp) {
			char name[64];

			snprintf(name, sizeof(name), "%s%s", r->s->id,
				 r->leg & LEG_UNEQUAL ? "+unequal" : "");
			k->part.row = campaign_row(k->camp, name, units);
		}
		run_one(r->s, &k->o, k->sim ? k->schedules : 0, &k->part,
			&k->res[i]);
		k->part.unit0 += units;
	}
	/* Every scenario's file is gone, even one a killed child left. */
	if (k->huge && rmdir(k->huge_dir) < 0)
		fprintf(stderr, "residctl check: cannot remove %s: %s\n",
			k->huge_dir, strerror(errno));
	return k->files && content_dir_remove(k->dir) < 0 ? -1 : 0;
}

/* The table, the files asked for, and the line that reruns a failure. */
static int report(struct check *k, double seconds)
{
	struct coverage cov = { 0 };

	/* The probe line is the campaign's (--sim); the gate's last line is
	 * its verdict. The JSON has the probes either way. */
	for (int i = 0; i < k->nrows; i++)
		coverage_merge(&cov, &k->res[i].cov);
	if (k->sim)
		coverage_line(stdout, "", &cov);
	report_table(stdout, k->res, k->nrows);
	if (k->json &&
	    report_json(k->json, k->res, k->nrows, k->manifest, k->o.seed) < 0)
		return 2;
	if (k->junit && report_junit(k->junit, k->res, k->nrows) < 0)
		return 2;
	if (k->camp) {
		int bad = campaign_write(k->camp, k->report, seconds);

		campaign_free(k->camp);
		if (bad)
			return 2;
	}
	int rc = report_exit(k->res, k->nrows);

	if (rc == 0)
		return 0;
	char spec[2048];

	if (fault_plan_format(&k->user, spec, sizeof(spec)) < 0)
		snprintf(spec, sizeof(spec), "...");
	printf("replay: residctl check %s--seed %" PRIu64
	       " --profile %s%s%s%s\n",
	       k->sim ? "--sim " : "", k->o.seed,
	       k->o.profile == PROFILE_FULL ? "full" : "quick",
	       k->sim && !k->user.swarm ? " --no-swarm" : "",
	       spec[0] ? " --fault " : "", spec);
	return rc;
}

/* One gate run on k, fresh for this call. */
static int check_gate(struct check *k, int argc, char **argv)
{
	int rc = parse(k, argc, argv);
	double t0;

	if (rc != CLI_RUN)
		return rc;
	if (build(k) < 0)
		return 2;
	t0 = mono_now();
	if (run_rows(k) < 0)
		return 2;
	return report(k, mono_now() - t0);
}

int cmd_check(int argc, char **argv)
{
	/* On the heap (its rows' results are large), per call: a second
	 * call in one process starts from nothing of the first. */
	struct check *k = calloc(1, sizeof(*k));
	int rc;

	if (!k) {
		fprintf(stderr, "residctl check: out of memory\n");
		return 2;
	}
	rc = check_gate(k, argc, argv);
	free(k);
	return rc;
}
