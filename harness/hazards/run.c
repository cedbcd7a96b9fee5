/* A hazard in a forked child under its time limit: a call that never
 * returns is the row's result ("hung"), not a hang of the command. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/write_all.h"
#include "hazards/hazards.h"
#include "proc/child.h"
#include "workload/huge_leg.h"

const struct hazard hazards[] = {
#define HAZARD(name, fn, arg, needs, limit, what, on618) \
	{ name, fn, arg, needs, limit, what, on618 },
#include "hazards/hazards.def"
#undef HAZARD
};
const int nhazards = sizeof(hazards) / sizeof(hazards[0]);

int hz_find(const char *name)
{
	for (int i = 0; i < nhazards; i++)
		if (!strcmp(hazards[i].name, name))
			return i;
	return -1;
}

static void num(char *buf, size_t n, const char *name, int v)
{
	size_t len = strlen(buf);

	if (v >= 0)
		snprintf(buf + len, n - len, "%s%s %d", len ? ", " : "", name,
			 v);
}

void hz_outcome(const struct hz_out *o, char *buf, size_t n)
{
	size_t len;

	buf[0] = '\0';
	if (o->err >= 0)
		snprintf(buf, n, "%s", hz_errname(o->err));
	if (o->of >= 0) {
		len = strlen(buf);
		snprintf(buf + len, n - len, "%sdropped %d/%d", len ? ", " : "",
			 o->dropped, o->of);
	}
	num(buf, n, "zeros", o->zeros);
	if (o->refused >= 0) {
		len = strlen(buf);
		snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
			 o->refused ? "refused" : "collapsed");
	}
	len = strlen(buf);
	if (o->fault[0])
		snprintf(buf + len, n - len, "%sfault %s", len ? ", " : "",
			 o->fault);
	len = strlen(buf);
	if (o->key[0])
		snprintf(buf + len, n - len, "%s%s", len ? "; " : "", o->key);
}

static void blank(struct hz_out *o)
{
	memset(o, 0, sizeof(*o));
	o->err = o->dropped = o->of = o->zeros = o->refused = -1;
}

/* Why h cannot run here, or NULL. */
static const char *not_here(const struct hazard *h)
{
	if ((h->needs & HZ_NEEDS_THP) && !huge_leg_folio())
		return "the kernel has no transparent huge pages";
	if ((h->needs & HZ_NEEDS_ROOT) && geteuid())
		return h->needs == HZ_NEEDS_HUGE ?
			       "not root: no tmpfs can be "
			       "mounted in a mount namespace of its own" :
			       "not root";
	return NULL;
}

static void child(const struct hazard *h, int fd)
{
	struct hz_out o;

	blank(&o);
	if (h->fn(&o, h->arg) < 0 && !o.error && !o.na)
		hz_fail(&o, h->name, 0, "returned -1 and said nothing");
	_exit(write_all(fd, &o, sizeof(o)) < 0);
}

void hz_run(const struct hazard *h, struct hz_out *o)
{
	const char *why = not_here(h);
	int pfd[2], status = 0, ready;
	ssize_t got = 0;
	pid_t pid;

	blank(o);
	if (why) {
		o->na = 1;
		snprintf(o->note, sizeof(o->note), "%s", why);
		return;
	}
	if (pipe(pfd) < 0) {
		hz_fail(o, "pipe", errno, "hz_run");
		return;
	}
	pid = child_fork();
	if (pid == 0) {
		close(pfd[0]);
		child(h, pfd[1]);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		hz_fail(o, "fork", errno, "hz_run");
		return;
	}
	do
		ready = poll(&(struct pollfd){ .fd = pfd[0], .events = POLLIN },
			     1, h->limit_s * 1000);
	while (ready < 0 && errno == EINTR);
	if (ready > 0)
		got = read(pfd[0], o, sizeof(*o));
	close(pfd[0]);
	if (ready <= 0)
		kill(pid, SIGKILL);
	if (child_reap(pid, &status, 0) < 0) {
		hz_fail(o, "waitpid", errno, "hz_run");
		return;
	}
	if (ready == 0) {
		blank(o);
		o->hung = 1;
		snprintf(o->note, sizeof(o->note), "no result in %d s; killed",
			 h->limit_s);
	} else if (got != sizeof(*o)) {
		blank(o);
		snprintf(o->note, sizeof(o->note),
			 "the child %s %d without a "
			 "result",
			 WIFSIGNALED(status) ? "died of signal" : "exited",
			 WIFSIGNALED(status) ? WTERMSIG(status) :
					       WEXITSTATUS(status));
		o->error = 1;
	}
}
