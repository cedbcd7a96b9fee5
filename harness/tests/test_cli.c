/* The shared option parser: an option is matched by its name, never by a
 * prefix of the argument, whatever the order of the table; each value is
 * checked against its entry; --help comes from the same table. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "campaign/campaign.h"
#include "tests/suites.h"

/* What a walk met, in order: "name=value " per option or operand. */
struct rec {
	char out[256];
	size_t used;
};

static int record(void *dst, const char *where, const char *v, char *err,
		  size_t n)
{
	struct rec *r = dst;

	(void)err;
	(void)n;
	if (r->used < sizeof(r->out))
		r->used += (size_t)snprintf(r->out + r->used,
					    sizeof(r->out) - r->used, "%s=%s ",
					    where, v);
	return 0;
}

static struct rec rec;
static int sim;

#define REC(name)                                     \
	{                                             \
		name, CLI_CALL, &rec, .parse = record \
	}
static struct cli_opt chunk_first[] = {
	REC("chunk"), REC("chunks"),
	REC("seed"),  { "sim", CLI_FLAG, &sim, .help = "" },
	{ 0 },
};
static struct cli_opt chunks_first[] = {
	REC("chunks"), REC("chunk"),
	REC("seed"),   { "sim", CLI_FLAG, &sim, .help = "" },
	{ 0 },
};

/* Walks args (NULL-terminated) and writes what came back: the options
 * and operands met, then "!status" when the walk ended the command. */
static void walk(struct cli_opt *opts, int operands, const char **args,
		 char *out, size_t n)
{
	char *argv[16] = { "test" };
	int argc = 1, rc;

	while (*args && argc < 15)
		argv[argc++] = (char *)*args++;
	const struct cli_spec spec = {
		.cmd = "test",
		.opts = opts,
		.operands = operands,
		.operand = { "+", CLI_CALL, &rec, .parse = record },
	};

	memset(&rec, 0, sizeof(rec));
	rc = cli_parse(&spec, argc, argv);
	snprintf(out, n, "%s", rec.out);
	if (rc != CLI_RUN)
		snprintf(out + strlen(out), n - strlen(out), "!%d", rc);
}

#define WALK(opts, ops, want, ...)                           \
	do {                                                 \
		const char *args_[] = { __VA_ARGS__, NULL }; \
		char got_[256];                              \
		walk(opts, ops, args_, got_, sizeof(got_));  \
		CU_ASSERT_STRING_EQUAL(got_, want);          \
	} while (0)

static void exact_name_wins_in_any_order(void)
{
	WALK(chunk_first, 0, "chunk=1 chunks=2 ", "--chunk", "1", "--chunks",
	     "2");
	WALK(chunks_first, 0, "chunk=1 chunks=2 ", "--chunk", "1", "--chunks",
	     "2");
	WALK(chunk_first, 0, "chunks=2 chunk=1 ", "--chunks=2", "--chunk=1");
	WALK(chunks_first, 0, "chunks=2 chunk=1 ", "--chunks=2", "--chunk=1");
}

static void longer_or_ambiguous_names_are_refused(void)
{
	WALK(chunk_first, 0, "!2", "--seeds", "3");
	WALK(chunk_first, 0, "!2", "--chunkx", "1");
	WALK(chunk_first, 0, "!2", "--chun", "1");    /* chunk or chunks */
	WALK(chunk_first, 0, "seed=3 ", "--se", "3"); /* unique: seed */
	WALK(chunk_first, 0, "!2", "--sim=1");        /* a flag takes none */
	WALK(chunk_first, 0, "!2", "--seed");         /* a value is missing */
	WALK(chunk_first, 0, "!2", "-x");
}

static void operands_come_in_place_and_are_counted(void)
{
	WALK(chunk_first, 2, "+=a seed=1 +=b ", "a", "--seed", "1", "b");
	WALK(chunk_first, 2, "+=a +=--seed ", "a", "--", "--seed");
	WALK(chunk_first, 1, "+=a !2", "a", "b");
	WALK(chunk_first, 0, "!2", "a");
	WALK(chunk_first, 0, "!0", "--help", "--seeds");
	sim = 0;
	WALK(chunk_first, 0, "", "--sim"); /* a second walk starts over */
	CU_ASSERT_EQUAL(sim, 1);
}

/* Each type checks its value against the entry's range; a refused value
 * leaves the destination as it was. */
