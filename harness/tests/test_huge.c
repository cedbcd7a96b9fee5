/* Huge folios in B (design.md §8, I-9), on the simulated kernel: which regions
 * take them and why; a huge region's last chunk holds its tail up to the
 * folio's end, budgeted, so that accounting stays exact; the simulated
 * folio brings its whole block on a write, and a split that fails frees
 * nothing. */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "resid_harness.h"
#include "seam.h"
#include "sim/sim.h"
#include "tests/suites.h"

#define PAGE RESID_PAGE

struct choice {
	struct sim *s;
	struct resid_config c;
	int huge;       /* resid_huge, -1: refused */
	int violations; /* resid_check_quiescent after a read */
	uint64_t large; /* census at the end */
	char why[RESID_ERRLEN + 1024];
};

static void app_reads_all(struct choice *ch, struct resid_region *r)
{
	uint8_t buf[4 * SIM_FOLIO];

	for (uint32_t i = 0; i < resid_nchunks(r); i++) {
		uint64_t off, len;

		resid_chunk_range(r, i, &off, &len);
		resid_notify_access(r, i);
		if (sim_read(ch->s, resid_base(r) + off, buf, len) < 0)
			sim_fail(ch->s, "SIGBUS in chunk %u", i);
	}
}

static void open_region(void *arg)
{
	struct choice *ch = arg;
	struct resid_harness h;
	struct resid_region *r;

	resid_harness_init(&h);
	h.eager_reconcile = 1;
	h.seam = sim_seam(ch->s);
	ch->c.harness = &h;
	r = resid_open(&ch->c, ch->why);
	if (!r) {
		ch->huge = -1;
		return;
	}
	ch->huge = resid_huge(r);
	app_reads_all(ch, r);
	ch->violations = resid_check_quiescent(r);
	resid_folio_census(r, &ch->large);
	resid_manifest_json(r, ch->why, sizeof(ch->why));
	resid_close(r);
}

/* Four chunks of SIM_FOLIO (its PMD size), budget two, the huge tmpfs. */
static void run(struct choice *ch, void (*edit)(struct resid_config *c))
{
	struct sim_config sc = { .seed = 1, .strategy = SIM_RANDOM };
	enum sim_verdict v;

	ch->s = sim_create(&sc);
	resid_config_init(&ch->c);
	ch->c.region_len = 4 * SIM_FOLIO;
	ch->c.chunk_size = SIM_FOLIO;
	ch->c.budget_bytes = 2 * SIM_FOLIO;
	ch->c.backing = RESID_BACKING_SYNTHETIC;
	ch->c.fetch_workers = 1;
	ch->c.huge_dir = SIM_HUGE_DIR;
	if (edit)
		edit(&ch->c);
	v = sim_run(ch->s, open_region, ch);
	if (v != SIM_PASS)
		fprintf(stderr, "\n  %s: %s\n", sim_verdict_name(v),
			sim_why(ch->s));
	CU_ASSERT_EQUAL(v, SIM_PASS);
	sim_destroy(ch->s);
}

static void unaligned_end(struct resid_config *c)
{
	c->region_len -= PAGE + 123;
}

static const struct resid_chunk_spec table[] = {
	{ 0, SIM_FOLIO },
	{ SIM_FOLIO, SIM_FOLIO / 2 },
	{ SIM_FOLIO * 3 / 2, SIM_FOLIO * 5 / 2 },
};

static void unequal(struct resid_config *c)
{
	c->chunk_size = 0;
	c->table = table;
	c->table_len = 3;
	c->budget_bytes = 3 * SIM_FOLIO;
}

static void no_dir(struct resid_config *c)
{
	c->huge_dir = NULL;
}

static void dir_not_huge(struct resid_config *c)
{
	c->huge_dir = "/tmp";
}

static void one_short_chunk(struct resid_config *c)
{
	c->region_len = 3 * PAGE;
	c->chunk_size = 3 * PAGE;
	c->budget_bytes = 3 * PAGE;
}

static void folio_chunks_take_huge_folios(void)
{
	struct choice ch = { 0 };

	run(&ch, NULL);
	CU_ASSERT_EQUAL(ch.huge, 1);
	CU_ASSERT_EQUAL(ch.violations, 0);
	CU_ASSERT(ch.large > 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(ch.why, "\"b_folios\":\"16 KiB: tmpfs "
					      "huge= at /sim/huge"));
}

