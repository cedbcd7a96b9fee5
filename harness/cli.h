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
 * operands come back in their place. */
struct cli {
	const char *cmd;           /* "check", "bench arms": for error lines */
	int argc;
	char **argv;
	const struct option *opts; /* ends with { 0 }; no short names */
	const char *arg;           /* the value or operand just returned */
	int started, rest;
};

enum {
	CLI_END = -1,
	CLI_BAD = -2,     /* one line on stderr already names it and the fix */
	CLI_OPERAND = 1,  /* arg is the operand */
	CLI_HELP = 'h',   /* --help or -h */
};

/* The next option's val (arg holds its value), CLI_OPERAND, CLI_HELP,
 * CLI_END, or CLI_BAD for an unknown option or a missing value. */
int cli_next(struct cli *c);

#endif
