/* residctl bench: the performance work of design.md §8. Benchmarks, not tests:
 * they compare arms side by side and write figures, they assert nothing
 * about time. Shared here: the backing file on a real disk, emptying its
 * page cache, the process's own I/O accounting, one measurement in a forked
 * child inside its own memory cgroup, and the cyclic layer scan. */
#ifndef HARNESS_BENCH_H
#define HARNESS_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/clock.h"
#include "cgroup/devclass.h"
#include "resid_harness.h"
#include "workload/layout.h"

#define MiB ((uint64_t)1 << 20)

/* A benchmark stops by itself on SIGINT/SIGTERM (child_stop_softly): the
 * running child is killed, the file removed. */
#include "proc/child.h"

/* The backing file: content of design.md §5.1 (seed), written, fsynced, and
 * removed by bench_file_remove on every exit path. */
struct decode_job;

struct bench_file {
	char path[4096];
	uint64_t size;
	uint64_t seed;
	int fd; /* -1 when closed */
};

/* Checks dir (exists, not tmpfs, room for size bytes): 0, or -1 with one
 * line in err naming the fix. Nothing is created. */
int bench_dir_check(const char *dir, uint64_t size, char *err, size_t n);
/* Creates <dir>/residctl-bench-<pid>.dat, its bytes from fill
 * (resid_content_fill, or decode_fill for weights). -1 with err; nothing
 * left. */
typedef void (*bench_fill)(uint8_t *dst, uint64_t off, uint64_t len,
			   uint64_t seed);
int bench_file_create(struct bench_file *f, const char *dir, uint64_t size,
		      uint64_t seed, bench_fill fill, char *err, size_t n);
void bench_file_remove(struct bench_file *f);

/* A model file (bench mkmodel, mkgguf) written whole or not at all: open
 * creates path.tmp (-1 with err); close with ok (every write succeeded)
 * flushes, fsyncs and renames it to path, and otherwise, or on a stop
 * signal, removes it: 0, or -1 with one line in err. */
struct bench_out {
	FILE *f;
	const char *path;
	char tmp[4200];
};
int bench_out_open(struct bench_out *o, const char *path, char *err, size_t n);
int bench_out_close(struct bench_out *o, int ok, char *err, size_t n);

/* read_bytes of /proc/self/io: what this process (all its threads) made the
 * block layer read. -1 when it cannot be read. */
int bench_read_bytes(uint64_t *out);

/* One measurement: fn runs in a forked child while the parent sits in a
 * fresh memory cgroup of limit bytes (swap forbidden), so the child is
 * charged there and nothing outlives it. The child writes len bytes of out
 * back. 0 when fn returned 0; -1 with err (fn's own error, a failed setup, a
 * dead child, or a signal to stop). */
typedef int (*bench_fn)(void *arg, void *out, char *err, size_t n);
int bench_in_child(const char *tag, uint64_t limit, bench_fn fn, void *arg,
		   void *out, size_t len, char *err, size_t n);

/* A benchmark's device class (--device-class): every run's cgroup holds
 * the reads of the file's block device to it (cgroup_io.h). */
struct bench_class {
	struct devclass dc; /* zeroed: host, no throttle */
	struct devclass_dev dev;
};
/* The device of path (the benchmark's --dir before its file exists)
 * when the class throttles: 0, or 2 after one line on stderr. */
int bench_class_setup(const char *cmd, struct bench_class *c, const char *path);
/* bench_in_child, with the run's cgroup under c (NULL: host). */
int bench_in_child_class(const char *tag, uint64_t limit,
			 const struct bench_class *c, bench_fn fn, void *arg,
			 void *out, size_t len, char *err, size_t n);

/* len bytes of fd at off into dst, short reads and EINTR retried: 0, or
 * -1 with errno (0 at the end of the file). */
int bench_pread_full(int fd, void *dst, uint64_t len, uint64_t off);

/* The cyclic layer scan: the layers of `lay` in order, `passes` times, by
 * `threads` application threads splitting each layer between them (a
 * barrier per layer). Every byte is summed into sink and compared with the
 * content; with `dec` (decode.h) each layer is instead multiplied into a
 * vector, its rows split between the threads, and each layer's output
 * checked against its reference (a mismatch per wrong output). With a region, each layer's own chunk (the one holding its first
 * byte) is announced before it is read (RESID_SIGNAL_BEFORE_READ); with
 * `touched`, every chunk its bytes touch, in order. trace gets one record
 * per chunk the scan enters, in true order (a layer that runs on into the
 * next chunk enters it): the workload's own reference trace, at most
 * passes * 2 * nlayers records. The cold first pass is the same for every
 * arm; io_first_pass lets a caller leave it out. */
struct scan {
	const uint8_t *base;
	const struct layout *lay;
	uint32_t passes, threads;
	int touched;
	int overlap; /* announce progress: resid_notify_consumed */
	uint64_t seed;
	struct resid_region *r; /* NULL: a plain mapping (arm A) */
	uint32_t *trace;
	uint64_t sink, mismatches, accesses;
	uint64_t io_first_pass; /* read_bytes when the first pass ended */
	double t_first_pass;    /* mono_now() then */
	const struct decode_job *dec;
};
int scan_run(struct scan *s, char *err, size_t n);

/* The subcommands. */
int bench_arms(int argc, char **argv);
int bench_fetch(int argc, char **argv);
int bench_mkmodel(int argc, char **argv);
int bench_mkgguf(int argc, char **argv);
int bench_decode(int argc, char **argv);
int bench_device(int argc, char **argv);

/* Bad input: one line naming the value and the fix; returns 2. */
int bench_bad(const char *cmd, const char *what, const char *v,
	      const char *fix);
/* qsort's comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);
/* A comma-separated list of byte sizes (K, M, G). Count, or -1. */
int bench_sizes(const char *s, uint64_t *out, int max);

#endif
