/* The simulated kernel (design.md §4) as the pager's seam: the memfd's page
 * cache and mapping B (kernel_memfd.c), mapping A's PTEs (kernel_pte.c),
 * faults and wakes (kernel_fault.c), the uffd (kernel_uffd.c,
 * kernel_uffd_ops.c), descriptors (kernel_files.c), the backing store
 * (kernel_backing.c), /proc and the cgroup (kernel_proc.c), and the
 * scheduler's threads, locks and time (sync.c). Every call is a step
 * (sched_point) before it acts. */
#include "sim/sim_internal.h"
#include "sim/sim_kernel.h"

/* The simulated kernel runs one process, which never forks. */
static int kernel_process_id(void *ctx)
{
	(void)ctx;
	return 1;
}

const struct resid_seam sim_seam_ops = {
	.name = "sim",
	.uffd_open = kernel_uffd_open,
	.uffd_api = kernel_uffd_api,
	.uffd_register = kernel_uffd_register,
	.uffd_read = kernel_uffd_read,
	.uffd_continue = kernel_uffd_continue,
	.uffd_wake = kernel_uffd_wake,
	.uffd_poison = kernel_uffd_poison,
	.sigbus_thread = kernel_sigbus_thread,
	.protect_none = kernel_protect_none,
	.wait_readable = kernel_wait_readable,
	.notify_open = kernel_notify_open,
	.notify_signal = kernel_notify_signal,
	.memfd_create = kernel_memfd_create,
	.tmpfile_create = kernel_tmpfile_create,
	.ftruncate = kernel_ftruncate,
	.punch = kernel_punch,
	.fstat_blocks = kernel_fstat_blocks,
	.memfd_present = kernel_memfd_present,
	.map = kernel_map,
	.unmap = kernel_unmap,
	.nohugepage = kernel_nohugepage,
	.drop_a = kernel_drop_a,
	.memfd_write = kernel_memfd_write,
	.hugepage = kernel_hugepage,
	.folio_census = kernel_folio_census,
	.close = kernel_close,
	.backing_open = kernel_backing_open,
	.backing_pread = kernel_backing_pread,
	.backing_dontneed = kernel_backing_dontneed,
	.reader_open = kernel_reader_open,
	.read_start = kernel_read_start,
	.read_wait = kernel_read_wait,
	.reader_close = kernel_reader_close,
	.read_text = kernel_read_text,
	.process_id = kernel_process_id,
	.clock_ns = sched_clock_ns,
	.sleep_ns = sched_sleep_ns,
	.thread_start = sched_thread_start,
	.thread_join = sched_thread_join,
	.mutex_init = sched_mutex_init,
	.mutex_destroy = sched_mutex_destroy,
	.lock = sched_lock,
	.trylock = sched_trylock,
	.unlock = sched_unlock,
	.cond_init = sched_cond_init,
	.cond_destroy = sched_cond_destroy,
	.cond_wait = sched_cond_wait,
	.cond_signal = sched_cond_signal,
	.cond_broadcast = sched_cond_broadcast,
	.yield = sched_yield_op,
};
