/* The conformance table: the simulated kernel shows the kernel facts of
 * design.md §2.7, the comparison notices a difference in any field, and (where
 * the pager can run) this kernel and the simulation agree on every case. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <string.h>

#include "cli/probe.h"
#include "conformance/conformance.h"
#include "tests/suites.h"

static struct conf_run sim[CONF_MAX_CASES], lx[CONF_MAX_CASES];

/* Runs one case on the simulated kernel; its observation after step i. */
static const struct conf_obs *sim_step(const char *name, int i)
{
	const struct conf_case *c = conf_case_find(name);
	char err[256];

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(conf_run_sim(&c, 1, &sim[0], err, sizeof(err)),
			      0);
	CU_ASSERT_STRING_EQUAL(sim[0].error, "");
	CU_ASSERT_FATAL(i < sim[0].nobs);
	return &sim[0].obs[i];
}

static void sim_has_the_kernel_facts(void)
{
	const struct conf_obs *o;

	o = sim_step("continue-hole", 0);
	CU_ASSERT_EQUAL(o->rc, -EFAULT);
	CU_ASSERT_EQUAL(o->mapped, -EFAULT);
	o = sim_step("continue-mapped", 2);
	CU_ASSERT_EQUAL(o->rc, -EEXIST);
	CU_ASSERT_EQUAL(o->mapped, -EEXIST);
	o = sim_step("continue-partial-hole", 1);
	CU_ASSERT_EQUAL(o->rc, -EAGAIN);
	CU_ASSERT_EQUAL(o->mapped, CONF_PAGE);
	CU_ASSERT_STRING_EQUAL(o->pages, "M---");
	o = sim_step("continue-bad-range", 1);
	CU_ASSERT_EQUAL(o->rc, -EINVAL);
	CU_ASSERT_EQUAL(o->mapped, 0);
	o = sim_step("uffd-read-empty", 0);
	CU_ASSERT_EQUAL(o->rc, -EAGAIN);
	o = sim_step("minor-fault", 1);
	CU_ASSERT_STRING_EQUAL(o->msgs, "MINOR@2");
	o = sim_step("punch-then-access", 3);
	CU_ASSERT_STRING_EQUAL(o->msgs, "MISSING@0");
	CU_ASSERT_EQUAL(o->st_blocks, 8);
	/* The partial CONTINUE woke nobody: no message after it. */
	o = sim_step("wake-covers-mapped-only", 3);
	CU_ASSERT_EQUAL(o->rc, -EAGAIN);
	CU_ASSERT_STRING_EQUAL(o->readers, "r0:blocked");
	o = sim_step("punch-partial-page", 3);
	/* 200 bytes zeroed: some of them, not all, differ from the content. */
	CU_ASSERT_EQUAL(strncmp(o->readers, "r0:mixed:", 9), 0);
	o = sim_step("continue-middle-mapped", 2);
	CU_ASSERT_EQUAL(o->rc, -EAGAIN);
	CU_ASSERT_EQUAL(o->mapped, 2 * CONF_PAGE);
	o = sim_step("continue-middle-mapped", 3);
	CU_ASSERT_EQUAL(o->rc, -EEXIST);
	/* A drop keeps the page cache; the page refaults MINOR. */
	o = sim_step("dontneed-refaults-minor", 2);
	CU_ASSERT_STRING_EQUAL(o->pages, "cM--");
	o = sim_step("dontneed-refaults-minor", 3);
	CU_ASSERT_STRING_EQUAL(o->msgs, "MINOR@0");
	o = sim_step("dontneed-refaults-minor", 4);
	CU_ASSERT_STRING_EQUAL(o->readers, "r0:content");
	o = sim_step("dontneed-under-faulter", 3);
	CU_ASSERT_STRING_EQUAL(o->readers, "r0:blocked");
	/* The end: the uffd closed, every page read through A. */
	o = sim_step("continue-filled", 4);
	CU_ASSERT_EQUAL(sim[0].nobs, 5);
	CU_ASSERT_STRING_EQUAL(o->readers, "r0:content r1:content");
	CU_ASSERT_STRING_EQUAL(o->sweep, "CC00");
}

static void diff_notices_every_field(void)
{
	struct conf_obs a = { .rc = 0,
			      .mapped = 4096,
			      .pages = "M---",
			      .st_blocks = 8,
			      .shmem = 4096,
			      .readers = "r0:content" },
			b;
	char buf[128];

	b = a;
	CU_ASSERT_EQUAL(conf_diff(&a, &b, 0, buf, sizeof(buf)), 0);
	b.rc = -EAGAIN;
	CU_ASSERT_EQUAL(conf_diff(&a, &b, 0, buf, sizeof(buf)), 1);
	CU_ASSERT_STRING_EQUAL(buf, "rc");
	b = a;
	b.mapped = -EEXIST;
	strcpy(b.msgs, "MINOR@0");
	strcpy(b.pages, "c---");
	b.st_blocks = 0;
	strcpy(b.readers, "r0:blocked");
	CU_ASSERT_EQUAL(conf_diff(&a, &b, 0, buf, sizeof(buf)), 5);
	CU_ASSERT_STRING_EQUAL(buf, "mapped, messages, pages, st_blocks, "
				    "readers");
	/* memory.stat: within the lag tolerance either way, not past it. */
	b = a;
	b.shmem = 0;
	CU_ASSERT_EQUAL(conf_diff(&a, &b, 4096, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(conf_diff(&b, &a, 4095, buf, sizeof(buf)), 1);
	CU_ASSERT_STRING_EQUAL(buf, "memory.stat");
}

static void this_kernel_agrees(void)
{
	const struct conf_case *all[64];
	struct probe p;
	uint64_t tol;
	char err[512], diff[128];

	probe_run(&p);
	if (!p.can_run) {
		CU_PASS("the pager cannot run here: no kernel to compare with");
		return;
	}
	for (int i = 0; i < conf_ncases; i++)
		all[i] = &conf_cases[i];
	CU_ASSERT_EQUAL_FATAL(conf_run_linux(all, conf_ncases, lx, &tol, err,
					     sizeof(err)),
			      0);
	CU_ASSERT_EQUAL_FATAL(conf_run_sim(all, conf_ncases, sim, err,
					   sizeof(err)),
			      0);
	for (int i = 0; i < conf_ncases; i++) {
		CU_ASSERT_STRING_EQUAL(lx[i].error, "");
		CU_ASSERT_STRING_EQUAL(sim[i].error, "");
		CU_ASSERT_EQUAL(lx[i].nobs, sim[i].nobs);
		for (int s = 0; s < lx[i].nobs && s < sim[i].nobs; s++)
			CU_ASSERT_EQUAL(conf_diff(&lx[i].obs[s], &sim[i].obs[s],
						  tol, diff, sizeof(diff)),
					0);
	}
}

void suite_conformance(void)
{
	CU_pSuite s = CU_add_suite("conformance of the simulated kernel", NULL,
				   NULL);

	CU_add_test(s, "the simulation shows the kernel facts",
		    sim_has_the_kernel_facts);
	CU_add_test(s, "a difference in any field is noticed",
		    diff_notices_every_field);
	CU_add_test(s, "this kernel and the simulation agree",
		    this_kernel_agrees);
}
