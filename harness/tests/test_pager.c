/* The pager on the real kernel, with kernel behaviour bent through a seam
 * that wraps the Linux one: short reads, EIO, partial CONTINUE must still
 * serve every byte right; a punch that frees nothing must trip I-7, and an
 * st_blocks that lowers late after a punch (design.md §2.6) must not. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "invariants.h"
#include "resid_harness.h"
#include "seam.h"
#include "tests/suites.h"
#include "tests/unit_cgroup.h"

static struct resid_seam bent;
static struct unit_cgroup cg;
static int short_reads, eio_every, partial_continue, lost_punch, prefetch;
static int evict_ahead, late_blocks, stuck_blocks;
/* overlap: overlap_evict with a prefetch depth of 1, each chunk read and
 * announced consumed a quarter piece at a time (finer than the room a
 * prefetch asks for, a piece, so that a drop past the announcement shows).
 * reading: the chunk the scan reads; announced: per chunk, the bytes of
 * its last visit announced consumed; dropped_to: the end of its last
 * punch; drops_unread: punches that left a chunk's tail (drops) of a chunk
 * other than the one read or the one before it, or past its announced
 * bytes. */
static int overlap;
static uint32_t reading;
static uint64_t announced[8], dropped_to[8];
static unsigned long drops_unread;
static uint64_t lag_pending;
static unsigned long fail_first; /* the first reads of the run fail */
static int whole_budget;         /* the budget holds every chunk */
/* border: nothing announced, a budget of 3 chunks, and each chunk's first
 * half read, then the next chunk's first byte (a second thread crossing
 * the border first), then its second half. */
static int border;
/* follow: nothing announced, a budget of 4 chunks, prefetch depth 1, each
 * chunk read whole, then 3 ms of compute. continue_fail: every this many
 * CONTINUEs of a whole chunk fail with EINVAL. */
static int follow;
static unsigned long continue_fail, continues_whole;
/* big_chunks: 4 chunks of 32 MiB (a 4 MiB bounce slot); slot_reads: the
 * backing reads of a whole slot. */
static int big_chunks;
static unsigned long slot_reads;
static int odd_tail;             /* the region ends 100 bytes into a page */
static uint32_t reconcile_every; /* eager reconcile off, this interval */
static unsigned long reads;
static uint64_t violations;
/* piece: cfg.fetch_piece. Per chunk, the bytes read so far in its fetch;
 * CONTINUEs over bytes not read yet, and those that came before the
 * chunk's last byte was read. fail_mid: the first reads of a chunk's
 * second piece fail, 9 times, after its first piece was mapped. */
#define CHUNK (256u << 10)
/* big_tail: 6 chunks of 256 KiB and a last one of 1 MiB (an output head),
 * read as by threads crossing borders, under a budget a chunk short. */
static int big_tail;
static const struct resid_chunk_spec tail_table[] = {
	{ 0, CHUNK },
	{ CHUNK, CHUNK },
	{ 2 * CHUNK, CHUNK },
	{ 3 * CHUNK, CHUNK },
	{ 4 * CHUNK, CHUNK },
	{ 5 * CHUNK, CHUNK },
	{ 6 * CHUNK, 4 * CHUNK },
};
static uint64_t piece, read_to[8];
static uintptr_t a_base;
static unsigned long mapped_unread, mapped_early;
/* landing_delay: the job that mapped a chunk's last piece stalls 2 ms, as
 * one whose CPU the woken faulter took. */
static int landing_delay;
static long fail_mid;
/* stat_bad: once the region is open, this many reads of memory.stat show
 * STAT_EXCESS more shmem than the cgroup holds, as a kernel that has not
 * flushed a punch yet. */
#define STAT_EXCESS (64ull << 20)
static long stat_bad, stat_bad_after_open;
static unsigned long stat_bent; /* the reads bent */

static long bent_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	unsigned long n = __atomic_add_fetch(&reads, 1, __ATOMIC_RELAXED);

	if ((eio_every && n % eio_every == 0) || n <= fail_first)
		return -EIO;
	if (piece && off % CHUNK == piece &&
	    __atomic_fetch_sub(&fail_mid, 1, __ATOMIC_RELAXED) > 0)
		return -EIO;
	if (piece && off / CHUNK < 8) {
		uint64_t *to = &read_to[off / CHUNK];

		uint64_t end = off % CHUNK + len;

		/* Relaxed atomics: the landing test has two fetch jobs. */
		if (off % CHUNK == 0)
			__atomic_store_n(to, 0, __ATOMIC_RELAXED);
		if (end > __atomic_load_n(to, __ATOMIC_RELAXED))
			__atomic_store_n(to, end, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&slot_reads, len == 4u << 20, __ATOMIC_RELAXED);
	if (short_reads && len > 4096)
		len = len / 2 + 1; /* the next read starts mid-page */
	return resid_seam_linux.backing_pread(ctx, fd, buf, len, off);
}

