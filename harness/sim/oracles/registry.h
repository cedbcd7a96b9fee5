/* The oracles that end a simulated run. Which oracle said no is an entry
 * of the one registry, oracles.def: its name is the verdict a simulated run prints
 * and a report column, and `residctl repro` says from it what caught a
 * bug. */
#ifndef HARNESS_REGISTRY_H
#define HARNESS_REGISTRY_H

#include <stddef.h>

#include "base/row.h"

struct sim;

struct oracle {
	/* The verdict of a run it ends, in replay lines and as its report
	 * column: "deadlock". Never NULL (test_oracles.c checks). */
	const char *name;
	/* What caught a bug, in a few words, for repro's table. */
	const char *caught;
	/* Or, when the why line tells more (NULL: `caught` alone): writes
	 * what caught it from why. */
	void (*classify)(const char *why, char *buf, size_t n);
	/* A simulated run in which nothing can run any more: 1 with s->why
	 * written when this oracle explains it, else 0 (NULL: it judges no
	 * quiescent run). Asked in registry order. */
	int (*quiescent)(struct sim *s);
};

#define ORACLE(e, x) extern const struct oracle x##_oracle;
#include "sim/oracles/oracles.def"
#undef ORACLE

/* Indexed by enum sim_verdict; the entry for SIM_PASS has only a name. */
extern const struct oracle *const oracles[];
extern const int noracles;

/* Oracle v's classification of a failure whose reason is why. */
void oracle_caught(int v, const char *why, char *buf, size_t n);

#endif
