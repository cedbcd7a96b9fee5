/* The pager's private structures and the functions its files share.
 * Lock order: own chunk lock -> budget lock -> victim's chunk lock; the
 * policy, queue, stats, histogram and trace locks are leaves. */
#ifndef RESID_INTERNAL_H
#define RESID_INTERNAL_H

#include <stdint.h>

#include "bug_switch.h"
#include "cgroupfs.h"
#include "code_probe.h"
#include "invariants.h"
#include "policy.h"
#include "resid.h"
#include "resid_harness.h"
#include "seam.h"

/* FAILED: the backing store could not deliver it (failure.c); its range in A
 * raises SIGBUS for good. */
enum chunk_state { CH_ABSENT, CH_FETCHING, CH_RESIDENT, CH_FAILED };

struct chunk {
	resid_mutex lock;
	uint64_t off, len;       /* in the region; len is a page multiple */
	uint64_t hold;           /* bytes the memfd holds for it, budgeted
				   * and punched: len, or on the huge path
				   * the last chunk up to the folio's end */
	uint64_t data_len;       /* bytes the backing store holds for it */
	int state;               /* written under lock, read atomically */
	int locked;              /* debug: the lock is held (I-6) */
	uint64_t fetching_since; /* for the watchdog and the latency */
	uint64_t declined_until; /* prefetch back-off */
	uint64_t fetched;        /* completed fetches (I-14) */
	uint64_t demand_seq;     /* fault_seq when a demand fetch landed it */
	uint32_t fetch_failures; /* fetches failed in a row (chunk lock) */
	/* Faults waiting on the fetch in flight (chunk lock): if it fails
	 * the chunk, its poison answers them with SIGBUS (failed_faults). */
	uint32_t waiters;
	uint32_t evicted_for;   /* budget lock: 1 + the chunk whose room
				   * evicted it last, 0: none */
	uint32_t faulted_after; /* 1 + the chunk touched before its last
				   * demand fault, 0: none (its chunk lock
				   * and the policy lock) */
	/* Landed by a prefetch of the follow mode (prefetch.c) and not
	 * mapped in A yet: the program's first touch faults and maps it
	 * (chunk lock; ABSENT clears it). */
	int lazy;
	uint32_t lazy_failures; /* its maps failed in a row (chunk lock) */
	int wake_owed;          /* a wake that failed, retried by the tick */
	int punch_owed;         /* a punch that failed every retry, its
				   * reservation kept (chunk lock; abandon.c) */
	/* Every piece mapped, its faulters woken, not committed yet: set and
	 * cleared by the fetching job, read atomically by evictors, with the
	 * region's access_seq when it was set. */
	int landing;
	uint64_t landed_access;
	/* overlap_evict (budget.c): [0, consumed) announced consumed in this
	 * visit (budget lock); [0, dropped) of a RESIDENT chunk punched
	 * already (written under the budget and chunk locks), so it holds
	 * hold - dropped bytes. */
	uint64_t consumed, dropped;
	int drop_woken; /* a fault on a dropped page was woken
				   * since the last drop (chunk lock;
				   * dispatch.c's refault) */
	/* The bytes of r->reserved its fetch in flight, or its owed punch,
	 * holds (chunk lock). */
	uint64_t res;
	int32_t pin;  /* budget lock */
	int retained; /* budget lock: holds a retention pin */
	int queued_demand, queued_prefetch; /* queue lock */
};

/* Reference tracing (trace.c): a thread that faulted, by its ptid, the
 * chunk it is on (RESID_NO_CHUNK: none) and when it faulted last (0:
 * the entry is free). */
#define TRACE_THREADS 64
struct trace_thread {
	uint32_t tid, chunk;
	uint64_t seen;
};

/* A ring of chunk ids; each chunk is in a ring at most once. */
struct ring {
	uint32_t *ids;
	uint32_t head, count, cap;
};

struct resid_region {
	struct resid_config cfg;
	struct resid_harness h; /* cfg.harness, or its defaults */
	const struct resid_seam *seam;
	void *sx;
	int owner;        /* the process that opened it */
	int workers_auto; /* cfg.fetch_workers 0: config_workers() */

	int uffd, memfd, stopfd;
	int backing_fd,
		plain_fd; /* O_DIRECT (or buffered) and plain for unaligned reads */
	int direct;       /* O_DIRECT in use */
	uint64_t backing_size;
	uint8_t *a, *b;    /* A: registered, read-only; B: populate */
	uint64_t len;      /* page-rounded region length */
	uint64_t file_len; /* the memfd's: len, or up to the folio */

