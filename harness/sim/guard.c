/* A pager bug must end its schedule with a verdict, never the harness
 * (design.md §9). While a run is on, a synchronous signal in a controlled thread
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT from abort or assert) is taken
 * on an alternate stack, recorded, and the handler leaves for the
 * scheduler's context as any end of a run does (coro_end_run): the thread
 * is never resumed, the run's verdict is SIM_CRASH. A thread that spends
 * spin_limit_ms of its CPU time without reaching a scheduling point is
 * stopped the same way (SIM_NO_PROGRESS), by a CPU-time timer of the thread
 * that runs the simulation, only while the spinning code is this
 * executable's (never in the middle of a library call). Signals outside a
 * controlled thread get the process's own handling.
 *
 * In process rather than a child per schedule: measured, a fork per
 * schedule cost more than the schedule itself, this two syscalls per run
 * (docs/simulation.md). Under ThreadSanitizer (make tsan), whose runtime
 * owns signal delivery, the guard is off. */
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "sim/sim_internal.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GUARD_OFF 1
#endif
#endif
#ifndef GUARD_OFF
#define GUARD_OFF 0
#endif

#define DEFAULT_SPIN_MS 1000ull
#define TICKS 4 /* a spin is TICKS timer periods without a step */
#define TICK_SIG SIGVTALRM
#define ALTSTACK_SIZE (64u << 10)

static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };

/* The linker's marks around this executable's code. */
extern const char __executable_start[], etext[];

static struct sigaction old[NSIG];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int installed;

/* Per thread that runs simulations. */
static __thread struct sim *armed;
static __thread int ready; /* alternate stack and timer made */
static __thread timer_t timer;
static __thread uint64_t seen_steps;
static __thread unsigned idle_ticks;

static uintptr_t pc_of(const void *ucv)
{
	const ucontext_t *uc = ucv;

#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static void record(struct sim *s, int sig, uintptr_t addr, int code,
		   const void *ucv)
{
	struct sim_crash *c = &s->crash;

	c->caught = 1;
	c->sig = sig;
	c->code = code;
	c->addr = addr;
	c->thread = s->cur->id;
	c->pc = pc_of(ucv);
	c->nframes = backtrace(c->frames, SIM_CRASH_FRAMES);
	/* Stop the ticks before leaving; nothing can be said from a
	 * handler if that fails, and a tick with no run armed does nothing. */
	(void)timer_settime(timer, 0, &(struct itimerspec){ 0 }, NULL);
	armed = NULL;
}

static void on_tick(struct sim *s, const void *ucv)
{
	uintptr_t pc = pc_of(ucv);

	if (s->steps != seen_steps) {
		seen_steps = s->steps;
		idle_ticks = 0;
		return;
	}
	if (++idle_ticks < TICKS || pc < (uintptr_t)__executable_start ||
	    pc >= (uintptr_t)etext)
		return;
	record(s, 0, 0, 0, ucv);
	coro_end_run(s, SIM_NO_PROGRESS);
}

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
	struct sim *s = armed;
	int saved = errno;

	if (sig == TICK_SIG) {
		if (s && s->cur)
			on_tick(s, ucv);
		errno = saved;
		return;
	}
	if (!s || !s->cur) {
		/* Not a controlled thread's: the process's own handling. A
		 * fault happens again on return; a sent signal is sent
		 * again (it is blocked until this handler returns). */
		sigaction(sig, &old[sig], NULL);
		if (si->si_code <= 0)
			raise(sig);
		errno = saved;
		return;
	}
	record(s, sig, (uintptr_t)si->si_addr, si->si_code, ucv);
	coro_end_run(s, SIM_CRASH);
}

static void install(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO | SA_ONSTACK |
					    SA_RESTART };
	void *preload[1];

	/* backtrace() loads its unwinder on first use: not in a handler. */
	(void)backtrace(preload, 1);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		if (sigaction(crash_sigs[i], &sa, &old[crash_sigs[i]]) < 0) {
			perror("sim: sigaction: crashes will not be caught");
			return;
		}
	if (sigaction(TICK_SIG, &sa, &old[TICK_SIG]) < 0) {
		perror("sim: sigaction: spins will not be caught");
		return;
	}
	installed = 1;
}

/* The alternate stack the handler runs on (a stack overflow leaves none)
 * and the CPU-time timer of this thread. */
static int prepare_thread(void)
{
	stack_t ss = { .ss_size = ALTSTACK_SIZE };
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID,
			       .sigev_signo = TICK_SIG };

	ev._sigev_un._tid = gettid();
	ss.ss_sp = malloc(ALTSTACK_SIZE);
	if (!ss.ss_sp || sigaltstack(&ss, NULL) < 0) {
		perror("sim: sigaltstack: crashes will not be caught");
		free(ss.ss_sp);
		return -1;
	}
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer) < 0) {
		perror("sim: timer_create: spins will not be caught");
		return -1;
	}
	ready = 1;
	return 0;
}

int sim_guarded(void)
{
	if (GUARD_OFF)
		return 0;
	pthread_once(&once, install);
	return installed;
}

void guard_arm(struct sim *s)
{
	uint64_t ms = s->cfg.spin_limit_ms ? s->cfg.spin_limit_ms :
					     DEFAULT_SPIN_MS;
	uint64_t ns = ms * 1000000ull / TICKS;
	struct itimerspec every = {
		.it_interval = { (time_t)(ns / 1000000000ull),
				 (long)(ns % 1000000000ull) },
	};

	s->spin_ms = ms;
	if (!sim_guarded() || (!ready && prepare_thread() < 0))
		return;
	every.it_value = every.it_interval;
	seen_steps = UINT64_MAX;
	idle_ticks = 0;
	armed = s;
	if (timer_settime(timer, 0, &every, NULL) < 0)
		perror("sim: timer_settime: spins will not be caught");
}

void guard_disarm(struct sim *s)
{
	(void)s;
	if (!armed)
		return;
	if (timer_settime(timer, 0, &(struct itimerspec){ 0 }, NULL) < 0)
		perror("sim: timer_settime");
	armed = NULL;
}
