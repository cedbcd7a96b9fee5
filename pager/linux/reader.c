/* A reader on Linux: a thread that runs one read at a time for its owner,
 * so that a fetch worker's next O_DIRECT read waits on the disk while the
 * worker writes and maps the part before (results/performance.md). A
 * thread, not io_uring: container runtimes' default seccomp profiles
 * refuse io_uring, and the read's job is the pager's own function. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "reader.h"

/* Small: the thread calls one pread, or the synthetic source's fill. */
#define READER_STACK (256u << 10)

enum { IDLE, QUEUED, DONE, STOP };

struct reader {
	pthread_t th;
	pthread_mutex_t m;
	pthread_cond_t cv;
	resid_read_fn fn;
	void *arg;
	void *buf;
	size_t len;
	uint64_t off;
	long result;
	int state;
};

static void *reader_main(void *p)
{
	struct reader *rd = p;

	pthread_mutex_lock(&rd->m);
	for (;;) {
		while (rd->state != QUEUED && rd->state != STOP)
			pthread_cond_wait(&rd->cv, &rd->m);
		if (rd->state == STOP)
			break;
		pthread_mutex_unlock(&rd->m);
		long n = rd->fn(rd->arg, rd->buf, rd->len, rd->off);

		pthread_mutex_lock(&rd->m);
		rd->result = n;
		rd->state = DONE;
		pthread_cond_broadcast(&rd->cv);
	}
	pthread_mutex_unlock(&rd->m);
	return NULL;
}

int lx_reader_open(void *ctx, resid_reader *out, resid_read_fn fn, void *arg)
{
	(void)ctx;
	struct reader *rd = calloc(1, sizeof(*rd));
	pthread_attr_t at;
	sigset_t all, old;
	int rc;

	if (!rd)
		return -ENOMEM;
	rd->fn = fn;
	rd->arg = arg;
	pthread_mutex_init(&rd->m, NULL);
	pthread_cond_init(&rd->cv, NULL);
	rc = pthread_attr_init(&at);
	if (rc == 0) {
		rc = pthread_attr_setstacksize(&at, READER_STACK);
		/* The application's signals are for its own threads. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (rc == 0)
			rc = pthread_create(&rd->th, &at, reader_main, rd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&at);
	}
	if (rc) {
		pthread_cond_destroy(&rd->cv);
		pthread_mutex_destroy(&rd->m);
		free(rd);
		return -rc;
	}
	pthread_setname_np(rd->th, "resid-read"); /* best effort */
	*out = (resid_reader)rd;
	return 0;
}

void lx_read_start(void *ctx, resid_reader r, void *buf, size_t len,
		   uint64_t off)
{
	(void)ctx;
	struct reader *rd = (struct reader *)r;

	pthread_mutex_lock(&rd->m);
	rd->buf = buf;
	rd->len = len;
	rd->off = off;
	rd->state = QUEUED;
	pthread_cond_broadcast(&rd->cv);
	pthread_mutex_unlock(&rd->m);
}

long lx_read_wait(void *ctx, resid_reader r)
{
	(void)ctx;
	struct reader *rd = (struct reader *)r;
	long n;

	pthread_mutex_lock(&rd->m);
	while (rd->state != DONE)
		pthread_cond_wait(&rd->cv, &rd->m);
	rd->state = IDLE;
	n = rd->result;
	pthread_mutex_unlock(&rd->m);
	return n;
}

void lx_reader_close(void *ctx, resid_reader r)
{
	(void)ctx;
	struct reader *rd = (struct reader *)r;

	pthread_mutex_lock(&rd->m);
	/* A read not waited for (the caller's mistake) ends first, or the
	 * thread would mark it done over the stop and never see it. */
	while (rd->state == QUEUED)
		pthread_cond_wait(&rd->cv, &rd->m);
	rd->state = STOP;
	pthread_cond_broadcast(&rd->cv);
	pthread_mutex_unlock(&rd->m);
	pthread_join(rd->th, NULL);
	pthread_cond_destroy(&rd->cv);
	pthread_mutex_destroy(&rd->m);
	free(rd);
}
