/* Filling a chunk's pages for its fetch: reads through the worker's
 * bounce buffer and writes into the memfd. For a chunk longer than a slot
 * (half the buffer) a reader thread reads the next slot while the worker
 * writes and maps the one before, so the disk and the page work overlap;
 * without a bounce buffer (it could not be allocated) the worker reads
 * straight into B. */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Reads [at, at + len) of the chunk into dst until all is there; short
 * reads are legal. The page tail past the backing store's end reads as
 * zeros. */
static int read_into(struct resid_region *r, struct chunk *c, uint8_t *dst,
		     uint64_t at, uint64_t len)
{
	uint64_t data = c->data_len > at ? c->data_len - at : 0, got = 0;
	int errors = 0;

	if (data > len)
		data = len;
	INV_ASSERT(inv_not_in_a(dst, len, r->a, r->len));
	while (got < data) {
		long n = backing_read(r, dst + got, data - got,
				      c->off + at + got);

		if (n == -EINTR) {
			STAT_INC(r, io_eintr);
			CODE_PROBE(1, read_eintr);
			continue;
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
		long n = K(r, memfd_write, r->memfd, src + done, len - done,
			   c->off + at + done);

		if (n == -EINTR)
			continue;
		if (n <= 0) {
			STAT_INC(r, io_errors);
			if (++errors > IO_RETRIES)
				return n ? (int)n : -ENOSPC;
			continue;
		}
		done += (uint64_t)n;
	}
	return 0;
}

/* The reader: slot by slot, in order, each into the half of the buffer
 * the worker has emptied; stops at the first error or when told. */
static void *reader_main(void *arg)
{
	struct fill *f = arg;
	struct resid_region *r = f->r;

	for (uint64_t at = 0, i = 0; at < f->c->len; at += f->unit, i++) {
		uint64_t n = f->c->len - at < f->unit ? f->c->len - at : f->unit;
		int s = (int)(i % 2), stop;

		K(r, lock, &f->m);
		while (f->full[s] && !f->stop)
			K(r, cond_wait, &f->cv, &f->m);
		stop = f->stop;
		K(r, unlock, &f->m);
		if (stop)
			break;
		int rc = read_into(r, f->c, f->bounce + s * f->unit, at, n);

		K(r, lock, &f->m);
		if (rc < 0)
			f->err = rc;
		else
			f->full[s] = 1;
		K(r, cond_broadcast, &f->cv);
		K(r, unlock, &f->m);
		if (rc < 0)
			break;
	}
	return NULL;
}

void fill_start(struct fill *f, struct resid_region *r, struct chunk *c,
		uint8_t *bounce)
{
	uint64_t piece = r->cfg.fetch_piece ? r->cfg.fetch_piece : c->len;

	memset(f, 0, sizeof(*f));
	f->r = r;
	f->c = c;
	f->bounce = bounce;
	f->unit = piece < FETCH_BOUNCE / 2 ? piece : FETCH_BOUNCE / 2;
	if (!bounce || c->len <= f->unit)
		return;
	K(r, mutex_init, &f->m);
	K(r, cond_init, &f->cv);
	if (K(r, thread_start, &f->reader, reader_main, f, "resid-read") < 0) {
		/* Serial, as a chunk of one slot: slower, not wrong. */
		K(r, cond_destroy, &f->cv);
		K(r, mutex_destroy, &f->m);
		return;
	}
	f->threaded = 1;
}

/* The next slot's bytes, in the bounce buffer, written into the memfd. */
static int fill_slot(struct fill *f)
{
	struct resid_region *r = f->r;
	uint64_t at = f->done, n = f->c->len - at < f->unit ?
		f->c->len - at : f->unit;
	int s = (int)(at / f->unit % 2), rc = 0;

	if (f->threaded) {
		K(r, lock, &f->m);
		while (!f->full[s] && !f->err)
			K(r, cond_wait, &f->cv, &f->m);
		rc = f->full[s] ? 0 : f->err;
		K(r, unlock, &f->m);
	} else {
		rc = read_into(r, f->c, f->bounce, at, n);
	}
	if (rc == 0)
		rc = write_memfd(r, f->c, f->bounce + (f->threaded ? s : 0) *
				 f->unit, at, n);
	if (f->threaded) {
		K(r, lock, &f->m);
		f->full[s] = 0;
		K(r, cond_broadcast, &f->cv);
		K(r, unlock, &f->m);
	}
	if (rc == 0)
		f->done = at + n;
	return rc;
}

int fill_upto(struct fill *f, uint64_t end)
{
	if (!f->bounce) {
		int rc = read_into(f->r, f->c, f->r->b + f->c->off + f->done,
				   f->done, end - f->done);

		if (rc == 0)
			f->done = end;
		return rc;
	}
	while (f->done < end) {
		int rc = fill_slot(f);

		if (rc < 0)
			return rc;
	}
	return 0;
}

void fill_stop(struct fill *f)
{
	struct resid_region *r = f->r;

	if (!f->threaded)
		return;
	K(r, lock, &f->m);
	f->stop = 1;
	K(r, cond_broadcast, &f->cv);
	K(r, unlock, &f->m);
	K(r, thread_join, f->reader);
	K(r, cond_destroy, &f->cv);
	K(r, mutex_destroy, &f->m);
}
