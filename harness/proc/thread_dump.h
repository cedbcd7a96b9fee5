/* Where a hang sleeps: each thread of a process with its state and wait
 * channel, from /proc. */
#ifndef HARNESS_THREAD_DUMP_H
#define HARNESS_THREAD_DUMP_H

#include <stddef.h>
#include <sys/types.h>

/* One line into buf: "watchdog: thread dump (tid comm state wchan): ..." */
void thread_dump(pid_t pid, char *buf, size_t n);

#endif
