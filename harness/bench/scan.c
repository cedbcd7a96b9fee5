/* The cyclic layer scan: layers in order, every byte consumed and checked
 * (decoding: every layer multiplied into a vector and its output checked),
 * the reference trace written by the workload as it goes. Several threads
 * split each layer (as its rows are split between cores) and meet at a
 * barrier before the next. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "bench/bench.h"
#include "bench/decode.h"

#define MAX_THREADS 64

/* The helpers start only when all of them exist: 1 run, -1 give up. */
struct gate {
	pthread_mutex_t m;
	pthread_cond_t c;
	int state;
};

struct worker {
	struct scan *s;
	struct worker *all;
	pthread_barrier_t *bar;
	struct gate *gate;
	uint32_t id;
	uint64_t sum, bad;
	uint64_t part; /* decode: this thread's share of a layer's checksum */
	pthread_t th;
};

/* Sums [off, off + len) of the mapping, whole words where it can, and
 * counts the words that differ from the content (a partial word at either
 * end of a layer counts as one). */
static void consume(struct worker *w, uint64_t off, uint64_t len)
{
	const uint8_t *b = w->s->base;
	uint64_t end = off + len, a = (off + 7) & ~7ull, z = end & ~7ull;
	uint64_t sum = 0, bad = 0, seed = w->s->seed;

	if (a > end)
		a = end;
	if (z < a)
		z = a;
	for (uint64_t i = off; i < a; i++)
		sum += b[i];
	for (uint64_t i = z; i < end; i++)
		sum += b[i];
	bad += a > off && resid_content_mismatches(b + off, off, a - off, seed);
	bad += end > z && resid_content_mismatches(b + z, z, end - z, seed);
	for (const uint64_t *p = (const uint64_t *)(b + a);
	     p < (const uint64_t *)(b + z); p++) {
		uint64_t v = *p;

		sum += v;
		bad += v !=
		       resid_content_word((uint64_t)((const uint8_t *)p - b),
					  seed);
	}
	w->sum += sum;
	w->bad += bad;
}

/* E-overlap: the bytes up to `end` of the region consumed, announced to
 * the chunk holding the last of them (each chunk passed, whole). */
static void announce(struct scan *s, uint64_t from, uint64_t end)
{
	for (uint32_t c = resid_chunk_of(s->r, from);
	     c != RESID_NO_CHUNK && c <= resid_chunk_of(s->r, end - 1); c++) {
		uint64_t off, len;

		resid_chunk_range(s->r, c, &off, &len);
		resid_notify_consumed(s->r, c,
				      end - off < len ? end - off : len);
	}
}

/* One thread: the layer consumed a MiB at a time, each announced. */
#define ANNOUNCE_STEP (1ull << 20)
static void consume_announced(struct worker *w, uint64_t off, uint64_t len)
{
	for (uint64_t at = 0; at < len; at += ANNOUNCE_STEP) {
		uint64_t n = len - at < ANNOUNCE_STEP ? len - at :
							ANNOUNCE_STEP;

		consume(w, off + at, n);
		announce(w->s, off + at, off + at + n);
	}
}

/* Thread 0, before a layer: the chunks it enters, announced and traced. */
static void enter_layer(struct scan *s, uint32_t layer, uint32_t *last)
{
	uint32_t c = s->lay->layers[layer].chunk;
	uint32_t end = layout_last_chunk(s->lay, layer);

	if (s->r)
		resid_notify_access(s->r, c);
	if (s->r && s->touched && end != c)
		resid_notify_access(s->r, end);
	for (; c <= end; c++)
		if (c != *last)
			s->trace[s->accesses++] = *last = c;
}

/* Decode: this thread's rows of layer l multiplied into x. */
static void decode(struct worker *w, uint32_t l)
{
	const struct decode_job *j = w->s->dec;
	struct decode_layer d = decode_layer_of(&w->s->lay->layers[l], j->cols);
	uint64_t t = w->s->threads;

	w->part = decode_rows((const float *)w->s->base + d.first, &d, j->cols,
			      j->x, d.rows * w->id / t,
			      d.rows * (w->id + 1) / t);
}

