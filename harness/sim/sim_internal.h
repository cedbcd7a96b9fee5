/* Private to harness/sim/: the state of one simulation, shared by its
 * pieces: sim.c (the public face), coro.c (threads as coroutines), sched.c
 * (steps), sync.c (the seam's locks, conditions, threads, time), kernel_*.c
 * (memfd, mappings, uffd, files, sim_read), strategies/ and oracles/. */
#ifndef HARNESS_SIM_INTERNAL_H
#define HARNESS_SIM_INTERNAL_H

#include <stdint.h>
#include <ucontext.h>

#include "resid.h"
#include "sim/sim.h"

/* The simulated kernel pages as the pager does. */
#define SIM_PAGE RESID_PAGE
#define SIM_FD_BASE 3 /* fds are small numbers, as the kernel's are */

/* What a blocked thread waits for; W_RUN is runnable. */
enum sim_wait {
	W_RUN,
	W_LOCK, /* wait_obj: lock id */
	W_COND, /* wait_obj: cond id */
	W_SLEEP,
	W_POLL,  /* poll_fd[] */
	W_JOIN,  /* wait_obj: thread id */
	W_APPS,  /* sim_join_apps */
	W_FAULT, /* fault_* */
	W_EXITED,
};

/* The step a thread takes next, for the log hash. */
enum sim_op {
	OP_START,
	OP_EXIT,
	OP_READ,
	OP_SPAWN,
	OP_JOIN_APPS,
	OP_POINT,
	OP_UFFD_OPEN,
	OP_UFFD_API,
	OP_UFFD_REGISTER,
	OP_UFFD_READ,
	OP_CONTINUE,
	OP_WAKE,
	OP_POLL,
	OP_NOTIFY_OPEN,
	OP_NOTIFY_SIGNAL,
	OP_MEMFD_CREATE,
	OP_FTRUNCATE,
	OP_PUNCH,
	OP_FSTAT,
	OP_MAP,
	OP_UNMAP,
	OP_NOHUGEPAGE,
	OP_CLOSE,
	OP_BACKING_OPEN,
	OP_PREAD,
	OP_DONTNEED,
	OP_READ_TEXT,
	OP_CLOCK,
	OP_SLEEP,
	OP_THREAD_START,
	OP_JOIN,
	OP_MUTEX_INIT,
	OP_MUTEX_DESTROY,
	OP_LOCK,
	OP_TRYLOCK,
	OP_UNLOCK,
	OP_COND_INIT,
	OP_COND_DESTROY,
	OP_COND_WAIT,
	OP_SIGNAL,
	OP_BROADCAST,
	OP_POISON,
	OP_SIGBUS,
	OP_PROTECT,
	OP_MEMFD_WRITE,
	OP_HUGEPAGE,
	OP_DROP_A,
};

struct sim_memfd;

struct sim_thread {
	struct sim *sim;
	uint16_t id;
	char name[16];
	int app;                /* started by sim_spawn */
	void *(*fn)(void *);    /* a seam thread's body */
	void (*app_fn)(void *); /* thread 0's and sim_spawn's */
	void *arg;
	int joined;
	ucontext_t uc;
	void *stack;
	void *fiber;         /* ThreadSanitizer's; NULL without it */
	uint64_t prio;       /* PCT's: the highest runnable runs */
	uint64_t ready_step; /* runnable, not picked, since this step */

	int op; /* the pending step, for the log */
	uint64_t op_obj;

	enum sim_wait wait;
	uint64_t wait_obj;
	int timed; /* the wait also ends at deadline */
	uint64_t deadline;
	int timed_out;
	uint64_t cond_seq;  /* FIFO among a condition's waiters */
	uint32_t cond_lock; /* the lock a condition waiter gave up */
	int poll_fd[2];

