/* residctl explore: schedules of a scenario under the simulated kernel and
 * the deterministic scheduler (design.md §4). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "campaign/report.h"
#include "fault/bugs.h"
#include "sim/explore.h"
#include "sim/explore_report.h"
#include "workload/workload.h"

static const char about[] =
	"  Runs N schedules of SCENARIO on the simulated kernel, each chosen by\n"
	"  the strategy from seed S + i; dfs:P searches every schedule with at\n"
	"  most P preemptions (tiny scenarios; N caps it). Prints schedules\n"
	"  run, distinct interleavings (lock-acquisition orders), failures by\n"
	"  oracle, and for the first failure its shrunk schedule's preemption\n"
	"  count and the line `residctl replay` reproduces it with. The first\n"
	"  failure is printed on stderr with its unshrunk line the moment it is\n"
	"  found; shrinking stops after --shrink-seconds, 20,000,000 steps,\n"
	"  20,000 runs or when the process grew by --shrink-mb, and the best\n"
	"  line so far stands. A schedule 200,000 steps without progress (no\n"
	"  byte read, no chunk state change, no thread ended), or past\n"
	"  1,000,000 steps or 20 s of CPU time, ends with no-progress.\n"
	"  --max-failures N stops exploring after N failures (default: every\n"
	"  schedule runs); --seconds S stops it after S seconds (default\n"
	"  1800), and the shrink with it. Memory does not grow with the steps\n"
	"  runs take or the failures found (docs/simulation.md).\n"
	"  --fault adds faults to the scenario's own (T-7 fails and shortens\n"
	"  half its reads), decided by each schedule's decision stream; a fault\n"
	"  the scenario cannot fire is refused. Shrinking drops faults too.\n"
	"  --shard splits random and pct only. --chunks unequal runs every\n"
	"  schedule on a table of unequal chunks (1 to 4 pages, the last ending\n"
	"  unaligned; check --sim runs both). Exit 0 with no failure, 1 with\n"
	"  one, 2 on bad input or when --seconds ended it with no failure.\n";

static int write_json(const char *path, const struct explore_opts *o,
		      const struct explore_result *r)
{
	char tmp[4200];
	FILE *f = open_tmp(path, tmp, sizeof(tmp));

	if (!f)
		return -1;
	fprintf(f, "{\n  \"scenario\": ");
	json_str(f, o->p->id);
	fprintf(f, ",\n  \"chunks\": \"%s\"", o->unequal ? "unequal" : "equal");
	fprintf(f,
		",\n  \"seed\": %" PRIu64 ",\n  \"schedules\": %" PRIu64
		",\n  \"distinct\": %" PRIu64 ",\n  \"failures\": %" PRIu64
		",\n  \"code_probes\": ",
		o->seed, r->schedules, r->distinct, r->failures);
	coverage_json(f, &r->cov);
	fputs("\n}\n", f);
	return close_tmp(f, tmp, path);
}

static int write_report(const char *path, const struct explore_opts *o,
			const struct explore_result *r, struct campaign *c,
			struct explore_row *er)
{
	explore_row(er, o, r);
	return campaign_write(c, path, r->seconds);
}

/* What decides the campaign's schedules, for merge to compare shards by. */
static struct campaign *new_campaign(const struct explore_opts *o,
				     const char *strategy)
{
	char id[1200], bugs[24], spec[1024];

	bugs_format(o->bugs, bugs, sizeof(bugs));
	if (fault_plan_format(o->faults, spec, sizeof(spec)) < 0)
		snprintf(spec, sizeof(spec), "?");
	snprintf(id, sizeof(id), "%s%s strategy=%s bugs=%s faults=%s%s",
		 o->p->id, o->unequal ? "+unequal" : "", strategy, bugs,
		 spec[0] ? spec : "-", o->shrink ? "" : " no-shrink");
	return campaign_new("explore", id, o->seed, o->schedules, "schedules",
			    &o->shard);
}

static void list(void)
{
	for (int i = 0; i < nscenarios; i++)
		if (scenarios[i]->sim)
			printf("%-14s %s\n", scenarios[i]->id,
			       scenarios[i]->title);
}

/* The operand: the simulated scenario. */
static int scenario_opt(void *dst, const char *where, const char *v, char *err,
			size_t n)
{
	struct explore_opts *o = dst;

	(void)where;
	if ((o->p = simprog_find(v)))
		return 0;
	snprintf(err, n,
		 "no simulated scenario '%s'; see residctl explore "
		 "--list",
		 v);
	return -1;
}

/* What an explore campaign is made of, beside explore_opts. */
struct explore_args {
	struct explore_opts o;
	struct fault_plan user, faults;
	const char *json, *report, *strategy;
	uint64_t shrink_seconds, seconds;
};

static int strategy_opt(void *dst, const char *where, const char *v, char *err,
			size_t n)
{
	struct explore_args *a = dst;

	(void)where;
	if (!parse_strategy(v, &a->o.strategy, &a->o.depth)) {
		a->strategy = v;
		return 0;
	}
	snprintf(err, n,
		 "unknown strategy '%s'; use random, pct:D (D 1..9) "
		 "or dfs:P (P 0..9)",
		 v);
	return -1;
}