	struct chunk *chunks;
	uint32_t nchunks;
	uint64_t max_chunk;

	/* budget */
	resid_mutex budget_lock;
	uint64_t budget, resident, reserved;
	uint32_t *cand;     /* victim candidates scratch */
	struct ring retain; /* retention pins, oldest first */

	/* policy */
	resid_mutex policy_lock;
	struct policy *policy;
	uint64_t fault_seq;
	/* 1 + the chunk the program last touched (a demand fault, or the
	 * first fault on a lazy chunk) and the one before it, 0: none
	 * (policy lock). */
	uint32_t last_touch, prev_touch;
	uint64_t access_seq; /* resid_notify_access calls, atomic */

	/* work queue */
	resid_mutex q_lock;
	resid_cond q_cond, idle_cond;
	struct ring demand, prefetch;
	uint32_t inflight;
	uint32_t punches_owed; /* chunks with punch_owed */
	int draining;          /* the dispatcher holds read messages */
	int stopping;

	resid_thread dispatcher;
	int dispatcher_up;
	resid_thread *workers;
	uint32_t nworkers;

	/* counters: atomics; the histogram under its own lock */
	struct resid_stats st;
	resid_mutex hist_lock;
	uint64_t hist[40]; /* log2 buckets of fetch latency in ns */

	/* cfg.trace_fn (trace.c), under trace_lock, which exists only while
	 * tracing: the chunk recorded last (RESID_NO_CHUNK before the first),
	 * and the chunk each thread faulted on last. */
	resid_mutex trace_lock;
	uint32_t trace_last;
	uint64_t trace_clock;
	struct trace_thread trace_thr[TRACE_THREADS];
	uint64_t since_reconcile; /* budget lock */

	/* accounting against the kernel */
	struct cg_env cg_env;
	struct cg_memory cg;
	int have_cgroup;
	int swap_condition;
	uint64_t shmem_baseline, tolerance;
	uint64_t shmem_confirm_at; /* clock_ns before which none is confirmed */
	unsigned cpus;             /* online, for the tolerance and headroom */

	/* failure (failure.c): the first error, and how a fault fails */
	int fail_err; /* errno, 0 while none */
	uint32_t fail_chunk;
	int poison; /* UFFDIO_POISON, else SIGBUS to the thread */
	int dead;   /* the dispatcher gave up: nothing fetches */

	/* manifest facts gathered at setup */
	char release[128];
	uint64_t uffd_features, uffd_ioctls;
	char shmem_thp[64];
	/* The folio choice (huge.c): huge folios in B, the folio size (4096
	 * on the 4 KiB path) and why, for the manifest. */
	int huge;
	uint64_t folio;
	char b_folios[160];
	/* Fetches read straight into B instead of writing the memfd: on the
	 * huge path where B's MADV_HUGEPAGE is what gives huge folios; on
	 * the 4 KiB path where a write(2) could get huge folios (no
	 * mapping's NOHUGEPAGE applies to it). */
	int fill_b;
};

/* A debug assertion of an invariant (invariants/): checked in harness
 * builds; in production it compiles to nothing and its arguments are not
 * evaluated (only their types are checked). */
#ifdef RESID_HARNESS
#define INV_ASSERT(check) ((void)(check))
#else
#define INV_ASSERT(check) ((void)sizeof((check), 0))
#endif

/* A fetch reads through a bounce buffer, one per worker, huge-page backed
 * where the kernel allows: O_DIRECT into one contiguous buffer makes a few
 * large device requests where a read into B's fresh 4 KiB pages made many
 * small ones, and the write into the memfd then allocates whole pages
 * without zeroing them first (results/performance.md). Two slots: the
 * worker's reader reads into one while the worker writes the other. A slot
 * is 4 MiB where a chunk is 32 MiB or more, else 1 MiB (config_slot): big
 * slots pay off on big chunks only (docs/core.md, "Measured constants").
 * The headroom counts it. */
#define FETCH_SLOT_SMALL (1ull << 20)
#define FETCH_SLOT_BIG (4ull << 20)

#define NS_PER_MS 1000000ull

/* A call of the seam's op with the region's context. */
#define SEAM(r, op, ...) ((r)->seam->op((r)->sx, ##__VA_ARGS__))

#define STAT_ATOMIC_ADD(r, field, v) \
	__atomic_add_fetch(&(r)->st.field, (v), __ATOMIC_RELAXED)
#ifdef RESID_HARNESS
/* Bug 5: the counters as plain read-modify-writes from several threads. */
#define STAT_ADD(r, field, v)                           \
	do {                                            \
		if (BUG(5))                             \
			PLAIN_ADD(r, (r)->st.field, v); \
		else                                    \
			STAT_ATOMIC_ADD(r, field, v);   \
	} while (0)
