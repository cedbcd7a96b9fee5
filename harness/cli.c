#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* Why getopt_long refused the long option `bad`, in one line. */
static void bad_long(const struct cli *c, const char *bad)
{
	size_t len = strcspn(bad + 2, "=");
	int matches = 0, exact = 0;

	for (const struct option *o = c->opts; o->name; o++)
		if (!strncmp(o->name, bad + 2, len)) {
			matches++;
			exact |= strlen(o->name) == len;
		}
	if (exact)
		fprintf(stderr, "residctl %s: --%.*s takes no value; see "
			"residctl %s --help\n", c->cmd, (int)len, bad + 2,
			c->cmd);
	else if (matches > 1)
		fprintf(stderr, "residctl %s: option '%s' is ambiguous; spell "
			"it out, see residctl %s --help\n", c->cmd, bad, c->cmd);
	else
		fprintf(stderr, "residctl %s: unknown option '%s'; see "
			"residctl %s --help\n", c->cmd, bad, c->cmd);
}

/* Ends the walk with exit code `status`. */
static int cli_exit(struct cli *c, int status)
{
	c->status = status;
	return CLI_EXIT;
}

int cli_next(struct cli *c)
{
	const char *bad;
	int v;

	if (!c->started) {
		optind = 0; /* glibc: start over, also for a second command */
		opterr = 0;
		c->started = 1;
	}
	if (c->rest) /* after "--": operands only */
		v = optind < c->argc ? CLI_OPERAND : CLI_END;
	else
		v = getopt_long(c->argc, c->argv, "-:h", c->opts, NULL);
	if (v == CLI_END && optind < c->argc) {
		c->rest = 1;
		v = CLI_OPERAND;
	}
	c->arg = v == CLI_OPERAND && c->rest ? c->argv[optind++] : optarg;
	if (v == 'h')
		return cli_exit(c, fputs(c->usage, stdout) < 0);
	if (v == CLI_OPERAND && c->seen++ == c->operands) {
		fprintf(stderr, "residctl %s: unexpected '%s'; see residctl %s "
			"--help\n", c->cmd, c->arg, c->cmd);
		return cli_exit(c, 2);
	}
	if (v != '?' && v != ':')
		return v;
	bad = c->argv[optind - 1];
	if (v == ':')
		fprintf(stderr, "residctl %s: %s needs a value; see residctl %s "
			"--help\n", c->cmd, bad, c->cmd);
	else if (optopt && strncmp(bad, "--", 2))
		fprintf(stderr, "residctl %s: unknown option '-%c'; see "
			"residctl %s --help\n", c->cmd, optopt, c->cmd);
	else
		bad_long(c, bad);
	return cli_exit(c, 2);
}
