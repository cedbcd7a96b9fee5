/* Every CUnit test in a child process of its own, under its time limit, so
 * that a hung test or one that raises SIGBUS or SIGSEGV (a real region the
 * library poisons, a pager bug) fails by name and the run goes on with the
 * next test. Every registered test's function is wrapped: the
 * wrapper forks, the child runs the test and sends back its assertion
 * count and failures, the parent waits on a pidfd until the limit and kills
 * the child's process group past it. A test's own side effects stay in its
 * child: suites set up in their init, which runs in the parent.
 *
 * A child rather than a signal handler in process: a SIGBUS may come in a
 * thread the test started, and what a crashed test leaves (locks held,
 * threads asleep in a fault) would hang the tests after it. A fork costs
 * about a millisecond, the suite has under 200 tests. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/write_all.h"
#include "tests/suites.h"
#include "workload/workload.h"

#define MAX_TESTS 1024
/* Tests past their limits after which the run stops: a pager that hangs
 * would make every test after them wait out its own limit. */
#define TIMEOUTS_MAX 3
#define REPORT_MAX 4096 /* bytes of one failure's file and condition */

static struct {
	CU_pTest test;
	CU_TestFunc fn;
} wrapped[MAX_TESTS];
static unsigned nwrapped;
static time_limit_fn limit_of;

/* ---- the child: run the test, send back what CUnit recorded ---- */

/* A pipe the parent stopped reading: the report is cut short, a crash. */
static void put(int fd, const void *p, size_t n)
{
	if (write_all(fd, p, n))
		_exit(3);
}

static void put_str(int fd, const char *s)
{
	uint32_t n = s ? (uint32_t)strnlen(s, REPORT_MAX) : 0;

	put(fd, &n, sizeof(n));
	put(fd, s, n);
}

/* The report: asserts run, then per failure its line, file, condition;
 * a line of UINT32_MAX ends it (a report cut short is a crash). */
static void __attribute__((noreturn)) child(CU_pTest t, CU_TestFunc fn, int fd)
{
	unsigned asserts = CU_get_number_of_asserts();
	CU_pFailureRecord last = CU_get_failure_list(), f;
	jmp_buf fatal;
	uint32_t end = UINT32_MAX;

	while (last && last->pNext)
		last = last->pNext;
	/* A fatal assertion leaves the test here, not into CUnit's loop,
	 * which would run the rest of the suite in this child. */
	t->pJumpBuf = &fatal;
	if (!setjmp(fatal))
		fn();
	asserts = CU_get_number_of_asserts() - asserts;
	put(fd, &asserts, sizeof(asserts));
	for (f = last ? last->pNext : CU_get_failure_list(); f; f = f->pNext) {
		uint32_t line = f->uiLineNumber;

		put(fd, &line, sizeof(line));
		put_str(fd, f->strFileName);
		put_str(fd, f->strCondition);
	}
	put(fd, &end, sizeof(end));
	fflush(NULL);
	_exit(0);
}

/* ---- the parent: wait, kill past the limit, replay the report ---- */

static int pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

struct buf {
	char *p;
	size_t n, cap;
};