static int bent_continue(void *ctx, int fd, uint64_t addr, uint64_t len,
			 int64_t *mapped)
{
	/* Pieces only: a late fault message's CONTINUE is one page. */
	if (piece && len > 4096) {
		uint64_t off = addr - a_base;
		uint64_t to = __atomic_load_n(&read_to[off / CHUNK],
					      __ATOMIC_RELAXED);

		uint64_t end = off % CHUNK + len;

		__atomic_add_fetch(&mapped_unread, end > to, __ATOMIC_RELAXED);
		__atomic_add_fetch(&mapped_early,
				   end < CHUNK && to <= end + piece,
				   __ATOMIC_RELAXED);
	}
	if (landing_delay && (addr - a_base) % CHUNK + len == CHUNK) {
		int rc = resid_seam_linux.uffd_continue(ctx, fd, addr, len,
							mapped);

		usleep(2000);
		return rc;
	}
	if (continue_fail && len == CHUNK &&
	    __atomic_add_fetch(&continues_whole, 1, __ATOMIC_RELAXED) %
			    continue_fail ==
		    0)
		return -EINVAL;
	if (partial_continue && len > 4096) {
		int rc = resid_seam_linux.uffd_continue(ctx, fd, addr, 4096,
							mapped);
		if (rc == 0) {
			*mapped = 4096;
			return -EAGAIN;
		}
		return rc;
	}
	return resid_seam_linux.uffd_continue(ctx, fd, addr, len, mapped);
}

static int is_memory_stat(const char *path)
{
	size_t n = strlen(path), k = strlen("/memory.stat");

	return n >= k && !strcmp(path + n - k, "/memory.stat");
}

/* Rewrites the shmem lines (v1 total_shmem too) of a memory.stat text. */
static long add_shmem_excess(char *buf, size_t cap)
{
	char out[16384], key[32];
	size_t w = 0;

	for (char *line = buf; *line && w < sizeof(out);) {
		size_t len = strcspn(line, "\n") + (strchr(line, '\n') ? 1 : 0);
		unsigned long long v;

		if (sscanf(line, "%31s %llu", key, &v) == 2 &&
		    (!strcmp(key, "shmem") || !strcmp(key, "total_shmem")))
			w += (size_t)snprintf(out + w, sizeof(out) - w,
					      "%s %llu\n", key,
					      v + STAT_EXCESS);
		else if (w + len < sizeof(out))
			w += (size_t)snprintf(out + w, sizeof(out) - w, "%.*s",
					      (int)len, line);
		else
			return -EFBIG;
		line += len;
	}
	if (w >= cap || w >= sizeof(out))
		return -EFBIG;
	memcpy(buf, out, w + 1);
	return (long)w;
}

/* thp_always: shmem_enabled says [always]; memfd_writes: the fetches'
 * writes into the memfd; written_ahead: those of a chunk's part before
 * its last written while the next part's read was handed to the reader
 * already (started_to: per chunk, the end of the last read handed). */
static int thp_always;
static unsigned long memfd_writes, written_ahead;
static uint64_t started_to[8];

/* no_reader: a reader cannot be had (no thread for it). */
static int no_reader;

static int bent_reader_open(void *ctx, resid_reader *rd, resid_read_fn fn,
			    void *arg)
{
	if (no_reader)
		return -EAGAIN;
	return resid_seam_linux.reader_open(ctx, rd, fn, arg);
}

static void bent_read_start(void *ctx, resid_reader rd, void *buf, size_t len,
			    uint64_t off)
{
	if (off / CHUNK < 8)
		__atomic_store_n(&started_to[off / CHUNK], off % CHUNK + len,
				 __ATOMIC_RELAXED);
	resid_seam_linux.read_start(ctx, rd, buf, len, off);
}

static long bent_memfd_write(void *ctx, int fd, const void *buf, size_t len,
			     uint64_t off)
{
	uint64_t end = off % CHUNK + len;

	__atomic_add_fetch(&memfd_writes, 1, __ATOMIC_RELAXED);
	if (off / CHUNK < 8 && end < CHUNK)
		__atomic_add_fetch(&written_ahead,
				   __atomic_load_n(&started_to[off / CHUNK],
						   __ATOMIC_RELAXED) > end,
				   __ATOMIC_RELAXED);
	return resid_seam_linux.memfd_write(ctx, fd, buf, len, off);
}

