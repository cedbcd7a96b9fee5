/* A command called twice in one process (as these tests and a long-lived
 * caller do) starts from its own options: the second call's rows are its
 * own, none left from the first. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/commands.h"
#include "tests/suites.h"

/* The commands under test (tool/main.c declares the whole table). */
int cmd_check(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_hazards(int argc, char **argv);
int cmd_storm(int argc, char **argv);

/* The JSON a command wrote to path, NUL-terminated in buf; the file is
 * removed. */
static void take_json(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	CU_ASSERT_EQUAL(fclose(f), 0);
	CU_ASSERT_EQUAL(unlink(path), 0);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void check_twice(void)
{
	char json[64], buf[65536];
	char *first[] = { "check", "--sim",  "T-2", "--schedules",
			  "2",     "--json", json,  NULL };
	char *second[] = { "check", "--sim",  "T-1", "--schedules",
			   "2",     "--json", json,  NULL };

	snprintf(json, sizeof(json), "/tmp/resid-commands-check-%d.json",
		 (int)getpid());
	CU_ASSERT_EQUAL(cmd_check(7, first), 0);
	take_json(json, buf, sizeof(buf));
	CU_ASSERT(count(buf, "\"id\": \"T-2\"") > 0);
	CU_ASSERT_EQUAL(count(buf, "\"id\": \"T-1\""), 0);
	CU_ASSERT_EQUAL(cmd_check(7, second), 0);
	take_json(json, buf, sizeof(buf));
	CU_ASSERT(count(buf, "\"id\": \"T-1\"") > 0);
	CU_ASSERT_EQUAL(count(buf, "\"id\": \"T-2\""), 0);
}

/* The first call writes --json, the second names none: it writes
 * nothing (a call that kept the first's options would write the file
 * again). */
static void explore_twice(void)
{
	char json[64], buf[4096];
	char *first[] = { "explore", "T-1", "--schedules", "2",
			  "--json",  json,  NULL };
	char *second[] = { "explore", "T-1", "--schedules", "2", NULL };

	snprintf(json, sizeof(json), "/tmp/resid-commands-explore-%d.json",
		 (int)getpid());
	CU_ASSERT_EQUAL(cmd_explore(6, first), 0);
	take_json(json, buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"schedules\": 2,"));
	CU_ASSERT_EQUAL(cmd_explore(4, second), 0);
	CU_ASSERT_EQUAL(access(json, F_OK), -1);
}

/* The first call names cold, the second dontneed: the second's rows are
 * dontneed's alone. */
static void hazards_twice(void)
{
	char json[64], buf[16384];
	char *first[] = { "hazards", "cold", NULL };
	char *second[] = { "hazards", "dontneed", "--json", json, NULL };

	snprintf(json, sizeof(json), "/tmp/resid-commands-hazards-%d.json",
		 (int)getpid());
	CU_ASSERT_EQUAL(cmd_hazards(2, first), 0);
	CU_ASSERT_EQUAL(cmd_hazards(4, second), 0);
	take_json(json, buf, sizeof(buf));
	CU_ASSERT_EQUAL(count(buf, "{\"hazard\": "), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "{\"hazard\": \"dontneed\""));
}

/* The first call names wake-no-waiter, the second uffd-read-empty: the
 * second's cases are its own. */
static void conformance_twice(void)
{
	char json[64], buf[65536];
	char *first[] = { "conformance", "wake-no-waiter", NULL };
	char *second[] = { "conformance", "uffd-read-empty", "--json", json,
			   NULL };

	snprintf(json, sizeof(json), "/tmp/resid-commands-conf-%d.json",
		 (int)getpid());
	CU_ASSERT_EQUAL(cmd_conformance(2, first), 0);
	CU_ASSERT_EQUAL(cmd_conformance(4, second), 0);
	take_json(json, buf, sizeof(buf));
	CU_ASSERT_EQUAL(count(buf, "{\"name\": "), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "{\"name\": \"uffd-read-empty\""));
}

/* One round each, on the real kernel: the second summary counts its own
 * round alone, of its own seed. */
static void storm_twice(void)
{
	char json[64], buf[65536], seed1[64];
	char *argv[] = { "storm",     "--rounds",  "1",      "--round",
			 "1",         "--seed",    "7",      "--no-swarm",
			 "--backing", "synthetic", "--json", json,
			 NULL };
	const char *at;

	snprintf(json, sizeof(json), "/tmp/resid-commands-storm-%d.json",
		 (int)getpid());
	CU_ASSERT_EQUAL(cmd_storm(12, argv), 0);
	take_json(json, buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL_FATAL(at = strstr(buf, "{\"seed\": "));
	snprintf(seed1, sizeof(seed1), "%.*s", (int)strcspn(at, ","), at);
	argv[6] = "8";
	CU_ASSERT_EQUAL(cmd_storm(12, argv), 0);
	take_json(json, buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"rounds\": 1,"));
	CU_ASSERT_EQUAL(count(buf, "{\"seed\": "), 1);
	CU_ASSERT_PTR_NULL(strstr(buf, seed1));
}

void suite_commands(void)
{
	CU_pSuite s = CU_add_suite("commands", NULL, NULL);

	CU_add_test(s, "check twice: the second call's rows are its own",
		    check_twice);
	CU_add_test(s, "explore twice: the second call's options are its own",
		    explore_twice);
	CU_add_test(s,
		    "real: hazards twice: the second call's rows are its "
		    "own",
		    hazards_twice);
	CU_add_test(s,
		    "real: conformance twice: the second call's cases are "
		    "its own",
		    conformance_twice);
	CU_add_test(s,
		    "real: storm twice: the second call's rounds are its "
		    "own",
		    storm_twice);
}
