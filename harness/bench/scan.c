/* The synthetic cyclic layer scan: chunks in order, every word consumed and
 * checked, the reference trace written by the workload as it goes. Several
 * threads split each chunk (as the rows of one layer are split between
 * cores) and meet at a barrier before the next. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define MAX_THREADS 64

/* The helpers start only when all of them exist: 1 run, -1 give up. */
struct gate {
	pthread_mutex_t m;
	pthread_cond_t c;
	int state;
};

struct worker {
	struct scan *s;
	pthread_barrier_t *bar;
	struct gate *gate;
	uint32_t id;
	uint64_t sum, bad;
	pthread_t th;
};

/* Sums the words of [off, off + len) of the mapping and counts those that
 * differ from the content. */
static void consume(struct worker *w, uint64_t off, uint64_t len)
{
	const uint64_t *p = (const uint64_t *)(w->s->base + off);
	uint64_t sum = 0, bad = 0;

	for (uint64_t i = 0; i < len / 8; i++) {
		uint64_t v = p[i];

		sum += v;
		bad += v != resid_content_word(off + i * 8, w->s->seed);
	}
	w->sum += sum;
	w->bad += bad;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct scan *s = w->s;
	uint64_t slice = s->chunk / s->threads / 8 * 8;
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
		for (uint32_t c = 0; c < s->nchunks; c++) {
			uint64_t off = (uint64_t)c * s->chunk;

			if (w->id == 0) {
				if (s->r)
					resid_notify_access(s->r, c);
				s->trace[s->accesses++] = c;
			}
			if (s->threads > 1)
				pthread_barrier_wait(w->bar);
			uint64_t from = slice * w->id;
			uint64_t to = w->id + 1 == s->threads ? s->chunk :
				from + slice;

			consume(w, off + from, to - from);
			if (s->threads > 1)
				pthread_barrier_wait(w->bar);
		}
		if (p == 0 && w->id == 0 &&
		    bench_read_bytes(&s->io_first_pass))
			s->io_first_pass = 0;
	}
	return NULL;
}

int scan_run(struct scan *s, char *err, size_t n)
{
	struct worker w[MAX_THREADS];
	pthread_barrier_t bar;
	struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			     0 };
	uint32_t started = 0;
	int rc = 0;

	if (s->threads < 1 || s->threads > MAX_THREADS || s->chunk % 8) {
		snprintf(err, n, "scan: 1..%d threads over chunks of whole "
			 "words", MAX_THREADS);
		return -1;
	}
	s->accesses = s->sink = s->mismatches = 0;
	memset(w, 0, sizeof(w));
	if (s->threads > 1 && pthread_barrier_init(&bar, NULL, s->threads)) {
		snprintf(err, n, "scan: cannot make a barrier");
		return -1;
	}
	for (uint32_t i = 0; i < s->threads; i++)
		w[i] = (struct worker){ .s = s, .bar = &bar, .gate = &gate,
					.id = i };
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
