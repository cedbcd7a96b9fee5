/* The scheduler detectors: a campaign on the bug's simulated scenario that
 * stops at the first failure, the failure shrunk (and, when it still needs
 * more than two preemptions, a bounded exhaustive search for a witness with
 * fewer), and the replay line run again to show it reproduces. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "fault/bugs.h"
#include "repro/repro_internal.h"
#include "sim/explore.h"
#include "sim/oracles/registry.h"

#define DFS_CAP 4000

/* Replays the line itself, as a user would paste it. */
static void replay_line(const char *line, const struct sim_outcome *want,
			int times, struct detection *d)
{
	char err[256];

	for (int i = 0; i < times; i++) {
		struct replay rp;
		struct sim_outcome o;

		d->replays++;
		if (replay_decode(line, &rp, err, sizeof(err)) < 0)
			continue;
		replay_run(&rp, &o);
		d->replays_same += o.verdict == want->verdict &&
				   o.log_hash == want->log_hash;
		sim_outcome_free(&o);
		replay_free(&rp);
	}
}

static void hunt(int bug, const char *id, enum detector det,
		 const struct repro_opts *o, struct detection *d);

/* With every switch off, every scenario the bugs are hunted in must stay
 * green: the no-false-positive row, a tenth of the cap on each. */
void repro_sched(int bug, enum detector det, const struct repro_opts *o,
		 struct detection *d)
{
	char done[512] = "";

	if (bug) {
		hunt(bug, bug_table[bug].sim_scenario, det, o, d);
		return;
	}
	struct repro_opts each = *o;

	each.max_schedules = o->max_schedules / 10 ? o->max_schedules / 10 : 1;
	for (int b = 1; b <= NBUGS; b++) {
		const struct bug_info *x = &bug_table[b];
		char key[128];
		struct detection one = { 0 };

		snprintf(key, sizeof(key), "%s;", x->sim_scenario);
		if (strstr(done, key))
			continue;
		snprintf(done + strlen(done), sizeof(done) - strlen(done),
			 "%s ", key);
		hunt(0, x->sim_scenario, det, &each, &one);
		d->ran = 1;
		d->schedules += one.schedules;
		d->seconds += one.seconds;
		if (one.detected && !d->detected) {
			free(d->replay);
			*d = one;
			return;
		}
		detection_free(&one);
	}
	snprintf(d->why, sizeof(d->why),
		 "%.*s: %" PRIu64 " schedules, no "
		 "failure",
		 (int)strlen(done) - 2, done, d->schedules);
}

/* The generic campaign, as check --sim runs it: the scenario's own faults
 * and each schedule's swarm, nothing the bug asks for. */
static void hunt(int bug, const char *id, enum detector det,
		 const struct repro_opts *o, struct detection *d)
{
	struct fault_plan plan = { .swarm = FAULT_UNTRACED };
	char err[256];
	struct explore_opts eo = {
		.p = simprog_find(id),
		.strategy = det == DET_PCT ? SIM_PCT : SIM_RANDOM,
		.depth = det == DET_PCT ? 3 : 0,
		.seed = o->seed,
		.schedules = o->max_schedules,
		.bugs = bug ? 1u << bug : 0,
		.stop_at_failure = 1,
		/* The random walk is the figure beside PCT: caught or not and
		 * after how many schedules; its line replays unshrunk. */
		.shrink = o->shrink && det == DET_PCT,
	};
	struct explore_result r;
	double t0 = mono_now();

	if (simprog_faults(eo.p, &plan, &plan, err, sizeof(err)) < 0) {
		snprintf(d->why, sizeof(d->why), "%s", err);
		return;
	}
	eo.faults = &plan;
	d->ran = 1;
	explore(&eo, &r);
	d->seconds = mono_now() - t0; /* to detect; shrinking comes after */
	d->schedules = r.fail.p ? r.fail_index : r.schedules;
	if (!r.fail.p) {
		snprintf(d->why, sizeof(d->why),
			 "%s: %" PRIu64 " schedules, no "
			 "failure",
			 id, r.schedules);
		explore_result_free(&r);
		return;
	}
	d->detected = 1;
	d->raw_preemptions = r.raw_preemptions;
	d->preemptions = r.outcome.preemptions;
	if (eo.shrink && d->preemptions > 2) {
		/* Every schedule with one, then two, preemptions, up to a cap. */
		for (unsigned p = 1; p <= 2; p++) {
			struct explore_opts x = eo;
			struct explore_result w;

			x.strategy = SIM_DFS;
			x.depth = p;
			x.schedules = DFS_CAP;
			x.shrink = 0;
			explore(&x, &w);
			if (w.fail.p &&
			    w.outcome.preemptions < d->preemptions) {
				explore_result_free(&r);
				r = w;
				d->preemptions = r.outcome.preemptions;
				break;
			}
			explore_result_free(&w);
		}
	}
	oracle_caught(r.outcome.verdict, r.outcome.why, d->oracle,
		      sizeof(d->oracle));
	snprintf(d->why, sizeof(d->why), "%s: %.380s", id, r.outcome.why);
	d->replay = replay_encode(&r.fail);
	if (d->replay && o->shrink)
		replay_line(d->replay, &r.outcome, o->replays, d);
	explore_result_free(&r);
}
