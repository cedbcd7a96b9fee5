/* residctl: one tool, subcommands in the style of git. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bugs.h"
#include "cgroup_scope.h"
#include "cgroup_stale.h"
#include "child.h"
#include "commands.h"
#include "coverage.h"
#include "watchdog.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
} commands[] = {
	{ "check", cmd_check, "run the gate scenarios T-1.. on the real kernel" },
	{ "probe", cmd_probe, "print the kernel manifest; can the pager run here?" },
	{ "explore", cmd_explore, "schedules of a scenario on the simulated kernel" },
	{ "replay", cmd_replay, "rerun a failing schedule from its replay line" },
	{ "repro", cmd_repro, "switch a historical bug back on; what catches it" },
	{ "matrix", cmd_matrix, "every bug against every detector: the kill matrix" },
	{ "storm", cmd_storm, "randomized storms on the real kernel, with faults" },
	{ "verify", cmd_verify, "read a file through the pager, check every byte" },
	{ "belady", cmd_belady, "offline optimum over a reference trace" },
	{ "bench", cmd_bench, "benchmarks: the arms against OPT, the fetch path" },
	{ "coverage", cmd_coverage, "code probes a campaign reached and missed" },
	{ "conformance", cmd_conformance, "the simulated kernel against this kernel" },
	{ "merge", cmd_merge, "shard reports of one campaign as one verdict" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: residctl COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].what);
	fprintf(f, "\n'residctl COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	char err[160];

	if (bugs_from_env(err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl: RESIDCTL_BUGS: %s\n", err);
		return 2;
	}
	/* No child, no cgroup may outlive the tool (SPEC §9). */
	atexit(cg_scope_cleanup_all);
	child_catch_signals();
	if (watchdog_start(argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl: %s\n", err);
		return 2;
	}
	watchdog_hang_here("main");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		/* What a killed residctl left, at every start (SPEC §9). */
		cg_stale_sweep();
		int rc = commands[i].fn(argc - 1, argv + 1);

		/* a command that stopped by itself on SIGINT/SIGTERM */
		if (child_stop_signal())
			rc = 128 + child_stop_signal();

		/* The runs this command counted, for the suite's total. */
		if (coverage_save_env() < 0 && rc == 0)
			rc = 2;
		return rc;
	}
	fprintf(stderr, "residctl: '%s' is not a command; see residctl --help\n",
		argv[1]);
	return 2;
}
