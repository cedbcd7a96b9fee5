/* The scenario registry and the helpers every scenario uses to report. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"

#define SCENARIO(x) extern const struct scenario scenario_##x;
#include "scenarios.def"
#undef SCENARIO

const struct scenario *const scenarios[] = {
#define SCENARIO(x) &scenario_##x,
#include "scenarios.def"
#undef SCENARIO
};
const int nscenarios = sizeof(scenarios) / sizeof(scenarios[0]);

const struct scenario *scenario_find(const char *id)
{
	const char *digits = id;

	while (*digits && (*digits < '0' || *digits > '9'))
		digits++;
	for (int i = 0; i < nscenarios; i++)
		if (!strcasecmp(scenarios[i]->id, id) ||
		    (*digits && !strcmp(scenarios[i]->id + 2, digits) &&
		     digits - id <= 2))
			return scenarios[i];
	return NULL;
}

const char *scen_leg_name(unsigned leg)
{
	switch (leg) {
	case LEG_FILE:
		return "file";
	case LEG_UNEQUAL:
		return "unequal";
	case LEG_HUGE:
		return "huge";
	}
	return NULL;
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

void scen_fail(struct scen_result *r, const char *fmt, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	va_list ap;

	/* Pager threads report violations too; the first one is kept. */
	pthread_mutex_lock(&lock);
	if (!r->failed) {
		va_start(ap, fmt);
		vsnprintf(r->message, sizeof(r->message), fmt, ap);
		va_end(ap);
		r->failed = 1;
	}
	pthread_mutex_unlock(&lock);
}
