/* libresid: application-authoritative residency for a large read-only
 * region (a model's weights, say) under a fixed memory budget.
 *
 * You map a file (or a range of it) through resid_open() and read it at
 * resid_base(). Only `budget_bytes` of it is resident at a time: a read of a
 * chunk that is not resident blocks the reading thread until the pager has
 * read the chunk from the file (userfaultfd on a double-mapped memfd),
 * evicting chunks whose next use is furthest away. The region is read-only.
 *
 * Units: every size and offset is in bytes. Offsets are from the start of
 * the region, which is the start of the file. A page is 4096 bytes.
 *
 * Alignment: chunks start on page boundaries. The last chunk may end
 * unaligned (it ends where the region ends); resid_len() is region_len
 * rounded up to a page, and the bytes between region_len and resid_len()
 * read as zeros.
 *
 * Threads: any number of threads may read the mapping at once. Every
 * function may be called from any thread while the region is open, except
 * resid_close(), which must be the last call and must not race with reads
 * or other calls on the region. The pager's own threads block every
 * signal, so the application's handlers run on its own threads only. A
 * reader may block signals: faults are served without any. It must not
 * block SIGBUS: a failed chunk's SIGBUS then ends the process.
 *
 * Errors: resid_open() returns NULL and writes one line into `err` that
 * names the field of struct resid_config that was wrong and how to fix it
 * (a NULL cfg is named too; with a NULL err it returns NULL, errno EINVAL).
 * Other calls return -EINVAL for an argument out of range or a NULL
 * pointer, and the calls without an error code a neutral value (NULL, 0,
 * RESID_NO_CHUNK). The library never prints and never exits.
 *
 * Privileges: userfaultfd. resid_open() needs root (CAP_SYS_PTRACE), or
 * the sysctl vm.unprivileged_userfaultfd=1, or read-write access to
 * /dev/userfaultfd (Linux >= 6.1); otherwise it refuses and says so.
 * Container runtimes' default seccomp profiles may refuse userfaultfd too.
 *
 * fork(): the region belongs to the process that opened it. Its mappings
 * are not inherited (MADV_DONTFORK): in a child, resid_base()'s addresses
 * are unmapped and a read there raises SIGSEGV; it never reads zeros and
 * never adds pages to the parent's memory. Every call on the region from
 * the child returns -ECHILD (NULL, 0 or RESID_NO_CHUNK where there is no
 * error code), except resid_close(), which in the child only closes its
 * copies of the region's descriptors (userfaultfd, memfd, file; all
 * O_CLOEXEC, so an exec closes them too) and frees its copy of the tables:
 * the parent's threads and memory are untouched. resid_close() in the
 * parent frees the region's pages even while a child holds the memfd. A
 * child that needs the data opens a region of its own.
 *
 * Failures after open: when the file cannot be read (EIO, a persistent
 * EINTR, or it was truncated after open: ENODATA), the pager retries with
 * back-off (about 130 ms in all), then fails the chunk for good: every
 * access to it raises SIGBUS. On Linux >= 6.6 the pager poisons the chunk
 * (UFFDIO_POISON) and the kernel raises SIGBUS itself, with si_addr the
 * address (si_code BUS_ADRERR; BUS_MCEERR_AR on some 6.x). On older
 * kernels the pager sends SIGBUS with tgkill to the thread whose fault
 * reached it (si_code SI_TKILL, no address), again at each access. The
 * other chunks keep working. resid_failure() reports the first error. A
 * reader that wants to survive installs a SIGBUS handler that siglongjmps
 * out (docs/example/stream.c); the default action ends the process.
 *
 * Truncation is not mmap's: a chunk resident when the file shrinks keeps
 * its old bytes (also past the new end) until it is evicted; a chunk
 * fetched after the truncation that reaches past the new end fails whole,
 * SIGBUS on all its bytes, also those before the new end. A file that grows is not seen
 * past region_len.
 *
 * Memory: the process's memory cgroup must leave room for the budget plus
 * the pager's own memory (threads, page tables of the two mappings, chunk
 * tables, and about 2.1 MiB per fetch worker: its 2 MiB bounce buffer,
 * 8 MiB where a chunk is 32 MiB or more, its thread and its reader's
 * thread): resid_open() refuses when the room
 * is below budget_bytes + resid_headroom(cfg), and names the numbers and
 * the cgroup. The room is the smallest limit - usage over the process's
 * cgroup and each of its ancestors (v1 memory.limit_in_bytes and
 * memory.usage_in_bytes, v2 memory.max and memory.current, at each
 * level): a container's or a systemd slice's limit counts, and so does
 * what the processes in sibling cgroups use under it. Swap must be
 * impossible for the region's pages (SwapTotal 0, or: v2 memory.swap.max
 * 0 at the cgroup or any ancestor; v1 memory.memsw.limit_in_bytes equal to
 * memory.limit_in_bytes at the cgroup, or at an ancestor of an unlimited
 * one, with no limited ancestor whose memsw limit is larger, as its
 * reclaim could swap), or resid_open() refuses and names the file to set.
 *
 * What the application may do to its mapping: what a read-only
 * MAP_SHARED mmap of the file gives, on resident and absent chunks alike
 * (ci/contract/hands.c checks each):
 *   MADV_DONTNEED, MADV_PAGEOUT (also from another process with
 *   process_madvise): the pages read the file's bytes again; a page whose
 *   entry was dropped is mapped again on its next read, without a fetch
 *   while its chunk is resident.
 *   MADV_COLD (also with process_madvise), MADV_WILLNEED, MADV_RANDOM,
 *   MADV_SEQUENTIAL, MADV_NORMAL: no change to what is read; WILLNEED
 *   does not fetch.
 *   MADV_FREE: refused, EINVAL (it is for private anonymous memory).
 *   MADV_POPULATE_READ: fetches the absent chunks of the range, one page's
 *   fault at a time, and returns 0; more than budget_bytes at once evicts
 *   the first ones again.
 *   MADV_HUGEPAGE, MADV_COLLAPSE: the mapping keeps 4 KiB entries; a
 *   collapse of it is refused (EINVAL) on Linux >= 5.19, where the pager
 *   registers it so. On older kernels a collapse may map the zeros of a
 *   huge folio's pieces not fetched yet: do not advise huge pages there.
 *   mprotect: PROT_NONE raises SIGSEGV until PROT_READ is back, then the
 *   file's bytes. PROT_WRITE is not refused (the mapping's file is the
 *   library's, writable): do not; a byte written is what reads see until
 *   its chunk is evicted, and it is not the file's.
 *   munmap of a part: SIGSEGV there; the rest reads right. A mapping the
 *   application puts over the hole (MAP_FIXED) is its own; resid_close()
 *   unmaps the whole range, that mapping too.
 *   mremap of a part: the range it leaves raises SIGSEGV and the rest
 *   reads right, but the moved or grown part is no longer the pager's:
 *   where its chunk is absent it reads zeros, not the file's bytes (a
 *   page the budget does not count). Do not.
 *   read() or other syscalls that write into the region: EFAULT, nothing
 *   written. write() or other syscalls that read from it (a pipe, a
 *   socket, a file): the file's bytes, fetched as a read would.
 *
 * Example, a layer-streaming reader (see docs/example/stream.c):
 *
 *	struct resid_config cfg;
 *	char err[RESID_ERRLEN];
 *
 *	resid_config_init(&cfg);
 *	cfg.backing = RESID_BACKING_FILE;
 *	cfg.path = "model.bin";
 *	cfg.region_len = file_size;
 *	cfg.table = layers;          // one chunk per layer, page-aligned
 *	cfg.table_len = nlayers;
 *	cfg.budget_bytes = 256 << 20;
 *	struct resid_region *r = resid_open(&cfg, err);
 *	if (!r) { fprintf(stderr, "%s\n", err); return 2; }
 *	for (;;)                     // each token reads every layer in order
 *		for (uint32_t l = 0; l < nlayers; l++) {
 *			resid_notify_access(r, l);   // BEFORE_READ: l is next
 *			compute(resid_base(r) + layers[l].off, layers[l].len);
 *		}
 *	resid_close(r);
 */
