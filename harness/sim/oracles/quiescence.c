/* The quiescence classifier (design.md §4): when no thread can run and no timer
 * is pending (or only timers fire, idly), ask the oracles why, in the
 * registry's order (oracles.def), each its `quiescent` function. A
 * lock left held by an exited thread never gets here: the thread's exit
 * fails the run. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/oracles/sim_oracle.h"
#include "sim/sim_internal.h"

void oracle_appendf(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

static void describe_wait(struct sim *s, const struct sim_thread *t, char *buf,
			  size_t n)
{
	switch (t->wait) {
	case W_LOCK:
		oracle_appendf(buf, n, "waits for lock %llu (held by %s)",
			       (unsigned long long)t->wait_obj,
			       sim_lock_owner(s, (uint32_t)t->wait_obj));
		break;
	case W_COND:
		oracle_appendf(buf, n, "waits on cond %llu (gave up lock %u)",
			       (unsigned long long)t->wait_obj, t->cond_lock);
		break;
	case W_SLEEP:
		oracle_appendf(buf, n, "sleeps");
		break;
	case W_POLL:
		oracle_appendf(buf, n, "polls fds %d,%d", t->poll_fd[0],
			       t->poll_fd[1]);
		break;
	case W_JOIN:
		oracle_appendf(buf, n, "joins thread %llu",
			       (unsigned long long)t->wait_obj);
		break;
	case W_APPS:
		oracle_appendf(buf, n, "waits for the application threads");
		break;
	case W_FAULT:
		oracle_appendf(buf, n,
			       "sleeps on a fault at offset %#llx (page %llu) "
			       "of memfd %d, %s",
			       (unsigned long long)t->fault_off,
			       (unsigned long long)(t->fault_off / SIM_PAGE),
			       t->fault_mf->fd,
			       t->queued ?
				       "its message unread on the uffd" :
				       "its message read and never answered");
		break;
	default:
		oracle_appendf(buf, n, "%s",
			       t->wait == W_RUN ? "runs" : "exited");
	}
}

int oracle_blame_first(struct sim *s, int w, const char *what)
{
	for (uint32_t i = 0; i < s->nthreads; i++) {
		if ((int)s->threads[i]->wait == w) {
			oracle_blame(s, s->threads[i], what);
			return 1;
		}
	}
	return 0;
}

void oracle_blame(struct sim *s, const struct sim_thread *t, const char *what)
{
	snprintf(s->why, sizeof(s->why), "%s: thread %u (%s) ", what, t->id,
		 t->name);
	describe_wait(s, t, s->why, sizeof(s->why));
	if (s->idle)
		oracle_appendf(s->why, sizeof(s->why),
			       "; %llu ms of virtual "
			       "time without progress",
			       (unsigned long long)((s->now - s->last_progress) /
						    1000000));
}

enum sim_verdict oracle_quiescence(struct sim *s)
{
	for (int v = SIM_FAILED; v < SIM_NVERDICTS; v++)
		if (oracles[v]->quiescent && oracles[v]->quiescent(s))
			return (enum sim_verdict)v;
	snprintf(s->why, sizeof(s->why),
		 "every thread exited: %u threads, "
		 "%llu steps",
		 s->nthreads, (unsigned long long)s->steps);
	return SIM_PASS;
}
