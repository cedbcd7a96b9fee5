/* The shared option parser: an option is matched by its name, never by a
 * prefix of the argument, whatever the order of the table. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "campaign.h"
#include "cli.h"
#include "suites.h"

static const struct option chunk_first[] = {
	CLI_HELP_OPTION,
	CLI_VALUE("chunk", 'c'),
	CLI_VALUE("chunks", 'n'),
	CLI_VALUE("seed", 's'),
	CLI_FLAG("sim", 'S'),
	{ 0 },
};

static const struct option chunks_first[] = {
	CLI_HELP_OPTION,
	CLI_VALUE("chunks", 'n'),
	CLI_VALUE("chunk", 'c'),
	CLI_VALUE("seed", 's'),
	CLI_FLAG("sim", 'S'),
	{ 0 },
};

/* Walks args (NULL-terminated) and writes what came back, one token per
 * result: the option's letter, "=value" when it had one, "+operand", or
 * "!status" at the end of a refused walk. */
static void walk(const struct option *opts, int operands, const char **args,
		 char *out, size_t n)
{
	char *argv[16] = { "test" };
	int argc = 1, opt;
	size_t used = 0;

	while (*args && argc < 15)
		argv[argc++] = (char *)*args++;
	struct cli c = { .cmd = "test", .usage = "", .argc = argc,
			 .argv = argv, .opts = opts, .operands = operands };

	out[0] = '\0';
	while ((opt = cli_next(&c)) != CLI_END && used < n) {
		if (opt == CLI_EXIT) {
			snprintf(out + used, n - used, "!%d", c.status);
			return;
		}
		if (opt == CLI_OPERAND)
			used += (size_t)snprintf(out + used, n - used, "+%s ",
						 c.arg);
		else
			used += (size_t)snprintf(out + used, n - used, "%c%s%s ",
						 opt, c.arg ? "=" : "",
						 c.arg ? c.arg : "");
	}
}

#define WALK(opts, ops, want, ...)                                      \
	do {                                                            \
		const char *args_[] = { __VA_ARGS__, NULL };            \
		char got_[256];                                         \
		walk(opts, ops, args_, got_, sizeof(got_));             \
		CU_ASSERT_STRING_EQUAL(got_, want);                     \
	} while (0)

static void exact_name_wins_in_any_order(void)
{
	WALK(chunk_first, 0, "c=1 n=2 ", "--chunk", "1", "--chunks", "2");
	WALK(chunks_first, 0, "c=1 n=2 ", "--chunk", "1", "--chunks", "2");
	WALK(chunk_first, 0, "n=2 c=1 ", "--chunks=2", "--chunk=1");
	WALK(chunks_first, 0, "n=2 c=1 ", "--chunks=2", "--chunk=1");
}

static void longer_or_ambiguous_names_are_refused(void)
{
	WALK(chunk_first, 0, "!2", "--seeds", "3");
	WALK(chunk_first, 0, "!2", "--chunkx", "1");
	WALK(chunk_first, 0, "!2", "--chun", "1");   /* chunk or chunks */
	WALK(chunk_first, 0, "s=3 ", "--se", "3");   /* unique: seed */
	WALK(chunk_first, 0, "!2", "--sim=1");       /* a flag takes none */
	WALK(chunk_first, 0, "!2", "--seed");        /* a value is missing */
	WALK(chunk_first, 0, "!2", "-x");
}

static void operands_come_in_place_and_are_counted(void)
{
	WALK(chunk_first, 2, "+a s=1 +b ", "a", "--seed", "1", "b");
	WALK(chunk_first, 2, "+a +--seed ", "a", "--", "--seed");
	WALK(chunk_first, 1, "+a !2", "a", "b");
	WALK(chunk_first, 0, "!2", "a");
	WALK(chunk_first, 0, "!0", "--help", "--seeds");
	WALK(chunk_first, 0, "S ", "--sim");  /* a second walk starts over */
}

/* --shard K/N: K from 1; a bad value refused (its line goes to stderr). */
static void shard_values_parsed_or_refused(void)
{
	static const char *const bad[] = { "0/3", "4/3", "3", "a/3", "1/0",
		"1/3x", " 1/3", "-1/3", "1/", "/3", "1/1000001", "" };
	struct shard s = { 0 };

	CU_ASSERT_EQUAL(shard_parse("test", "2/3", &s), 0);
	CU_ASSERT(s.k == 2 && s.n == 3);
	CU_ASSERT_EQUAL(shard_parse("test", "1/1", &s), 0);
	CU_ASSERT(s.k == 1 && s.n == 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = (struct shard){ 7, 9 };
		CU_ASSERT_EQUAL(shard_parse("test", bad[i], &s), -1);
		CU_ASSERT(s.k == 7 && s.n == 9); /* untouched */
	}
}

/* The N shards run every unit exactly once, and each as many as
 * shard_units says (what merge checks a report against). */
static void shards_partition_the_units(void)
{
	for (uint64_t n = 1; n <= 7; n++)
		for (uint64_t size = 0; size <= 40; size++) {
			uint64_t total = 0;

			for (uint64_t i = 0; i < size; i++) {
				int owners = 0;

				for (uint64_t k = 1; k <= n; k++)
					owners += shard_owns(&(struct shard){ k, n },
							     i);
				CU_ASSERT_EQUAL(owners, 1);
			}
			for (uint64_t k = 1; k <= n; k++) {
				uint64_t mine = 0;

				for (uint64_t i = 0; i < size; i++)
					mine += (uint64_t)shard_owns(
						&(struct shard){ k, n }, i);
				CU_ASSERT_EQUAL(mine, shard_units(size, k, n));
				total += mine;
			}
			CU_ASSERT_EQUAL(total, size);
		}
}

void suite_cli(void)
{
	CU_pSuite s = CU_add_suite("cli", NULL, NULL);

	CU_add_test(s, "an exact name wins in any table order",
		    exact_name_wins_in_any_order);
	CU_add_test(s, "longer, ambiguous, valueless or bare: refused",
		    longer_or_ambiguous_names_are_refused);
	CU_add_test(s, "operands in place, counted",
		    operands_come_in_place_and_are_counted);
	CU_add_test(s, "--shard K/N parsed, bad values refused",
		    shard_values_parsed_or_refused);
	CU_add_test(s, "N shards run every unit once",
		    shards_partition_the_units);
}
