/* residctl check: the gate. Each scenario runs in its own child memory cgroup
 * (limit set, swap forbidden), which is removed afterwards, also when the
 * scenario fails. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bugs.h"
#include "campaign.h"
#include "cgroup_scope.h"
#include "cli.h"
#include "commands.h"
#include "content_file.h"
#include "fault.h"
#include "probe.h"
#include "report.h"
#include "scenario_child.h"
#include "sim_gate.h"
#include "workload.h"

#define SCOPE_LIMIT (512ull << 20)
/* A scenario that runs the pager in this process is killed after this
 * long without a byte checked. */
#define STALL_S 30

static const char usage[] =
	"usage: residctl check [SCENARIO...] [--seed N] [--profile quick|full]\n"
	"                      [--json FILE] [--junit FILE] [--list]\n"
	"                      [--sim [--schedules N] [--shard K/N] [--report FILE]]\n"
	"                      [--bug N[,N..]]\n"
	"                      [--fault NAME=P | --fault NAME@N ...] [--chunk B]\n"
	"                      [--swarm | --no-swarm]\n"
	"                      [--backing synthetic|file] [--chunks equal|unequal]\n"
	"                      [--pages 4k|huge]\n"
	"  Runs the gate scenarios (all when none is named) on the real kernel\n"
	"  with eager reconcile, each in its own memory cgroup, and prints one\n"
	"  row per scenario and leg: verdict, the backing it read (synthetic,\n"
	"  file O_DIRECT, or file buffered where O_DIRECT was refused), its\n"
	"  chunks (equal or unequal), checks, mismatches, counters, seconds.\n"
	"  T-1, T-2, T-3, T-6 and T-7 also read a real file of the content\n"
	"  whose size is not a page multiple (written to a directory under\n"
	"  $TMPDIR or /tmp, removed afterwards); T-1 and T-3 also run on a\n"
	"  table of unequal chunks. T-1, T-2, T-3, T-6 and T-7 also run with\n"
	"  huge folios in B (a tmpfs mounted huge=always in the child's own\n"
	"  mount namespace; chunks of the folio size), T-1 also on unequal\n"
	"  chunks there, which must keep 4 KiB pages; n/a where the kernel has\n"
	"  no THP. --backing, --chunks and --pages keep only those legs.\n"
	"  Exit 0 only when every scenario passed; 1 when one failed; 2 on bad\n"
	"  input, when the scenarios cannot run here (see residctl probe), or\n"
	"  when a criterion could not be judged here (an UNKNOWN row).\n"
	"  --sim runs them on the simulated kernel instead, N schedules each\n"
	"  (default 400 quick, 4000 full), half random walk, half PCT depth 3;\n"
	"  a failure prints its shrunk schedule's replay line. --shard K/N runs\n"
	"  only the schedules i (counted over the scenarios in order) with\n"
	"  i mod N = K - 1 (K from 1); --report writes the campaign report, every\n"
	"  failing schedule with its replay line, for residctl merge.\n"
	"  --bug switches a bug back on (1..10, all; RESIDCTL_BUGS\n"
	"  too; see residctl repro --list). --fault injects faults into every\n"
	"  run, real or --sim, as in residctl storm (NAME@N+M.. for several\n"
	"  calls; RESIDCTL_FAULTS too); the row counts how many fired per\n"
	"  point. A fault a named scenario cannot fire (any in T-5) is refused.\n"
	"  --chunk sets the storms' chunk size (default 1M; 16 MiB region) on\n"
	"  their equal legs. --swarm (the default with --sim; --no-swarm turns\n"
	"  it off; --fault swarm too) lets each schedule or storm draw from its\n"
	"  seed which fault points are on, at which probability, and a storm\n"
	"  its chunk size; a --fault rule for a point wins over the draw.\n";

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
 * then the huge leg with each. */
static int add_rows(const struct scenario *s, unsigned legs,
		    const struct leg_filter *f, struct row *rows, int n)
{
	static const unsigned order[] = { 0, LEG_FILE, LEG_UNEQUAL,
		LEG_FILE | LEG_UNEQUAL, LEG_HUGE, LEG_HUGE | LEG_FILE,
		LEG_HUGE | LEG_UNEQUAL };

	for (int i = 0; i < 7 && n < 64; i++)
		if ((order[i] & legs) == order[i] && leg_kept(f, order[i]))
			rows[n++] = (struct row){ s, order[i] };
	return n;
}

