/* The tool's child processes, and how residctl ends on SIGINT/SIGTERM (design.md
 * §9): every child is forked here, dies with its parent (PR_SET_PDEATHSIG)
 * and is registered; the one handler forwards the signal to the live
 * children, reaps them, runs the cleanups the rooms above registered
 * (this process's cgroups, its content files) and exits 128 + the signal. */
#ifndef HARNESS_CHILD_H
#define HARNESS_CHILD_H

#include <sys/types.h>

/* main: installs the handler for SIGINT and SIGTERM. */
void child_catch_signals(void);

/* fork(), with stdio flushed first. In the child: SIGTERM when the forking
 * thread's process dies, no registered children, the hard handler. In the
 * parent: the child is registered until child_reap reaps it. */
pid_t child_fork(void);

/* waitpid(pid, status, nohang ? WNOHANG : 0), EINTR retried; unregisters
 * the child once reaped. Returns pid, 0 (nohang, still running) or -1. */
pid_t child_reap(pid_t pid, int *status, int nohang);

/* The command ends by itself once child_stop_signal() is set: the handler
 * only forwards the first signal (a second one still ends the tool). */
void child_stop_softly(void);

/* SIGINT or SIGTERM when one asked the tool to stop, else 0. */
int child_stop_signal(void);

/* Has child_exit_all run fn after the children are gone: what a room
 * leaves on the machine while it works (a cgroup, a file) registers its
 * cleanup before it makes the first; again is a no-op. fn must be
 * async-signal-safe. */
void child_on_exit(void (*fn)(void));

/* Sends sig to every live child, reaps them (SIGKILL after a grace period
 * when sig is not SIGKILL), runs the registered cleanups and _exits with
 * status. Async-signal-safe. */
void child_exit_all(int sig, int status) __attribute__((noreturn));

/* From a thread other than main's: has the main thread end the tool as
 * child_exit_all(SIGTERM, status) does, so that it makes no child or
 * cgroup meanwhile; ends it from here when main has not in 30 s. */
void child_exit_via_main(int status) __attribute__((noreturn));

#endif
