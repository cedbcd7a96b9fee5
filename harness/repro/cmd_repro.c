/* residctl repro: switch a historical bug back on and show what catches it.
 * residctl matrix: every bug against every detector over many seeds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "fault/bugs.h"
#include "repro/repro.h"

static const char about[] =
	"  Switches bug N back on (1..11: design.md §6's seven historical bugs,\n"
	"  three shapes that took the harness down, and a refault answered with\n"
	"  a wake; --list names them) and runs what\n"
	"  catches it: the deterministic scheduler (PCT depth 3, then the random\n"
	"  walk for comparison) on the bug's simulated scenario, then where they\n"
	"  are expected the real-kernel storm (watchdog) and ThreadSanitizer\n"
	"  (build/tsan/residctl, from make tsan). For each: caught or not, by\n"
	"  which scenario and oracle, after how many schedules and seconds, the\n"
	"  shrunk schedule's preemptions and its replay line, replayed 10 times.\n"
	"  --schedules caps each scheduler hunt (default 20000); a real-kernel\n"
	"  detector runs again with the next seed, up to 8 runs, until one\n"
	"  catches the bug; --no-real skips them. Exit 0 when every expected\n"
	"  detector caught it,\n"
	"  1 when one did not, 2 on bad input.\n";

static void list(void)
{
	for (int b = 1; b <= NBUGS; b++)
		printf("%d  %-44s %s\n", b, bug_table[b].title,
		       bug_table[b].shape);
}

static void print_detection(enum detector det, const struct detection *d)
{
	printf("  %-19s ", detector_name(det));
	if (!d->ran) {
		printf("NOT RUN: %s\n", d->why);
		return;
	}
	if (!d->detected) {
		printf("not caught: %s (%.1f s)\n", d->why, d->seconds);
		return;
	}
	if (det == DET_PCT || det == DET_RANDOM) {
		printf("CAUGHT by %s after %" PRIu64 " schedules, %.2f s; "
		       "preemptions %" PRIu64 " -> %" PRIu64,
		       d->oracle, d->schedules, d->seconds, d->raw_preemptions,
		       d->preemptions);
		if (d->replays)
			printf("; replay %d/%d same", d->replays_same,
			       d->replays);
		printf("\n    %.300s\n", d->why);
		if (d->replays)
			printf("    residctl replay '%s'\n",
			       d->replay ? d->replay : "?");
		return;
	}
	printf("CAUGHT by %s on run %" PRIu64 ", %.1f s\n    %.300s\n    "
	       "rerun: %s\n",
	       d->oracle, d->schedules, d->seconds, d->why,
	       d->replay ? d->replay : "?");
}

/* Runs the detectors for one bug; returns the expected ones that missed. */
static int repro_bug(int bug, const struct repro_opts *o, int real)
{
	int missed = 0;

	printf("bug %d: %s\n  shape: %s\n", bug, bug_table[bug].title,
	       bug_table[bug].shape);
	for (int det = 0; det < NDETECTORS; det++) {
		struct detection d;
		int sched = det == DET_PCT || det == DET_RANDOM;

		if (!sched && (!real || !detector_expected(bug, det)))
			continue;
		fflush(stdout);
		repro_run(bug, det, o, &d);
		print_detection(det, &d);
		if (detector_expected(bug, det) && det != DET_RANDOM &&
		    (!d.detected || (d.replays && d.replays_same != d.replays)))
			missed++;
		detection_free(&d);
	}
	return missed;
}

/* An operand: the bugs it names join the mask. */
static int bug_opt(void *dst, const char *where, const char *v, char *err,
		   size_t n)
{
	unsigned m;

	(void)where;
	if (bugs_parse(v, &m, err, n) < 0 || !m) {
		snprintf(err, n,
			 "bad bug '%s': give 1..%d or all; see residctl "
			 "repro --list",
			 v, NBUGS);
		return -1;
	}
	*(unsigned *)dst |= m;
	return 0;
}

int cmd_repro(int argc, char **argv)
{
	struct repro_opts o = { .seed = 1,
				.max_schedules = 20000,
				.shrink = 1,
				.replays = 10,
				.attempts = 8 };
	char self[4096];
	unsigned mask = 0;
	int real = 1, caught = 0, n = 0;
	struct cli_opt opts[] = {
		{ "list", CLI_ACTION, NULL, .act = list,
		  .help = "list the bugs" },
		CLI_SEED(&o.seed, "the first hunt's seed (default 1)"),
		CLI_SCHEDULES(&o.max_schedules, "cap each scheduler hunt "
						"(default 20000)"),
		{ "no-real", CLI_UNFLAG, &real,
		  .help = "skip the real-kernel detectors" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "repro",
		.synopsis = "N|all",
		.about = about,
		.opts = opts,
		.operands = 16,
		.operand = { .type = CLI_CALL, .dst = &mask, .parse = bug_opt },
	};
	int rc = cli_parse(&spec, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	if (!mask) {
		fprintf(stderr,
			"residctl repro: no bug given: name one (1..%d) "
			"or all; see residctl repro --list\n",
			NBUGS);
		return 2;
	}
	if (repro_self_path(self, sizeof(self)) < 0) {
		fprintf(stderr, "residctl repro: cannot find this program's "
				"path in /proc/self/exe\n");
		return 2;
	}
	o.self = self;
	for (int b = 1; b <= NBUGS; b++) {
		if (!(mask >> b & 1))
			continue;
		n++;
		caught += repro_bug(b, &o, real) == 0;
	}
	printf("repro: %d/%d caught by every expected detector\n", caught, n);
	return caught == n ? 0 : 1;
}
