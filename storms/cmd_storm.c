/* residctl storm: randomized rounds of storms on the real kernel for a given
 * duration, for a kernel or platform engineer trying a new kernel (design.md §7).
 * The kernel probe first; each round draws chunk size, budget, threads,
 * workers, prefetch depth, policy, evict-ahead, the FETCHING time-out and
 * whether a thread advises the mapping from its seed; injected faults come from
 * --fault and RESIDCTL_FAULTS. A summary and --json at the end, also after
 * Ctrl-C. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/commands.h"
#include "campaign/campaign.h"
#include "cli/probe.h"
#include "cmd_storm.h"
#include "proc/child.h"
#include "workload/content_file.h"
#include "workload/workload.h"

/* The kernel probe, the campaign report and the files' directory. 0, or
 * -1 after one line. */
static int prepare(struct storm_args *a)
{
	char manifest[2048], id_opts[1200], err[1024];

	probe_run(&a->p);
	probe_json(&a->p, manifest, sizeof(manifest));
	printf("kernel probe: %s\n", manifest);
	if (!a->p.can_run) {
		fprintf(stderr, "residctl storm: can the pager run here? %s\n",
			a->p.verdict);
		return -1;
	}
	snprintf(id_opts, sizeof(id_opts), "%s%s", a->round_opts,
		 a->backing_opt);
	if (a->report &&
	    (!(a->camp = storm_campaign_new(a->seed, a->rounds, a->round,
					    id_opts, a->specs, &a->shard)) ||
	     !(a->row = campaign_row(a->camp, "storm", a->rounds)))) {
		fprintf(stderr, "residctl storm: out of memory\n");
		return -1;
	}
	if (a->backing &&
	    content_dir_make(a->dir, sizeof(a->dir), err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl storm: %s\n", err);
		return -1;
	}
	return 0;
}

/* One storm on a, fresh for this call. */
static int storm(struct storm_args *a, int argc, char **argv)
{
	struct run *run = &a->run;
	int rc = storm_parse(a, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	if (storm_settle(a) < 0 || prepare(a) < 0)
		return 2;
	child_stop_softly(); /* Ctrl-C: the summary so far */
	run->start = mono_now();
	run->duration = (double)a->duration;
	run->tty = isatty(STDERR_FILENO);
	printf("storm: seed %" PRIu64 ", %" PRIu64 " s, rounds of %" PRIu64
	       " s\n",
	       a->seed, a->duration, a->round);
	if (shard_split(&a->shard))
		printf("storm: shard %" PRIu64 "/%" PRIu64 " of %" PRIu64
		       " rounds: round i runs when i mod %" PRIu64 " = %" PRIu64
		       "\n",
		       a->shard.k, a->shard.n, a->rounds, a->shard.n,
		       a->shard.k - 1);
	fflush(stdout);
	rc = storm_rounds(a);
	if (run->tty)
		fputc('\n', stderr);
	/* A killed round's file too. */
	if ((a->dir[0] && content_dir_remove(a->dir) < 0) || rc < 0)
		return 2;
	storm_summary(stdout, run, &a->p);
	if (a->json && storm_write_json(a->json, run, &a->p) < 0)
		return 2;
	if (a->camp) {
		int bad = storm_write_report(a->report, a->camp, a->row, run);

		campaign_free(a->camp);
		if (bad)
			return 2;
	}
	return run->t.failed ? 1 : 0;
}

int cmd_storm(int argc, char **argv)
{
	/* On the heap (the seeds of every round), per call: a second call
	 * in one process starts from nothing of the first. */
	struct storm_args *a = calloc(1, sizeof(*a));
	int rc;

	if (!a) {
		fprintf(stderr, "residctl storm: out of memory\n");
		return 2;
	}
	rc = storm(a, argc, argv);
	free(a);
	return rc;
}
