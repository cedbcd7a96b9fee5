/* Kernels users run differ from this machine's (design.md §2.7, §10): a kernel
 * without THP (PREEMPT_RT: MADV_NOHUGEPAGE fails with EINVAL), no memory
 * controller at all (6.12 with only v1 hierarchies), swap on while started
 * from a root cgroup. Made here through a seam that wraps the Linux one and
 * through the probe's verdict; the kernel matrix meets them for real. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/probe.h"
#include "resid_harness.h"
#include "seam.h"
#include "tests/suites.h"

static struct resid_seam fake;
static int nohuge_errno;

static int fake_nohugepage(void *ctx, void *addr, uint64_t len)
{
	if (nohuge_errno)
		return -nohuge_errno;
	return resid_seam_linux.nohugepage(ctx, addr, len);
}

static struct resid_region *open_with(int err_no, char err[RESID_ERRLEN])
{
	struct resid_config c;
	struct resid_harness h;

	resid_config_init(&c);
	resid_harness_init(&h);
	c.region_len = 8 << 20;
	c.chunk_size = 2 << 20;
	c.budget_bytes = 4 << 20;
	c.backing = RESID_BACKING_SYNTHETIC;
	h.seam = &fake;
	c.harness = &h;
	nohuge_errno = err_no;
	return resid_open(&c, err);
}

/* EINVAL means "no THP here, nothing to forbid"; any other errno is still
 * a refusal that names the call. */
static void kernel_without_thp_opens(void)
{
	char err[RESID_ERRLEN];
	struct resid_region *r = open_with(EINVAL, err);

	CU_ASSERT_PTR_NOT_NULL(r);
	if (!r)
		printf("\n    resid_open: %s ", err);
	resid_close(r);
	r = open_with(ENOMEM, err);
	CU_ASSERT_PTR_NULL(r);
	if (r)
		resid_close(r);
	else
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "MADV_NOHUGEPAGE"));
}

/* A probe that found everything the pager needs. */
static void good_probe(struct probe *p, int version, const char *rel,
		       uint64_t swap_total)
{
	memset(p, 0, sizeof(*p));
	p->uffd_ok = 1;
	p->features = UFFD_FEATURE_MISSING_SHMEM | UFFD_FEATURE_MINOR_SHMEM;
	p->cg.version = version;
	snprintf(p->cg.rel, sizeof(p->cg.rel), "%s", rel);
	p->cg.swap_total = swap_total;
	p->swap_cond = version == CG_NONE ? -1 : CG_SWAP_V2_MAX_ZERO;
}

static void probe_without_memory_controller_says_no(void)
{
	static struct probe p;

	good_probe(&p, CG_NONE, "", 0);
	probe_decide(&p, NULL);
	CU_ASSERT_EQUAL(p.can_run, 0);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(p.verdict, "no memory cgroup controller"));
	/* even where no swap is configured, which I-3 alone would accept */
	p.swap_cond = 2;
	probe_decide(&p, NULL);
	CU_ASSERT_EQUAL(p.can_run, 0);
}

/* I-3 is decided in the scenarios' child cgroup, not where residctl
 * starts: a root cgroup with swap on is fine when the child forbids it. */
static void probe_swap_at_root_is_decided_in_the_child(void)
{
	static struct probe p;

	good_probe(&p, CG_V2, "/", 1ull << 30);
	probe_decide(&p, NULL);
	CU_ASSERT_EQUAL(p.can_run, 1);
	CU_ASSERT_STRING_EQUAL(p.verdict, "yes");
	good_probe(&p, CG_V1, "/", 1ull << 30);
	p.swap_cond = CG_SWAP_V1_MEMSW_EQ_LIMIT;
	probe_decide(&p, NULL);
	CU_ASSERT_EQUAL(p.can_run, 1);
	/* the trial child could not be made: no, with its reason */
	probe_decide(&p, "cgroup: mkdir /x: permission denied");
	CU_ASSERT_EQUAL(p.can_run, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(p.verdict, "permission denied"));
}

/* 6.1's features, 7.3's (two bits more than 6.18's MOVE: RWP, RWP_ASYNC)
 * and a bit no kernel had yet, by name; 7.3's API ioctls. */
static void probe_names_feature_bits(void)
{
	struct probe p = { .features = 0x1fff };
	char b[512];

	probe_feature_names(&p, b, sizeof(b));
	CU_ASSERT_STRING_EQUAL(b,
			       "PAGEFAULT_FLAG_WP EVENT_FORK EVENT_REMAP "
			       "EVENT_REMOVE MISSING_HUGETLBFS MISSING_SHMEM "
			       "EVENT_UNMAP SIGBUS THREAD_ID MINOR_HUGETLBFS "
			       "MINOR_SHMEM EXACT_ADDRESS WP_HUGETLBFS_SHMEM");
	p.features = 0x7c000 | 1ull << 19;
	probe_feature_names(&p, b, sizeof(b));
	CU_ASSERT_STRING_EQUAL(b, "POISON WP_ASYNC MOVE RWP RWP_ASYNC bit19");
	p.ioctls = 0x8000000000000403ull;
	probe_ioctl_names(&p, b, sizeof(b));
	CU_ASSERT_STRING_EQUAL(b, "REGISTER UNREGISTER SET_MODE API");
	/* cut short, still a string */
	probe_feature_names(&p, b, 10);
	CU_ASSERT_STRING_EQUAL(b, "POISON WP");
}

static int setup(void)
{
	fake = resid_seam_linux;
	fake.name = "no-thp";
	fake.nohugepage = fake_nohugepage;
	return 0;
}

void suite_kernel_facts(void)
{
	CU_pSuite s = CU_add_suite("kernel facts", setup, NULL);

	if (!s)
		return;
	if (!CU_add_test(s, "kernel without THP opens a region",
			 kernel_without_thp_opens) ||
	    !CU_add_test(s, "probe: no memory controller is a no",
			 probe_without_memory_controller_says_no) ||
	    !CU_add_test(s, "probe: swap at the root is decided in the child",
			 probe_swap_at_root_is_decided_in_the_child) ||
	    !CU_add_test(s, "probe: uffd feature and ioctl bits by name",
			 probe_names_feature_bits))
		return; /* run.c reports CU_get_error() */
}
