/* The seven historical bugs (design.md §6) and three more (docs/bugs/) as
 * the harness sees them: names, where each shows, and the switches (`--bug
 * N`, RESIDCTL_BUGS) that turn them on in the pager of this harness build
 * (pager/bug_switch.h). */
#ifndef HARNESS_BUGS_H
#define HARNESS_BUGS_H

#include <stddef.h>

#define NBUGS 11
#define BUGS_ALL (((1u << NBUGS) - 1) << 1)

struct bug_info {
	const char *title;
	const char *shape;
	/* The simulated scenario the scheduler hunts it in, and the gate
	 * scenario that runs it on the real kernel (storm, TSan). No faults
	 * or sizes of its own: the hunts are the generic campaign, whose
	 * swarm draws them per run. */
	const char *sim_scenario;
	const char *real_scenario;
};

extern const struct bug_info bug_table[NBUGS + 1]; /* [1..NBUGS] */

/* "3", "1,5", "1+10", "all" or "none" into a mask of bits 1..NBUGS. -1
 * with one line in err on anything else. */
int bugs_parse(const char *s, unsigned *mask, char *err, size_t n);
/* "-" for none, else "1+5+10". */
void bugs_format(unsigned mask, char *buf, size_t n);
/* Turns on the bugs of the mask (or, with --bug on a command line, adds). */
void bugs_enable(unsigned mask);
unsigned bugs_enabled(void);
/* RESIDCTL_BUGS from the environment; -1 with a line in err. */
int bugs_from_env(char *err, size_t n);
/* --bug N[,N..], a command's option (cli.h): adds the bugs it names to
 * those on (main reads RESIDCTL_BUGS for every command). */
int bugs_opt(void *dst, const char *where, const char *value, char *err,
	     size_t n);
#define CLI_BUG                                                                           \
	{                                                                                 \
		"bug", CLI_CALL, NULL,                                                    \
			.arg = "N[,N..]",                                                 \
			.help = "switch historical bugs back "                            \
				"on (all; see residctl repro --list); RESIDCTL_BUGS too", \
			.parse = bugs_opt                                                 \
	}

#endif
