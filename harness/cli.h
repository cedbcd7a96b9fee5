/* Parsing of command-line values, shared by every subcommand. */
#ifndef HARNESS_CLI_H
#define HARNESS_CLI_H

#include <getopt.h>
#include <stdint.h>

/* Decimal bytes with an optional K, M or G suffix (x1024). 0 or -1. */
int cli_bytes(const char *s, uint64_t *out);
/* A plain decimal number. 0 or -1. */
int cli_u64(const char *s, uint64_t *out);
/* One walk over a command's arguments, by getopt_long: options in any
 * order, "--name value" or "--name=value", an exact name always wins over a
 * longer one (--chunk, --chunks), a unique abbreviation is accepted, and
 * operands come back in their place. --help prints the usage. */
struct cli {
	const char *cmd;           /* "check", "bench arms": for error lines */
	const char *usage;         /* what --help and -h print */
	int argc;
	char **argv;
	const struct option *opts; /* CLI_HELP_OPTION, ..., { 0 } */
	int operands;              /* how many are accepted */
	const char *arg;           /* the value or operand just returned */
	int status;                /* with CLI_EXIT: the exit code */
	int started, rest, seen;
};

#define CLI_HELP_OPTION { "help", no_argument, NULL, 'h' }
#define CLI_FLAG(name, val) { name, no_argument, NULL, val }
#define CLI_VALUE(name, val) { name, required_argument, NULL, val }

enum {
	CLI_END = -1,
	CLI_EXIT = -2,    /* return c.status: 0 after --help, 2 after one line
			   * on stderr naming the bad argument and the fix */
	CLI_OPERAND = 1,  /* arg is the operand */
};

/* The next option's val (arg holds its value), CLI_OPERAND, CLI_EXIT
 * (--help; an unknown or ambiguous option, a missing value, one operand too
 * many) or CLI_END. */
int cli_next(struct cli *c);

#endif
