/* The simulated kernel and the deterministic scheduler (design.md §4).
 *
 * sim_seam() is a second implementation of the pager's seam: the memfd's
 * page cache, the PTEs of mapping A, the uffd queue with MISSING and MINOR
 * faults, CONTINUE/WAKE with the kernel's errno rules, punch, st_blocks,
 * memory.stat (optionally lagging), backing reads, a virtual clock, and
 * threads, locks and condition variables that are coroutines run one at a
 * time. Failing and short reads, like every injected fault, come from the
 * fault seam wrapped around it (harness/fault/fault.h), which draws from the
 * run's decision stream (sim_draw). Every seam call is a scheduling point:
 * the strategy picks which runnable thread goes next, from that one stream
 * seeded by sim_config.seed, so a seed (or a recorded schedule) replays the
 * same run, step for step. Harness builds only. */
#ifndef HARNESS_SIM_H
#define HARNESS_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "seam.h"

enum sim_strategy {
	SIM_RANDOM, /* a uniformly random runnable thread at every point */
	SIM_PCT,    /* priorities with depth-1 change points (PCT) */
	/* No preemption of its own: the running thread goes on while it can,
	 * else the lowest id. The bounded exhaustive search forces the
	 * alternatives through replay prefixes. */
	SIM_DFS,
};

/* How a simulated run ended: SIM_PASS, or the oracle that said no, one
 * verdict per line of oracles.def (SIM_FAILED: a check made as the run
 * went, sim_fail; SIM_DEADLOCK, SIM_LOST_WAKEUP, SIM_NO_SIGNAL and
 * SIM_STEP_LIMIT, a hang: the quiescence classifier; SIM_CRASH: a signal
 * in a controlled thread; SIM_NO_PROGRESS: a spin, or the run's step or
 * CPU-time budget; SIM_LIVELOCK: a thread woken from a fault again and
 * again, its page never mapped). Each oracle's file says what it judges. */
enum sim_verdict {
	SIM_PASS,
#define ORACLE(e, x) SIM_##e,
#include "sim/oracles/oracles.def"
#undef ORACLE
	SIM_NVERDICTS
};

struct sim_config {
	uint64_t seed;
	enum sim_strategy strategy;
	unsigned pct_depth; /* d >= 1 */
	uint64_t pct_steps; /* k: the change points fall in [1, k]; 0: 1000 */
	/* A recorded schedule: at step i run replay[i] (a thread id) when it is
	 * runnable; past the end, or when it is not, the strategy decides. */
	const uint16_t *replay;
	size_t nreplay;
	/* The run's budget: past either, SIM_NO_PROGRESS. The CPU time is
	 * the simulating thread's, checked every few thousand steps, in
	 * every build (a spin between two steps is spin_limit_ms's). */
	uint64_t max_steps;    /* 0: 1,000,000 */
	uint64_t cpu_limit_ms; /* 0: 20,000 */
	/* Steps in a row with no progress (no byte read, no CONTINUE, no
	 * chunk state change, no thread ended) after which the run ends
	 * with SIM_NO_PROGRESS; 0: SIM_STALL_STEPS. */
	uint64_t stall_steps;
	/* Virtual time with no progress (no read served, no CONTINUE, no
	 * thread exit) after which the run counts as quiescent and is
	 * classified; 0: 120 s. */
	uint64_t idle_limit_ns;
	uint64_t stat_lag_bytes; /* memory.stat lags by up to this; 0: exact */
	/* A punch inside a large folio must split it; with this the split
	 * fails and the punch frees nothing (it only zeroes the range). */
	int split_fails;
	/* The huge tmpfs's folio and the PMD size reported; 0: SIM_FOLIO
	 * (conformance sets the kernel's own, to compare byte for byte). */
	uint64_t folio_bytes;
	/* A runnable thread passed over this many steps in a row runs next:
	 * the kernel's scheduler is fair, PCT's priorities alone are not, and
	 * starving a thread forever makes livelocks no fair scheduler would.
	 * 0: 10,000. */
	uint64_t fair_steps;
	/* CPU time a controlled thread may run without a scheduling point
	 * before the run ends with SIM_NO_PROGRESS; 0: 1000 ms. */
	uint64_t spin_limit_ms;
};

/* The stall bound's default: past the longest stretch without progress
 * a passing gate run made (55,930 steps in 24,012 runs of check --sim
 * --schedules 2000: workers polling for budget room while PCT starves
 * the thread that frees it, a fairness bound at a time), a fifth of the
 * step budget. */
#define SIM_STALL_STEPS 200000ull

/* The simulated kernel's huge tmpfs (mounted huge=always) and its folio,
 * the PMD size it reports: four pages, so SIM_CHUNK-sized chunks
 * qualify. */
#define SIM_HUGE_DIR "/sim/huge"
#define SIM_FOLIO (16ull << 10)

