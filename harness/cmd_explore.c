/* residctl explore / replay: schedules of a scenario under the simulated
 * kernel and the deterministic scheduler (SPEC §4). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bugs.h"
#include "cli.h"
#include "commands.h"
#include "explore.h"
#include "explore_report.h"
#include "report.h"

static const char explore_usage[] =
	"usage: residctl explore SCENARIO [--strategy random|pct:D|dfs:P]\n"
	"                        [--schedules N] [--fault NAME=P | NAME@N ...]\n"
	"                        [--json FILE] [--shard K/N] [--report FILE]\n"
	"                        [--chunks equal|unequal]\n"
	"                        [--seed S] [--bug N[,N..]] [--no-shrink] [--stop]\n"
	"                        [--shrink-seconds S] [--shrink-mb M] | --list\n"
	"  Runs N schedules (default 1000) of SCENARIO on the simulated kernel,\n"
	"  each chosen by the strategy (default pct:3) from seed S + i; dfs:P\n"
	"  searches every schedule with at most P preemptions (tiny scenarios;\n"
	"  N caps it). Prints\n"
	"  schedules run, distinct interleavings (lock-acquisition orders),\n"
	"  failures by oracle, and for the first failure its shrunk schedule's\n"
	"  preemption count and the line `residctl replay` reproduces it with.\n"
	"  The first failure is printed on stderr with its unshrunk line the\n"
	"  moment it is found; shrinking stops after S seconds (default 20) or\n"
	"  when the process grew by M MiB (default 1024), and the best line so\n"
	"  far stands. A schedule past 1,000,000 steps or 20 s of CPU time\n"
	"  ends with no-progress.\n"
	"  --bug switches a bug back on (1..10, all; RESIDCTL_BUGS\n"
	"  too; see residctl repro --list). --fault adds faults to the\n"
	"  scenario's own (T-7 fails and shortens half its reads), decided by\n"
	"  each schedule's decision stream (RESIDCTL_FAULTS too); a fault the\n"
	"  scenario cannot fire is refused. Shrinking drops faults too. --json\n"
	"  writes the summary and the code probes the campaign hit and missed.\n"
	"  --shard K/N runs schedule i only when i mod N = K - 1 (K from 1;\n"
	"  random and pct only); --report writes the campaign report, every\n"
	"  failing schedule with its replay line, for residctl merge.\n"
	"  --chunks unequal runs every schedule on a table of unequal chunks\n"
	"  (1 to 4 pages, the last ending unaligned; check --sim runs both).\n"
	"  --stop ends the campaign at its first failure. Exit 0 with no\n"
	"  failure, 1 with one, 2 on bad input.\n";

static const char replay_usage[] =
	"usage: residctl replay 'LINE'\n"
	"  Runs the schedule a failure printed (rc3/REV/SCENARIO/STRATEGY/SEED/\n"
	"  BUGS/OPS/FAULTS/SCHEDULE), with the bug switches and the faults it\n"
	"  names, and prints its verdict, the faults that fired and its\n"
	"  event-log hash. Exit 0 when it passes, 1 when it fails (reproduced),\n"
	"  2 on a bad line.\n";

static int write_json(const char *path, const struct explore_opts *o,
		      const struct explore_result *r)
{
	char tmp[4200];
	FILE *f = open_tmp(path, tmp, sizeof(tmp));

	if (!f)
		return -1;
	fprintf(f, "{\n  \"scenario\": ");
	json_str(f, o->p->id);
	fprintf(f, ",\n  \"chunks\": \"%s\"", o->unequal ? "unequal" :
		"equal");
	fprintf(f, ",\n  \"seed\": %" PRIu64 ",\n  \"schedules\": %" PRIu64
		",\n  \"distinct\": %" PRIu64 ",\n  \"failures\": %" PRIu64
		",\n  \"code_probes\": ", o->seed, r->schedules, r->distinct,
		r->failures);
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

int shrink_option(const char *cmd, int seconds, const char *v,
		  struct shrink_budget *b)
{
	uint64_t n;

	if (cli_u64(v, &n) || !n || n > 1000000) {
		fprintf(stderr, "residctl %s: bad --shrink-%s '%s'; give a whole "
			"number, 1 to 1000000\n", cmd, seconds ? "seconds" : "mb",
			v);
		return -1;
	}
	if (seconds)
		b->seconds = (double)n;
	else
		b->mb = n;
	return 0;
}

int cmd_explore(int argc, char **argv)
{
	struct explore_opts o = { .strategy = SIM_PCT, .depth = 3,
				  .schedules = 1000, .seed = 1, .shrink = 1 };
	struct explore_result r;
	static const struct option opts[] = {
		CLI_HELP_OPTION,
		CLI_FLAG("list", 'l'),
		CLI_FLAG("no-shrink", 'N'),
		CLI_FLAG("stop", 'X'),
		CLI_VALUE("strategy", 't'),
		CLI_VALUE("schedules", 'n'),
		CLI_VALUE("bug", 'b'),
		CLI_VALUE("fault", 'f'),
		CLI_VALUE("seed", 's'),
		CLI_VALUE("json", 'j'),
		CLI_VALUE("shard", 'k'),
		CLI_VALUE("report", 'r'),
		CLI_VALUE("chunks", 'C'),
		CLI_VALUE("shrink-seconds", 'S'),
		CLI_VALUE("shrink-mb", 'M'),
		{ 0 },
	};
	struct cli c = { .cmd = "explore", .usage = explore_usage,
			 .argc = argc, .argv = argv, .opts = opts,
			 .operands = 1 };
	static struct fault_plan user, faults;
	const char *v, *json = NULL, *report = NULL, *strategy = "pct:3";
	struct campaign *camp = NULL;
	struct explore_row er = { 0 };
	char err[1024];
	int opt;

	if (fault_plan_option(&user, "explore", NULL) < 0)
		return 2;
	while ((opt = cli_next(&c)) != CLI_END) {
		v = c.arg;
		switch (opt) {
		case CLI_EXIT:
			return c.status;
		case 'l':
			list();
			return 0;
		case 'N':
			o.shrink = 0;
			break;
		case 'X':
			o.stop_at_failure = 1;
			break;
		case CLI_OPERAND:
			if (!(o.p = simprog_find(v))) {
				fprintf(stderr, "residctl explore: no simulated "
					"scenario '%s'; see residctl explore "
					"--list\n", v);
				return 2;
			}
			break;
		case 't':
			if (parse_strategy(v, &o.strategy, &o.depth)) {
				fprintf(stderr, "residctl explore: unknown "
					"strategy '%s'; use random, pct:D (D "
					"1..9) or dfs:P (P 0..9)\n", v);
				return 2;
			}
			strategy = v;
			break;
		case 'k':
			if (shard_parse("explore", v, &o.shard))
				return 2;
			break;
		case 'r':
			report = v;
			break;
		case 'n':
			if (cli_u64(v, &o.schedules) || !o.schedules) {
				fprintf(stderr, "residctl explore: bad schedule "
					"count '%s'; give a number >= 1\n", v);
				return 2;
			}
			break;
		case 'b':
			if (bugs_option("explore", v))
				return 2;
			break;
		case 'j':
			json = v;
			break;
		case 'C':
			if (strcmp(v, "equal") && strcmp(v, "unequal")) {
				fprintf(stderr, "residctl explore: unknown "
					"--chunks '%s'; use equal or unequal\n",
					v);
				return 2;
			}
			o.unequal = !strcmp(v, "unequal");
			break;
		case 'f':
			if (fault_plan_option(&user, "explore", v) < 0)
				return 2;
			break;
		case 'S':
		case 'M':
			if (shrink_option("explore", opt == 'S', v, &o.budget))
				return 2;
			break;
		case 's':
			if (cli_u64(v, &o.seed)) {
				fprintf(stderr, "residctl explore: bad seed "
					"'%s'; give a decimal number\n", v);
				return 2;
			}
			break;
		}
	}
	if (!o.p) {
		fprintf(stderr, "residctl explore: no SCENARIO given; see "
			"residctl explore --list\n");
		return 2;
	}
	if (simprog_faults(o.p, &user, &faults, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl explore: %s\n", err);
		return 2;
	}
	if (shard_split(&o.shard) && o.strategy == SIM_DFS) {
		fprintf(stderr, "residctl explore: --shard splits seeds, and "
			"%s is one search tree; shard random or pct:D\n",
			strategy);
		return 2;
	}
	o.faults = &faults;
	o.progress = isatty(STDERR_FILENO);
	o.announce = stderr;
	o.bugs = bugs_enabled();
	if (report) {
		if (!(camp = new_campaign(&o, strategy)) ||
		    !(er.row = campaign_row(camp, o.p->id, o.schedules))) {
			fprintf(stderr, "residctl explore: out of memory\n");
			return 2;
		}
		o.failed = explore_finding;
		o.failed_arg = &er;
	}
	if (shard_split(&o.shard))
		printf("explore %s: shard %llu/%llu of %llu schedules\n", o.p->id,
		       (unsigned long long)o.shard.k,
		       (unsigned long long)o.shard.n,
		       (unsigned long long)o.schedules);
	explore(&o, &r);
	explore_print(stdout, &o, &r);
	int failed = r.failures != 0;

	if (json && write_json(json, &o, &r) < 0)
		failed = 2;
	if (report && write_report(report, &o, &r, camp, &er) < 0)
		failed = 2;
	campaign_free(camp);

	explore_result_free(&r);
	return failed;
}

int cmd_replay(int argc, char **argv)
{
	struct replay rp;
	struct sim_outcome out;
	char err[256];

	static const struct option opts[] = {
		CLI_HELP_OPTION,
		{ 0 },
	};
	struct cli c = { .cmd = "replay", .usage = replay_usage, .argc = argc,
			 .argv = argv, .opts = opts, .operands = 1 };
	const char *line = NULL;
	int opt;

	while ((opt = cli_next(&c)) != CLI_END) {
		if (opt == CLI_EXIT)
			return c.status;
		line = c.arg;
	}
	if (!line) {
		fprintf(stderr, "residctl replay: give exactly one LINE, in "
			"quotes; see residctl replay --help\n");
		return 2;
	}
	if (replay_decode(line, &rp, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl replay: %s\n", err);
		return 2;
	}
	replay_run(&rp, &out);
	printf("replay %s%s: %s%s%s\n  %" PRIu64 " steps, %" PRIu64
	       " preemptions, event log %016" PRIx64 "\n", rp.p->id,
	       rp.unequal ? " (unequal chunks)" : "", sim_verdict_name(out.verdict), out.why[0] ? ": " : "", out.why,
	       out.steps, out.preemptions, out.log_hash);
	for (int p = 0; p < FP_COUNT; p++)
		if (rp.faults.on & 1u << p)
			printf("  fault %-28s fired %" PRIu64 "\n",
			       fault_name(p), out.fired[p]);
	int failed = out.verdict != SIM_PASS;

	sim_outcome_free(&out);
	replay_free(&rp);
	return failed;
}
