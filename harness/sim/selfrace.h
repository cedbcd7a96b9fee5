/* The simulation build's self-test: a plain, unlocked, unannotated
 * read-modify-write. In `make simx` this file is instrumented like the
 * pager (harness/sim/access.c), so only there can a schedule split the read
 * from the write; every other build runs it as one step. */
#ifndef HARNESS_SIM_SELFRACE_H
#define HARNESS_SIM_SELFRACE_H

#include <stdint.h>

void selfrace_bump(uint64_t *counter);

#endif