static void values_checked_against_the_table(void)
{
	static const char *const sides[] = { "left", "right", NULL };
	uint64_t n = 7, bytes = 7, seen_n = 0;
	int side = -1, flag = 1, seen = 0;
	const char *text = NULL;
	struct cli_opt opts[] = {
		{ "n", CLI_U64, &n, .min = 1, .max = 10, .seen = &seen },
		{ "bytes", CLI_BYTES, &bytes, .align = 4096, .max = 16 << 20 },
		{ "side", CLI_CHOICE, &side, .choices = sides },
		{ "off", CLI_UNFLAG, &flag, .help = "" },
		{ "text", CLI_TEXT, &text, .help = "" },
		{ "count", CLI_U64, &seen_n, .env = "CLI_TEST_COUNT" },
		{ 0 },
	};
	const struct cli_spec spec = { .cmd = "test", .opts = opts };
	char *ok[] = { "test",   "--n",   "10",    "--bytes", "8K",
		       "--side", "right", "--off", "--text",  "t" };
	static const char *const bad[][2] = {
		{ "--n", "0" },        { "--n", "11" },
		{ "--n", "x" },        { "--n", "-1" },
		{ "--bytes", "5000" }, { "--bytes", "32M" },
		{ "--bytes", "1Q" },   { "--side", "up" },
		{ "--side", "" },
	};

	CU_ASSERT_EQUAL(unsetenv("CLI_TEST_COUNT"), 0);
	CU_ASSERT_EQUAL(cli_parse(&spec, 10, ok), CLI_RUN);
	CU_ASSERT(n == 10 && bytes == 8192 && side == 1 && flag == 0 &&
		  seen == 1 && !strcmp(text, "t") && seen_n == 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "test", (char *)bad[i][0], (char *)bad[i][1] };

		CU_ASSERT_EQUAL(cli_parse(&spec, 3, argv), 2);
	}
	CU_ASSERT(n == 10 && bytes == 8192 && side == 1);
	/* The variable is read first; set but empty is unset. */
	CU_ASSERT_EQUAL(setenv("CLI_TEST_COUNT", "5", 1), 0);
	CU_ASSERT_EQUAL(cli_parse(&spec, 1, ok), CLI_RUN);
	CU_ASSERT_EQUAL(seen_n, 5);
	CU_ASSERT_EQUAL(setenv("CLI_TEST_COUNT", "", 1), 0);
	seen_n = 0;
	CU_ASSERT_EQUAL(cli_parse(&spec, 1, ok), CLI_RUN);
	CU_ASSERT_EQUAL(seen_n, 0);
	CU_ASSERT_EQUAL(setenv("CLI_TEST_COUNT", "x", 1), 0);
	CU_ASSERT_EQUAL(cli_parse(&spec, 1, ok), 2);
	CU_ASSERT_EQUAL(unsetenv("CLI_TEST_COUNT"), 0);
}

/* --help comes from the table: each option with its value, range and
 * variable. */
static void help_printed_from_the_table(void)
{
	static const char *const sides[] = { "left", "right", NULL };
	uint64_t n;
	int side;
	struct cli_opt opts[] = {
		{ "n", CLI_U64, &n, .arg = "N", .min = 1, .max = 10,
		  .help = "how many", .env = "CLI_TEST_N" },
		{ "side", CLI_CHOICE, &side, .choices = sides,
		  .help = "which side" },
		{ 0 },
	};
	const struct cli_spec spec = { .cmd = "test",
				       .synopsis = "FILE",
				       .about = "  About it.\n",
				       .opts = opts };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	cli_usage(f, &spec);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "usage: residctl test FILE "
					   "[OPTIONS]\n  About it.\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--n N"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "how many (1..10); CLI_TEST_N "
					   "too\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--side left|right"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--help"));
	free(buf);
}

/* --shard K/N: K from 1; a bad value refused (its line goes to stderr). */
static void shard_values_parsed_or_refused(void)
{
	static const char *const bad[] = { "0/3", "4/3",  "3",         "a/3",
					   "1/0", "1/3x", " 1/3",      "-1/3",
					   "1/",  "/3",   "1/1000001", "" };
	struct shard s = { 0 };

	char err[256];

	CU_ASSERT_EQUAL(shard_parse("2/3", &s, err, sizeof(err)), 0);
	CU_ASSERT(s.k == 2 && s.n == 3);
	CU_ASSERT_EQUAL(shard_parse("1/1", &s, err, sizeof(err)), 0);
	CU_ASSERT(s.k == 1 && s.n == 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = (struct shard){ 7, 9 };
		CU_ASSERT_EQUAL(shard_parse(bad[i], &s, err, sizeof(err)), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i]));
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
					owners +=
						shard_owns(&(struct shard){ k,
									    n },
							   i);
				CU_ASSERT_EQUAL(owners, 1);
			}
			for (uint64_t k = 1; k <= n; k++) {
				uint64_t mine = 0;

				for (uint64_t i = 0; i < size; i++)
					mine += (uint64_t)
						shard_owns(&(struct shard){ k,
									    n },
							   i);
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
	CU_add_test(s, "values checked against the table's ranges",
		    values_checked_against_the_table);
	CU_add_test(s, "--help printed from the table",
		    help_printed_from_the_table);
	CU_add_test(s, "--shard K/N parsed, bad values refused",
		    shard_values_parsed_or_refused);
	CU_add_test(s, "N shards run every unit once",
		    shards_partition_the_units);
}