static long bent_read_text(void *ctx, const char *path, char *buf, size_t cap)
{
	static const char always[] =
		"[always] within_size advise never deny force\n";

	if (thp_always && strstr(path, "transparent_hugepage/shmem_enabled") &&
	    cap > sizeof(always)) {
		memcpy(buf, always, sizeof(always));
		return (long)sizeof(always) - 1;
	}
	long n = resid_seam_linux.read_text(ctx, path, buf, cap);

	if (n <= 0 || !is_memory_stat(path) ||
	    __atomic_fetch_sub(&stat_bad, 1, __ATOMIC_RELAXED) <= 0)
		return n;
	__atomic_add_fetch(&stat_bent, 1, __ATOMIC_RELAXED);
	return add_shmem_excess(buf, cap);
}

static int bent_punch(void *ctx, int fd, uint64_t off, uint64_t len)
{
	uint64_t end = off % CHUNK + len;

	if (overlap && off / CHUNK < 8 && end < CHUNK) {
		uint32_t c = (uint32_t)(off / CHUNK),
			 now = __atomic_load_n(&reading, __ATOMIC_ACQUIRE);

		/* The scan announces before the pager records: checked
		 * before the punch, this is exact whatever the timing. */
		__atomic_add_fetch(&drops_unread,
				   (c != now && c != (now + 7) % 8) ||
					   end > __atomic_load_n(&announced[c],
								 __ATOMIC_ACQUIRE),
				   __ATOMIC_RELAXED);
	}
	if (overlap && off / CHUNK < 8)
		__atomic_store_n(&dropped_to[off / CHUNK], end,
				 __ATOMIC_RELEASE);
	if (lost_punch)
		return 0;
	if (late_blocks)
		__atomic_store_n(&lag_pending, len / 512, __ATOMIC_RELAXED);
	return resid_seam_linux.punch(ctx, fd, off, len);
}

/* late_blocks: the first fstat after a punch still counts the punched
 * pages; stuck_blocks: one page too many, always. */
static int bent_fstat_blocks(void *ctx, int fd, uint64_t *blocks)
{
	int rc = resid_seam_linux.fstat_blocks(ctx, fd, blocks);

	if (rc == 0)
		*blocks += __atomic_exchange_n(&lag_pending, 0,
					       __ATOMIC_RELAXED) +
			   (stuck_blocks ? 4096 / 512 : 0);
	return rc;
}

static void count(int id, const char *msg, void *arg)
{
	(void)id;
	(void)msg;
	(void)arg;
	__atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
}

/* border: chunk i's first half, the next chunk's first byte, the rest.
 * The fetch of i's first half has unpinned it first, so that a pager
 * evicting i for the next chunk does so every run. */
static uint64_t border_read(struct resid_region *r, uint32_t i, uint64_t off,
			    uint64_t len, uint64_t seed)
{
	uint64_t bad = resid_content_mismatches(resid_base(r) + off, off,
						len / 2, seed);

	resid_quiesce(r);
	if (i + 1 < resid_nchunks(r))
		bad += resid_content_mismatches(resid_base(r) + off + len,
						off + len, 1, seed);
	return bad + resid_content_mismatches(resid_base(r) + off + len / 2,
					      off + len / 2, len - len / 2,
					      seed);
}

/* Three passes over 8 chunks of 256 KiB (big_chunks: one over 4 of 32 MiB,
 * which TSan checks in its time) under a 2-chunk budget (or one that holds
 * them all); returns the mismatched bytes. */
