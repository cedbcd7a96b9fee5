/* The oracles (design.md §4), one file each in harness/oracles/; those that end
 * a simulated run are entries of the registry (oracles.def, verdict.h):
 * why a run that can no longer move ended (deadlock, lost wakeup, no
 * signal, hang: quiescence.c asks them in the registry's order), a crash
 * or a spin, and the checks a run makes as it goes (invariants, content,
 * accounting), which real-kernel runs make too. The invariants themselves
 * are invariants/'s. */
#ifndef HARNESS_ORACLE_H
#define HARNESS_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "resid.h"
#include "sim.h"
#include "verdict.h"

struct resid_accounting;
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
void oracle_blame(struct sim *s, const struct sim_thread *t,
		  const char *what);
/* Blames the first thread in id order waiting in state w (enum
 * sim_wait) as `what`: 1, or 0 when no thread waits so. */
int oracle_blame_first(struct sim *s, int w, const char *what);
/* Appends to a why; cut short when it outgrows buf. */
void oracle_appendf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Until oracle_invariants_stop, every invariant the pager reports
 * (invariants/) is counted into *count (atomically; NULL: not counted)
 * and its line, "I-N (title): what", given to say(arg, line). One watch
 * at a time per process. */
void oracle_invariants_to(uint64_t *count,
			  void (*say)(void *arg, const char *line), void *arg);
/* The same for the simulated run s: the line fails it. */
void oracle_invariants_watch(struct sim *s);
void oracle_invariants_stop(void);
/* I-14 against the simulated kernel's own tally of CONTINUEs, less the
 * `partial` ones the fault seam cut short and answered with EAGAIN. */
void oracle_kernel_tally(struct sim *s, const struct resid_stats *st,
			 uint64_t partial);

/* The accounting at quiescence (design.md §2.6, T-4): waits for the fetches in
 * flight, reconciles into acc, and judges fstat's st_blocks against the
 * pager's resident bytes, exactly, and the cgroup's memory.stat shmem
 * against them: equal, pass; apart by no more than the kernel's flush
 * tolerance, unknown (the lag hides a difference that small); no cgroup
 * to read, unknown; a reconcile that failed, fail. why (n bytes) says the
 * first failure, else what is unknown. */
enum verdict oracle_accounting(struct resid_region *r,
			       struct resid_accounting *acc, char *why,
			       size_t n);
/* Its judgement of a reconcile that succeeded. */
enum verdict oracle_accounting_judge(const struct resid_accounting *acc,
				     char *why, size_t n);

/* Every byte of buf, read at region offset off, against the content of
 * (offset, seed) (read_check); a mismatch fails the run naming chunk and
 * range. Adds len to *checked; returns the bytes wrong. */
uint64_t oracle_content(struct sim *s, const uint8_t *buf, uint64_t off,
			uint64_t len, uint64_t seed, uint32_t chunk,
			uint64_t skip, uint64_t *checked);

#endif
