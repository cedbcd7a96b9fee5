/* The simulated side of the conformance table: each case runs as the
 * controlled thread 0 of a fresh simulation; a read through A is sim_read,
 * and readers have settled once the case's thread has slept: virtual time
 * moves only when every other thread is blocked or gone. */
#include <stdio.h>

#include "conformance/conformance.h"
#include "sim/sim.h"
#include "workload/huge_leg.h"

static void sim_read_a(struct conf_side *side, const uint8_t *addr,
		       uint8_t *dst, uint64_t len)
{
	sim_read(side->priv, addr, dst, len);
}

static int sim_drop_a(struct conf_side *side, const uint8_t *addr, uint64_t len)
{
	return sim_drop(side->priv, addr, len);
}

static int sim_settle(struct conf_side *side, struct conf_reader *r, int n)
{
	(void)r;
	(void)n;
	side->k->sleep_ns(side->k->ctx, 1000000);
	return 0;
}

static char sim_page(struct conf_side *side, const uint8_t *a, const uint8_t *b,
		     uint64_t page)
{
	int in_cache, mapped;

	(void)b;
	if (sim_page_state(side->priv, a + page * CONF_PAGE, &in_cache,
			   &mapped) < 0)
		return '?';
	return mapped ? 'M' : in_cache ? 'c' : '-';
}

struct job {
	struct conf_side *side;
	const struct conf_case *c;
	struct conf_run *out;
};

static void case_main(void *arg)
{
	struct job *j = arg;

	conf_exec(j->side, j->c, j->out);
}

int conf_run_sim(const struct conf_case *const *cases, int n,
		 struct conf_run *out, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		struct sim_config sc = {
			.seed = 1,
			.strategy = SIM_RANDOM,
			.folio_bytes = cases[i]->huge ? huge_leg_folio() : 0
		};
		struct sim *s = sim_create(&sc);
		struct conf_side side = {
			.name = "sim",
			.read_a = sim_read_a,
			.drop_a = sim_drop_a,
			.settle = sim_settle,
			.page_state = sim_page,
			.huge_dir = SIM_HUGE_DIR,
		};
		struct job j = { &side, cases[i], &out[i] };
		enum sim_verdict v;

		if (!s) {
			snprintf(err, errlen,
				 "out of memory for the simulation");
			return -1;
		}
		side.k = sim_seam(s);
		side.priv = s;
		v = sim_run(s, case_main, &j);
		if (v != SIM_PASS && !out[i].error[0])
			snprintf(out[i].error, sizeof(out[i].error), "%s: %s",
				 sim_verdict_name(v), sim_why(s));
		sim_destroy(s);
	}
	return 0;
}