/* The last chunk ends unaligned: it holds its tail to the folio's end,
 * and st_blocks equals resident exactly at quiescence (I-7). */
static void unaligned_end_holds_its_tail(void)
{
	struct choice ch = { 0 };

	run(&ch, unaligned_end);
	CU_ASSERT_EQUAL(ch.huge, 1);
	CU_ASSERT_EQUAL(ch.violations, 0);
}

static void other_regions_keep_small_pages(void)
{
	struct choice ch = { 0 };

	run(&ch, unequal);
	CU_ASSERT_EQUAL(ch.huge, 0);
	CU_ASSERT_EQUAL(ch.violations, 0);
	CU_ASSERT_EQUAL(ch.large, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(ch.why,
				      "4 KiB: chunk 2 starts at "
				      "24576, not a multiple of the 16 KiB "
				      "folio"));
	memset(&ch, 0, sizeof(ch));
	run(&ch, no_dir);
	CU_ASSERT_EQUAL(ch.huge, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(ch.why, "shmem_enabled gives a memfd "
					      "no huge folios"));
	/* Rounded up to the folio it would exceed the budget. */
	memset(&ch, 0, sizeof(ch));
	run(&ch, one_short_chunk);
	CU_ASSERT_EQUAL(ch.huge, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(ch.why, "exceeds budget_bytes"));
}

static void huge_dir_elsewhere_refused(void)
{
	struct choice ch = { 0 };

	run(&ch, dir_not_huge);
	CU_ASSERT_EQUAL(ch.huge, -1);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(ch.why, "huge_dir /tmp: it is on / "
			       "(ext4), not a tmpfs mounted with huge="));
}

struct folio_prog {
	struct sim *s;
	uint64_t blocks[3];
};

static void folio_steps(void *arg)
{
	struct folio_prog *p = arg;
	const struct resid_seam *k = sim_seam(p->s);
	uint8_t page[PAGE] = { 1 };
	int fd = k->tmpfile_create(k->ctx, SIM_HUGE_DIR);

	if (fd < 0 || k->ftruncate(k->ctx, fd, 2 * SIM_FOLIO) ||
	    k->memfd_write(k->ctx, fd, page, PAGE, 0) != PAGE) {
		sim_fail(p->s, "setup failed");
		return;
	}
	k->fstat_blocks(k->ctx, fd, &p->blocks[0]);
	k->punch(k->ctx, fd, PAGE, PAGE);
	k->fstat_blocks(k->ctx, fd, &p->blocks[1]);
	k->punch(k->ctx, fd, 0, SIM_FOLIO);
	k->fstat_blocks(k->ctx, fd, &p->blocks[2]);
	k->close(k->ctx, fd);
}

/* One page written brings its whole folio; a punch inside it splits it
 * (freeing the page) or, when the split fails, frees nothing; a punch of
 * the whole folio frees it. */
static void split_that_fails_frees_nothing(void)
{
	for (int fails = 0; fails < 2; fails++) {
		struct sim_config sc = { .seed = 1,
					 .strategy = SIM_RANDOM,
					 .split_fails = fails };
		struct folio_prog p = { .s = sim_create(&sc) };

		CU_ASSERT_EQUAL(sim_run(p.s, folio_steps, &p), SIM_PASS);
		CU_ASSERT_EQUAL(p.blocks[0] * 512, SIM_FOLIO);
		CU_ASSERT_EQUAL(p.blocks[1] * 512,
				fails ? SIM_FOLIO : SIM_FOLIO - PAGE);
		CU_ASSERT_EQUAL(p.blocks[2], 0);
		sim_destroy(p.s);
	}
}

void suite_huge(void)
{
	CU_pSuite s = CU_add_suite("huge folios in B", NULL, NULL);

	CU_add_test(s, "chunks of the folio take huge folios",
		    folio_chunks_take_huge_folios);
	CU_add_test(s, "an unaligned end holds its tail, accounted",
		    unaligned_end_holds_its_tail);
	CU_add_test(s, "other regions keep 4 KiB pages, and say why",
		    other_regions_keep_small_pages);
	CU_add_test(s, "a huge_dir that is no huge tmpfs is refused",
		    huge_dir_elsewhere_refused);
	CU_add_test(s, "a split that fails frees nothing",
		    split_that_fails_frees_nothing);
}
