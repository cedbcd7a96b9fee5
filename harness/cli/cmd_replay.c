/* residctl replay: reruns one schedule of the simulated kernel from the
 * line a failure printed (design.md §4). */
#include <inttypes.h>
#include <stdio.h>

#include "base/cli.h"
#include "sim/explore.h"

static const char about[] =
	"  Runs the schedule a failure printed (rc3/REV/SCENARIO/STRATEGY/SEED/\n"
	"  BUGS/OPS/FAULTS/SCHEDULE), with the bug switches and the faults it\n"
	"  names, and prints its verdict, the faults that fired and its\n"
	"  event-log hash. Exit 0 when it passes, 1 when it fails (reproduced),\n"
	"  2 on a bad line.\n";

int cmd_replay(int argc, char **argv)
{
	struct replay rp;
	struct sim_outcome out;
	char err[256];
	const char *line = NULL;
	const struct cli_spec spec = {
		.cmd = "replay",
		.synopsis = "'LINE'",
		.about = about,
		.operands = 1,
		.operand = { .type = CLI_TEXT, .dst = &line },
	};
	int rc = cli_parse(&spec, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	if (!line) {
		fprintf(stderr, "residctl replay: give exactly one LINE, in "
				"quotes; see residctl replay --help\n");
		return 2;
	}
	if (replay_decode(line, &rp, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl replay: %s\n", err);
		return 2;
	}
	replay_run(&rp, &out);
	printf("replay %s%s: %s%s%s\n  %" PRIu64 " steps, %" PRIu64
	       " preemptions, event log %016" PRIx64 "\n",
	       rp.p->id, rp.unequal ? " (unequal chunks)" : "",
	       sim_verdict_name(out.verdict), out.why[0] ? ": " : "", out.why,
	       out.steps, out.preemptions, out.log_hash);
	for (int p = 0; p < FP_COUNT; p++)
		if (rp.faults.on & 1u << p)
			printf("  fault %-28s fired %" PRIu64 "\n",
			       fault_name(p), out.fired[p]);
	int failed = out.verdict != SIM_PASS;

	sim_outcome_free(&out);
	replay_free(&rp);
	return failed;
}
