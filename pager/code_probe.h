/* Code probes (FoundationDB's CODE_PROBE): a named counter at a rare path of
 * the pager, so that a campaign can show the path ran, not only that nothing
 * failed. This list is the one place probes are named; `required` ones must
 * be hit by the suite's campaigns (`make test`, residctl coverage). In the
 * production library CODE_PROBE is nothing and no probe is compiled, as
 * with the bug switches (bug_switch.h). */
#ifndef RESID_CODE_PROBE_H
#define RESID_CODE_PROBE_H

#include <stdint.h>

/* X(name, required, what happened) */
#define RESID_CODE_PROBES(X)                                                  \
	X(continue_partial, 1,                                                \
	  "CONTINUE mapped part of the range (EAGAIN, "                       \
	  "mapped > 0); the fetch went on from where it stopped")             \
	X(continue_eagain_none, 0,                                            \
	  "CONTINUE returned EAGAIN with nothing "                            \
	  "mapped; tried again")                                              \
	X(continue_split, 1,                                                  \
	  "CONTINUE refused a range that crossed a border "                   \
	  "of A split by the application (ENOENT); mapped in smaller steps")  \
	X(continue_eexist, 1,                                                 \
	  "CONTINUE found a page already mapped (EEXIST); "                   \
	  "the fetch was abandoned with a wake")                              \
	X(continue_error, 0,                                                  \
	  "CONTINUE failed otherwise (EFAULT, ...); the "                     \
	  "fetch was abandoned with a wake")                                  \
	X(piece_mapped_early, 1,                                              \
	  "a piece of a chunk was mapped (its faulters "                      \
	  "woken) while the rest was still to be read")                       \
	X(read_short, 1,                                                      \
	  "a backing read delivered fewer bytes than asked; "                 \
	  "the fill went on")                                                 \
	X(read_retried, 1,                                                    \
	  "a backing read failed or returned nothing and was "                \
	  "tried again")                                                      \
	X(read_eintr, 0, "a backing read was interrupted (EINTR)")            \
	X(abandon_read_error, 1,                                              \
	  "a fill exhausted its read retries; the "                           \
	  "fetch was abandoned with a punch, a release and a wake")           \
	X(write_retried, 1,                                                   \
	  "a write into the memfd failed or came back "                       \
	  "short and was tried again")                                        \
	X(read_dropped, 1,                                                    \
	  "a fetch that failed or found no room waited for "                  \
	  "the read its reader had in flight and dropped it")                 \
	X(demand_infeasible, 1,                                               \
	  "a demand fetch found no room in the budget "                       \
	  "and retried after a pause")                                        \
	X(demand_waits_landing, 0,                                            \
	  "a demand fetch waited for the job of a "                           \
	  "chunk that had just landed, its best victim, to unpin it")         \
	X(demand_gave_up, 0,                                                  \
	  "a demand fetch stayed infeasible past "                            \
	  "demand_retries and was abandoned with a wake")                     \
	X(prefetch_declined, 1,                                               \
	  "a prefetch found nothing it may evict; it "                        \
	  "backs off")                                                        \
	X(prefetch_stale, 0,                                                  \
	  "a prefetch job found its target faulted, "                         \
	  "landed or backing off")                                            \
	X(prefetch_spares_demand, 0,                                          \
	  "a prefetch's eviction passed over a "                              \
	  "chunk demand-fetched since the last fault (livelock guard)")       \
	X(demand_spares_partner, 0,                                           \
	  "a demand fetch passed over the chunk "                             \
	  "whose fetch evicted it, nothing announced since (livelock guard)") \
	X(lazy_chunk_mapped, 0,                                               \
	  "the follow mode: a fault on a prefetched "                         \
	  "chunk not mapped yet mapped it whole and moved the cursor")        \
	X(lazy_map_retried, 0,                                                \
	  "the follow mode: the map of a lazy chunk "                         \
	  "failed; the faulting thread was woken to fault again")             \
	X(prefetch_spares_current, 0,                                         \
	  "the follow mode: a prefetch passed "                               \
	  "over the chunk the program touched before its last one")           \
	X(demand_spares_current, 0,                                           \
	  "a demand fetch passed over the chunk "                             \
	  "faulted before its own, nothing ever announced (threads crossing " \
	  "a border)")                                                        \
	X(retention_broken, 1,                                                \
	  "a demand fetch broke the oldest retention pin "                    \
	  "to make room")                                                     \
	X(retention_rotated, 0,                                               \
	  "a new prefetch target pushed the oldest "                          \
	  "retention pin out of the FIFO")                                    \
	X(evict_ahead, 1,                                                     \
	  "evict-ahead made room for the predicted next chunk")               \
	X(consumed_dropped, 0,                                                \
	  "overlap_evict: a fetch made room by punching "                     \
	  "consumed pieces of a resident chunk")                              \
	X(piece_reserved, 0,                                                  \
	  "overlap_evict: a prefetch reserved its next "                      \
	  "piece")                                                            \
	X(piece_waits_room, 0,                                                \
	  "overlap_evict: a prefetch waited for the "                         \
	  "application to consume room for its next piece")                   \
	X(dropped_fault_late, 0,                                              \
	  "overlap_evict: a fault on a dropped page, "                        \
	  "answered with a wake (a message read late, or a first try)")       \
	X(dropped_refault, 0,                                                 \
	  "overlap_evict: a fault on a dropped piece; "                       \
	  "the chunk's rest was evicted and the chunk fetched again")         \
	X(refault_served, 1,                                                  \
	  "a fault on a resident chunk's page whose "                         \
	  "entry in A was dropped was answered with a CONTINUE of the page")  \
	X(refault_retried, 0,                                                 \
	  "a refault's CONTINUE failed otherwise than "                       \
	  "EEXIST; the thread was woken to fault again")                      \
	X(evict_punch_failed, 0,                                              \
	  "an eviction's punch failed; the chunk stayed "                     \
	  "RESIDENT and the round gave up")                                   \
	X(punch_retried, 1,                                                   \
	  "an abandoned fetch's punch failed and was tried "                  \
	  "again")                                                            \
	X(punch_owed, 0,                                                      \
	  "an abandoned fetch's punch failed every retry; "                   \
	  "the punch is owed and its reservation kept")                       \
	X(punch_paid, 0,                                                      \
	  "the dispatcher's tick paid an owed punch and "                     \
	  "released its reservation")                                         \
	X(wake_retried, 1, "a UFFDIO_WAKE failed and was tried again")        \
	X(watchdog_reset, 1,                                                  \
	  "the FETCHING watchdog reset an orphaned chunk "                    \
	  "and woke its waiters")                                             \
	X(demand_job_stale, 1,                                                \
	  "a demand job found its chunk no longer "                           \
	  "FETCHING (the watchdog had reset it)")                             \
	X(uffd_read_eintr, 0, "read(uffd) was interrupted (EINTR)")           \
	X(cgroup_read_retried, 1,                                             \
	  "a cgroup file read failed (EIO, EINTR) and "                       \
	  "was read again")                                                   \
	X(cgroup_read_failed, 0,                                              \
	  "a reconcile could not read memory.stat in "                        \
	  "8 tries and checked st_blocks only")

enum code_probe {
#define CP_ENUM(name, required, what) CP_##name,
	RESID_CODE_PROBES(CP_ENUM)
#undef CP_ENUM
		CP_COUNT
};

#ifdef RESID_HARNESS
/* Hits per probe since the process started; atomics, never a scheduling
 * point, so a probe does not change a simulated schedule. */
extern uint64_t resid_code_probes[CP_COUNT];
#define CODE_PROBE(cond, name)                                               \
	do {                                                                 \
		if (cond)                                                    \
			__atomic_add_fetch(&resid_code_probes[CP_##name], 1, \
					   __ATOMIC_RELAXED);                \
	} while (0)
#else
/* sizeof: the condition is type-checked, never evaluated. */
#define CODE_PROBE(cond, name) ((void)sizeof((cond) ? CP_##name : 0))
#endif

#endif