#else
#define STAT_ADD(r, field, v) STAT_ATOMIC_ADD(r, field, v)
#endif
#define STAT_INC(r, field) STAT_ADD(r, field, 1)

/* The clock of the phase timers; 0 when they are off, so that no run pays
 * for them (on the simulated kernel each clock read is a scheduling point). */
static inline uint64_t phase_clock(struct resid_region *r)
{
	return r->cfg.phase_timers ? SEAM(r, clock_ns) : 0;
}

static inline int chunk_state(const struct chunk *c)
{
	return __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
}

/* region.c: 0 when the caller may use r; -EINVAL for NULL, -ECHILD in a
 * process forked since resid_open (its threads are the parent's). */
int region_usable(const struct resid_region *r);

/* config.c */
int config_check(const struct resid_config *c, char *err, size_t n);
/* fetch_workers, or the number the budget chooses when it is 0. */
uint32_t config_workers(const struct resid_config *c);
uint64_t config_slot(const struct resid_config *c);
int config_check_budget(const struct resid_region *r, char *err, size_t n);
int config_check_declared(const struct resid_region *r, char *err, size_t n);

/* huge.c */
int huge_choose(struct resid_region *r, char *err, size_t n);
int huge_open_file(struct resid_region *r);
int huge_advise_b(struct resid_region *r);

/* headroom.c */
int headroom_check(struct resid_region *r, char *err, size_t n);

/* chunks.c */
int chunks_build(struct resid_region *r, char *err, size_t n);
uint32_t chunks_find(const struct resid_region *r, uint64_t off);
void chunk_lock(struct resid_region *r, struct chunk *c);
int chunk_trylock(struct resid_region *r, struct chunk *c);
void chunk_unlock(struct resid_region *r, struct chunk *c);
void chunk_set_state(struct resid_region *r, struct chunk *c, int state);

/* ring.c */
int ring_init(struct ring *q, uint32_t cap);
void ring_free(struct ring *q);
void ring_push(struct ring *q, uint32_t id);
uint32_t ring_pop(struct ring *q);
int ring_remove(struct ring *q, uint32_t id);

/* dispatch.c */
void *dispatch_main(void *arg);

/* trace.c: nothing unless cfg.trace_fn. trace_init at open, trace_destroy
 * at close; trace_fault for each fault on chunk id by thread tid at
 * offset off of the region, before its dispatch; trace_landed after a fetch of id has mapped its last
 * piece. */
void trace_init(struct resid_region *r);
void trace_destroy(struct resid_region *r);
void trace_fault(struct resid_region *r, uint32_t id, uint32_t tid,
		 uint64_t off);
void trace_landed(struct resid_region *r, uint32_t id);

/* queue.c */
void queue_demand(struct resid_region *r, uint32_t id);
void queue_prefetch(struct resid_region *r, uint32_t id);
/* A worker's next job, demand first: 1, or 0 once the region stops. Each
 * job taken is in flight until queue_done. */
int queue_take(struct resid_region *r, uint32_t *id, int *prefetch);
void queue_done(struct resid_region *r);
uint32_t queue_inflight(struct resid_region *r);
/* The dispatcher holds messages it has read: the pager is not idle. */
void queue_set_draining(struct resid_region *r, int on);
/* A punch owed (1) or paid (0): the pager is not idle while one is owed. */
void queue_owe_punch(struct resid_region *r, int owed);
int queue_stopping(struct resid_region *r);

/* abandon.c */
void wake_range(struct resid_region *r, uint64_t addr, uint64_t len);
void fetch_abandon(struct resid_region *r, struct chunk *c, int populated,
		   int reserved);
/* A fetch that read or mapped nothing usable: abandoned, so the next fault
 * tries again after a back-off, until 8 in a row fail the chunk for good. */
void fetch_failed(struct resid_region *r, struct chunk *c, int err);
/* Before a chunk's fetch after failed ones: 1 ms, doubling. */
void fetch_backoff(struct resid_region *r, struct chunk *c);
/* With the chunk locked: 1 when it owed a punch, whose reservation the
 * caller now holds (a fetch writes over those pages), else 0. */
int abandon_take_owed(struct resid_region *r, struct chunk *c);
/* The dispatcher's tick: the wakes and punches owed. */
void abandon_pay_owed(struct resid_region *r);

/* A fetch worker's own: its bounce buffer (NULL: reads go into B) and its
 * reader (0: none; every read then runs in series with the page work). */
