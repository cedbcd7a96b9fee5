/* resid.h, "Threads": readers that block every signal (but SIGBUS and
 * SIGSEGV) read every byte right, and the pager's own threads take none of
 * the application's signals: a process-directed signal that every
 * application thread blocks stays pending for them.
 *
 *	signals FILE */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "client.h"

#define LEN (16 * MiB)
#define CHUNK MiB
#define READERS 3

static struct resid_region *r;
static volatile pid_t handled_on; /* the thread that ran the handler */

static void on_usr1(int sig)
{
	(void)sig;
	handled_on = gettid();
}

static void *reader(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	*(uint64_t *)arg = wrong_bytes(resid_base(r), LEN, 7);
	return NULL;
}

int main(int argc, char **argv)
{
	char err[RESID_ERRLEN];
	pthread_t th[READERS];
	uint64_t bad[READERS], wrong = 0;
	sigset_t usr1, pending;
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	if (argc != 2 || make_file(argv[1], LEN, 7) < 0) {
		fprintf(stderr, "usage: signals FILE\n");
		return 2;
	}
	/* Opened while this thread blocks nothing: the pager's threads must
	 * not inherit an open mask. */
	r = open_file(argv[1], LEN, CHUNK, 4 * MiB, err);
	if (!r) {
		fprintf(stderr, "signals: resid_open: %s\n", err);
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_create(&th[i], NULL, reader, &bad[i]);
	for (int i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		wrong += bad[i];
	}
	verdict(wrong == 0,
		"signals: readers with every signal blocked read "
		"every byte right",
		"%llu wrong bytes", (unsigned long long)wrong);

	kill(getpid(), SIGUSR1);
	/* A thread that does not block it runs the handler at once; give
	 * one the chance, then the signal must still be pending. */
	for (int i = 0; i < 100 && !handled_on; i++)
		nanosleep(&tick, NULL);
	sigpending(&pending);
	verdict(!handled_on && sigismember(&pending, SIGUSR1),
		"signals: the pager's threads take none of the application's "
		"signals",
		"SIGUSR1's handler ran on thread %d, not the "
		"application's",
		(int)handled_on);
	if (sigismember(&pending, SIGUSR1)) {
		int sig;

		sigwait(&usr1, &sig);
	}
	resid_close(r);
	return finish();
}
