/* A controlled thread that crashed or spun (guard.c caught it): the reason
 * names the signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, or SIGABRT: abort, a
 * failed assert) or the spin, the thread and the function, as one line
 * that is the same in every replay (no address that moves between
 * processes). A crash is SIM_CRASH, a spin SIM_NO_PROGRESS. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"
#include "sim/symbol.h"

static const char *what(const struct sim_crash *c, const struct sim_thread *t)
{
	switch (c->sig) {
	case SIGFPE:
		return c->code == FPE_INTDIV ? "integer divide by zero" :
					       "arithmetic exception";
	case SIGSEGV:
		if (c->addr >= (uintptr_t)t->stack &&
		    c->addr < (uintptr_t)t->stack + SIM_PAGE)
			return "stack overflow";
		return c->addr < SIM_PAGE ? "NULL pointer access" :
					    "invalid memory access";
	case SIGBUS:
		return "bus error";
	case SIGILL:
		return "illegal instruction";
	case SIGABRT:
		return "abort or failed assertion";
	default:
		return "signal";
	}
}

/* The innermost function of this executable on the thread's stack, and
 * its caller, skipping guard.c's handler. */
static void where(const struct sim_crash *c, char *buf, size_t n)
{
	const char *fn[2] = { symbol_name(c->pc), NULL };
	int k = fn[0] ? 1 : 0;

	for (int i = 0; i < c->nframes && k < 2; i++) {
		/* A return address: the call is the byte before it. */
		const char *f = symbol_name((uintptr_t)c->frames[i] - 1);

		if (!f || !strcmp(f, "on_signal") || !strcmp(f, "on_tick") ||
		    !strcmp(f, "record") || (k && !strcmp(f, fn[k - 1])))
			continue;
		fn[k++] = f;
	}
	if (!k)
		snprintf(buf, n, "outside this executable");
	else if (k == 1)
		snprintf(buf, n, "in %s", fn[0]);
	else
		snprintf(buf, n, "in %s, called from %s", fn[0], fn[1]);
}

void oracle_crash(struct sim *s)
{
	const struct sim_crash *c = &s->crash;
	const struct sim_thread *t = s->threads[c->thread];
	char at[200];

	where(c, at, sizeof(at));
	if (c->sig)
		snprintf(s->why, sizeof(s->why),
			 "SIG%s (%s) in thread "
			 "%u (%s), %s",
			 sigabbrev_np(c->sig), what(c, t), t->id, t->name, at);
	else
		snprintf(s->why, sizeof(s->why),
			 "no scheduling point for %llu "
			 "ms of CPU time in thread %u (%s), %s",
			 (unsigned long long)s->spin_ms, t->id, t->name, at);
}

static void classify(const char *why, char *buf, size_t n)
{
	snprintf(buf, n, "crash %.*s", (int)strcspn(why, " "), why);
}

const struct oracle crash_oracle = {
	.name = "crash",
	.caught = "crash",
	.classify = classify,
};