static uint64_t scan(struct resid_stats *s)
{
	struct resid_config c;
	struct resid_harness h;
	char err[RESID_ERRLEN];
	uint64_t bad = 0;

	resid_config_init(&c);
	c.region_len = big_tail ? 10ull * CHUNK :
				  (big_chunks ? 128ull << 20 : 2ull << 20) +
					  (odd_tail ? 100 : 0);
	c.chunk_size = big_tail ? 0 : big_chunks ? 32 << 20 : 256 << 10;
	c.table = big_tail ? tail_table : NULL;
	c.table_len = big_tail ? 7 : 0;
	c.budget_bytes = big_tail     ? 9 * CHUNK :
			 whole_budget ? c.region_len :
					(follow ? 4 :
					 border ? 3 :
						  2) *
						c.chunk_size;
	c.seed = 11;
	c.backing = RESID_BACKING_SYNTHETIC;
	if (reconcile_every)
		c.reconcile_interval = reconcile_every;
	c.prefetch_depth = prefetch ? 2 : overlap || follow ? 1 : 0;
	c.overlap_evict = overlap;
	c.evict_ahead = c.phase_timers = evict_ahead;
	c.fetch_piece = piece ? piece : c.fetch_piece;
	resid_harness_init(&h);
	if (landing_delay)
		h.landing_wait_ms = 60000; /* the outcome, not the machine */
	h.eager_reconcile = !reconcile_every;
	h.seam = &bent;
	c.harness = &h;
	violations = 0;
	memfd_writes = written_ahead = slot_reads = 0;
	memset(started_to, 0, sizeof(started_to));
	memset(announced, 0, sizeof(announced));
	memset(dropped_to, 0, sizeof(dropped_to));
	drops_unread = reading = 0;
	inv_set_handler(count, NULL);
	struct resid_region *r = resid_open(&c, err);

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	a_base = (uintptr_t)resid_base(r);
	__atomic_store_n(&stat_bad, stat_bad_after_open, __ATOMIC_RELAXED);
	stat_bent = 0;
	char manifest[2048];

	CU_ASSERT_EQUAL(resid_manifest_json(r, manifest, sizeof(manifest)), 0);
	CU_ASSERT(strstr(manifest, "\"kernel\":") != NULL);
	CU_ASSERT(strstr(manifest, "\"swap_condition\":") != NULL);
	for (int pass = 0; pass < (big_chunks ? 1 : 3); pass++)
		for (uint32_t i = 0; i < resid_nchunks(r); i++) {
			uint64_t off, len;

			resid_chunk_range(r, i, &off, &len);
			if (len > c.region_len - off)
				len = c.region_len -
				      off; /* the rest is zeros */
			__atomic_store_n(&announced[i % 8], 0,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&dropped_to[i % 8], 0,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&reading, i, __ATOMIC_RELEASE);
			if (border || big_tail) {
				bad += border_read(r, i, off, len, c.seed);
				continue;
			}
			if (follow) {
				bad += resid_content_mismatches(resid_base(r) +
									off,
								off, len,
								c.seed);
				usleep(3000);
				continue;
			}
			resid_notify_access(r, i);
			int wait = overlap;

			for (uint64_t at = 0, step = overlap ? piece / 4 : len;
			     at < len; at += step) {
				uint64_t n = len - at < step ? len - at : step;

				bad += resid_content_mismatches(resid_base(r) +
									off +
									at,
								off + at, n,
								c.seed);
				if (!overlap)
					continue;
				__atomic_store_n(&announced[i % 8], at + n,
						 __ATOMIC_RELEASE);
				resid_notify_consumed(r, i, at + n);
				/* Wait for the next chunk's prefetch to take
				 * this room, so that it asks for its next
				 * piece with less consumed than a piece: a
				 * pager dropping past the announcement then
				 * does so every run. 2 ms at most, and not
				 * again in this visit after that (no prefetch
				 * takes room here: stale, or a demand). */
				for (int w = 0;
				     wait && at + n < len &&
				     __atomic_load_n(&dropped_to[i % 8],
						     __ATOMIC_ACQUIRE) < at + n;
				     w++) {
					wait = w < 100;
					usleep(20);
				}
			}
			/* Evict-ahead runs after the faulters are woken; on a
			 * busy machine the next fault would beat it. */
			if (evict_ahead)
				resid_quiesce(r);
		}
	resid_check_quiescent(r);
	resid_get_stats(r, s);
	resid_close(r);
	inv_set_handler(NULL, NULL);
	short_reads = eio_every = partial_continue = lost_punch = prefetch = 0;
	evict_ahead = late_blocks = stuck_blocks = overlap = 0;
	whole_budget = odd_tail = big_chunks = border = follow = 0;
	big_tail = 0;
	continue_fail = continues_whole = 0;
	fail_first = 0;
	reconcile_every = 0;
	piece = 0;
	landing_delay = 0;
	stat_bad = stat_bad_after_open = 0;
	thp_always = no_reader = 0;
	return bad;
}

static void plain_scan_is_clean(void)
{
	struct resid_stats s;

	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.evictions > 0);
	CU_ASSERT(s.resident_max <= s.budget);
}

static void short_reads_are_legal(void)
{
	struct resid_stats s;

	short_reads = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.io_short > 0);
}

static void io_errors_retried(void)
{
	struct resid_stats s;

	eio_every = 3;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.io_errors > 0);
	/* No two reads in a row fail: a retry always succeeds. */
	CU_ASSERT_EQUAL(s.abandoned, 0);
}

/* Nine failed reads in a row exhaust the retries: the fetch is abandoned,
 * never mapped, and the faulter's second fault fetches the chunk. */