#ifndef RESID_H
#define RESID_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct resid_region;
struct resid_harness;

enum resid_policy {
	RESID_POLICY_LRU,
	RESID_POLICY_LEARNED, /* layer_order_learned: learns the fault order */
	RESID_POLICY_DECLARED, /* layer_order_declared (default): you declare it */
};

/* When the application calls resid_notify_access() for a chunk: before it
 * reads it (the cursor's chunk is needed now) or after it has consumed it
 * (the cursor's chunk is a full cycle away).
 *
 * Several reader threads: the declared order is one sequence for the whole
 * region, so signal it once per position, from one thread (the one that
 * drives the layers), or serialize the calls so that they arrive in the
 * declared order. Calls are thread-safe, but two threads signalling the same
 * cycle interleaved move the cursor back and forth. Readers must also stay
 * in step for the order to hold: threads that read different layers at
 * once (each at its own position in the cycle) are not the declared order,
 * and the pager then evicts what another thread is about to read (several
 * times the optimum's fetches: docs/core.md, "Measured constants"). */
enum resid_signal {
	RESID_SIGNAL_BEFORE_READ,
	RESID_SIGNAL_AFTER_READ,
};

/* Where the bytes come from. There is no default: resid_open() refuses a
 * configuration that does not say. */
enum resid_backing {
	RESID_BACKING_UNSET,
	RESID_BACKING_FILE,      /* read `path` (O_DIRECT where it can) */
	RESID_BACKING_SYNTHETIC, /* generated test content; `path` must be NULL */
};

