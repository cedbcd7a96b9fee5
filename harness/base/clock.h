/* The monotonic clock: run times, progress lines and deadlines. */
#ifndef HARNESS_CLOCK_H
#define HARNESS_CLOCK_H

#include <stdint.h>

#define NS_PER_MS 1000000ull

/* Seconds since some moment before the tool started. */
double mono_now(void);
/* The same in nanoseconds. */
uint64_t mono_ns(void);

#endif