	/* W_FAULT: the page, and its message while unread */
	struct sim_memfd *fault_mf;
	uint64_t fault_addr, fault_off, fault_flags;
	int fault_uffd;
	int queued;
	uint64_t msg_seq;
	int sigbus; /* a SIGBUS sent, not yet seen by sim_read */
	/* Faults in a row on one page (kernel_a_obj) with no byte read. */
	uint64_t loop_page;
	uint32_t loop_faults;
};

struct sim_lock {
	const resid_mutex *key; /* identity only, never logged */
	int owner;              /* thread id, -1 when free */
};

struct sim_memfd {
	int fd, open;
	uint64_t size, npages;
	uint8_t *bytes;   /* the page cache's bytes: mapping B */
	uint8_t *present; /* per page: in the page cache */
	uint8_t *mapped;  /* per page: a PTE in mapping A */
	/* Pages per folio where it may hold large ones (a file of the
	 * huge tmpfs: SIM_FOLIO), else 1; per page: in an unsplit large
	 * folio. */
	uint32_t folio_pages;
	uint8_t *large;
	uint64_t npresent;
	uint8_t *a; /* mapping A: PROT_NONE, never touched */
	uint64_t a_len;
	int b_mapped;
	int uffd; /* registered A, or -1 */
	uint64_t reg_mode;
};

enum sim_file_kind { FK_CLOSED, FK_UFFD, FK_NOTIFY, FK_MEMFD };

struct sim_file {
	enum sim_file_kind kind;
	int nonblock, api_done; /* FK_UFFD */
	uint32_t nqueued;       /* FK_UFFD: unread messages */
	uint64_t count;         /* FK_NOTIFY */
	struct sim_memfd *mf;   /* FK_MEMFD */
};

/* What guard.c caught: a crash (sig) or a spin (sig 0). */
#define SIM_CRASH_FRAMES 24
struct sim_crash {
	int caught;         /* guard.c filled the rest */
	int sig, code;      /* the signal and its si_code */
	uintptr_t addr, pc; /* si_addr; where the thread was */
	uint16_t thread;
	void *frames[SIM_CRASH_FRAMES]; /* backtrace() from the handler */
	int nframes;
};

struct sim {
	struct sim_config cfg;
	struct resid_seam seam;
	uint64_t rng; /* the decision stream */
	/* Who picks (replay, or base itself) and the strategy replay defers
	 * to; the state is the base strategy's. */
	const struct sim_strategy_ops *strategy, *base;
	void *strat_state;

	struct sim_thread **threads, **run;
	uint32_t nthreads, cap_threads, cap_run, apps_alive;
	struct sim_thread *cur;
	ucontext_t main_uc;
	void *main_fiber;
	int started;

	enum sim_verdict verdict;
	int failed, idle;
	char why[1024];

	uint64_t steps, preemptions, log_hash, lock_hash;
	/* The first SIM_RECORD_STEPS steps' choices and runnable threads. */
	uint16_t *sched;
	uint64_t *masks;
	uint64_t cap_sched;
	uint64_t cpu_start_ms; /* the CPU clock at the run's start */

	uint64_t now, last_progress;
	/* The step of the last progress (a byte read, a CONTINUE, a chunk
	 * state change, a thread's end), for the stall bound. */
	uint64_t progress_step;

	struct sim_lock *locks;
	uint32_t nlocks, cap_locks;
	const resid_cond **conds;
	uint32_t nconds, cap_conds;
	uint64_t cond_seq;

	struct sim_file *files;
	uint32_t nfiles, cap_files;
	struct sim_memfd **memfds;
	uint32_t nmemfds, cap_memfds;
	uint64_t msg_seq, stat_reported, continues_ok;

	struct sim_crash crash;
	uint64_t spin_ms; /* the spin limit in force */
};

/* The seam table; sim_create copies it and sets ctx. */
extern const struct resid_seam sim_seam_ops;

