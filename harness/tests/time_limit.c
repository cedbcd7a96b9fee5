/* A per-test time limit for the CUnit suites: a test that runs past it
 * fails, named by CUnit with the limit in the failure, and the run goes on
 * with the next test instead of hanging (issue 12). Every registered test's
 * function is wrapped: the wrapper arms a one-shot timer of the test's own
 * thread, and its signal leaves the test by siglongjmp. What the abandoned
 * test left behind (threads asleep, memory) stays; the run's exit status is
 * a failure anyway. The signal is a real-time one no test uses, and the
 * timer is not inherited by a test's fork()ed children. */
#include <CUnit/CUnit.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"

#define LIMIT_SIG (SIGRTMIN + 3)
#define MAX_TESTS 1024

static struct {
	CU_pTest test;
	CU_TestFunc fn;
} wrapped[MAX_TESTS];
static unsigned nwrapped, limit_s;
static sigjmp_buf out;
static volatile sig_atomic_t armed;

static void on_limit(int sig)
{
	(void)sig;
	if (armed)
		siglongjmp(out, 1);
}

static void timed(void)
{
	CU_pTest t = CU_get_current_test();
	CU_TestFunc fn = NULL;
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID,
			       .sigev_signo = LIMIT_SIG };
	struct itimerspec once = { .it_value = { (time_t)limit_s, 0 } };
	timer_t timer;
	char why[128];

	for (unsigned i = 0; i < nwrapped && !fn; i++)
		if (wrapped[i].test == t)
			fn = wrapped[i].fn;
	if (!fn) {
		CU_FAIL_FATAL("time limit: a test that was never wrapped");
		return;
	}
	ev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer) < 0) {
		perror("unit-tests: timer_create");
		CU_FAIL_FATAL("time limit: cannot create the test's timer");
		return;
	}
	if (sigsetjmp(out, 1) == 0) {
		armed = 1;
		if (timer_settime(timer, 0, &once, NULL) < 0)
			perror("unit-tests: timer_settime");
		fn();
		armed = 0;
	} else {
		armed = 0;
		snprintf(why, sizeof(why), "the test ran past its time limit "
			 "of %u s (RESID_TEST_SECONDS) and was abandoned",
			 limit_s);
		fprintf(stderr, "\nunit-tests: %s: %s\n", t->pName, why);
		CU_assertImplementation(CU_FALSE, __LINE__, why, __FILE__, "",
					CU_FALSE);
	}
	if (timer_delete(timer) < 0)
		perror("unit-tests: timer_delete");
}

int time_limit_wrap_all(unsigned seconds)
{
	struct sigaction sa = { .sa_handler = on_limit };

	limit_s = seconds;
	sigemptyset(&sa.sa_mask);
	if (sigaction(LIMIT_SIG, &sa, NULL) < 0) {
		perror("unit-tests: sigaction");
		return -1;
	}
	for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
		for (CU_pTest t = s->pTest; t; t = t->pNext) {
			if (nwrapped == MAX_TESTS) {
				fprintf(stderr, "unit-tests: more than %d "
					"tests: raise MAX_TESTS in %s\n",
					MAX_TESTS, __FILE__);
				return -1;
			}
			wrapped[nwrapped].test = t;
			wrapped[nwrapped++].fn = t->pTestFunc;
			t->pTestFunc = timed;
		}
	return 0;
}

/* The time limit's own test (unit-tests --time-limit-self-test): the
 * first test sleeps past a one-second limit and must fail, the second must
 * still run and pass. */
static void sleeps_past_the_limit(void)
{
	sleep(30);
	CU_PASS("slept");
}

static void runs_after_it(void)
{
	CU_PASS("the run went on");
}

void suite_time_limit_self_test(void)
{
	CU_pSuite s = CU_add_suite("time-limit-self-test", NULL, NULL);

	CU_add_test(s, "sleeps past the limit", sleeps_past_the_limit);
	CU_add_test(s, "runs after it", runs_after_it);
}
