/* The data path of a fetch: the chunk's bytes read from the backing store
 * part by part (through the worker's bounce buffer and reader, or straight
 * into B), written into the memfd, and mapped into A piece by piece with
 * CONTINUE. Nothing here changes a chunk's state or the budget. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "internal.h"

#define IO_RETRIES 8

/* read_into's first read, when the reader has not done it. */
#define NOT_STARTED LONG_MIN

/* The bytes of [at, at + len) of the chunk the backing store holds; the
 * page tail past its end reads as zeros. */
static uint64_t data_in(const struct chunk *c, uint64_t at, uint64_t len)
{
	uint64_t data = c->data_len > at ? c->data_len - at : 0;

	return data < len ? data : len;
}

/* Reads [at, at + len) of the chunk into dst until all is there; short
 * reads are legal. first: what the reader's read of it returned, or
 * NOT_STARTED. */
static int read_into(struct resid_region *r, struct chunk *c, uint8_t *dst,
		     uint64_t at, uint64_t len, long first)
{
	uint64_t data = data_in(c, at, len), got = 0;
	int errors = 0;

	INV_ASSERT(inv_not_in_a(dst, len, r->a, r->len));
	while (got < data) {
		long n = first != NOT_STARTED ?
				 first :
				 backing_read(r, dst + got, data - got,
					      c->off + at + got);

		first = NOT_STARTED;
		/* EINTR counts as a failure too: one that persists must end
		 * in the back-off below, not spin. */
		if (n == -EINTR) {
			STAT_INC(r, io_eintr);
			CODE_PROBE(1, read_eintr);
		}
		if (n <= 0) {
			STAT_INC(r, io_errors);
			/* 0: the file ended early, truncated under us. */
			if (++errors > IO_RETRIES)
				return n < 0 ? (int)n : -ENODATA;
			CODE_PROBE(1, read_retried);
			continue;
		}
		if ((uint64_t)n < data - got) {
			STAT_INC(r, io_short);
			CODE_PROBE(1, read_short);
		}
		got += (uint64_t)n;
	}
	if (data < len)
		memset(dst + data, 0, len - data);
	return 0;
}

/* Writes the bounce buffer's len bytes into the memfd at the chunk's at. */
static int write_memfd(struct resid_region *r, struct chunk *c,
		       const uint8_t *src, uint64_t at, uint64_t len)
{
	uint64_t done = 0;
	int errors = 0;

	while (done < len) {
		long n = SEAM(r, memfd_write, r->memfd, src + done, len - done,
			      c->off + at + done);

		if (n <= 0) {
			STAT_INC(r, io_errors);
			if (++errors > IO_RETRIES)
				return n ? (int)n : -ENOSPC;
			CODE_PROBE(1, write_retried);
			continue;
		}
		CODE_PROBE((uint64_t)n < len - done, write_retried);
		done += (uint64_t)n;
	}
	return 0;
}

/* On the huge path the last chunk holds its tail up to the folio's end:
 * zeros, in before its last piece is mapped, so that the memfd holds
 * c->hold once it lands and every punch frees whole folios. No read is in
 * flight then: both bounce slots are free. */
static int fill_tail(struct resid_region *r, struct chunk *c,
		     const struct worker *w)
{
	uint64_t at = c->len;

	if (!w->bounce) {
		INV_ASSERT(inv_not_in_a(r->b + c->off + at, c->hold - at, r->a,
					r->len));
		memset(r->b + c->off + at, 0, c->hold - at);
		return 0;
	}
	/* Only as much as the tail needs: the bounce is two slots. */
	uint64_t most = 2 * w->slot;

	memset(w->bounce, 0, c->hold - at < most ? c->hold - at : most);
	while (at < c->hold) {
		uint64_t n = c->hold - at < most ? c->hold - at : most;
		int rc = write_memfd(r, c, w->bounce, at, n);

		if (rc < 0)
			return rc;
		at += n;
	}
	return 0;
}

/* The bytes of the chunk mapped at once (cfg.fetch_piece; 0: all). */
static uint64_t piece_len(const struct resid_region *r, const struct chunk *c)
{
	return r->cfg.fetch_piece ? r->cfg.fetch_piece : c->len;
}