/* Thread 0, when every thread is done with layer l (before any starts the
 * next): the layer's output against its reference. */
static void check_output(struct worker *w0, uint32_t l)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < w0->s->threads; i++)
		sum += w0->all[i].part;
	w0->bad += sum != w0->s->dec->ref[l];
	w0->sum += sum;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct scan *s = w->s;
	uint32_t last = UINT32_MAX;
	int state = 1;

	if (w->id) {
		pthread_mutex_lock(&w->gate->m);
		while (!w->gate->state)
			pthread_cond_wait(&w->gate->c, &w->gate->m);
		state = w->gate->state;
		pthread_mutex_unlock(&w->gate->m);
	}
	if (state < 0)
		return NULL;
	for (uint32_t p = 0; p < s->passes; p++) {
		for (uint32_t l = 0; l < s->lay->nlayers; l++) {
			const struct layout_layer *y = &s->lay->layers[l];
			uint64_t slice = y->len / s->threads / 8 * 8;

			if (w->id == 0)
				enter_layer(s, l, &last);
			if (s->threads > 1)
				pthread_barrier_wait(w->bar);
			uint64_t from = slice * w->id;
			uint64_t to = w->id + 1 == s->threads ? y->len :
								from + slice;

			if (s->dec)
				decode(w, l);
			else if (s->r && s->overlap && s->threads == 1)
				consume_announced(w, y->off + from, to - from);
			else
				consume(w, y->off + from, to - from);
			if (s->threads > 1)
				pthread_barrier_wait(w->bar);
			if (s->r && s->overlap && w->id == 0 &&
			    (s->threads > 1 || s->dec))
				announce(s, y->off, y->off + y->len);
			if (s->dec && w->id == 0)
				check_output(w, l);
		}
		if (p == 0 && w->id == 0) {
			s->t_first_pass = mono_now();
			if (bench_read_bytes(&s->io_first_pass))
				s->io_first_pass = 0;
		}
	}
	return NULL;
}

int scan_run(struct scan *s, char *err, size_t n)
{
	struct worker w[MAX_THREADS];
	pthread_barrier_t bar;
	struct gate gate = { PTHREAD_MUTEX_INITIALIZER,
			     PTHREAD_COND_INITIALIZER, 0 };
	uint32_t started = 0;
	int rc = 0;

	if (s->threads < 1 || s->threads > MAX_THREADS) {
		snprintf(err, n, "scan: 1..%d threads", MAX_THREADS);
		return -1;
	}
	s->accesses = s->sink = s->mismatches = 0;
	memset(w, 0, sizeof(w));
	if (s->threads > 1 && pthread_barrier_init(&bar, NULL, s->threads)) {
		snprintf(err, n, "scan: cannot make a barrier");
		return -1;
	}
	for (uint32_t i = 0; i < s->threads; i++)
		w[i] = (struct worker){
			.s = s, .all = w, .bar = &bar, .gate = &gate, .id = i
		};
	/* Thread 0 is this one; the others are started first. */
	for (started = 1; started < s->threads; started++)
		if (pthread_create(&w[started].th, NULL, worker_main,
				   &w[started]))
			break;
	pthread_mutex_lock(&gate.m);
	gate.state = started < s->threads ? -1 : 1;
	pthread_cond_broadcast(&gate.c);
	pthread_mutex_unlock(&gate.m);
	if (started < s->threads) {
		snprintf(err, n, "scan: cannot start thread %u", started);
		rc = -1;
	} else {
		worker_main(&w[0]);
	}
	for (uint32_t i = 1; i < started; i++)
		pthread_join(w[i].th, NULL);
	for (uint32_t i = 0; i < s->threads; i++) {
		s->sink += w[i].sum;
		s->mismatches += w[i].bad;
	}
	if (s->threads > 1)
		pthread_barrier_destroy(&bar);
	return rc;
}
