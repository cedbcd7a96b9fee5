/* Parsing of command-line values, shared by every subcommand. */
#ifndef HARNESS_CLI_H
#define HARNESS_CLI_H

#include <stdint.h>

/* Decimal bytes with an optional K, M or G suffix (x1024). 0 or -1. */
int cli_bytes(const char *s, uint64_t *out);
/* A plain decimal number. 0 or -1. */
int cli_u64(const char *s, uint64_t *out);
/* The value of option argv[*i]: "--name=value" or the next argument.
 * NULL (after a one-line error naming cmd and the option) when missing. */
const char *cli_value(const char *cmd, int argc, char **argv, int *i);

#endif
