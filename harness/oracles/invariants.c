/* The invariants (invariants/) as an oracle, for every kind of run: the
 * pager reports a broken one where it breaks (harness builds), and the
 * run's sink gets its line: a scenario fails, a storm notes it, a
 * simulated run ends there with it as its reason (sim/oracles/). */
#include <stdio.h>

#include "invariants.h"
#include "oracles/oracle.h"

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

void oracle_invariants_stop(void)
{
	inv_set_handler(NULL, NULL);
}