/* A fetch goes part by part: from at to the end of its piece, at most one
 * bounce slot. Through a big slot (chunks of 32 MiB or more) a part after
 * the first piece, which its faulter waits for, spans pieces, up to the
 * last piece boundary within a slot, so that reads stay large while each
 * piece is still mapped as soon as it is written; not while the chunk is
 * reserved piece by piece (overlap_evict's prefetch), whose room comes a
 * piece at a time. */
static uint64_t part_len(struct resid_region *r, const struct chunk *c,
			 const struct worker *w, uint64_t at)
{
	uint64_t piece = piece_len(r, c), end = (at / piece + 1) * piece;

	if (w->bounce && w->slot == FETCH_SLOT_BIG && at >= piece &&
	    c->res >= c->hold) {
		uint64_t span = (at + w->slot) / piece * piece;

		if (span > end)
			end = span;
	}
	if (w->bounce && end > at + w->slot)
		end = at + w->slot;
	return (end < c->len ? end : c->len) - at;
}

/* Where part k, at `at`, is read: bounce slot k % 2, or B itself. */
static uint8_t *part_dst(struct resid_region *r, const struct chunk *c,
			 const struct worker *w, uint64_t at, uint64_t k)
{
	return w->bounce ? w->bounce + (k & 1) * w->slot : r->b + c->off + at;
}

/* Hands part k's read to the worker's reader. Returns whether it did:
 * not without a reader, nor for a part wholly past the backing store's
 * end. */
int part_start(struct resid_region *r, const struct chunk *c,
	       const struct worker *w, uint64_t at, uint64_t k)
{
	uint64_t data = data_in(c, at, part_len(r, c, w, at));

	if (!w->rd || !data)
		return 0;
	SEAM(r, read_start, w->rd, part_dst(r, c, w, at, k), data, c->off + at);
	return 1;
}

/* Before a fetch gives up its buffer or punches its pages: the read in
 * flight into them, if any, is waited for and dropped. */
void part_drain(struct resid_region *r, const struct worker *w, int started)
{
	if (!started)
		return;
	(void)SEAM(r, read_wait, w->rd);
	CODE_PROBE(1, read_dropped);
}

/* CONTINUE over [at, at + len) of the chunk in A; on partial progress go
 * on from where it stopped. CONTINUE maps inside one mapping only: where
 * the application split A (advice or mprotect on a part of it) it fails
 * with ENOENT, and halving the step finds the border; a page in no
 * mapping of the region (munmap'd by the application) has no reader to
 * serve and is passed over. Returns the bytes done, or -errno. */
int64_t fill_map(struct resid_region *r, struct chunk *c, uint64_t at,
		 uint64_t len)
{
	uint64_t base = (uint64_t)(uintptr_t)(r->a + c->off + at), done = 0;
	uint64_t step = len;
	int errors = 0;

	while (done < len) {
		uint64_t n = step < len - done ? step : len - done;
		int64_t mapped = 0;
		int rc = SEAM(r, uffd_continue, r->uffd, base + done, n,
			      &mapped);

		if (rc == 0) {
			done += n;
			step = len;
			continue;
		}
		if (rc == -EAGAIN) {
			STAT_INC(r, continue_eagain);
			CODE_PROBE(mapped > 0, continue_partial);
			CODE_PROBE(mapped <= 0, continue_eagain_none);
			if (mapped > 0)
				done += (uint64_t)mapped;
			else if (++errors > IO_RETRIES)
				return -EAGAIN;
			continue;
		}
		if (rc == -ENOENT) {
			STAT_INC(r, continue_split);
			CODE_PROBE(n > RESID_PAGE, continue_split);
			if (n > RESID_PAGE)
				step = n / 2 / RESID_PAGE * RESID_PAGE;
			else
				done += n;
			continue;
		}
		STAT_INC(r, continue_errors);
		CODE_PROBE(rc == -EEXIST, continue_eexist);
		CODE_PROBE(rc != -EEXIST, continue_error);
		return rc;
	}
	return (int64_t)done;
}

/* Maps [from, to) of the chunk, a whole piece. Before the CONTINUE of the
 * last one the chunk is marked landing: a woken faulter may take this
 * job's CPU at once. */