static void failing_read_abandons(void)
{
	struct resid_stats s;

	fail_first = 9;
	reads = 0;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT_EQUAL(s.abandoned, 1);
}

/* A budget that holds every chunk exactly: each chunk is fetched once and
 * nothing is evicted; without eager reconcile, accounting is checked every
 * reconcile_interval fetches, no more, no less. */
static void exact_budget_never_evicts(void)
{
	struct resid_stats s;

	whole_budget = 1;
	reconcile_every = 4;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT_EQUAL(s.evictions, 0);
	CU_ASSERT_EQUAL(s.fetches, 8);
	CU_ASSERT_EQUAL(s.reconciles, s.fetches / 4);
}

static void partial_continue_resumed(void)
{
	struct resid_stats s;

	partial_continue = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.continue_eagain > 0);
	CU_ASSERT_EQUAL(s.fetches, s.continues_ok);
}

/* A chunk in four pieces: each is mapped once it is read, before the read
 * of the one after the next begins (the next one's may be in flight), so a
 * faulter on the first runs while the rest is read. */
static void pieces_mapped_as_read(void)
{
	struct resid_stats s;

	piece = CHUNK / 4;
	mapped_unread = mapped_early = 0;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT_EQUAL(s.continues_ok, s.fetches);
	CU_ASSERT_EQUAL(s.continue_pieces, 3 * s.fetches);
	CU_ASSERT_EQUAL(mapped_unread, 0);
	CU_ASSERT_EQUAL(mapped_early, s.continue_pieces);
}

/* While a part is written into the memfd, the next one's read is with
 * the worker's reader: the disk works during the page work. A worker
 * that cannot have a reader reads in series, as cleanly. */
static void next_part_read_while_writing(void)
{
	struct resid_stats s;

	for (int none = 0; none <= 1; none++) {
		no_reader = none;
		piece = CHUNK / 4;
		CU_ASSERT_EQUAL(scan(&s), 0);
		CU_ASSERT_EQUAL(violations, 0);
		CU_ASSERT(s.fetches > 0);
		CU_ASSERT_EQUAL(memfd_writes, 4 * s.fetches);
		CU_ASSERT_EQUAL(written_ahead, none ? 0 : 3 * s.fetches);
	}
}

/* Chunks of 32 MiB, pieces of 1 MiB: after the first piece, which its
 * faulter waits for, a fetch reads a 4 MiB slot at a time (1 + 7 x 4 +
 * 3 MiB) and still writes and maps each piece apart. */
static void big_chunks_read_by_slot(void)
{
	struct resid_stats s;

	/* ThreadSanitizer's shadow of 128 MiB of A and B outgrows the
	 * suite's 256 MiB cgroup; the sizes checked here are the plain
	 * build's to check. */
	if (UNDER_TSAN)
		return;
	big_chunks = 1;
	piece = 1 << 20;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.fetches > 0);
	CU_ASSERT_EQUAL(slot_reads, 7 * s.fetches);
	CU_ASSERT_EQUAL(memfd_writes, 32 * s.fetches);
	CU_ASSERT_EQUAL(s.continue_pieces, 31 * s.fetches);
}

/* The Linux reader runs its reads on its own thread, returns each one's
 * count to its wait, and closes even with a read not waited for. */
static long slow_read(void *arg, void *buf, size_t len, uint64_t off)
{
	(void)buf;
	usleep(20000);
	__atomic_add_fetch((unsigned long *)arg, 1, __ATOMIC_RELAXED);
	return (long)(len + off);
}

static void linux_reader(void)
{
	const struct resid_seam *k = &resid_seam_linux;
	unsigned long ran = 0;
	resid_reader rd;

	CU_ASSERT_EQUAL_FATAL(k->reader_open(k->ctx, &rd, slow_read, &ran), 0);
	k->read_start(k->ctx, rd, NULL, 10, 5);
	CU_ASSERT_EQUAL(k->read_wait(k->ctx, rd), 15);
	k->read_start(k->ctx, rd, NULL, 1, 2);
	CU_ASSERT_EQUAL(k->read_wait(k->ctx, rd), 3);
	k->read_start(k->ctx, rd, NULL, 1, 1);
	k->reader_close(k->ctx, rd);
	CU_ASSERT_EQUAL(ran, 3);
}

/* The second piece's reads fail past the retries after the first piece
 * was mapped (its faulter woken): the fetch is abandoned, the mapped piece
 * punched with the rest, and the next fault reads the chunk again. */
static void failed_piece_abandons_mapped_ones(void)
{
	struct resid_stats s;

	piece = CHUNK / 4;
	fail_mid = 9;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT_EQUAL(s.abandoned, 1);
	CU_ASSERT_EQUAL(s.continue_pieces, 3 * s.fetches + 1);
}

