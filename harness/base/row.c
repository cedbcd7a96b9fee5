/* The row's helpers every run uses to report, and the verdicts' names. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/row.h"

const char *verdict_name(enum verdict v)
{
	return v == VERDICT_PASS ? "pass" :
	       v == VERDICT_FAIL ? "fail" :
				   "unknown";
}

/* The counter called name, added when new; NULL when there is no room. */
static struct counter *counter_of(struct scen_result *r, const char *name)
{
	for (int i = 0; i < r->ncounters; i++)
		if (!strcmp(r->counters[i].name, name))
			return &r->counters[i];
	if (r->ncounters == SCEN_MAX_COUNTERS)
		return NULL;
	r->counters[r->ncounters] = (struct counter){ name, 0 };
	return &r->counters[r->ncounters++];
}

void scen_count(struct scen_result *r, const char *name, uint64_t value)
{
	struct counter *c = counter_of(r, name);

	if (c)
		c->value = value;
}

void scen_add(struct scen_result *r, const char *name, uint64_t value)
{
	struct counter *c = counter_of(r, name);

	if (c)
		c->value += value;
}

/* Pager threads report violations too: one lock for every row's message.
 * The first failure's reason wins, then the first unknown's, then the
 * first note (flag NULL). */
static void say(struct scen_result *r, int *flag, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int write;

	pthread_mutex_lock(&lock);
	if (flag == &r->failed)
		write = !r->failed;
	else if (flag)
		write = !r->failed && !r->unknown;
	else
		write = !r->failed && !r->unknown && !r->message[0];
	if (write)
		vsnprintf(r->message, sizeof(r->message), fmt, ap);
	if (flag)
		*flag = 1;
	pthread_mutex_unlock(&lock);
}

void scen_fail(struct scen_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, &r->failed, fmt, ap);
	va_end(ap);
}

void scen_unknown(struct scen_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, &r->unknown, fmt, ap);
	va_end(ap);
}

void scen_note(struct scen_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(r, NULL, fmt, ap);
	va_end(ap);
}

enum verdict scen_verdict(const struct scen_result *r, int ran)
{
	if (!ran || r->failed || r->mismatches)
		return VERDICT_FAIL;
	return r->unknown ? VERDICT_UNKNOWN : VERDICT_PASS;
}