static int parse(struct explore_args *a, int argc, char **argv)
{
	static const char *const chunks[] = { "equal", "unequal", NULL };
	struct explore_opts *o = &a->o;
	struct cli_opt opts[] = {
		{ "list", CLI_ACTION, NULL, .act = list,
		  .help = "list the simulated scenarios" },
		{ "strategy", CLI_CALL, a, .parse = strategy_opt,
		  .arg = "random|pct:D|dfs:P",
		  .help = "how each schedule is "
			  "chosen (default pct:3)" },
		CLI_SCHEDULES(&o->schedules, "schedules to run (default 1000)"),
		CLI_FAULT(&a->user, "add faults to the scenario's own"),
		CLI_JSON(&a->json, "write the summary and the code probes hit "
				   "and missed"),
		CLI_SHARD(&o->shard),
		CLI_REPORT(&a->report),
		{ "chunks", CLI_CHOICE, &o->unequal, .choices = chunks,
		  .help = "the chunks of every schedule (default equal)" },
		CLI_SEED(&o->seed, "the first schedule's seed (default 1)"),
		CLI_BUG,
		{ "no-shrink", CLI_UNFLAG, &o->shrink,
		  .help = "print the first failure unshrunk" },
		{ "stop", CLI_FLAG, &o->stop_at_failure,
		  .help = "end the campaign at its first failure" },
		{ "shrink-seconds", CLI_U64, &a->shrink_seconds, .arg = "S",
		  .min = 1, .max = 1000000, .what = "--shrink-seconds",
		  .help = "stop shrinking after S seconds (default 20)" },
		{ "shrink-mb", CLI_U64, &o->budget.mb, .arg = "M", .min = 1,
		  .max = 1000000,
		  .help = "stop "
			  "shrinking when the process grew by M MiB (default 256)" },
		{ "max-failures", CLI_U64, &o->max_failures, .arg = "N",
		  .min = 1, .max = 1000000000, .what = "--max-failures",
		  .help = "stop exploring after N failures (default: never)" },
		{ "seconds", CLI_U64, &a->seconds, .arg = "S", .min = 1,
		  .max = 100000000, .what = "--seconds",
		  .help = "stop "
			  "exploring and shrinking after S seconds (default 1800)" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "explore",
		.synopsis = "SCENARIO",
		.about = about,
		.opts = opts,
		.operands = 1,
		.operand = { .type = CLI_CALL, .dst = o, .parse = scenario_opt },
	};

	*o = (struct explore_opts){ .strategy = SIM_PCT,
				    .depth = 3,
				    .schedules = 1000,
				    .seed = 1,
				    .shrink = 1 };
	a->strategy = "pct:3";
	return cli_parse(&spec, argc, argv);
}

/* The campaign the options describe; -1 after one line. */
static int build(struct explore_args *a, struct campaign **camp,
		 struct explore_row *er)
{
	struct explore_opts *o = &a->o;
	char err[1024];

	if (!o->p) {
		fprintf(stderr, "residctl explore: no SCENARIO given; see "
				"residctl explore --list\n");
		return -1;
	}
	if (simprog_faults(o->p, &a->user, &a->faults, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl explore: %s\n", err);
		return -1;
	}
	if (shard_split(&o->shard) && o->strategy == SIM_DFS) {
		fprintf(stderr,
			"residctl explore: --shard splits seeds, and "
			"%s is one search tree; shard random or pct:D\n",
			a->strategy);
		return -1;
	}
	o->budget.seconds = (double)a->shrink_seconds;
	o->deadline = mono_now() +
		      (double)(a->seconds ? a->seconds : EXPLORE_SECONDS);
	o->faults = &a->faults;
	o->progress = isatty(STDERR_FILENO);
	o->announce = stderr;
	o->bugs = bugs_enabled();
	if (!a->report)
		return 0;
	if (!(*camp = new_campaign(o, a->strategy)) ||
	    !(er->row = campaign_row(*camp, o->p->id, o->schedules))) {
		fprintf(stderr, "residctl explore: out of memory\n");
		return -1;
	}
	o->failed = explore_finding;
	o->failed_arg = er;
	return 0;
}

int cmd_explore(int argc, char **argv)
{
	/* Per call: a second call in one process keeps nothing of the
	 * first (its --json, --report, --fault, --seconds). */
	struct explore_args a = { 0 };
	struct explore_opts *o = &a.o;
	struct campaign *camp = NULL;
	struct explore_row er = { 0 };
	struct explore_result r;
	int rc = parse(&a, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	if (build(&a, &camp, &er) < 0)
		return 2;
	if (shard_split(&o->shard))
		printf("explore %s: shard %llu/%llu of %llu schedules\n",
		       o->p->id, (unsigned long long)o->shard.k,
		       (unsigned long long)o->shard.n,
		       (unsigned long long)o->schedules);
	explore(o, &r);
	explore_print(stdout, o, &r);
	rc = r.failures ? 1 : r.out_of_time ? 2 : 0;
	if (a.json && write_json(a.json, o, &r) < 0)
		rc = 2;
	if (a.report && write_report(a.report, o, &r, camp, &er) < 0)
		rc = 2;
	campaign_free(camp);
	explore_result_free(&r);
	return rc;
}