/* The page: chunk sizes and table offsets are multiples of it. */
#define RESID_PAGE 4096ull

/* One chunk of an explicit table: page-aligned offset; a length that is a
 * page multiple except for the last chunk. Entries are sorted, contiguous
 * from 0 and cover region_len exactly. */
struct resid_chunk_spec {
	uint64_t off;
	uint64_t len;
};

/* Fill with resid_config_init(), then set what you need. resid_open()
 * copies the structure; `path`, `huge_dir`, `table` and `declared_seq`
 * are read only
 * during resid_open() and may be freed afterwards. */
struct resid_config {
	uint64_t region_len; /* bytes of the file to map; <= its size */
	/* Equal chunks (a positive multiple of 4096) or, with chunk_size 0,
	 * the explicit table of table_len entries. */
	uint64_t chunk_size;
	const struct resid_chunk_spec *table;
	uint32_t table_len;
	uint64_t budget_bytes; /* most bytes resident at once; >= largest chunk */

	enum resid_backing backing;
	const char *path; /* RESID_BACKING_FILE: a regular file */
	uint64_t seed;    /* RESID_BACKING_SYNTHETIC */

	enum resid_policy policy;
	/* RESID_POLICY_DECLARED: one cycle of the access order, each chunk id
	 * at most once; NULL and 0 mean 0, 1, ..., n-1. A chunk left out is
	 * read at no time the cycle says (an embedding table read by rows):
	 * its next use is never, so it is evicted first and never
	 * prefetched. */
	const uint32_t *declared_seq;
	uint32_t declared_len;
	enum resid_signal signal;

	/* Reader threads, 1..256. Each costs about 2.1 MiB of the cgroup.
	 * 0 (the default): one per 16 MiB of budget_bytes, 1 to 4, so that
	 * the headroom stays a small part of a small budget; resid_stats'
	 * fetch_workers and the manifest say what was chosen. */
	uint32_t fetch_workers;
	uint32_t prefetch_depth;      /* chunks read ahead, 0..64, 0 = off */
	uint32_t fetching_timeout_ms; /* a stuck fetch is reset after, 30000 */
	uint32_t reconcile_interval; /* fetches between accounting checks, 16 */
	uint32_t prefetch_backoff_ms; /* a declined prefetch waits, default 100 */
	/* Evict ahead of need: when a fetch has landed, make room at once for
	 * the chunk the policy predicts next. Off: 0. */
	int evict_ahead;
	/* Eviction that overlaps consumption (layer_order_declared only): the
	 * application announces its progress through a chunk
	 * (resid_notify_consumed), and a fetch that needs room drops the
	 * consumed pieces of the chunk being read, from its start, where the
	 * policy ranks them furthest, as Belady would page by page; a
	 * prefetch then reserves its target piece by piece from them, so the
	 * next chunk is read while the last is consumed. Off: 0. */
	int overlap_evict;
	/* Bytes read and mapped at a time within a chunk (a multiple of
	 * RESID_PAGE; 0: the whole chunk at once). A faulter on an early piece
	 * runs while the later ones are read; the chunk stays FETCHING, locked,
	 * until its last piece is mapped. Default 1 MiB. */
	uint64_t fetch_piece;
	/* Per-phase fetch timers (the *_ns counters of resid_stats): a few
	 * clock reads per fetch. Off: 0. */
	int phase_timers;
	/* A directory on a tmpfs mounted with huge=always, within_size or
	 * advise (e.g. mount -t tmpfs -o huge=within_size none DIR): a
	 * region whose chunks all start on a multiple of the huge page
	 * (2 MiB on x86-64) keeps its pages there in huge folios, which
	 * fetch faster; any other region uses 4 KiB pages, as without it.
	 * NULL: huge folios only where shmem_enabled gives them to a memfd.
	 * The manifest's b_folios says which was chosen and why. */
	const char *huge_dir;