/* coro.c */
struct sim_thread *coro_new(struct sim *s, const char *name, int app);
void coro_free(struct sim_thread *t);
/* Runs `to` until it switches back. */
void coro_switch(struct sim *s, struct sim_thread *from, struct sim_thread *to);
/* From sim_run: runs thread t; returns when the run ends. */
void coro_start(struct sim *s, struct sim_thread *t);
/* Ends the run: back to sim_run, never to resume this thread. */
void coro_end_run(struct sim *s, enum sim_verdict v) __attribute__((noreturn));

/* guard.c: around a run (coro_start), crashes and spins of controlled
 * threads end the run with SIM_CRASH or SIM_NO_PROGRESS (s->crash). */
void guard_arm(struct sim *s);
void guard_disarm(struct sim *s);

/* sched.c */
/* The running controlled thread; aborts outside sim_run, where nothing
 * could wake a thread that blocks. */
struct sim_thread *sched_self(struct sim *s);
/* The current thread is at a step (op on obj, for the log). */
void sched_point(struct sim *s, int op, uint64_t obj);
/* It has just blocked, or exited: picks the thread that takes the step
 * and runs it; returns when the current thread is picked again. */
void sched_step(struct sim *s);
void sched_block(struct sim *s, enum sim_wait w, uint64_t obj, int timed,
		 uint64_t deadline);
void sched_wake(struct sim_thread *t);
void sched_wake_all(struct sim *s, enum sim_wait w, uint64_t obj);
void sched_progress(struct sim *s);
/* Progress that does not move the idle clock: a chunk state change. */
void sched_progress_step(struct sim *s);
/* The run starts: its CPU-time budget counts from here. */
void sched_budget_start(struct sim *s);
uint64_t sched_deadline(struct sim *s, uint64_t ns);
/* Adds a lock acquisition to the lock-order hash. */
void sched_mix_lock(struct sim *s, uint64_t v);

/* sim.c */
/* FNV-1a: strings (paths, yield names) as log objects. */
uint64_t sim_str_hash(const char *p);
int sim_grow(void **arr, uint32_t *cap, uint32_t need, size_t size);

/* sync.c: the name of lock's owner, or "nobody". */
const char *sim_lock_owner(struct sim *s, uint32_t lock);
/* The seam's time, thread and synchronization ops (sync.c). */
uint64_t sched_clock_ns(void *ctx);
void sched_sleep_ns(void *ctx, uint64_t ns);
int sched_thread_start(void *ctx, resid_thread *t, void *(*fn)(void *),
		       void *arg, const char *name);
int sched_thread_join(void *ctx, resid_thread t);
void sched_mutex_init(void *ctx, resid_mutex *m);
void sched_mutex_destroy(void *ctx, resid_mutex *m);
void sched_lock(void *ctx, resid_mutex *m);
int sched_trylock(void *ctx, resid_mutex *m);
void sched_unlock(void *ctx, resid_mutex *m);
void sched_cond_init(void *ctx, resid_cond *c);
void sched_cond_destroy(void *ctx, resid_cond *c);
void sched_cond_wait(void *ctx, resid_cond *c, resid_mutex *m);
void sched_cond_signal(void *ctx, resid_cond *c);
void sched_cond_broadcast(void *ctx, resid_cond *c);
void sched_yield_op(void *ctx, const char *what);

/* access.c, linked in the simulation build only (`make simx`; weak, so
 * NULL elsewhere): sim_run names the run whose plain memory accesses become
 * scheduling points, and NULL when it ends. */
void sim_access_attach(struct sim *s) __attribute__((weak));

/* heap.c: the pager's blocks taken while a run is on (attach 1) are kept,
 * and heap_release frees those left (returns how many). */
void heap_attach(int on);
size_t heap_release(void);

/* kernel_memfd.c and kernel_pte.c, for sim.c */
void kernel_destroy(struct sim *s);
/* An address as an object of the log: memfd fd and offset in mapping A. */
uint64_t kernel_a_obj(struct sim *s, uint64_t addr);

#endif