struct worker {
	uint8_t *bounce;
	uint64_t slot;
	resid_reader rd;
};

/* fill.c */
/* CONTINUE over [at, at + len) of the chunk in A: the bytes done, or
 * -errno. */
int64_t fill_map(struct resid_region *r, struct chunk *c, uint64_t at,
		 uint64_t len);
/* Hands the read of part k (at `at`) to the worker's reader; whether it
 * did (not without a reader, nor past the backing store's end). */
int part_start(struct resid_region *r, const struct chunk *c,
	       const struct worker *w, uint64_t at, uint64_t k);
/* Waits for and drops the read in flight, if started. */
void part_drain(struct resid_region *r, const struct worker *w, int started);
/* Reads, writes and maps the whole chunk; t[2], t[3]: read and map time.
 * The bytes mapped, or -errno. */
int64_t fill_and_map(struct resid_region *r, struct chunk *c, uint64_t t[4],
		     const struct worker *w, int started);
/* fetch.c, for fill_and_map: room for the chunk up to byte `to` (a piece's
 * end) when its fetch reserves piece by piece; 0, or -EBUSY when none
 * came (the fetch is then declined). */
int fetch_piece_room(struct resid_region *r, struct chunk *c, uint64_t to);

/* fetch.c */
void *worker_main(void *arg);

/* budget.c */
int budget_reserve(struct resid_region *r, struct chunk *c, uint64_t need,
		   uint64_t must_exceed, int may_wait);
void budget_release(struct resid_region *r, uint64_t need);
void budget_commit_and_pin(struct resid_region *r, struct chunk *c);
void budget_unpin(struct resid_region *r, struct chunk *c);
void budget_retain(struct resid_region *r, struct chunk *c);
void budget_unretain(struct resid_region *r, struct chunk *c);
void budget_evict_ahead(struct resid_region *r, uint32_t id);
/* overlap_evict: reserves need more bytes for a prefetch's next piece,
 * making room only by dropping consumed pieces. 0 or -EAGAIN. */
int budget_reserve_piece(struct resid_region *r, struct chunk *c, uint64_t need,
			 uint64_t must_exceed);
/* Without the chunk lock (taken inside the budget lock, as an evictor
 * takes a victim's): a RESIDENT, unpinned chunk with a dropped prefix has
 * its rest punched and is ABSENT. 0, or -errno (it stays as it was). */
int budget_evict_rest(struct resid_region *r, struct chunk *c);
/* resid_notify_consumed's record: [0, bytes) of c consumed. */
void budget_consumed(struct resid_region *r, struct chunk *c, uint64_t bytes);
/* A new visit of the chunk (BEFORE_READ's announcement, or its fetch
 * abandoned): nothing consumed yet beyond what was dropped. */
void budget_forget_consumed(struct resid_region *r, struct chunk *c);

/* prefetch.c */
void prefetch_top_up(struct resid_region *r, uint32_t id);
/* Whether a program is followed by its faults (see prefetch.c). */
int prefetch_follows(struct resid_region *r);
/* With the policy lock: chunk id touched by the program (a demand fault,
 * or the first fault on a lazy chunk): the touches recorded, and in the
 * follow mode the declared cursor moved there. */
void prefetch_touch_locked(struct resid_region *r, struct chunk *c,
			   uint32_t id);
/* With the chunk lock: a fault on a lazy chunk maps it whole and counts
 * as the program's touch; 0, or -errno from the CONTINUE. */
int prefetch_map_lazy(struct resid_region *r, struct chunk *c, uint32_t id);

/* stats.c */
void stats_record_fetch(struct resid_region *r, struct chunk *c,
			uint64_t latency_ns);
void stats_snapshot(struct resid_region *r, struct resid_stats *out);

/* reconcile.c */
int reconcile_setup(struct resid_region *r, char *err, size_t n);
int reconcile_baseline(struct resid_region *r, char *err, size_t n);
void reconcile_locked(struct resid_region *r, int due);

/* failure.c */
void failure_record(struct resid_region *r, uint32_t chunk, int err);
void failure_fail_chunk(struct resid_region *r, struct chunk *c, int err);
void failure_fault(struct resid_region *r, struct chunk *c, uint64_t addr,
		   uint32_t tid);
void failure_fail_region(struct resid_region *r, int err);
int failure_dead(const struct resid_region *r);

/* backing.c */
int backing_open(struct resid_region *r, const char *path, char *err, size_t n);
long backing_read_job(void *r, void *dst, size_t len, uint64_t off);
long backing_read(struct resid_region *r, uint8_t *dst, uint64_t len,
		  uint64_t off);

#endif