	/* Reference tracing, for an offline optimum over the application's
	 * own reads (residctl belady): with trace_fn set, each fault on a
	 * chunk other than the one recorded last calls
	 * trace_fn(trace_arg, chunk), and when a thread's fault lands on a
	 * chunk other than the one that thread was on, A's entries of the
	 * chunk it left are dropped (as the application's MADV_DONTNEED
	 * would; the two pages beside the faulting one stay, for a load across
	 * the border), so the next read of it faults and is recorded again;
	 * a page read again is mapped again without a fetch while its chunk
	 * is resident. One thread's sequence is exact, repeats folded (but
	 * for a return through a kept page alone); several threads' faults
	 * interleave in the order they reach the pager, and a thread's move
	 * onto pages another thread has mapped goes unrecorded.
	 * prefetch_depth must be 0: a prefetch maps its chunk before the read
	 * that would be recorded. Correct at any budget; a budget of the
	 * whole region reads each chunk once. Called on the pager's
	 * dispatcher thread, one call at a time: it must return quickly and
	 * call nothing of this library. resid_stats' trace_records and
	 * trace_drop_errors count. NULL: off. */
	void (*trace_fn)(void *arg, uint32_t chunk);
	void *trace_arg;

	/* Reserved for residctl's test harness; leave NULL. */
	const struct resid_harness *harness;
};

/* Zeroes cfg and fills the defaults above. */
void resid_config_init(struct resid_config *cfg);

/* Counters of a region; all monotonic except resident/reserved. */
struct resid_stats {
	uint64_t faults_missing, faults_minor;
	uint64_t dedup_resident, dedup_fetching;
	uint64_t fetches, fetch_bytes, continues_ok;
	uint64_t demand_jobs, prefetch_jobs, prefetch_declined, prefetch_stale;
	uint64_t evictions, evicted_bytes, retention_breaks;
	uint64_t infeasible, retries, abandoned, drop_wakes;
	uint64_t io_errors, io_short, io_eintr, continue_eagain,
		continue_errors;
	uint64_t wake_errors, punch_errors, uffd_eintr, cgroup_read_errors;
	uint64_t watchdog_resets, reconciles, reconcile_failures;
	uint64_t st_blocks_lag; /* st_blocks excesses a page count did not confirm */
	uint64_t shmem_lag; /* memory.stat deviations a later read undid */
	uint64_t resident, reserved, budget;
	uint64_t resident_max; /* highest `resident` ever seen */
	uint64_t latency_count, latency_sum_ns, latency_min_ns, latency_max_ns;
	/* With phase_timers, over the fetches that landed: the whole fetch
	 * and its reserve (evictions included), read and map phases.
	 * punch_ns: every eviction's punch. */
	uint64_t fetch_ns, reserve_ns, read_ns, continue_ns, punch_ns;
	uint64_t evict_ahead; /* evictions made ahead of need */
	/* overlap_evict: punches of consumed pieces of resident chunks and
	 * their bytes (a chunk dropped whole counts in evictions too), and
	 * faults on a dropped piece (the chunk's rest was evicted and the
	 * chunk fetched again). */
	uint64_t drops, dropped_bytes, dropped_refaults;
	/* CONTINUEs that mapped a piece before a chunk's last (fetch_piece);
	 * continues_ok counts the chunks whose last piece was mapped. */
	uint64_t continue_pieces;
	/* Faults on a page of a RESIDENT chunk whose entry in the mapping was
	 * dropped (the application's MADV_DONTNEED, a collapse in the
	 * kernel), mapped again with a CONTINUE of that page. */
	uint64_t refaults_served;
	/* The follow mode (docs/core.md): prefetches that landed without
	 * their CONTINUE (counted in continues_ok all the same), and chunks
	 * mapped whole at the program's first touch, one CONTINUE each. */
	uint64_t lazy_fetches, lazy_maps;
	/* CONTINUEs refused with ENOENT: the range crossed a border of the
	 * mapping the application split (advice or mprotect on a part), or
	 * lay where it unmapped part of it. */
	uint64_t continue_split;
	/* Failures: chunks failed for good; failed_faults: the page faults
	 * the pager answered with SIGBUS. With UFFDIO_POISON those are the
	 * faults waiting on a chunk's last fetch when it failed (at least the
	 * one that asked for it, unless a prefetch did) and any that reached
	 * the pager after; later accesses to the poisoned pages raise SIGBUS
	 * in the kernel without the pager and are not counted. Without
	 * poison, every access to a failed chunk. Then failed reads of the
	 * userfaultfd and failed polls. */
	uint64_t failed_chunks, failed_faults, uffd_errors, poll_errors;
	uint64_t fetch_workers; /* the workers running (cfg, or chosen) */
	/* trace_fn: the calls made, and drops of A's entries the kernel
	 * refused (a return to that chunk may then go unrecorded). */
	uint64_t trace_records, trace_drop_errors;
};

