/* The real-kernel watchdog of every command (design.md §9, "the harness
 * itself"): a command whose process and children use no CPU time for
 * RESIDCTL_WATCHDOG seconds (default 600; 0: off) is hung. Each thread's
 * state and wait channel (its own and its children's) go to stderr with the
 * line that reruns the command, the children are ended and the tool exits
 * 1. Not in the ThreadSanitizer build (see watchdog.c). */
#ifndef HARNESS_WATCHDOG_H
#define HARNESS_WATCHDOG_H

#include <stddef.h>

/* Starts the watchdog thread for the command line argv. -1 with one line in
 * err on a bad RESIDCTL_WATCHDOG. */
int watchdog_start(int argc, char **argv, char *err, size_t n);

/* The watchdog's test: blocks forever when RESIDCTL_HANG names `where`
 * ("main": before the command runs, "child": in every forked child). */
void watchdog_hang_here(const char *where);

#endif