/* The application reaches the next chunk while the job of the one it
 * left has not committed it yet: the next fetch waits for that job rather
 * than evict another chunk, so the declared order reads what Belady does
 * over 3 passes of 8 chunks in a budget of 2 (8 misses, then the kept
 * chunk 7 hits: 6, then 7 again). */
static void next_fetch_waits_for_landing_pin(void)
{
	struct resid_stats s;

	piece = CHUNK / 4;
	landing_delay = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT_EQUAL(s.fetches, 8 + 6 + 7);
}

/* Eviction that overlaps consumption: the next chunk's prefetch takes its
 * room piece by piece from the pieces of the chunk being read as they are
 * consumed, so it runs while that chunk is read. Belady reads 8 misses,
 * then 6, then 7 (as above): a floor. The total is not asserted from
 * above: it moves with the pager's races (a fault message read after its
 * chunk was dropped fetches it again; a prefetch's retention pin taken
 * after its chunk was announced is never given back), not with the drops
 * this test is about. What is exact, whatever the timing: no drop takes a
 * byte not announced consumed in the visit of the chunk read or of the one
 * before (a pager dropping past the announcement, mutant O01, or taking
 * the pieces a kept chunk consumed a cycle ago, fails it), no dropped
 * piece is faulted again, and drops happen (a pager that never overlaps
 * makes none). */
static void overlap_scan_drops_consumed(void)
{
	struct resid_stats s;

	overlap = 1;
	piece = CHUNK / 4;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.fetches >= 8 + 6 + 7);
	CU_ASSERT_EQUAL(drops_unread, 0);
	CU_ASSERT_EQUAL(s.dropped_refaults, 0);
	CU_ASSERT(s.drops > 0);
	CU_ASSERT(s.prefetch_jobs > 0);
	CU_ASSERT(s.resident_max <= s.budget);
}

/* A program that announces nothing, its threads crossing each border
 * together: the chunk being read is spared while the next one is fetched,
 * whether it was faulted or read resident. The declared cursor follows the
 * faults, so the victim is the chunk read furthest back: 8 fetches, then
 * at most 7 a pass (here 6 and 7: what stays resident rotates). A pager
 * evicting the chunk being read fetches it again at once, at every border
 * (30 in all). */
static void border_spares_the_chunk_being_read(void)
{
	struct resid_stats s;

	border = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.fetches >= 8 && s.fetches <= 8 + 7 + 7);
}

/* A program that announces nothing, whose last chunk is its largest (an
 * output head): the declared cursor follows its faults, so each later pass
 * gives up what it read furthest back, one small chunk (2.5 MiB, then 256
 * KiB a pass). A cursor left at the start of the cycle ranks the last
 * chunk furthest: the passes after the first read 1.4 MiB. */
static void cursor_follows_the_faults(void)
{
	struct resid_stats s;

	big_tail = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.fetch_bytes < 10 * CHUNK + 4 * CHUNK);
}

/* The follow mode (prefetch.c): a program that announces nothing is
 * followed by its faults, a prefetched chunk mapped at its first touch.
 * Chunk 0 and 1 stay, and every later pass's chunks 3 to 7 are each
 * prefetched while the one before is read (chunk 2 follows chunk 1, kept,
 * which faults no more). A pager whose declared cursor stays at the start
 * of the cycle declines those prefetches (nothing ahead may be evicted for
 * a chunk nearer): every chunk is a demand fetch. */
static void follow_mode_prefetches_ahead(void)
{
	struct resid_stats s;

	follow = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.demand_jobs <= 8);
	CU_ASSERT(s.prefetch_jobs >= 2 * 5);
	CU_ASSERT(s.resident_max <= s.budget);
}

/* The map of a prefetched chunk at its first touch fails (and a demand
 * fetch's map, now and then): the faulting thread is woken and its next
 * fault maps the chunk whole, not a page at a time (a page mapped alone
 * would make every later map of the chunk fail); every byte is right. */
static void follow_mode_survives_failed_maps(void)
{
	struct resid_stats s;

	follow = 1;
	continue_fail = 3;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.continue_errors > 0);
	CU_ASSERT_EQUAL(s.refaults_served, 0);
	CU_ASSERT(s.prefetch_jobs >= 2 * 5);
}

static void prefetch_scan_is_clean(void)
{
	struct resid_stats s;

	prefetch = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.prefetch_jobs > 0);
	CU_ASSERT(s.resident_max <= s.budget);
}

/* Room for the next chunk is made when a fetch lands; the phase timers
 * account for the fetch's time. */
