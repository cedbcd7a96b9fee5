/* Forking, reaping and the exit on a signal, in one place: a table of live
 * children that the signal handler can walk (plain atomics, no locks). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/child.h"
#include "proc/watchdog.h"

#define LIVE_MAX 64
/* How long a child has to end after the forwarded signal, then SIGKILL;
 * and how long a killed one may take to go (one stuck in the kernel is
 * left to its PR_SET_PDEATHSIG and the next start's cgroup sweep). */
#define GRACE_TICKS 500
#define KILL_TICKS 500
#define TICK_NS 10000000L
/* how long child_exit_via_main waits for the main thread to end the tool */
#define EXIT_GRACE_S 30

/* More than the rooms that register one (cgroups, content files). */
#define CLEANUP_MAX 8

static pid_t live[LIVE_MAX];
/* What child_exit_all undoes once the children are gone, in the order
 * registered; the first NULL ends the list. */
static void (*cleanups[CLEANUP_MAX])(void);
static volatile sig_atomic_t stop_sig, soft, exit_status;
static pthread_t main_thread;

static void reg(pid_t pid)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		pid_t none = 0;

		if (__atomic_compare_exchange_n(&live[i], &none, pid, 0,
						__ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return;
	}
	/* more than LIVE_MAX at once: not forwarded to, but it still dies
	 * with this process */
}

static void unreg(pid_t pid)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (__atomic_load_n(&live[i], __ATOMIC_SEQ_CST) == pid)
			__atomic_store_n(&live[i], 0, __ATOMIC_SEQ_CST);
}

static void tick(void)
{
	struct timespec ts = { 0, TICK_NS };

	nanosleep(&ts, NULL);
}

/* Reaps what has ended; the number still live. */
static int reap_ended(void)
{
	int left = 0, status;

	for (int i = 0; i < LIVE_MAX; i++) {
		pid_t pid = __atomic_load_n(&live[i], __ATOMIC_SEQ_CST);

		if (pid <= 0)
			continue;
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid || (w < 0 && errno == ECHILD))
			__atomic_store_n(&live[i], 0, __ATOMIC_SEQ_CST);
		else
			left++;
	}
	return left;
}

static void send_all(int sig)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		pid_t pid = __atomic_load_n(&live[i], __ATOMIC_SEQ_CST);

		if (pid > 0)
			kill(pid, sig);
	}
}

/* Async-signal-safe: kill, waitpid, nanosleep. */
static void kill_all(int sig)
{
	int t = 0;

	send_all(sig);
	for (; sig != SIGKILL && t < GRACE_TICKS && reap_ended(); t++)
		tick();
	if (!reap_ended())
		return;
	send_all(SIGKILL);
	for (t = 0; t < KILL_TICKS && reap_ended(); t++)
		tick();
}

void child_on_exit(void (*fn)(void))
{
	/* As reg(): lock-free, so that a forked child registers safely. */
	for (int i = 0; i < CLEANUP_MAX; i++) {
		void (*none)(void) = NULL;

		if (__atomic_compare_exchange_n(&cleanups[i], &none, fn, 0,
						__ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST) ||
		    none == fn)
			return;
	}
	fprintf(stderr,
		"residctl: more than %d exit cleanups; raise "
		"CLEANUP_MAX in harness/proc/child.c\n",
		CLEANUP_MAX);
	abort();
}

void child_exit_all(int sig, int status)
{
	kill_all(sig);
	for (int i = 0; i < CLEANUP_MAX; i++) {
		void (*fn)(void) = __atomic_load_n(&cleanups[i],
						   __ATOMIC_SEQ_CST);

		if (!fn)
			break;
		fn();
	}
	_exit(status);
}

static void on_signal(int sig)
{
	int first = !stop_sig;

	stop_sig = sig;
	if (soft && first) {
		send_all(sig);
		return;
	}
	child_exit_all(sig, 128 + sig);
}

static void on_exit_request(int sig)
{
	(void)sig;
	child_exit_all(SIGTERM, exit_status);
}

void child_catch_signals(void)
{
	/* no SA_RESTART: a soft command's waits return with EINTR */
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ex = { .sa_handler = on_exit_request };

	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigfillset(&ex.sa_mask);
	sigaction(SIGUSR1, &ex, NULL);
	main_thread = pthread_self();
}

void child_exit_via_main(int status)
{
	struct timespec grace = { EXIT_GRACE_S, 0 };

	exit_status = status;
	pthread_kill(main_thread, SIGUSR1);
	/* a main thread stuck in the kernel never runs its handler */
	while (nanosleep(&grace, &grace) < 0 && errno == EINTR)
		;
	child_exit_all(SIGTERM, status);
}

void child_stop_softly(void)
{
	soft = 1;
}

int child_stop_signal(void)
{
	return stop_sig;
}

pid_t child_fork(void)
{
	sigset_t block, old;
	pid_t parent = getpid(), pid;
	int saved;

	/* a signal between fork and reg would miss this child */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	fflush(NULL); /* nothing buffered is written twice */
	pid = fork();
	saved = errno;
	if (pid == 0) {
		for (int i = 0; i < LIVE_MAX; i++)
			live[i] = 0;
		soft = 0;
		stop_sig = 0;
		/* SIGTERM, not SIGKILL: the child forwards it to its own
		 * children and removes its own cgroups. The check closes
		 * the race with a parent that died before the prctl. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
			_exit(128 + SIGTERM);
		sigprocmask(SIG_SETMASK, &old, NULL);
		watchdog_hang_here("child");
	} else if (pid > 0) {
		reg(pid);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return pid;
}

pid_t child_reap(pid_t pid, int *status, int nohang)
{
	pid_t w;

	while ((w = waitpid(pid, status, nohang ? WNOHANG : 0)) < 0 &&
	       errno == EINTR)
		;
	if (w == pid || (w < 0 && errno == ECHILD))
		unreg(pid);
	return w;
}
