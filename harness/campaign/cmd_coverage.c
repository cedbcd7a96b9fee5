/* residctl coverage: which code probes (rare paths of the pager) the
 * campaigns that wrote a coverage file reached, and which they missed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/coverage.h"

static const char about[] =
	"  Reads the code-probe counts that residctl runs added to FILE\n"
	"  (default: $RESIDCTL_COVERAGE; every check, explore and storm run\n"
	"  with RESIDCTL_COVERAGE=FILE adds its counts at exit) and prints each\n"
	"  probe: hits, runs that hit it, required or not; then the probes the\n"
	"  campaigns missed. --json prints the same as JSON. --list prints the\n"
	"  probes and what each one means, without a file.\n"
	"  Exit 0 when every required probe was hit, 1 when one was not, 2 on\n"
	"  bad input (no file, not a coverage file).\n";

static void list(void)
{
	for (int p = 0; p < CP_COUNT; p++)
		printf("%-24s %-8s %s\n", coverage_name(p),
		       coverage_required(p) ? "required" : "",
		       coverage_what(p));
}

static void table(const char *path, const struct coverage *c)
{
	printf("code probes in %s (%llu runs):\n", path,
	       (unsigned long long)c->runs);
	printf("  %-24s %12s %10s  %s\n", "probe", "hits", "runs", "");
	for (int p = 0; p < CP_COUNT; p++)
		printf("  %-24s %12llu %10llu  %s%s\n", coverage_name(p),
		       (unsigned long long)c->hits[p],
		       (unsigned long long)c->in_runs[p],
		       coverage_required(p) ? "required" : "",
		       c->hits[p]           ? "" :
		       coverage_required(p) ? ", MISSED" :
					      "missed");
	coverage_line(stdout, "", c);
}

int cmd_coverage(int argc, char **argv)
{
	const char *path = NULL;
	struct coverage c;
	char err[512];
	int json = 0;
	struct cli_opt opts[] = {
		{ "list", CLI_ACTION, NULL, .act = list,
		  .help = "list the probes and what each means" },
		{ "json", CLI_FLAG, &json, .help = "print the counts as JSON" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "coverage",
		.synopsis = "[FILE]",
		.about = about,
		.opts = opts,
		.operands = 1,
		.operand = { .type = CLI_TEXT, .dst = &path },
	};
	int rc = cli_parse(&spec, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	if (!path)
		path = getenv("RESIDCTL_COVERAGE");
	if (!path || !*path) {
		fprintf(stderr,
			"residctl coverage: no FILE and "
			"RESIDCTL_COVERAGE is not set; give the file the "
			"campaigns wrote\n");
		return 2;
	}
	if (coverage_load(path, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl coverage: %s\n", err);
		return 2;
	}
	if (json) {
		coverage_json(stdout, &c);
		putchar('\n');
	} else {
		table(path, &c);
	}
	return coverage_missed_required(&c) ? 1 : 0;
}
