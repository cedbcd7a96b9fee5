/* Fault injection (design.md §5.2): one seam that wraps another — the kernel or
 * the simulated kernel — and puts a named libfiu point on every call. A
 * fault plan says which points fire: NAME=P (probability), NAME@N or
 * NAME@N+M+.. (those calls), all=P. Each run wraps its seam in its own
 * instance with its own seed, so a plan means the same in the real
 * scenarios, the storms and the simulation. Harness builds only. */
#ifndef HARNESS_FAULT_H
#define HARNESS_FAULT_H

#include <stddef.h>
#include <stdint.h>

#include "seam.h"

/* The points, as (enum, name without "resid/", what fires): a table that
 * docs/extending.md adds to, kept as written. */
/* clang-format off */
#define FAULT_POINTS(X)                                                       \
	X(FP_READ_EIO, "backing_read/eio")    /* backing read fails, EIO */    \
	X(FP_READ_EINTR, "backing_read/eintr") /* backing read fails, EINTR */ \
	X(FP_READ_SHORT, "backing_read/short") /* half; aligned: in pages */   \
	X(FP_READ_DELAY, "backing_read/delay") /* sleeps 1..3 ms first */      \
	X(FP_CONT_EAGAIN, "continue/eagain")  /* maps half, EAGAIN + mapped */ \
	X(FP_CONT_EEXIST, "continue/eexist")  /* fails, nothing mapped */      \
	X(FP_CONT_EFAULT, "continue/efault")  /* fails, nothing mapped */      \
	X(FP_WAKE, "wake")                    /* UFFDIO_WAKE fails */          \
	X(FP_PUNCH, "punch")                  /* PUNCH_HOLE fails */           \
	X(FP_UFFD_EINTR, "uffd_read/eintr")   /* read(uffd) fails, EINTR */    \
	X(FP_POLL, "poll")                    /* poll of the uffd: ENOMEM */   \
	X(FP_CGROUP_READ, "cgroup_read")      /* a cgroup file read fails */   \
	X(FP_SLOW_WORKER, "worker/slow")      /* a worker stalls 2 ms */       \
	X(FP_SPURIOUS_WAKEUP, "cond/spurious") /* a wait returns, no signal */ \
	X(FP_WRITE_ENOMEM, "memfd_write/enomem") /* the memfd write fails */   \
	X(FP_WRITE_SHORT, "memfd_write/short") /* it writes half */           \
	X(FP_DROP_A, "drop_a")                /* MADV_DONTNEED on A: EAGAIN */ \
	/* a new point: its line above this one */
/* clang-format on */

#define FAULT_ENUM(e, s) e,
enum fault_point { FAULT_POINTS(FAULT_ENUM) FP_COUNT };
#undef FAULT_ENUM

#define FAULT_ALL ((1u << FP_COUNT) - 1)
/* What a region can fire without resid_config.trace_fn, which no
 * scenario, storm or simulated program sets: all but drop_a. */
#define FAULT_UNTRACED (FAULT_ALL & ~(1u << FP_DROP_A))
/* Calls of one point a plan can name, or a run can record as fired. */
#define FAULT_MAX_CALLS 32

/* "resid/backing_read/eio" ...; NULL out of range. */
const char *fault_name(int point);

struct fault_rule {
	char prob[24];      /* as given, e.g. "0.5"; "" with calls */
	uint64_t threshold; /* fire when a draw >> 11 is below */
	uint16_t ncalls;    /* fire on calls[0..ncalls), ascending */
	uint64_t calls[FAULT_MAX_CALLS];
};

struct fault_plan {
	uint32_t on; /* a bit per point with a rule */
	int all;     /* all=P: only the points a run can fire */
	/* Swarm (the spec "swarm"): the points each run may draw from its
	 * seed (fault_plan_swarm); 0: none. A rule of `on` wins over it. */
	uint32_t swarm;
	struct fault_rule rule[FP_COUNT];
};