static const char *leg_name(unsigned leg)
{
	static const char *const names[] = {
		"synthetic, equal chunks", "file, equal chunks",
		"synthetic, unequal chunks", "file, unequal chunks",
		"synthetic, equal chunks, huge tmpfs",
		"file, equal chunks, huge tmpfs",
		"synthetic, unequal chunks, huge tmpfs",
		"file, unequal chunks, huge tmpfs",
	};

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
static int fit_faults(const struct row *rows, int n, int named,
		      int sim, const struct fault_plan *user,
		      struct fault_plan *fitted, char *err, size_t errn)
{
	int fits = 0;

	for (int i = 0; i < n; i++) {
		uint32_t can = sim ? sim_gate_can_fire(rows[i].s) :
			rows[i].s->no_seam ? 0 : FAULT_ALL;

		fitted[i] = *user;
		fitted[i].swarm &= can;
		if (!user->on)
			continue;
		if (fault_plan_fit(&fitted[i], can, rows[i].s->id, err,
				   errn) == 0) {
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
	double t0 = wl_now();
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
	} else if (s->needs_cgroup &&
	    cg_scope_enter(&scope, s->id, SCOPE_LIMIT, err, sizeof(err)) < 0) {
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
	res->seconds = wl_now() - t0;
	res->verdict = scen_verdict(res, rc == 0);
	res->passed = res->verdict == VERDICT_PASS;
}

/* Adds the gate scenario named v; -1 after one line when there is none. */
static int choose(const char *v, const struct scenario **chosen, int *n)
{
	const struct scenario *s = scenario_find(v);

	if (!s) {
		fprintf(stderr, "residctl check: unknown scenario '%s'; see "
			"residctl check --list\n", v);
		return -1;
	}
	if (!s->run) {
		fprintf(stderr, "residctl check: %s runs only on the simulated "
			"kernel; use residctl explore %s\n", s->id, s->id);
		return -1;
	}
	if (*n < 64)
		chosen[(*n)++] = s;
	return 0;
}

/* The simulated campaign's report: what decides its schedules. */
static struct campaign *new_campaign(const struct row *rows,
				     int n, uint64_t schedules, uint64_t seed,
				     const struct fault_plan *user,
				     const struct shard *sh)
{
	char id[2400], bugs[24], spec[1024];
	size_t len;
	uint64_t size = 0;

	bugs_format(bugs_enabled(), bugs, sizeof(bugs));
	if (fault_plan_format(user, spec, sizeof(spec)) < 0)
		snprintf(spec, sizeof(spec), "?");
	len = (size_t)snprintf(id, sizeof(id), "schedules=%llu bugs=%s "
			       "faults=%s scenarios=",
			       (unsigned long long)schedules, bugs,
			       spec[0] ? spec : "-");
	for (int i = 0; i < n; i++) {
		if (len < sizeof(id))
			len += (size_t)snprintf(id + len, sizeof(id) - len,
						"%s%s%s", i ? "," : "",
						rows[i].s->id, rows[i].leg &
						LEG_UNEQUAL ? "+unequal" : "");
		size += sim_gate_units(rows[i].s, schedules);
	}
	return campaign_new("check --sim", id, seed, size, "schedules", sh);
}

/* "synthetic"/"file" or "equal"/"unequal" to 0 or 1; -1 after one line. */
static int leg_option(const char *opt, const char *v, const char *no,
		      const char *yes)
{
	if (!strcmp(v, no))
		return 0;
	if (!strcmp(v, yes))
		return 1;
	fprintf(stderr, "residctl check: unknown --%s '%s'; use %s or %s\n",
		opt, v, no, yes);
	return -1;
}

int cmd_check(int argc, char **argv)
{
	const struct scenario *chosen[64];
	static struct row rows[64];
	static struct scen_result res[64];
	static struct fault_plan user, fitted[64];
	struct run_opts o = { .seed = 1, .profile = PROFILE_QUICK };
	struct leg_filter filter = { -1, -1, -1 };
	const char *json = NULL, *junit = NULL, *report = NULL;
	struct sim_gate_part part = { 0 };
	struct campaign *camp = NULL;
	int n = 0, nrows = 0, passed = 0, sim = 0, named, files = 0, huge = 0;
	int swarm = -1; /* --swarm 1, --no-swarm 0; -1: on with --sim */
	char dir[4096] = "", huge_dir[4200] = "";
	uint64_t schedules = 0;
	char err[1024];

	if (fault_plan_option(&user, "check", NULL) < 0)
		return 2;

	static const struct option opts[] = {
		CLI_HELP_OPTION,
		CLI_FLAG("list", 'l'),
		CLI_FLAG("sim", 'S'),
		CLI_FLAG("swarm", 'w'),
		CLI_FLAG("no-swarm", 'W'),
		CLI_VALUE("schedules", 'n'),
		CLI_VALUE("bug", 'b'),
		CLI_VALUE("chunk", 'c'),
		CLI_VALUE("fault", 'f'),
		CLI_VALUE("seed", 's'),
		CLI_VALUE("profile", 'p'),
		CLI_VALUE("json", 'j'),
		CLI_VALUE("junit", 'J'),
		CLI_VALUE("shard", 'k'),
		CLI_VALUE("report", 'r'),
		CLI_VALUE("backing", 'B'),
		CLI_VALUE("chunks", 'C'),
		CLI_VALUE("pages", 'P'),
		{ 0 },
	};
	struct cli c = { .cmd = "check", .usage = usage, .argc = argc,
			 .argv = argv, .opts = opts, .operands = 64 };
	const char *v;
	int opt;

	while ((opt = cli_next(&c)) != CLI_END) {
		v = c.arg;
		switch (opt) {
		case CLI_EXIT:
			return c.status;
		case 'l':
			list();
			return 0;
		case 'S':
			sim = 1;
			break;
		case 'w':
		case 'W':
			swarm = opt == 'w';
			break;
		case 'n':
			if (cli_u64(v, &schedules) || !schedules) {
				fprintf(stderr, "residctl check: bad schedule "
					"count '%s'; give a number >= 1\n", v);
				return 2;
			}
			break;
		case 'b':
			if (bugs_option("check", v))
				return 2;
			break;
		case 'c':
			if (cli_bytes(v, &o.storm_chunk) || !o.storm_chunk ||
			    o.storm_chunk % RESID_PAGE ||
			    o.storm_chunk > (16ull << 20)) {
				fprintf(stderr, "residctl check: bad chunk size "
					"'%s'; give a multiple of 4K up to 16M\n", v);
				return 2;
			}
			break;
		case 'f':
			if (fault_plan_option(&user, "check", v) < 0)
				return 2;
			break;
		case 's':
			if (cli_u64(v, &o.seed)) {
				fprintf(stderr, "residctl check: bad seed '%s'; "
					"give a decimal number\n", v);
				return 2;
			}
			break;
		case 'p':
			if (!strcmp(v, "quick"))
				o.profile = PROFILE_QUICK;
			else if (!strcmp(v, "full"))
				o.profile = PROFILE_FULL;
			else {
				fprintf(stderr, "residctl check: unknown profile "
					"'%s'; use quick or full\n", v);
				return 2;
			}
			break;
		case 'j':
			json = v;
			break;
		case 'J':
			junit = v;
			break;
		case 'k':
			if (shard_parse("check", v, &part.shard))
				return 2;
			break;
		case 'r':
			report = v;
			break;
		case 'B':
			if ((filter.file = leg_option("backing", v, "synthetic",
						      "file")) < 0)
				return 2;
			break;
		case 'C':
			if ((filter.unequal = leg_option("chunks", v, "equal",
							 "unequal")) < 0)
				return 2;
			break;
		case 'P':
			if ((filter.huge = leg_option("pages", v, "4k",
						      "huge")) < 0)
				return 2;
			break;
		case CLI_OPERAND:
			if (choose(v, chosen, &n) < 0)
				return 2;
			break;
		}
	}
	named = n > 0;
	if (n == 0)
		for (int i = 0; i < nscenarios; i++)
			if (scenarios[i]->run)
				chosen[n++] = scenarios[i];
	/* The simulated kernel has no files: its legs are the chunks. */
	if (sim && filter.file == 1) {
		fprintf(stderr, "residctl check: --backing file is for the real "
			"kernel; drop it with --sim\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		nrows = sim ? add_rows(chosen[i], sim_gate_legs(chosen[i]),
				       &filter, rows, nrows) :
			add_rows(chosen[i], chosen[i]->legs, &filter, rows,
				 nrows);
	if (!nrows) {
		fprintf(stderr, "residctl check: no leg of the scenarios named "
			"is %s%s%s%s%s; see residctl check --help for which "
			"scenarios have file, unequal and huge legs\n",
			filter.file < 0 ? "" : filter.file ? "file-backed" :
			"synthetic", filter.file >= 0 && filter.unequal >= 0 ?
			" with " : "", filter.unequal < 0 ? "" :
			filter.unequal ? "unequal chunks" : "equal chunks",
			filter.huge >= 0 && (filter.file >= 0 ||
					     filter.unequal >= 0) ? ", " : "",
			filter.huge < 0 ? "" : filter.huge ? "on huge folios" :
			"on 4 KiB pages");
		return 2;
	}

	struct probe p;
	char manifest[2048];

	if (schedules && !sim) {
		fprintf(stderr, "residctl check: --schedules goes with --sim\n");
		return 2;
	}
	if ((part.shard.n || report) && !sim) {
		fprintf(stderr, "residctl check: --%s goes with --sim: the real "
			"gate is one run per scenario\n", report && !part.shard.n ?
			"report" : "shard");
		return 2;
	}
	if (sim && !schedules)
		schedules = o.profile == PROFILE_FULL ? 4000 : 400;
	if (swarm == 1 || (swarm < 0 && sim))
		user.swarm = FAULT_ALL;
	else if (!swarm)
		user.swarm = 0;
	if (fit_faults(rows, nrows, named, sim, &user, fitted, err,
		       sizeof(err)) < 0) {
		fprintf(stderr, "residctl check: %s\n", err);
		return 2;
	}
	probe_run(&p);
	if (!sim && !p.can_run) {
		fprintf(stderr, "residctl check: can the pager run here? %s\n",
			p.verdict);
		return 2;
	}
	for (int i = 0; i < nrows; i++)
		huge += !!(rows[i].leg & LEG_HUGE);
	if (huge && !sim && !p.huge_tmpfs) {
		int kept = 0;

		for (int i = 0; i < nrows; i++)
			if (!(rows[i].leg & LEG_HUGE)) {
				fitted[kept] = fitted[i];
				rows[kept++] = rows[i];
			}
		nrows = kept;
		huge = 0;
		printf("residctl check: the huge legs are n/a here: %s\n",
		       p.huge_why);
	}
	for (int i = 0; i < nrows; i++)
		files += !!(rows[i].leg & (LEG_FILE | LEG_HUGE));
	probe_json(&p, manifest, sizeof(manifest));
	if (report && !(camp = new_campaign(rows, nrows, schedules, o.seed,
					    &user, &part.shard))) {
		fprintf(stderr, "residctl check: out of memory\n");
		return 2;
	}
	printf("residctl check: %s, seed %" PRIu64 ", profile %s\n",
	       sim ? "simulated kernel" : p.release, o.seed,
	       o.profile == PROFILE_FULL ? "full" : "quick");
	if (shard_split(&part.shard))
		printf("  shard %" PRIu64 "/%" PRIu64 ": schedule i runs when "
		       "i mod %" PRIu64 " = %" PRIu64 "\n", part.shard.k,
		       part.shard.n, part.shard.n, part.shard.k - 1);
	double t0 = wl_now();

	if (files && content_dir_make(dir, sizeof(dir), err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl check: %s\n", err);
		return 2;
	}
	o.file_dir = dir;
	snprintf(huge_dir, sizeof(huge_dir), "%s/huge", dir);
	if (huge && mkdir(huge_dir, 0700) < 0) {
		fprintf(stderr, "residctl check: cannot make %s: %s\n",
			huge_dir, strerror(errno));
		content_dir_remove(dir);
		return 2;
	}
	o.huge_dir = huge_dir;
	for (int i = 0; i < nrows; i++) {
		uint64_t units = sim ? sim_gate_units(rows[i].s, schedules) : 0;

		printf("  running %s (%s): %s ...\n", rows[i].s->id,
		       leg_name(rows[i].leg), rows[i].s->title);
		fflush(stdout);
		o.faults = &fitted[i];
		o.leg = rows[i].leg;
		if (camp) {
			char name[64];

			snprintf(name, sizeof(name), "%s%s", rows[i].s->id,
				 rows[i].leg & LEG_UNEQUAL ? "+unequal" : "");
			part.row = campaign_row(camp, name, units);
		}
		run_one(rows[i].s, &o, sim ? schedules : 0, &part, &res[i]);
		part.unit0 += units;
		passed += res[i].passed;
	}
	/* Every scenario's file is gone, even one a killed child left. */
	if (huge && rmdir(huge_dir) < 0)
		fprintf(stderr, "residctl check: cannot remove %s: %s\n",
			huge_dir, strerror(errno));
	if (files && content_dir_remove(dir) < 0)
		return 2;
	report_table(stdout, res, nrows);
	struct coverage cov = { 0 };

	for (int i = 0; i < nrows; i++)
		coverage_merge(&cov, &res[i].cov);
	coverage_line(stdout, "", &cov);
	if (json && report_json(json, res, nrows, manifest, o.seed) < 0)
		return 2;
	if (junit && report_junit(junit, res, nrows) < 0)
		return 2;
	if (camp) {
		int bad = campaign_write(camp, report, wl_now() - t0);

		campaign_free(camp);
		if (bad)
			return 2;
	}
	if (passed != nrows) {
		char spec[2048];

		if (fault_plan_format(&user, spec, sizeof(spec)) < 0)
			snprintf(spec, sizeof(spec), "...");
		printf("replay: residctl check %s--seed %" PRIu64 " --profile "
		       "%s%s%s%s\n", sim ? "--sim " : "", o.seed,
		       o.profile == PROFILE_FULL ? "full" : "quick",
		       sim && !user.swarm ? " --no-swarm" : "",
		       spec[0] ? " --fault " : "", spec);
	}
	return report_exit(res, nrows);
}
