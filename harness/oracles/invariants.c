/* The invariants (invariants/) as an oracle, for every kind of run: the
 * pager reports a broken one where it breaks (harness builds), and the
 * run's sink gets its line: a simulated run ends there with it as its
 * reason, a scenario fails, a storm notes it. I-14 is also held against
 * the simulated kernel's own count, not only the pager's. */
#include <inttypes.h>
#include <stdio.h>

#include "invariants.h"
#include "oracle.h"

/* One watch at a time per process, as one region. */
static struct {
	uint64_t *count;
	void (*say)(void *arg, const char *line);
	void *arg;
} watch;

static void on_violation(int id, const char *msg, void *unused)
{
	char line[1024];

	(void)unused;
	if (watch.count)
		__atomic_add_fetch(watch.count, 1, __ATOMIC_RELAXED);
	snprintf(line, sizeof(line), "I-%d (%s): %s", id, inv_title(id), msg);
	watch.say(watch.arg, line);
}

void oracle_invariants_to(uint64_t *count,
			  void (*say)(void *arg, const char *line), void *arg)
{
	watch.count = count;
	watch.say = say;
	watch.arg = arg;
	inv_set_handler(on_violation, NULL);
}

static void sim_say(void *s, const char *line)
{
	sim_fail(s, "%s", line);
}

void oracle_invariants_watch(struct sim *s)
{
	oracle_invariants_to(NULL, sim_say, s);
}

void oracle_invariants_stop(void)
{
	inv_set_handler(NULL, NULL);
}

void oracle_kernel_tally(struct sim *s, const struct resid_stats *st,
			 uint64_t partial)
{
	uint64_t kernel = sim_continues_ok(s) - partial;

	uint64_t pager = st->continues_ok - st->lazy_fetches +
		st->continue_pieces + st->refaults_served + st->lazy_maps;

	if (pager != kernel)
		sim_fail(s, "I-14: pager counted %" PRIu64 " CONTINUEs, the "
			 "kernel %" PRIu64, pager, kernel);
}