static int map_piece(struct resid_region *r, struct chunk *c, uint64_t t[4],
		     uint64_t from, uint64_t to)
{
	uint64_t t1 = phase_clock(r);
	int last = to == c->len;

	if (last) {
		__atomic_store_n(&c->landed_access,
				 __atomic_load_n(&r->access_seq,
						 __ATOMIC_ACQUIRE),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&c->landing, 1, __ATOMIC_RELEASE);
	}
	int64_t mapped = fill_map(r, c, from, to - from);

	if (mapped < 0) {
		__atomic_store_n(&c->landing, 0, __ATOMIC_RELEASE);
		return (int)mapped;
	}
	if (!last) {
		STAT_INC(r, continue_pieces);
		CODE_PROBE(1, piece_mapped_early);
	}
	t[3] += phase_clock(r) - t1;
	return 0;
}

/* A fetch that reserves its chunk piece by piece (overlap_evict's
 * prefetch: c->res < c->hold) needs room for the pieces a part up to
 * `next` writes, up to whole folios, before its bytes enter the memfd.
 * 0 or -EBUSY. */
static int room_for(struct resid_region *r, struct chunk *c, uint64_t next)
{
	uint64_t piece = piece_len(r, c);
	uint64_t end = (next + piece - 1) / piece * piece;

	if (c->res >= c->hold)
		return 0;
	end = (end + r->folio - 1) / r->folio * r->folio;
	return fetch_piece_room(r, c, end < c->len ? end : c->hold);
}

/* Whether part `at` may be read before its room is there: into a bounce
 * buffer, yes; into B only with its room reserved. */
static int may_read(struct resid_region *r, const struct chunk *c,
		    const struct worker *w, uint64_t at)
{
	return w->bounce || c->res >= c->hold ||
	       c->res >= at + part_len(r, c, w, at);
}

/* Writes the part [at, next), read into dst, into the memfd (from a
 * bounce slot) a piece at a time, and maps each piece as soon as it is
 * whole; *from is where the unmapped bytes start. */
static int place_part(struct resid_region *r, struct chunk *c, uint64_t t[4],
		      const struct worker *w, const uint8_t *dst, uint64_t at,
		      uint64_t next, uint64_t *from)
{
	uint64_t piece = piece_len(r, c);

	for (uint64_t p = at, end; p < next; p = end) {
		uint64_t t0 = phase_clock(r);
		uint64_t piece_end = (p / piece + 1) * piece;
		int rc = 0;

		end = piece_end < next ? piece_end : next;
		if (w->bounce &&
		    (rc = write_memfd(r, c, dst + (p - at), p, end - p)) < 0) {
			CODE_PROBE(1, abandon_read_error);
			return rc;
		}
		t[2] += phase_clock(r) - t0;
		if (end % piece && end < c->len)
			continue;
		if (end == c->len && c->hold > c->len)
			rc = fill_tail(r, c, w);
		if (rc == 0 && !__atomic_load_n(&c->lazy, __ATOMIC_RELAXED))
			rc = map_piece(r, c, t, *from, end);
		if (rc < 0)
			return rc;
		*from = end;
	}
	return 0;
}

/* Reads, writes and maps the chunk part by part. The next part's read goes
 * to the reader before this part is written into the memfd, so the disk
 * works while the worker does the page work; a piece is mapped as soon as
 * it is written, and CONTINUE wakes its faulters while the rest is read.
 * started: part 0's read is in flight already. Returns the bytes mapped,
 * or -errno from the read, write or CONTINUE that failed; what was mapped
 * before stays until the caller's punch. */
int64_t fill_and_map(struct resid_region *r, struct chunk *c, uint64_t t[4],
		     const struct worker *w, int started)
{
	uint64_t from = 0;

	for (uint64_t at = 0, k = 0; at < c->len; k++) {
		uint64_t len = part_len(r, c, w, at), next = at + len;
		uint64_t t0 = phase_clock(r);
		int rc = room_for(r, c, next);

		if (rc < 0) {
			part_drain(r, w, started);
			return rc;
		}
		long first = started ? SEAM(r, read_wait, w->rd) : NOT_STARTED;
		uint8_t *dst = part_dst(r, c, w, at, k);

		started = next < c->len && may_read(r, c, w, next) &&
			  part_start(r, c, w, next, k + 1);
		rc = read_into(r, c, dst, at, len, first);
		t[2] += phase_clock(r) - t0;
		if (rc < 0)
			CODE_PROBE(1, abandon_read_error);
		else
			rc = place_part(r, c, t, w, dst, at, next, &from);
		if (rc < 0) {
			part_drain(r, w, started);
			return rc;
		}
		at = next;
	}
	return (int64_t)c->len;
}
