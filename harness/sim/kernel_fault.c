/* Faults and wakes (design.md §4): sim_read faults as the kernel does,
 * each faulting thread queues one message on the uffd and sleeps until a
 * wake or a SIGBUS for it. */
#include <errno.h>
#include <string.h>

#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

static void queue_fault(struct sim *s, struct sim_thread *t)
{
	struct sim_file *f = kernel_file_of(s, t->fault_uffd, FK_UFFD);

	t->queued = 1;
	t->msg_seq = ++s->msg_seq;
	f->nqueued++;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *p = s->threads[i];

		if (p->wait == W_POLL && (p->poll_fd[0] == t->fault_uffd ||
					  p->poll_fd[1] == t->fault_uffd))
			sched_wake(p);
	}
}

/* A woken faulter's unread message leaves the queue, as in the kernel. */
static void wake_faulter(struct sim *s, struct sim_thread *t)
{
	if (t->queued) {
		t->queued = 0;
		kernel_file_of(s, t->fault_uffd, FK_UFFD)->nqueued--;
	}
	sched_wake(t);
}

void kernel_wake_range(struct sim *s, int uffd, uint64_t addr, uint64_t len)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if (t->wait == W_FAULT && t->fault_uffd == uffd &&
		    t->fault_addr >= addr && t->fault_addr - addr < len)
			wake_faulter(s, t);
	}
}

/* The current thread touches a page of A that has no PTE. */
static void fault(struct sim *s, struct sim_memfd *mf, uint64_t page)
{
	struct sim_thread *me = sched_self(s);
	int minor = mf->present[page];
	uint64_t mode = minor ? UFFDIO_REGISTER_MODE_MINOR :
				UFFDIO_REGISTER_MODE_MISSING;

	if (mf->uffd < 0 || !(mf->reg_mode & mode)) {
		/* Not watched: the kernel allocates (zeros) and maps. */
		mf->npresent += !minor;
		mf->present[page] = mf->mapped[page] = 1;
		return;
	}
	me->fault_mf = mf;
	me->fault_off = page * SIM_PAGE;
	me->fault_addr = (uintptr_t)mf->a + me->fault_off;
	me->fault_flags = minor ? UFFD_PAGEFAULT_FLAG_MINOR : 0;
	me->fault_uffd = mf->uffd;
	if (me->loop_page != kernel_a_obj(s, me->fault_addr))
		me->loop_faults = 0;
	me->loop_page = kernel_a_obj(s, me->fault_addr);
	if (++me->loop_faults >= ORACLE_FAULT_LOOP)
		oracle_livelock(s, me);
	queue_fault(s, me);
	sched_block(s, W_FAULT, page, 0, 0);
}

/* A SIGBUS sent to the running thread while it slept in a fault. */
static int me_sigbus(struct sim *s)
{
	struct sim_thread *me = sched_self(s);
	int hit = me->sigbus;

	me->sigbus = 0;
	return hit;
}

int sim_read(struct sim *s, const void *addr, void *dst, size_t len)
{
	uint64_t at = (uintptr_t)addr, end = at + len;

	while (at < end) {
		struct sim_memfd *mf;
		uint64_t off, page, n;

		sched_point(s, OP_READ, kernel_a_obj(s, at));
		mf = kernel_memfd_of_a(s, at, &off);
		if (!mf || off >= mf->npages * SIM_PAGE) {
			sim_fail(s,
				 "sim_read at %p: not in a mapping A or "
				 "past its file's end",
				 (void *)(uintptr_t)at);
			return 0;
		}
		page = off / SIM_PAGE;
		if (me_sigbus(s) || mf->mapped[page] == PTE_POISON) {
			sched_progress(s);
			return -1;
		}
		if (!mf->mapped[page]) {
			fault(s, mf, page);
			continue; /* woken: touch the page again */
		}
		n = SIM_PAGE - off % SIM_PAGE;
		n = n < end - at ? n : end - at;
		memcpy((uint8_t *)dst + (at - (uintptr_t)addr), mf->bytes + off,
		       n);
		at += n;
		if (s->cur)
			s->cur->loop_faults = 0;
		sched_progress(s);
	}
	return 0;
}

/* tgkill(SIGBUS) to the thread whose fault message carried ptid tid (its
 * id + 1). */
int kernel_sigbus_thread(void *ctx, uint32_t tid)
{
	struct sim *s = ctx;
	int hit = 0;

	sched_point(s, OP_SIGBUS, tid);
	for (uint32_t i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		if ((uint32_t)t->id + 1 != tid || t->wait == W_EXITED)
			continue;
		t->sigbus = 1;
		hit = 1;
		if (t->wait == W_FAULT)
			wake_faulter(s, t);
	}
	return hit ? 0 : -ESRCH;
}