static void evict_ahead_scan_is_clean(void)
{
	struct resid_stats s;

	evict_ahead = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.evict_ahead > 0);
	CU_ASSERT(s.evict_ahead <= s.evictions);
	CU_ASSERT(s.resident_max <= s.budget);
	CU_ASSERT(s.read_ns > 0 && s.punch_ns > 0);
	CU_ASSERT(s.fetch_ns >= s.reserve_ns + s.read_ns + s.continue_ns);
}

/* memory.stat's tolerance is the kernel's flush threshold for the CPUs
 * online: the pager's count of them against glibc's. */
static void tolerance_counts_online_cpus(void)
{
	struct resid_config c;
	struct resid_accounting acc;
	struct utsname u;
	char err[RESID_ERRLEN];

	resid_config_init(&c);
	c.region_len = 1 << 20;
	c.chunk_size = 256 << 10;
	c.budget_bytes = 1 << 20;
	c.backing = RESID_BACKING_SYNTHETIC;
	struct resid_region *r = resid_open(&c, err);

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(resid_reconcile(r, &acc, err), 0);
	resid_close(r);
	CU_ASSERT_EQUAL_FATAL(uname(&u), 0);
	CU_ASSERT_EQUAL(acc.tolerance,
			cg_flush_tolerance(u.release,
					   (unsigned)sysconf(
						   _SC_NPROCESSORS_ONLN)));
}

/* The last chunk is 100 bytes of data in a page: its eviction frees and its
 * fetch takes a whole page, and accounting must say so. */
static void unaligned_tail_is_accounted(void)
{
	struct resid_stats s;

	odd_tail = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT_EQUAL(s.reconcile_failures, 0);
	CU_ASSERT(s.evictions > 0);
}

/* A backing file whose size is not a page multiple, on a file system with
 * O_DIRECT (/var/tmp, not tmpfs): the last read is unaligned and must go
 * through the plain descriptor. */
static void odd_file_is_read_whole(void)
{
	static uint8_t data[(256 << 10) + 100];
	char path[] = "/var/tmp/residctl-odd-XXXXXX";
	struct resid_config c;
	char err[RESID_ERRLEN];
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + i / 4096);
	CU_ASSERT_FATAL(write(fd, data, sizeof(data)) == (ssize_t)sizeof(data));
	close(fd);
	resid_config_init(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = path;
	c.region_len = sizeof(data);
	c.chunk_size = 64 << 10;
	c.budget_bytes = 128 << 10;
	struct resid_region *r = resid_open(&c, err);

	unlink(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT(memcmp(resid_base(r), data, sizeof(data)) == 0);
	resid_close(r);
}

static void lost_punch_trips_reconcile(void)
{
	struct resid_stats s;

	lost_punch = 1;
	scan(&s);
	CU_ASSERT(violations > 0);
	CU_ASSERT(s.reconcile_failures > 0);
}

static void late_st_blocks_is_lag(void)
{
	struct resid_stats s;

	late_blocks = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT(s.st_blocks_lag > 0);
	CU_ASSERT_EQUAL(s.reconcile_failures, 0);
}

/* The page count excuses an excess while the pager runs; at quiescence
 * st_blocks must be exact. */
static void stuck_st_blocks_trips_quiescence(void)
{
	struct resid_stats s;

	stuck_blocks = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT(s.st_blocks_lag > 0);
	CU_ASSERT(violations > 0);
}

/* Fetches write into the memfd through a bounce buffer, except where
 * shmem THP would give a write huge folios: there they read into B. */
static void thp_always_reads_into_b(void)
{
	struct resid_stats s;

	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT(memfd_writes > 0);
	thp_always = 1;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT_EQUAL(memfd_writes, 0);
	CU_ASSERT(s.fetches > 0);
}

/* memory.stat behind by more than the tolerance for a few reads: the
 * reads over the next flush period find it caught up, so it is lag. */
static void lagging_memory_stat_is_lag(void)
{
	struct resid_stats s;

	if (!cg.own)
		return; /* no cgroup of its own: shmem is not checked */
	stat_bad_after_open = 4;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 0);
	CU_ASSERT_EQUAL(s.shmem_lag, 1);
	CU_ASSERT_EQUAL(s.reconcile_failures, 0);
}

/* Past every confirming read, the deviation is I-7's, once. */
static void stuck_memory_stat_trips_reconcile(void)
{
	struct resid_stats s;

	if (!cg.own)
		return;
	stat_bad_after_open = 17;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT_EQUAL(violations, 1);
	CU_ASSERT_EQUAL(s.reconcile_failures, 1);
	CU_ASSERT_EQUAL(s.shmem_lag, 0);
}

