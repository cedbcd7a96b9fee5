/* Reference tracing (resid_config.trace_fn, pager/trace.c) in the
 * simulated kernel: one thread's chunk switches are recorded exactly,
 * repeats folded, under every schedule, at a budget of the whole region
 * and of half of it; two threads' records keep each thread's order, and
 * threads on different chunks never take each other's pages; a drop the
 * kernel refuses is counted. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault/fault.h"
#include "resid_harness.h"
#include "seam.h"
#include "sim/sim.h"
#include "tests/suites.h"

#define PAGE RESID_PAGE
#define CHUNK (16u << 10)
#define NCHUNKS 4
#define SEED 5
#define SEEDS 40
#define MAXREC 256

struct scen {
	struct sim *s;
	struct fault_seam *fs;
	struct resid_region *r;
	struct resid_stats st;
	int threads;
	uint64_t budget;
	uint32_t rec[MAXREC];
	uint32_t nrec;
};

/* The dispatcher calls it, one call at a time. */
static void record(void *arg, uint32_t chunk)
{
	struct scen *sc = arg;

	if (sc->nrec < MAXREC)
		sc->rec[sc->nrec] = chunk;
	sc->nrec++;
}

/* Reads page `page` of chunk `chunk` and checks its bytes. */
static int read_page(struct scen *sc, uint32_t chunk, uint32_t page)
{
	uint8_t buf[PAGE];
	uint64_t off = (uint64_t)chunk * CHUNK + (uint64_t)page * PAGE;

	if (sim_read(sc->s, resid_base(sc->r) + off, buf, PAGE) < 0) {
		sim_fail(sc->s, "chunk %u page %u: SIGBUS", chunk, page);
		return -1;
	}
	if (resid_content_mismatches(buf, off, PAGE, SEED)) {
		sim_fail(sc->s, "chunk %u page %u: bytes differ", chunk, page);
		return -1;
	}
	return 0;
}

/* One thread: page 0 of each chunk of the pattern, page 1 on a repeat. A
 * return reads a page read before: it faults only if tracing dropped it
 * (or, at the smaller budget, the chunk was evicted). */
static const uint32_t pattern[] = { 0, 1, 1, 0, 2, 3, 3, 1, 0, 0, 2 };
static const uint32_t expected[] = { 0, 1, 0, 2, 3, 1, 0, 2 };

static void app_one(void *arg)
{
	struct scen *sc = arg;

	for (uint32_t i = 0; i < sizeof(pattern) / sizeof(*pattern); i++)
		if (read_page(sc, pattern[i],
			      i && pattern[i] == pattern[i - 1]))
			return;
}

/* Two threads: one reads chunks 0 then 1, the other 2 then 3, whole. */
static uint32_t next_thread;

static void app_two(void *arg)
{
	struct scen *sc = arg;
	uint32_t first = 2 * (next_thread++ % 2);

	for (uint32_t c = first; c < first + 2; c++)
		for (uint32_t p = 0; p < CHUNK / PAGE; p++)
			if (read_page(sc, c, p))
				return;
}

static void scenario(void *arg)
{
	struct scen *sc = arg;
	struct resid_config c;
	struct resid_harness h;
	char err[RESID_ERRLEN];

	resid_config_init(&c);
	c.region_len = NCHUNKS * CHUNK;
	c.chunk_size = CHUNK;
	c.budget_bytes = sc->budget;
	c.backing = RESID_BACKING_SYNTHETIC;
	c.seed = SEED;
	c.policy = RESID_POLICY_DECLARED;
	c.fetch_workers = 2;
	c.trace_fn = record;
	c.trace_arg = sc;
	resid_harness_init(&h);
	h.seam = fault_seam_ops(sc->fs);
	c.harness = &h;
	sc->r = resid_open(&c, err);
	if (!sc->r) {
		sim_fail(sc->s, "resid_open: %s", err);
		return;
	}
	next_thread = 0;
	for (int i = 0; i < sc->threads; i++)
		if (sim_spawn(sc->s, sc->threads == 1 ? app_one : app_two, sc,
			      "app") < 0)
			sim_fail(sc->s, "sim_spawn failed");
	sim_join_apps(sc->s);
	resid_get_stats(sc->r, &sc->st);
	resid_close(sc->r);
}

static uint64_t draw(void *s)
{
	return sim_draw(s);
}

