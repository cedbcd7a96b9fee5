/* The invariant checks themselves: each must say no when it should. */
#include <CUnit/CUnit.h>

#include "invariants.h"
#include "tests/suites.h"

static int seen;

static void count(int id, const char *msg, void *arg)
{
	(void)id;
	(void)msg;
	(void)arg;
	seen++;
}

static void thp_found_in_smaps(void)
{
	static const char smaps[] =
		"7f0000000000-7f0000200000 r--s 00000000 00:01 5 /memfd:x\n"
		"Size:               2048 kB\n"
		"AnonHugePages:         0 kB\n"
		"ShmemPmdMapped:     2048 kB\n"
		"FilePmdMapped:         0 kB\n"
		"VmFlags: rd sh mr mw me ms nh\n"
		"7f0000200000-7f0000400000 rw-s 00000000 00:01 5 /memfd:x\n"
		"Size:               2048 kB\n"
		"ShmemPmdMapped:        0 kB\n";

	seen = 0;
	CU_ASSERT_EQUAL(inv_no_thp(smaps, (void *)0x7f0000000000), 0);
	CU_ASSERT_EQUAL(inv_no_thp(smaps, (void *)0x7f0000200000), 1);
	CU_ASSERT_EQUAL(inv_no_thp(smaps, (void *)0x7f0000600000), -1);
	CU_ASSERT_EQUAL(seen, 1);
}

/* I-9 on the folio census: large folios only in a region on the huge path. */
static void large_folios_only_when_huge(void)
{
	seen = 0;
	CU_ASSERT_EQUAL(inv_folios(1, 2 << 20, "huge"), 1);
	CU_ASSERT_EQUAL(inv_folios(0, 0, "4 KiB"), 1);
	CU_ASSERT_EQUAL(seen, 0);
	CU_ASSERT_EQUAL(inv_folios(0, 4096, "4 KiB: chunk 1 starts at 4096"),
			0);
	CU_ASSERT_EQUAL(seen, 1);
}

static void accounting_two_sided(void)
{
	struct resid_accounting a = {
		.resident = 8 << 20,
		.reserved = 2 << 20,
		.have_cgroup = 1,
		.shmem_baseline = 4096,
		.tolerance = 512 << 10,
	};
	char why[256];

	seen = 0;
	a.st_bytes = 9 << 20; /* a fetch half way through populating B */
	a.shmem = (9 << 20) + 4096;
	CU_ASSERT(inv_accounting(&a, why, sizeof(why)));
	a.st_bytes = (10 << 20) + 4096; /* more than resident + reserved */
	CU_ASSERT(!inv_accounting(&a, why, sizeof(why)));
	a.st_bytes = (8 << 20) - 4096; /* a resident chunk lost a page */
	CU_ASSERT(!inv_accounting(&a, why, sizeof(why)));
	a.st_bytes = 8 << 20;
	a.shmem = (8 << 20) + 4096 - (512 << 10); /* lag within tolerance */
	CU_ASSERT(inv_accounting(&a, why, sizeof(why)));
	a.shmem -= 4096;
	CU_ASSERT(!inv_accounting(&a, why, sizeof(why)));
	CU_ASSERT_EQUAL(seen, 3);
}

static void budget_and_pins(void)
{
	seen = 0;
	CU_ASSERT(inv_budget(4096, 4096));
	CU_ASSERT(!inv_budget(8192, 4096));
	CU_ASSERT(inv_pin(0, 1, 0));
	CU_ASSERT(!inv_pin(0, 1, 1));
	CU_ASSERT(!inv_pin(0, -1, 0));
	CU_ASSERT(!inv_punch_ok(3, 1, 1, 0));
	CU_ASSERT(!inv_punch_ok(3, 1, 0, 1));
	CU_ASSERT(inv_punch_ok(3, 1, 0, 0));
	CU_ASSERT_EQUAL(seen, 5);
}

/* overlap_evict's dropped prefixes (I-4) and the books they leave (I-7). */
static void dropped_prefixes(void)
{
	seen = 0;
	CU_ASSERT(inv_dropped(1, 0, 0, 65536, 4096));
	CU_ASSERT(inv_dropped(1, 1, 8192, 65536, 4096));
	CU_ASSERT(!inv_dropped(1, 0, 8192, 65536, 4096));
	CU_ASSERT(!inv_dropped(1, 1, 65536, 65536, 4096));
	CU_ASSERT(!inv_dropped(1, 1, 4096, 65536 * 32, 2 << 20));
	CU_ASSERT(inv_resident_sum(57344, 57344));
	CU_ASSERT(!inv_resident_sum(65536, 57344));
	CU_ASSERT_EQUAL(seen, 4);
}

static int install(void)
{
	inv_set_handler(count, NULL);
	return 0;
}

static int uninstall(void)
{
	inv_set_handler(NULL, NULL);
	return 0;
}

void suite_invariants(void)
{
	CU_pSuite s = CU_add_suite("invariants", install, uninstall);

	CU_add_test(s, "I-9 huge pages found in smaps", thp_found_in_smaps);
	CU_add_test(s, "I-9 large folios only on the huge path",
		    large_folios_only_when_huge);
	CU_add_test(s, "I-7 two-sided accounting", accounting_two_sided);
	CU_add_test(s, "I-11, I-12, I-4", budget_and_pins);
	CU_add_test(s, "I-4, I-7 of dropped prefixes", dropped_prefixes);
}
