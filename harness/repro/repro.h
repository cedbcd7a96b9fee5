/* Catching the bugs of the switches (design.md §6's seven, bugs 8-10):
 * one detector run against one bug switch, and what it saw. `residctl repro` and `residctl matrix`
 * are built on it. */
#ifndef HARNESS_REPRO_H
#define HARNESS_REPRO_H

#include <stddef.h>
#include <stdint.h>

enum detector {
	DET_PCT,    /* the deterministic scheduler, PCT depth 3 */
	DET_RANDOM, /* the deterministic scheduler, random walk */
	DET_STORM,  /* the bug's gate scenario on the real kernel */
	DET_TSAN,   /* the same under ThreadSanitizer */
	NDETECTORS
};

struct detection {
	int ran; /* 0: could not run here; why says */
	int detected;
	char oracle[64]; /* deadlock cycle, lost wakeup, I-12, TSan, ... */
	char why[400];
	uint64_t schedules; /* schedules (scheduler) or runs (real kernel)
			       * up to and with the one that caught it */
	double seconds;
	uint64_t raw_preemptions, preemptions; /* before and after shrinking */
	char *replay; /* malloc'd: the replay line, or the command */
	int replays, replays_same; /* the replay line run again: same log */
};

struct repro_opts {
	uint64_t seed;
	uint64_t max_schedules; /* per scheduler hunt */
	int shrink;             /* shrink, search for a <= 2 preemption witness
				 * and replay the line */
	int replays;            /* times the line is replayed */
	int attempts;           /* real-kernel runs (seeds seed, seed+1, ..)
				 * until one catches it */
	const char *self;       /* this residctl, for the real-kernel runs */
};

const char *detector_name(enum detector d);
/* Does design.md §6 expect this detector to catch this bug? */
int detector_expected(int bug, enum detector d);
/* Runs detector d against bug (1..NBUGS; 0 = every switch off). */
void repro_run(int bug, enum detector d, const struct repro_opts *o,
	       struct detection *out);
void detection_free(struct detection *d);
/* This residctl's path (for the real-kernel runs); -1 when unknown. */
int repro_self_path(char *buf, size_t n);

#endif
