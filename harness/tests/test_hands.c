/* What an application does to its mapping, on the real kernel, at the
 * unit level: a page whose entry it dropped is read again, and a fetch
 * crosses a border its advice split the mapping at. */
#include <CUnit/CUnit.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "resid_harness.h"
#include "tests/suites.h"
#include "tests/unit_cgroup.h"

#define CHUNK (1u << 20)
#define CHUNKS 4

static struct unit_cgroup cg;
static sigjmp_buf *bus_jump;

static void on_bus(int sig)
{
	(void)sig;
	if (bus_jump)
		siglongjmp(*bus_jump, 1);
	abort();
}

/* A region of CHUNKS synthetic chunks, budget `budget` chunks. */
static struct resid_region *open_region(uint32_t budget)
{
	struct resid_config c;
	char err[RESID_ERRLEN];

	resid_config_init(&c);
	c.region_len = CHUNKS * CHUNK;
	c.chunk_size = CHUNK;
	c.budget_bytes = (uint64_t)budget * CHUNK;
	c.backing = RESID_BACKING_SYNTHETIC;
	c.seed = 5;
	struct resid_region *r = resid_open(&c, err);

	if (!r)
		fprintf(stderr, "hands suite: %s\n", err);
	return r;
}

/* Wrong bytes in [off, off + len), or UINT64_MAX when the read raised
 * SIGBUS. */
static uint64_t check(struct resid_region *r, uint64_t off, uint64_t len)
{
	sigjmp_buf jump;
	struct sigaction sa = { .sa_handler = on_bus }, old;
	uint64_t bad = UINT64_MAX;

	sigemptyset(&sa.sa_mask);
	CU_ASSERT_EQUAL_FATAL(sigaction(SIGBUS, &sa, &old), 0);
	if (!sigsetjmp(jump, 1)) {
		bus_jump = &jump;
		bad = resid_content_mismatches(resid_base(r) + off, off, len,
					       5);
	}
	bus_jump = NULL;
	sigaction(SIGBUS, &old, NULL);
	return bad;
}

/* MADV_DONTNEED on a resident chunk drops its entries; read again, the
 * pages refault and must be mapped, not only woken (a wake alone makes
 * the reader fault for ever: the suite's time limit ends it). */
static void dropped_entries_are_served(void)
{
	struct resid_region *r = open_region(CHUNKS);
	struct resid_stats s;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(check(r, CHUNK, CHUNK), 0);
	CU_ASSERT_EQUAL(madvise((void *)(resid_base(r) + CHUNK + 8192),
				64 << 10, MADV_DONTNEED),
			0);
	CU_ASSERT_EQUAL(check(r, CHUNK, CHUNK), 0);
	/* The CONTINUE wakes the reader before the dispatcher counts it. */
	for (int i = 0; i < 1000; i++) {
		CU_ASSERT_EQUAL_FATAL(resid_get_stats(r, &s), 0);
		if (s.refaults_served >= 16)
			break;
		usleep(1000);
	}
	CU_ASSERT_EQUAL(s.refaults_served, 16);
	CU_ASSERT_EQUAL(s.fetches, 1);
	resid_close(r);
}

/* MADV_RANDOM on the middle of an absent chunk splits the mapping: the
 * fetch's CONTINUE over the whole chunk fails with ENOENT and must map
 * it piece by piece instead of failing the chunk (SIGBUS). */
static void fetch_crosses_a_split(void)
{
	struct resid_region *r = open_region(1);
	struct resid_stats s;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(madvise((void *)(resid_base(r) + 2 * CHUNK + 65536),
				65536, MADV_RANDOM),
			0);
	CU_ASSERT_EQUAL(check(r, 2 * CHUNK, CHUNK), 0);
	CU_ASSERT_EQUAL(check(r, 0, CHUNKS * CHUNK), 0);
	CU_ASSERT_EQUAL(resid_get_stats(r, &s), 0);
	CU_ASSERT(s.continue_split > 0);
	CU_ASSERT_EQUAL(s.failed_chunks, 0);
	resid_close(r);
}

static int setup(void)
{
	return unit_cgroup_enter(&cg, "hands", "unit-hands");
}

static int teardown(void)
{
	return unit_cgroup_leave(&cg);
}

void suite_hands(void)
{
	CU_pSuite s = CU_add_suite("hands on the mapping", setup, teardown);

	CU_add_test(s, "a page whose entry was dropped is mapped again",
		    dropped_entries_are_served);
	CU_add_test(s, "a fetch across a border of a split mapping",
		    fetch_crosses_a_split);
}