static void drain(int fd, struct buf *b)
{
	for (;;) {
		if (b->n == b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 4096;
			char *g = realloc(b->p, cap);

			if (!g)
				return;
			b->p = g;
			b->cap = cap;
		}
		ssize_t r = read(fd, b->p + b->n, b->cap - b->n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		b->n += (size_t)r;
	}
}

/* Waits for the child and reads its report until it exits or the limit
 * passes. Returns 1 when it ran out of time (it is killed and reaped). */
static int wait_child(pid_t pid, int pipe_fd, unsigned limit, struct buf *b,
		      int *status)
{
	int pfd = pidfd_of(pid), late = 0;
	double deadline = mono_now() + limit;

	if (pfd < 0) {
		perror("unit-tests: pidfd_open");
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, status, 0);
		return 0;
	}
	for (;;) {
		struct pollfd p[2] = { { pfd, POLLIN, 0 },
				       { pipe_fd, POLLIN, 0 } };
		double left = deadline - mono_now();
		int n = poll(p, pipe_fd >= 0 ? 2 : 1,
			     left > 0 ? (int)(left * 1000) + 1 : 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (p[1].revents && pipe_fd >= 0) {
			size_t was = b->n;

			drain(pipe_fd, b);
			if (b->n == was)
				pipe_fd = -1; /* EOF */
		}
		if (p[0].revents)
			break;
		if (n == 0 && mono_now() >= deadline) {
			late = 1;
			kill(-pid, SIGKILL); /* and what the test forked */
			kill(pid, SIGKILL);
			break;
		}
	}
	close(pfd);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		continue;
	return late;
}

static int get(const struct buf *b, size_t *at, void *p, size_t n)
{
	if (b->n - *at < n)
		return -1;
	memcpy(p, b->p + *at, n);
	*at += n;
	return 0;
}

static char *get_str(const struct buf *b, size_t *at)
{
	uint32_t n;
	char *s;

	if (get(b, at, &n, sizeof(n)) || n > REPORT_MAX || !(s = malloc(n + 1)))
		return NULL;
	if (get(b, at, s, n)) {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

/* The child's assertions, as CUnit would have counted them in process.
 * 0 when the report was whole. */
static int replay_report(const struct buf *b)
{
	size_t at = 0;
	unsigned asserts, failures = 0;
	uint32_t line;

	if (get(b, &at, &asserts, sizeof(asserts)))
		return -1;
	for (;;) {
		if (get(b, &at, &line, sizeof(line)))
			return -1;
		if (line == UINT32_MAX)
			break;
		char *file = get_str(b, &at), *cond = get_str(b, &at);

		if (file && cond)
			CU_assertImplementation(CU_FALSE, line, cond, file, "",
						CU_FALSE);
		free(file);
		free(cond);
		failures++;
	}
	for (; asserts > failures; asserts--)
		CU_assertImplementation(CU_TRUE, 0, "", "", "", CU_FALSE);
	return 0;
}

static void fail_test(CU_pSuite s, CU_pTest t, const char *why)
{
	fprintf(stderr, "\nunit-tests: %s: %s: %s\n", s->pName, t->pName, why);
	CU_assertImplementation(CU_FALSE, 0, why, __FILE__, "", CU_FALSE);
}

/* The runner's own suite hangs on purpose; any other counts. */
static void stop_if_hanging(CU_pSuite s)
{
	static unsigned timeouts;

	if (!strcmp(s->pName, "time-limit-self-test") ||
	    ++timeouts < TIMEOUTS_MAX)
		return;
	fprintf(stderr,
		"\nunit-tests: %d tests ran past their time limits "
		"(above): stopping here, the tests after them not run\n",
		TIMEOUTS_MAX);
	exit(1);
}

static void isolated(void)
{
	CU_pTest t = CU_get_current_test();
	CU_pSuite s = CU_get_current_suite();
	CU_TestFunc fn = NULL;
	struct buf b = { 0 };
	unsigned limit;
	char why[256];
	int p[2], status = 0;
	pid_t pid;

	for (unsigned i = 0; i < nwrapped && !fn; i++)
		if (wrapped[i].test == t)
			fn = wrapped[i].fn;
	if (!fn) {
		CU_FAIL("time limit: a test that was never wrapped");
		return;
	}
	limit = limit_of(s->pName, t->pName);
	fflush(NULL); /* the child must not write the parent's buffers */
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		perror("unit-tests: pipe or fork");
		CU_FAIL("cannot start the test's child");
		return;
	}
	if (pid == 0) {
		close(p[0]);
		setpgid(0, 0);
		child(t, fn, p[1]);
	}
	close(p[1]);
	setpgid(pid, pid); /* either side may win the race; both set it */
	if (wait_child(pid, p[0], limit, &b, &status)) {
		snprintf(why, sizeof(why),
			 "ran past its time limit of %u s "
			 "and was killed (the limits: run.c; "
			 "RESID_TEST_SECONDS overrides them)",
			 limit);
		fail_test(s, t, why);
		stop_if_hanging(s);
	} else if (WIFSIGNALED(status)) {
		snprintf(why, sizeof(why), "killed by SIG%s (%s)",
			 sigabbrev_np(WTERMSIG(status)) ?
				 sigabbrev_np(WTERMSIG(status)) :
				 "?",
			 strsignal(WTERMSIG(status)));
		fail_test(s, t, why);
	} else if (WEXITSTATUS(status) || replay_report(&b)) {
		snprintf(why, sizeof(why),
			 "its process exited with status %d "
			 "before the test returned%s",
			 WEXITSTATUS(status),
			 UNDER_TSAN ? " (ThreadSanitizer exits so on a report "
				      "or a SIGBUS or SIGSEGV, printed above)" :
				      "");
		fail_test(s, t, why);
	}
	close(p[0]);
	free(b.p);
}

int time_limit_wrap_all(time_limit_fn limit)
{
	limit_of = limit;
	for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
		for (CU_pTest t = s->pTest; t; t = t->pNext) {
			if (nwrapped == MAX_TESTS) {
				fprintf(stderr,
					"unit-tests: more than %d "
					"tests: raise MAX_TESTS in %s\n",
					MAX_TESTS, __FILE__);
				return -1;
			}
			wrapped[nwrapped].test = t;
			wrapped[nwrapped++].fn = t->pTestFunc;
			t->pTestFunc = isolated;
		}
	return 0;
}

/* The runner's own test (unit-tests --time-limit-self-test): a test that
 * hangs, one that reads past the end of a mapped file (SIGBUS, as a
 * poisoned page of a region raises it), one that writes through NULL and
 * one that aborts must each fail by name, and the test after them must
 * still run and pass. */
static void hangs(void)
{
	for (;;)
		pause();
}

static void raises_sigbus(void)
{
	FILE *f = tmpfile();
	volatile char *p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	/* A page of an empty file: the kernel has no byte to give. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
	CU_ASSERT_FATAL(p != MAP_FAILED);
	CU_ASSERT_EQUAL(p[0], 0);
}

static void writes_through_null(void)
{
	volatile int *volatile p = NULL;

	*p = 1;
	CU_PASS("wrote through NULL");
}

static void aborts(void)
{
	abort();
}

static void runs_after_them(void)
{
	CU_PASS("the run went on");
}

void suite_time_limit_self_test(void)
{
	CU_pSuite s = CU_add_suite("time-limit-self-test", NULL, NULL);

	CU_add_test(s, "hangs", hangs);
	CU_add_test(s, "raises SIGBUS", raises_sigbus);
	CU_add_test(s, "writes through NULL", writes_through_null);
	CU_add_test(s, "aborts", aborts);
	CU_add_test(s, "runs after them", runs_after_them);
}

/* The runner's stop (unit-tests --hang-self-test): four tests that hang;
 * the run must stop after the third, the fourth and every suite after it
 * not run. */
void suite_hang_self_test(void)
{
	CU_pSuite s = CU_add_suite("hang-self-test", NULL, NULL);

	for (int i = 0; i < TIMEOUTS_MAX + 1; i++)
		CU_add_test(s, i < TIMEOUTS_MAX ? "hangs" : "never runs",
			    hangs);
}
