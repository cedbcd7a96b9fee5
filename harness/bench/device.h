/* The device's own read limit, measured by fio on the bench's file:
 * O_DIRECT, sequential, at each block size asked for and queue depths
 * 1..16; the best is the limit a fetch is held to. */
#ifndef HARNESS_BENCH_DEVICE_H
#define HARNESS_BENCH_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#define DEVICE_BS 2
#define DEVICE_QDS 5

struct device_limit {
	uint64_t bs[DEVICE_BS];              /* 0: not measured */
	double mibps[DEVICE_BS][DEVICE_QDS]; /* at queue depth 1 << q */
	double best;                         /* MiB/s */
	uint64_t best_bs, best_qd;
};

/* Whether fio is an executable file in a directory of $PATH: a benchmark
 * asked for --device checks this before it starts. */
int device_have_fio(void);

/* Runs fio on path (size bytes) for each non-zero bs, 2 s per queue
 * depth, keeping the best of what d already holds. 0, or -1 with err (fio
 * missing or failing). */
int device_measure(const char *path, uint64_t size, struct device_limit *d,
		   char *err, size_t n);

#endif
