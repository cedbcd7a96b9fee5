/* A table of commands: residctl's subcommands (tool/commands.def, whose
 * lines tool/main.c declares and lists), each returning the process exit
 * code; a command with subcommands of its own (bench) looks them up in a
 * table of the same shape. */
#ifndef HARNESS_COMMANDS_H
#define HARNESS_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

/* The rows (a scenario on one leg) one residctl check runs; past it the
 * command refuses. The whole gate is about half of it. */
#define CHECK_MAX_ROWS 64

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
};

/* The entry named `name` of t[0..n-1], or NULL. */
const struct command *command_find(const struct command *t, size_t n,
				   const char *name);
/* One line per entry: its name and what it does. */
void command_list(FILE *f, const struct command *t, size_t n);

#endif