/* Adds a spec, or a comma-separated list of them, to plan: a later rule
 * for a point replaces an earlier one. NAME is a full name, the same
 * without "resid/", or all. Every item is checked before any is added.
 * -1 with one line in err naming `where` (an unknown name lists the
 * known ones). */
int fault_plan_add(struct fault_plan *plan, const char *where, const char *list,
		   char *err, size_t n);
/* --fault SPEC, a command's option (cli.h), and RESIDCTL_FAULTS: dst is a
 * struct fault_plan. */
int fault_plan_opt(void *dst, const char *where, const char *spec, char *err,
		   size_t n);
#define CLI_FAULT(plan, help_)                                            \
	{                                                                 \
		"fault", CLI_CALL, plan,                                  \
			.arg = "NAME=P|NAME@N", .help = help_,            \
			.env = "RESIDCTL_FAULTS", .parse = fault_plan_opt \
	}
/* Fits plan to a run that can fire only the points in `can`: all=P keeps
 * what the run can fire. -1 with one line in err when a point it names
 * (or all of them) cannot fire there; `run` names the run. */
int fault_plan_fit(struct fault_plan *plan, uint32_t can, const char *run,
		   char *err, size_t n);
/* The plan as a spec list ("" when empty); -1 when it does not fit. */
int fault_plan_format(const struct fault_plan *plan, char *buf, size_t n);
/* Swarm testing (Groce et al., ISSTA 2012): a random subset of the points
 * finds more than every point at once. Resolves plan's swarm for one run
 * from its seed: each point of the swarm mask without a rule of its own
 * is on with probability 1/2, at a probability drawn log-uniform from
 * 0.01 to its ceiling. out may be plan; out->swarm is 0. The seed's own
 * generator: the run's decision stream is not consumed. */
void fault_plan_swarm(const struct fault_plan *plan, uint64_t seed,
		      struct fault_plan *out);
/* A storm's chunk size drawn from a run's seed: 64 KiB, 256 KiB or 1 MiB
 * (bug 7's missing wake shows in many small chunks, a budget bug in few
 * large ones). */
uint64_t fault_swarm_chunk(uint64_t seed);

struct fault_seam;

/* Draws for decisions by probability. NULL: a hash of (seed, point, call
 * number), so threads share no generator; the simulation passes its run's
 * decision stream, so one stream picks threads and faults. */
typedef uint64_t (*fault_draw_fn)(void *arg);

/* Wraps inner (same ops, and ctx the instance) with plan's faults; plan is
 * copied. Its counts live in shared memory: a child forked after this
 * counts where the parent reads them. NULL when out of memory. */
struct fault_seam *fault_seam_new(const struct resid_seam *inner,
				  const struct fault_plan *plan, uint64_t seed,
				  fault_draw_fn draw, void *draw_arg);
void fault_seam_free(struct fault_seam *fs);
/* The seam to put in resid_config.seam. */
const struct resid_seam *fault_seam_ops(const struct fault_seam *fs);
/* Faults injected: the point fired and changed the call. */
uint64_t fault_seam_fired(const struct fault_seam *fs, int point);
/* Calls of the op the point belongs to: every backing read counts all
 * four read points; cgroup_read counts only cgroup paths and worker/slow
 * only the "worker-job" yield. A seam with an empty plan counts nothing. */
uint64_t fault_seam_calls(const struct fault_seam *fs, int point);
/* What fired, as a plan of call numbers; -1 when more than
 * FAULT_MAX_CALLS of a point fired (the plan is then incomplete). */
int fault_seam_fired_plan(const struct fault_seam *fs, struct fault_plan *out);
/* fired[] of every point, for a report. */
void fault_seam_fired_all(const struct fault_seam *fs,
			  uint64_t fired[FP_COUNT]);

/* Adds fired[] to a "fired:NAME" counter of a scenario's row for each
 * point plan names, so the row says how many fired per point. */
struct scen_result;
void fault_report(const struct fault_plan *plan, const uint64_t fired[FP_COUNT],
		  struct scen_result *res);

#endif
