/* A command's options as a table, stated once: each entry's name, type,
 * range, help and environment variable. One walk checks every value
 * against its entry and writes it where the entry says, and --help is
 * printed from the same table, so a command function only builds its
 * run, runs it and reports (docs/extending.md). */
#ifndef HARNESS_CLI_H
#define HARNESS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Decimal bytes with an optional K, M or G suffix (x1024). 0 or -1. */
int cli_bytes(const char *s, uint64_t *out);
/* A plain decimal number. 0 or -1. */
int cli_u64(const char *s, uint64_t *out);

enum cli_type {
	CLI_FLAG,   /* no value: *(int *)dst = 1 */
	CLI_UNFLAG, /* no value: *(int *)dst = 0 */
	CLI_TEXT,   /* *(const char **)dst = the value */
	CLI_U64,    /* *(uint64_t *)dst: a decimal number in min..max */
	CLI_BYTES,  /* *(uint64_t *)dst: bytes (K, M, G), min..max, align */
	CLI_CHOICE, /* *(int *)dst = the index of the value in choices */
	CLI_CALL,   /* parse(dst, where, value, err, n): 0, or -1 with err */
	CLI_ACTION, /* no value: act() prints, the command ends with 0 */
};

/* The value of option or environment variable `where`, parsed into dst.
 * 0, or -1 with one line in err naming the value and the fix. */
typedef int cli_parse_fn(void *dst, const char *where, const char *value,
			 char *err, size_t n);

/* --policy into an enum resid_policy: the library's names (and their long
 * forms). */
cli_parse_fn cli_policy;

struct cli_opt {
	const char *name; /* --name; a NULL name ends the table */
	enum cli_type type;
	void *dst;
	const char *arg;   /* the value in --help: "N", "FILE", "K/N" */
	const char *help;  /* one line: what it does, its default */
	const char *what;  /* the value in an error line ("seed"); --name */
	uint64_t min, max; /* U64, BYTES: max 0 is no upper bound */
	uint64_t align;    /* BYTES: a multiple of it */
	const char *const *choices; /* CHOICE: NULL-terminated */
	const char *fix; /* the fix, where the range's own says too little */
	const char *env; /* also set by this variable, before the options */
	cli_parse_fn *parse;
	void (*act)(void);
	int *seen; /* set to 1 when the option is given */
};

/* A command's command line: options in any order, "--name value" or
 * "--name=value", an exact name always wins over a longer one (--chunk,
 * --chunks), a unique abbreviation is accepted, "--" ends the options;
 * operands come in their place, each parsed as `operand` says. */
struct cli_spec {
	const char *cmd;        /* "check", "bench arms": for error lines */
	const char *synopsis;   /* the operands: "[SCENARIO...]", "FILE" */
	const char *about;      /* what --help says after the usage line */
	struct cli_opt *opts;   /* ..., { 0 } */
	struct cli_opt operand; /* TEXT or CALL; its name is parse's where */
	int operands;           /* how many are accepted */
	int required;           /* how many must be given (the synopsis names
			       * them in the "no ... given" line) */
};

#define CLI_RUN (-1)

/* Reads the entries' environment variables, then walks argv (argv[0] is
 * the command). CLI_RUN when the command should run; else its exit code:
 * 0 after --help or an action, 2 after one line on stderr naming the bad
 * argument and the fix. */
int cli_parse(const struct cli_spec *s, int argc, char **argv);

/* Prints --help from the table. */
void cli_usage(FILE *f, const struct cli_spec *s);

/* Options that several commands take, each stated here once. */
#define CLI_SEED(dst, help_)                                     \
	{                                                        \
		"seed", CLI_U64, dst, .arg = "N", .help = help_, \
				      .what = "seed"             \
	}
#define CLI_SCHEDULES(dst, help_)                                    \
	{                                                            \
		"schedules", CLI_U64, dst, .arg = "N", .min = 1,     \
					   .what = "schedule count", \
					   .help = help_             \
	}
#define CLI_JSON(dst, help_)                                        \
	{                                                           \
		"json", CLI_TEXT, dst, .arg = "FILE", .help = help_ \
	}
#define CLI_REPORT(dst)                                                                    \
	{                                                                                  \
		"report", CLI_TEXT, dst,                                                   \
			.arg = "FILE",                                                     \
			.help = "write the "                                               \
				"campaign report, every failure with its rerun line, for " \
				"residctl merge"                                           \
	}

#endif
