/* residctl check: the gate. Each scenario runs in its own child memory cgroup
 * (limit set, swap forbidden), which is removed afterwards, also when the
 * scenario fails. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bugs.h"
#include "campaign.h"
#include "cgroup_scope.h"
#include "cli.h"
#include "commands.h"
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
	"  Runs the gate scenarios (all when none is named) on the real kernel\n"
	"  with eager reconcile, each in its own memory cgroup, and prints one\n"
	"  row per scenario: verdict, checks, mismatches, counters, seconds.\n"
	"  Exit 0 only when every scenario passed; 1 when one failed; 2 on bad\n"
	"  input or when the scenarios cannot run here (see residctl probe).\n"
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
	"  --chunk sets the storms' chunk size (default 1M; 16 MiB region).\n";

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
static int fit_faults(const struct scenario *const *chosen, int n, int named,
		      int sim, const struct fault_plan *user,
		      struct fault_plan *fitted, char *err, size_t errn)
{
	int fits = 0;

	for (int i = 0; i < n; i++) {
		uint32_t can = sim ? sim_gate_can_fire(chosen[i]) :
			chosen[i]->no_seam ? 0 : FAULT_ALL;

		fitted[i] = *user;
		if (!user->on)
			continue;
		if (fault_plan_fit(&fitted[i], can, chosen[i]->id, err,
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
	res->passed = rc == 0 && !res->failed && res->mismatches == 0;
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
static struct campaign *new_campaign(const struct scenario *const *chosen,
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
						"%s%s", i ? "," : "",
						chosen[i]->id);
		size += sim_gate_units(chosen[i], schedules);
	}
	return campaign_new("check --sim", id, seed, size, "schedules", sh);
}

int cmd_check(int argc, char **argv)
{
	const struct scenario *chosen[64];
	static struct scen_result res[64];
	static struct fault_plan user, fitted[64];
	struct run_opts o = { .seed = 1, .profile = PROFILE_QUICK };
	const char *json = NULL, *junit = NULL, *report = NULL;
	struct sim_gate_part part = { 0 };
	struct campaign *camp = NULL;
	int n = 0, passed = 0, sim = 0, named;
	uint64_t schedules = 0;
	char err[1024];

	if (fault_plan_env(&user, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl check: %s\n", err);
		return 2;
	}

	static const struct option opts[] = {
		CLI_HELP_OPTION,
		CLI_FLAG("list", 'l'),
		CLI_FLAG("sim", 'S'),
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
			if (fault_plan_add(&user, "fault", v, err,
					   sizeof(err)) < 0) {
				fprintf(stderr, "residctl check: %s\n", err);
				return 2;
			}
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
	if (fit_faults(chosen, n, named, sim, &user, fitted, err,
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
	probe_json(&p, manifest, sizeof(manifest));
	if (report && !(camp = new_campaign(chosen, n, schedules, o.seed,
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

	for (int i = 0; i < n; i++) {
		printf("  running %s: %s ...\n", chosen[i]->id, chosen[i]->title);
		fflush(stdout);
		o.faults = &fitted[i];
		if (camp)
			part.row = campaign_row(camp, chosen[i]->id,
				sim_gate_units(chosen[i], schedules));
		run_one(chosen[i], &o, sim ? schedules : 0, &part, &res[i]);
		part.unit0 += sim ? sim_gate_units(chosen[i], schedules) : 0;
		passed += res[i].passed;
	}
	report_table(stdout, res, n);
	struct coverage cov = { 0 };

	for (int i = 0; i < n; i++)
		coverage_merge(&cov, &res[i].cov);
	coverage_line(stdout, "", &cov);
	if (json && report_json(json, res, n, manifest, o.seed) < 0)
		return 2;
	if (junit && report_junit(junit, res, n) < 0)
		return 2;
	if (camp) {
		int bad = campaign_write(camp, report, wl_now() - t0);

		campaign_free(camp);
		if (bad)
			return 2;
	}
	if (passed != n) {
		char spec[2048];

		if (fault_plan_format(&user, spec, sizeof(spec)) < 0)
			snprintf(spec, sizeof(spec), "...");
		printf("replay: residctl check %s--seed %" PRIu64 " --profile "
		       "%s%s%s\n", sim ? "--sim " : "", o.seed,
		       o.profile == PROFILE_FULL ? "full" : "quick",
		       spec[0] ? " --fault " : "", spec);
	}
	return passed == n ? 0 : 1;
}