/* One schedule; the verdict, with sc filled. */
static enum sim_verdict run(uint64_t seed, int threads, uint64_t budget,
			    const struct fault_plan *plan, struct scen *sc,
			    uint64_t *fired)
{
	struct sim_config cfg = { .seed = seed, .strategy = SIM_RANDOM };
	enum sim_verdict v;

	memset(sc, 0, sizeof(*sc));
	sc->threads = threads;
	sc->budget = budget;
	sc->s = sim_create(&cfg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc->s);
	sc->fs = fault_seam_new(sim_seam(sc->s), plan, seed, draw, sc->s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc->fs);
	v = sim_run(sc->s, scenario, sc);
	if (v != SIM_PASS)
		fprintf(stderr, "\n  seed %llu, %d thread(s): %s: %s\n",
			(unsigned long long)seed, threads, sim_verdict_name(v),
			sim_why(sc->s));
	*fired = fault_seam_fired(sc->fs, FP_DROP_A);
	fault_seam_free(sc->fs);
	sim_destroy(sc->s);
	return v;
}

static void one_thread(void)
{
	static const struct fault_plan none;
	struct scen *sc = malloc(sizeof(*sc));
	uint64_t fired;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	/* The whole region, and half of it: evictions too. */
	for (uint64_t seed = 1; seed <= 2 * SEEDS; seed++) {
		uint64_t budget = (seed % 2 ? NCHUNKS : 2) * CHUNK;

		CU_ASSERT_EQUAL_FATAL(run(seed, 1, budget, &none, sc, &fired),
				      SIM_PASS);
		CU_ASSERT_EQUAL_FATAL(sc->nrec,
				      sizeof(expected) / sizeof(*expected));
		CU_ASSERT_EQUAL_FATAL(memcmp(sc->rec, expected,
					     sizeof(expected)),
				      0);
		CU_ASSERT_EQUAL(sc->st.trace_records, sc->nrec);
		CU_ASSERT_EQUAL(sc->st.trace_drop_errors, 0);
		CU_ASSERT_EQUAL(fired, 0);
	}
	free(sc);
}

/* Each thread's chunks in its own order: every record of its first chunk
 * before every record of its second; no record repeats the one before;
 * at most a record per fault on a page not read before (16) and per
 * eviction: threads on different chunks never take each other's pages
 * (a livelock the simulation would call a hang, or records without
 * end). */
static void two_threads_interleave(void)
{
	static const struct fault_plan none;
	struct scen *sc = malloc(sizeof(*sc));
	uint64_t fired;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		int last[NCHUNKS] = { -1, -1, -1, -1 };
		int first[NCHUNKS] = { -1, -1, -1, -1 };

		CU_ASSERT_EQUAL_FATAL(run(seed, 2, 2 * CHUNK, &none, sc,
					  &fired),
				      SIM_PASS);
		CU_ASSERT_FATAL(sc->nrec >= NCHUNKS &&
				sc->nrec <= NCHUNKS * CHUNK / PAGE +
						    sc->st.evictions);
		for (uint32_t i = 0; i < sc->nrec; i++) {
			CU_ASSERT_FATAL(sc->rec[i] < NCHUNKS);
			CU_ASSERT(i == 0 || sc->rec[i] != sc->rec[i - 1]);
			if (first[sc->rec[i]] < 0)
				first[sc->rec[i]] = (int)i;
			last[sc->rec[i]] = (int)i;
		}
		for (int c = 0; c < NCHUNKS; c++)
			CU_ASSERT(first[c] >= 0);
		CU_ASSERT(last[0] < first[1]);
		CU_ASSERT(last[2] < first[3]);
	}
	free(sc);
}

/* The first drop refused: counted, and the run still reads right. */
static void drop_refused(void)
{
	struct fault_plan plan = { 0 };
	char err[256];
	struct scen *sc = malloc(sizeof(*sc));
	uint64_t fired;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL_FATAL(fault_plan_add(&plan, "test", "drop_a@1", err,
					     sizeof(err)),
			      0);
	CU_ASSERT_EQUAL_FATAL(run(1, 1, NCHUNKS * CHUNK, &plan, sc, &fired),
			      SIM_PASS);
	CU_ASSERT_EQUAL(fired, 1);
	CU_ASSERT_EQUAL(sc->st.trace_drop_errors, 1);
	CU_ASSERT(sc->st.trace_records > 0);
	free(sc);
}

void suite_reftrace(void)
{
	CU_pSuite s = CU_add_suite("reftrace", NULL, NULL);

	if (!s)
		return;
	CU_add_test(s, "one thread's switches, exactly, every schedule",
		    one_thread);
	CU_add_test(s, "two threads' records interleave in program order",
		    two_threads_interleave);
	CU_add_test(s, "a refused drop is counted", drop_refused);
}
