/* The oracles of the simulated kernel (design.md §4), one file each in
 * harness/sim/oracles/; those that end a run are entries of the registry
 * (oracles.def, registry.h): why a run that can no longer move ended
 * (deadlock, lost wakeup, no signal, hang: quiescence.c asks them in the
 * registry's order), a crash or a spin, and the checks a run makes as it
 * goes (the invariants, the content). What real-kernel runs judge too is
 * harness/oracles/'s. */
#ifndef HARNESS_SIM_ORACLE_H
#define HARNESS_SIM_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "oracles/oracle.h"
#include "resid.h"
#include "sim/oracles/registry.h"
#include "sim/sim.h"

struct sim_thread;

/* Nothing runs and nothing will (or only timers fire, idly): the verdict,
 * with s->why saying why. */
enum sim_verdict oracle_quiescence(struct sim *s);

/* A crash or a spin that guard.c caught: s->why names the signal (or the
 * spin limit), the thread and the function. */
void oracle_crash(struct sim *s);

/* Faults in a row on one page, each woken with the page still not
 * mapped, after which a run is a livelock: the pager's retries (a refetch,
 * a wake of a message read late) made at most 7 in check --sim campaigns,
 * every fault point on at 2 %. */
#define ORACLE_FAULT_LOOP 100
/* Ends the run as SIM_LIVELOCK, blaming thread t and its page. */
void oracle_livelock(struct sim *s, const struct sim_thread *t)
	__attribute__((noreturn));

/* For the oracles: s->why = "WHAT: thread N (name) <its wait>". */
void oracle_blame(struct sim *s, const struct sim_thread *t, const char *what);
/* Blames the first thread in id order waiting in state w (enum
 * sim_wait) as `what`: 1, or 0 when no thread waits so. */
int oracle_blame_first(struct sim *s, int w, const char *what);
/* Appends to a why; cut short when it outgrows buf. */
void oracle_appendf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The invariants watch (oracle_invariants_to) for the simulated run s:
 * the line fails it. */
void oracle_invariants_watch(struct sim *s);

/* I-14 against the simulated kernel's own tally of CONTINUEs, less the
 * `partial` ones the fault seam cut short and answered with EAGAIN. */
void oracle_kernel_tally(struct sim *s, const struct resid_stats *st,
			 uint64_t partial);

/* Every byte of buf, read at region offset off, against the content of
 * (offset, seed) (read_check); a mismatch fails the run naming chunk and
 * range. Adds len to *checked; returns the bytes wrong. */
uint64_t oracle_content(struct sim *s, const uint8_t *buf, uint64_t off,
			uint64_t len, uint64_t seed, uint32_t chunk,
			uint64_t skip, uint64_t *checked);

#endif