struct sim;

struct sim *sim_create(const struct sim_config *c);
void sim_destroy(struct sim *s);
/* The seam to put in resid_config.seam. */
const struct resid_seam *sim_seam(struct sim *s);

/* Runs fn(arg) as controlled thread 0, then every thread it or the pager
 * starts, until all have exited or a verdict other than SIM_PASS. */
enum sim_verdict sim_run(struct sim *s, void (*fn)(void *arg), void *arg);

/* In a controlled thread: starts an application thread (ids are given in
 * creation order, so they are the same in every replay). */
int sim_spawn(struct sim *s, void (*fn)(void *arg), void *arg,
	      const char *name);
/* In a controlled thread: waits until every thread sim_spawn started has
 * exited. */
void sim_join_apps(struct sim *s);
/* In an application thread: reads len bytes at addr in mapping A as the
 * kernel would serve them: a page not mapped raises a MISSING fault (not in
 * the page cache) or a MINOR fault (in it), queues the uffd message, sleeps
 * until a CONTINUE or WAKE covers the address, and tries again. Returns 0,
 * or -1 for a simulated SIGBUS: a poisoned page, or a SIGBUS sent to the
 * thread while it slept in a fault (dst then holds only what came before). */
int sim_read(struct sim *s, const void *addr, void *dst, size_t len);
/* In a controlled thread, one step: A's entries over [addr, addr + len)
 * dropped, as by the application's MADV_DONTNEED or a collapse of B; the
 * page cache keeps the pages, their next read faults MINOR, and no
 * faulter is woken. A poison marker stays. As madvise: 0; -EINVAL for an
 * unaligned addr; -ENOMEM past mapping A. */
int sim_drop(struct sim *s, const void *addr, uint64_t len);
/* The state of the page of mapping A at addr: in the memfd's page cache,
 * and mapped in A. -1 when addr is not in a mapping A. */
int sim_page_state(struct sim *s, const void *addr, int *in_cache, int *mapped);
/* The build, for replay lines: "+simx" when plain memory accesses are
 * scheduling points (make simx, harness/sim/access.c), else "". A line
 * replays only in the build that printed it. */
const char *sim_build(void);
/* The next draw of the run's decision stream, the one that picks threads:
 * injected faults are decided by it, so a seed replays them too. */
uint64_t sim_draw(struct sim *s);
/* In a controlled thread: an oracle failed; the run ends at the next
 * scheduling point with SIM_FAILED and this reason (the first one kept). */
void sim_fail(struct sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The pager's allocator in harness builds (heap.c; the Makefile renames
 * malloc, calloc, realloc, aligned_alloc and free in its objects): blocks
 * taken during a run and not given back are freed by sim_destroy, so a
 * run that ends before the pager closes leaves nothing behind. */
void *sim_heap_malloc(size_t n);
void *sim_heap_calloc(size_t n, size_t size);
void *sim_heap_realloc(void *p, size_t n);
void *sim_heap_aligned_alloc(size_t align, size_t n);
void sim_heap_free(void *p);

/* Out of memory anywhere in the simulation: a line on stderr, abort. */
void sim_oom(void) __attribute__((noreturn));

/* Whether crashes and spins of controlled threads become verdicts here
 * (SIM_CRASH, SIM_NO_PROGRESS); 0 under ThreadSanitizer, whose runtime
 * owns the signals, where they take the process down. */
int sim_guarded(void);

/* After sim_run. */
const char *sim_why(const struct sim *s); /* one line */
const char *sim_verdict_name(enum sim_verdict v);
uint64_t sim_steps(const struct sim *s);
uint64_t sim_preemptions(const struct sim *s);
/* A hash of every step (thread, call, object as an offset or id, never an
 * address): equal hashes, equal runs. */
uint64_t sim_log_hash(const struct sim *s);
/* A hash of the order in which locks were acquired: one interleaving. */
uint64_t sim_lock_order_hash(const struct sim *s);
/* The thread chosen at each step, to replay the run: the first
 * SIM_RECORD_STEPS steps only (a run's memory must not grow with its
 * length; a gate scenario's run is about a thousand steps). Past them a
 * replay goes on from the seed, as the run did, so the record still
 * replays it; sim_schedule_whole says whether it is every step. */
#define SIM_RECORD_STEPS 65536
const uint16_t *sim_schedule(const struct sim *s, size_t *n);
int sim_schedule_whole(const struct sim *s);
/* At each recorded step, the threads that could have run (bit i: thread
 * i; threads 64 and up are not shown), for the exhaustive search and
 * shrinking. */
const uint64_t *sim_runnable_masks(const struct sim *s, size_t *n);
/* The kernel's own tallies, for I-14 against the pager's counters. */
uint64_t sim_continues_ok(const struct sim *s);

#endif
