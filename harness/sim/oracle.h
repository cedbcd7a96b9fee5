/* The simulation's oracles (SPEC §4), one file each in harness/sim/oracles/:
 * why a run that can no longer move ended (deadlock, lost wakeup, no
 * signal, hang: quiescence.c asks them in that order), and the checks a
 * run makes as it goes (invariants, content). The invariants themselves
 * are invariants/'s. */
#ifndef HARNESS_SIM_ORACLE_H
#define HARNESS_SIM_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "resid.h"
#include "sim.h"

struct sim_thread;

/* Nothing runs and nothing will (or only timers fire, idly): the verdict,
 * with s->why saying why. */
enum sim_verdict oracle_quiescence(struct sim *s);

/* A crash or a spin that guard.c caught: s->why names the signal (or the
 * spin limit), the thread and the function. */
void oracle_crash(struct sim *s);

/* Each explains a quiescent run or returns 0: 1 with s->why written. */
int oracle_deadlock(struct sim *s);    /* a cycle in the wait-for graph */
int oracle_lost_wakeup(struct sim *s); /* a fault nobody will serve */
int oracle_no_signal(struct sim *s);   /* a wait nobody will signal */

/* For the oracles: s->why = "WHAT: thread N (name) <its wait>". */
void oracle_blame(struct sim *s, const struct sim_thread *t,
		  const char *what);
/* The first thread in id order waiting in state w (enum sim_wait). */
struct sim_thread *oracle_first_waiting(struct sim *s, int w);
/* Appends to a why; cut short when it outgrows buf. */
void oracle_appendf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Until oracle_invariants_stop, every invariant the pager reports fails
 * the run s (invariants/). */
void oracle_invariants_watch(struct sim *s);
void oracle_invariants_stop(void);
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
