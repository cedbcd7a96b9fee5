/* residctl: one tool, subcommands in the style of git. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/commands.h"
#include "base/coverage.h"
#include "cgroup/cgroup_scope.h"
#include "cgroup/cgroup_stale.h"
#include "fault/bugs.h"
#include "proc/child.h"
#include "proc/watchdog.h"

#define COMMAND(name, what) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef COMMAND

static const struct command commands[] = {
#define COMMAND(name, what) { #name, cmd_##name, what },
#include "commands.def"
#undef COMMAND
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: residctl COMMAND [OPTIONS]\n\ncommands:\n");
	command_list(f, commands, NCOMMANDS);
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
	/* No child, no cgroup may outlive the tool (design.md §9). */
	atexit(cg_scope_cleanup_all);
	child_catch_signals();
	if (watchdog_start(argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl: %s\n", err);
		return 2;
	}
	watchdog_hang_here("main");
	const struct command *cmd = command_find(commands, NCOMMANDS, argv[1]);

	if (cmd) {
		/* What a killed residctl left, at every start (design.md §9). */
		cg_stale_sweep();
		int rc = cmd->fn(argc - 1, argv + 1);

		/* a command that stopped by itself on SIGINT/SIGTERM */
		if (child_stop_signal())
			rc = 128 + child_stop_signal();

		/* The runs this command counted, for the suite's total. */
		if (coverage_save_env() < 0 && rc == 0)
			rc = 2;
		return rc;
	}
	fprintf(stderr,
		"residctl: '%s' is not a command; see residctl --help\n",
		argv[1]);
	return 2;
}
