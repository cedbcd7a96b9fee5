/* Livelock: a thread faults on one page again and again, woken each time
 * (the pager keeps answering: a WAKE, a CONTINUE of other pages) and never
 * finding the page mapped, so it never reads it. Nothing in the run is
 * stuck for the quiescence oracles to see, and the step budget would say
 * only "no progress" a million steps later. The simulated kernel counts
 * the faults (kernel_fault.c). */
#include <stdio.h>

#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"

void oracle_livelock(struct sim *s, const struct sim_thread *t)
{
	snprintf(s->why, sizeof(s->why),
		 "thread %u (%s) faulted %u times in "
		 "a row at offset %#llx (page %llu) of memfd %d (%s), woken "
		 "each time and the page never mapped",
		 t->id, t->name, t->loop_faults,
		 (unsigned long long)t->fault_off,
		 (unsigned long long)(t->fault_off / SIM_PAGE), t->fault_mf->fd,
		 t->fault_flags & UFFD_PAGEFAULT_FLAG_MINOR ? "MINOR" :
							      "MISSING");
	coro_end_run(s, SIM_LIVELOCK);
}

const struct oracle livelock_oracle = {
	.name = "livelock",
	.caught = "livelock (a fault woken, never mapped)",
};
