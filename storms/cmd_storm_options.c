/* residctl storm's options: the table, what goes together, and what a
 * rerun line and the campaign's identity repeat of them. */
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "base/cli.h"
#include "cmd_storm.h"
#include "fault/bugs.h"
#include "fault/fault.h"

static const char about[] =
	"  Rounds of randomized storms on the real kernel (chunk size, budget\n"
	"  ratio, threads, workers, prefetch depth, policy, evict-ahead, a 1 ms\n"
	"  FETCHING time-out, and a thread that advises the mapping as\n"
	"  applications do (MADV_DONTNEED, PAGEOUT, POPULATE_READ, ...) and\n"
	"  reads it again, drawn per round) until --duration has passed\n"
	"  (or 100,000 rounds have run, said on stderr and in --json)\n"
	"  or for --rounds R; each round runs in its own process and memory\n"
	"  cgroup with a watchdog (a round that checks no byte for --watchdog\n"
	"  seconds, default 30, hangs). Prints the kernel probe, a progress\n"
	"  line once a second on a terminal, and a summary: the code probes\n"
	"  (rare paths) the rounds hit and missed, each fault point's\n"
	"  firings. Exit 0 when\n"
	"  every round passed, 1 when one failed, 2 on bad input. Ctrl-C ends\n"
	"  with the summary so far. A failed round prints the line that reruns\n"
	"  it alone (--only ROUND_SEED). With --rounds, --shard runs round i\n"
	"  with the seed it has in the whole storm (a time-bounded storm has no\n"
	"  fixed list to split). Half the rounds (drawn) read a real file of the\n"
	"  content with O_DIRECT, its size not a page multiple, written under\n"
	"  $TMPDIR or /tmp and removed. Each round also draws from its seed which\n"
	"  fault points are on and at which probability (swarm testing; a\n"
	"  --fault rule for a point wins over the draw). --huge-dir puts every\n"
	"  round's pages in a tmpfs mounted with huge= (mount -t tmpfs -o\n"
	"  huge=always none DIR): rounds whose chunks are multiples of the huge\n"
	"  folio must take huge folios in B and hold their resident pages in\n"
	"  them, the others 4 KiB pages.\n";

int storm_parse(struct storm_args *a, int argc, char **argv)
{
	static const char *const backings[] = { "synthetic", "file", NULL };
	struct cli_opt opts[] = {
		{ "duration", CLI_U64, &a->duration, .arg = "SECONDS", .min = 1,
		  .fix = "give seconds >= 1",
		  .help = "run rounds until then (default 60)" },
		{ "rounds", CLI_U64, &a->rounds, .arg = "R", .min = 1,
		  .max = MAX_ROUNDS, .what = "round count",
		  .help = "run exactly R rounds instead of a duration" },
		{ "round", CLI_U64, &a->round, .arg = "SECONDS", .min = 1,
		  .max = 3600, .what = "round length",
		  .help = "each round's length (default 5)" },
		CLI_SEED(&a->seed, "the storm's seed (default: the time)"),
		CLI_SHARD(&a->shard),
		CLI_REPORT(&a->report),
		CLI_FAULT(&a->run.faults,
			  "inject a fault with a probability or "
			  "on the Nth call (all=P: every point)"),
		{ "no-swarm", CLI_UNFLAG, &a->swarm,
		  .help = "inject only the --fault rules" },
		CLI_JSON(&a->json, "write the summary"),
		{ "only", CLI_U64, &a->only, .arg = "ROUND_SEED", .min = 1,
		  .what = "round seed",
		  .fix = "give the seed a failed round printed",
		  .help = "rerun the round of that seed alone" },
		CLI_BUG,
		{ "chunk", CLI_BYTES, &a->chunk, .arg = "BYTES",
		  .what = "chunk size", .min = 1, .max = 8 << 20,
		  .align = RESID_PAGE,
		  .help = "every round's chunk size "
			  "(default: drawn)" },
		{ "backing", CLI_CHOICE, &a->backing, .choices = backings,
		  .help = "every round on that backing (default: drawn)" },
		{ "huge-dir", CLI_TEXT, &a->huge_dir, .arg = "DIR",
		  .help = "every round's pages in this huge tmpfs" },
		{ "watchdog", CLI_U64, &a->watchdog, .arg = "SECONDS", .min = 1,
		  .max = 3600, .what = "watchdog time",
		  .help = "a round with no progress for this long hangs "
			  "(default 30)" },
		{ 0 },
	};
	const struct cli_spec spec = { .cmd = "storm",
				       .about = about,
				       .opts = opts };

	a->seed = (uint64_t)time(NULL);
	a->round = 5;
	a->watchdog = WATCHDOG_S;
	a->backing = -1;
	a->swarm = 1;
	return cli_parse(&spec, argc, argv);
}

/* --huge-dir: an absolute path to a directory on a tmpfs (whether it is
 * mounted with huge= the pager says at each round's open). 0, or -1 after
 * one line. */
static int huge_dir_check(const char *dir)
{
	struct statfs fs;
	struct stat st;

	if (dir[0] != '/' || strlen(dir) > 1024 || stat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode) || statfs(dir, &fs) < 0 ||
	    fs.f_type != TMPFS_MAGIC) {
		fprintf(stderr,
			"residctl storm: bad --huge-dir '%s': give the "
			"absolute path of a directory on a tmpfs mounted with "
			"huge= (mount -t tmpfs -o huge=always none DIR)\n",
			dir);
		return -1;
	}
	return 0;
}

/* The options that go together, and what a rerun repeats of them. 0, or
 * -1 after one line. */
int storm_settle(struct storm_args *a)
{
	char spec[1024];

	if (a->rounds && a->duration) {
		fprintf(stderr,
			"residctl storm: --rounds %" PRIu64 " and "
			"--duration %" PRIu64 " both given; give one\n",
			a->rounds, a->duration);
		return -1;
	}
	if ((a->shard.n || a->report) && (!a->rounds || a->only)) {
		fprintf(stderr,
			"residctl storm: --%s needs --rounds R (and no "
			"--only): a storm bounded by time has no fixed list of "
			"rounds\n",
			a->shard.n ? "shard" : "report");
		return -1;
	}
	a->duration = a->rounds   ? a->rounds * a->round :
		      a->duration ? a->duration :
				    60;
	if (fault_plan_format(&a->run.faults, spec, sizeof(spec)) < 0)
		snprintf(spec, sizeof(spec), "...");
	snprintf(a->specs, sizeof(a->specs), "%s%s%s",
		 spec[0] ? " --fault " : "", spec,
		 a->swarm ? "" : " --no-swarm");
	a->run.faults.swarm = a->swarm ? FAULT_UNTRACED : 0;
	if (a->chunk)
		snprintf(a->round_opts, sizeof(a->round_opts),
			 " --chunk %" PRIu64, a->chunk);
	if (a->watchdog != WATCHDOG_S)
		snprintf(a->round_opts + strlen(a->round_opts),
			 sizeof(a->round_opts) - strlen(a->round_opts),
			 " --watchdog %" PRIu64, a->watchdog);
	if (a->huge_dir && huge_dir_check(a->huge_dir) < 0)
		return -1;
	snprintf(a->backing_opt, sizeof(a->backing_opt), "%s%s%s%.1024s",
		 a->backing < 0 ? "" : " --backing ",
		 a->backing < 0 ? "" :
		 a->backing     ? "file" :
				  "synthetic",
		 a->huge_dir ? " --huge-dir " : "",
		 a->huge_dir ? a->huge_dir : "");
	return 0;
}
