/* harness/cgroup/devclass.c: the classes and RATE[,IOPS] parsed, bad
 * values refused naming them, the throttle's v1 and v2 texts, and the
 * block device of a file (none for tmpfs). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/devclass.h"
#include "tests/suites.h"

static void test_parse(void)
{
	struct devclass dc;
	char err[400];

	CU_ASSERT_EQUAL(devclass_parse("host", &dc, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(devclass_throttles(&dc));
	CU_ASSERT_EQUAL(devclass_parse("sata", &dc, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dc.rbps, 550000000);
	CU_ASSERT_EQUAL(dc.riops, 98000);
	CU_ASSERT_EQUAL(devclass_parse("nvme4", &dc, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dc.rbps, 7000000000ull);
	CU_ASSERT_EQUAL(devclass_parse("200M", &dc, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dc.rbps, 200ull << 20);
	CU_ASSERT_EQUAL(dc.riops, 0);
	CU_ASSERT_STRING_EQUAL(devclass_label(&dc), "200M");
	CU_ASSERT_EQUAL(devclass_parse("1G,5K", &dc, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dc.rbps, 1ull << 30);
	CU_ASSERT_EQUAL(dc.riops, 5000);
	static const char *const bad[] = { "",        "ssd",   "0",
					   "200X",    "200M,", "200M,0",
					   "200M,5Q", ",5K",   "-1" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(devclass_parse(bad[i], &dc, err, sizeof(err)),
				-1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "nvme3"));
		CU_ASSERT_FALSE(devclass_throttles(&dc));
	}
}

static void test_texts(void)
{
	struct devclass dc;
	char err[400], t[96];

	CU_ASSERT_EQUAL_FATAL(devclass_parse("sata", &dc, err, sizeof(err)), 0);
	devclass_v1_text(&dc, 254, 0, 0, t, sizeof(t));
	CU_ASSERT_STRING_EQUAL(t, "254:0 550000000");
	devclass_v1_text(&dc, 254, 0, 1, t, sizeof(t));
	CU_ASSERT_STRING_EQUAL(t, "254:0 98000");
	devclass_v2_text(&dc, 8, 16, t, sizeof(t));
	CU_ASSERT_STRING_EQUAL(t, "8:16 rbps=550000000 riops=98000");
	CU_ASSERT_EQUAL_FATAL(devclass_parse("4K", &dc, err, sizeof(err)), 0);
	devclass_v2_text(&dc, 8, 16, t, sizeof(t));
	CU_ASSERT_STRING_EQUAL(t, "8:16 rbps=4096 riops=max");
}

/* /dev/shm is tmpfs: no block device. /proc/self/exe's file system has
 * one wherever the tests run from a disk; only tmpfs is asserted. */
static void test_device(void)
{
	struct devclass_dev d;
	char err[600] = "", path[] = "/dev/shm/resid-devclass-XXXXXX";
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL(devclass_device(path, &d, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no block device"));
	unlink(path);
	CU_ASSERT_EQUAL(devclass_device("/nonexistent/x", &d, err, sizeof(err)),
			-1);
}

void suite_devclass(void)
{
	CU_pSuite s = CU_add_suite("devclass", NULL, NULL);

	CU_add_test(s, "classes and RATE[,IOPS] parsed, bad values refused",
		    test_parse);
	CU_add_test(s, "the v1 and v2 throttle texts", test_texts);
	CU_add_test(s, "a file on tmpfs has no block device", test_device);
}