/* A cgroup whose shmem never matches (another user of shmem in it): one
 * confirmation, then each check reports at once, no more reads. */
static void deviating_cgroup_confirmed_once(void)
{
	struct resid_stats s;

	if (!cg.own)
		return;
	stat_bad_after_open = 1L << 30;
	CU_ASSERT_EQUAL(scan(&s), 0);
	CU_ASSERT(s.reconcile_failures > 1);
	CU_ASSERT_EQUAL(violations, s.reconcile_failures);
	CU_ASSERT_EQUAL(stat_bent, s.reconcile_failures + 16);
	CU_ASSERT_EQUAL(s.shmem_lag, 0);
}

static int setup(void)
{
	if (unit_cgroup_enter(&cg, "pager", "unit-pager") < 0)
		return -1;
	bent = resid_seam_linux;
	bent.name = "bent";
	bent.backing_pread = bent_pread;
	bent.uffd_continue = bent_continue;
	bent.punch = bent_punch;
	bent.fstat_blocks = bent_fstat_blocks;
	bent.read_text = bent_read_text;
	bent.memfd_write = bent_memfd_write;
	bent.read_start = bent_read_start;
	bent.reader_open = bent_reader_open;
	return 0;
}

static int teardown(void)
{
	return unit_cgroup_leave(&cg);
}

void suite_pager(void)
{
	CU_pSuite s = CU_add_suite("pager on the kernel", setup, teardown);

	CU_add_test(s, "plain scan is clean", plain_scan_is_clean);
	CU_add_test(s, "prefetch scan is clean", prefetch_scan_is_clean);
	CU_add_test(s, "short reads are legal", short_reads_are_legal);
	CU_add_test(s, "I/O errors retried", io_errors_retried);
	CU_add_test(s, "a read that keeps failing abandons the fetch",
		    failing_read_abandons);
	CU_add_test(s, "an exact budget never evicts",
		    exact_budget_never_evicts);
	CU_add_test(s, "partial CONTINUE resumed", partial_continue_resumed);
	CU_add_test(s, "a chunk's pieces are mapped as they are read",
		    pieces_mapped_as_read);
	CU_add_test(s, "the next part is read while one is written",
		    next_part_read_while_writing);
	CU_add_test(s,
		    "the Linux reader: reads, counts, a close with one "
		    "in flight",
		    linux_reader);
	CU_add_test(s, "a failed piece abandons the pieces mapped before it",
		    failed_piece_abandons_mapped_ones);
	CU_add_test(s, "the next fetch waits for a landing chunk's pin",
		    next_fetch_waits_for_landing_pin);
	CU_add_test(s, "evict ahead of need is clean",
		    evict_ahead_scan_is_clean);
	CU_add_test(s, "threads crossing a border spare the chunk being read",
		    border_spares_the_chunk_being_read);
	CU_add_test(s, "a program announcing nothing is followed by its faults",
		    cursor_follows_the_faults);
	CU_add_test(s, "a program announcing nothing is prefetched ahead",
		    follow_mode_prefetches_ahead);
	CU_add_test(s, "the follow mode survives failed maps",
		    follow_mode_survives_failed_maps);
	CU_add_test(s, "chunks of 32 MiB are read a 4 MiB slot at a time",
		    big_chunks_read_by_slot);
	CU_add_test(s,
		    "eviction overlapping consumption drops only "
		    "consumed bytes",
		    overlap_scan_drops_consumed);
	CU_add_test(s, "an unaligned tail is accounted in pages",
		    unaligned_tail_is_accounted);
	CU_add_test(s, "a file of an odd size is read whole",
		    odd_file_is_read_whole);
	CU_add_test(s, "the memory.stat tolerance counts the online CPUs",
		    tolerance_counts_online_cpus);
	CU_add_test(s, "a punch that frees nothing trips I-7",
		    lost_punch_trips_reconcile);
	CU_add_test(s, "st_blocks lowered late after a punch is lag, not I-7",
		    late_st_blocks_is_lag);
	CU_add_test(s, "st_blocks not exact at quiescence trips I-7",
		    stuck_st_blocks_trips_quiescence);
	CU_add_test(s, "with shmem THP always, fetches read into B",
		    thp_always_reads_into_b);
	CU_add_test(s, "memory.stat behind for a few reads is lag, not I-7",
		    lagging_memory_stat_is_lag);
	CU_add_test(s, "memory.stat behind past the flush period trips I-7",
		    stuck_memory_stat_trips_reconcile);
	CU_add_test(s, "a cgroup that keeps deviating is confirmed once",
		    deviating_cgroup_confirmed_once);
}