#define RESID_ERRLEN 256
#define RESID_NO_CHUNK UINT32_MAX

/* Creates the region and starts its threads (the dispatcher and
 * fetch_workers readers). On failure returns NULL and writes one line to
 * err. The caller owns the region until resid_close(). */
struct resid_region *resid_open(const struct resid_config *cfg,
				char err[RESID_ERRLEN]);
/* Stops the threads, unmaps, closes. Safe on NULL; in a forked child see
 * "fork()" above. */
void resid_close(struct resid_region *r);

/* The bytes in cfg's cgroup that the pager needs beyond budget_bytes for
 * this configuration (measured, see docs/core.md). Give the process's
 * memory cgroup, and each ancestor, room of at least budget_bytes + this.
 * 0 when cfg is NULL (a configuration always needs more). */
uint64_t resid_headroom(const struct resid_config *cfg);

/* The read-only mapping, valid until resid_close(); resid_len() bytes.
 * NULL and 0 for a NULL region or in a forked child. */
const uint8_t *resid_base(const struct resid_region *r);
uint64_t resid_len(const struct resid_region *r);
uint32_t resid_nchunks(const struct resid_region *r);
/* The chunk holding byte off, or RESID_NO_CHUNK when off >= resid_len(). */
uint32_t resid_chunk_of(const struct resid_region *r, uint64_t off);
/* A chunk's page-aligned offset and length (the last one's length is
 * rounded up to a page). 0, or -EINVAL when chunk >= resid_nchunks() or a
 * pointer is NULL. */
int resid_chunk_range(const struct resid_region *r, uint32_t chunk,
		      uint64_t *off, uint64_t *len);

/* The declared-order signal (see enum resid_signal). Only the declared
 * policy uses it; it is cheap under the others. 0, or -EINVAL when
 * chunk >= resid_nchunks(). */
int resid_notify_access(struct resid_region *r, uint32_t chunk);

/* With cfg.overlap_evict: the application has consumed bytes [0, bytes)
 * of chunk in its current visit and will not read them again before the
 * chunk's next use in the declared order (a chunk's reads from its start,
 * in order: with several threads, the prefix every thread has passed).
 * A dropped byte read again anyway is fetched again: correct, not free.
 * Without overlap_evict it does nothing. 0, or -EINVAL when chunk >=
 * resid_nchunks(). */
int resid_notify_consumed(struct resid_region *r, uint32_t chunk,
			  uint64_t bytes);

/* The first failure of the region, as a positive errno (0: none), and in
 * *chunk (may be NULL) the chunk it hit (-EINVAL for a NULL region,
 * -ECHILD in a forked child):
 *   EIO      the file could not be read; accesses to the chunk raise SIGBUS
 *   ENODATA  the file ended before the chunk: truncated after resid_open
 *   other    the kernel refused an operation on the chunk; with chunk
 *            RESID_NO_CHUNK the pager itself could not read faults any
 *            more: every chunk not resident raises SIGBUS (without
 *            UFFDIO_POISON: SIGSEGV, its range made PROT_NONE). */
int resid_failure(const struct resid_region *r, uint32_t *chunk);

/* 0, or -EINVAL (a NULL pointer), -ECHILD (a forked child). */
int resid_get_stats(struct resid_region *r, struct resid_stats *out);

/* Writes what the region runs on (kernel, cgroup, chunking, policy, the
 * workers and who chose their number) as one JSON object, no trailing
 * newline. 0, -1 when cap is too small, -EINVAL, -ECHILD as above. */
int resid_manifest_json(struct resid_region *r, char *buf, size_t cap);

const char *resid_policy_name(enum resid_policy p);
/* "lru", "learned", "declared" or the full names; 0, or -1 if unknown or
 * a pointer is NULL. */
int resid_policy_parse(const char *name, enum resid_policy *out);

#ifdef __cplusplus
}
#endif

#endif
