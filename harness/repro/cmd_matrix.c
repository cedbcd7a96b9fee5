/* residctl matrix: every bug (and none) against every detector over many
 * seeds; the kill matrix of design.md §6 as markdown and JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/commands.h"
#include "campaign/campaign.h"
#include "campaign/report.h"
#include "fault/bugs.h"
#include "repro/repro_internal.h"

#define MAX_SEEDS 1000

static const char about[] =
	"  The kill matrix: each of the bugs switched on alone, and all\n"
	"  off, against every detector: the scheduler (PCT depth 3 and the\n"
	"  random walk) over N seeds (default 20, each hunt capped at\n"
	"  --schedules, default 20000), the real-kernel storm and TSan over R\n"
	"  runs (default 3). Per cell: detected in how many, schedules to\n"
	"  detect (median, worst), seconds, the oracle, the shrunk preemptions\n"
	"  and whether the replay line reproduced it 10/10. Writes --md and\n"
	"  --json (scripts/kill-matrix.sh: results/bugs.md and bugs.json).\n"
	"  Exit 0 when the clean row caught nothing and each expected cell\n"
	"  caught its bug (the scheduler on every seed with its replay 10/10,\n"
	"  a real-kernel detector in at least one run; one run per seed, so\n"
	"  the real-kernel figure is a rate), 1 otherwise, 2 on bad input.\n"
	"  --shard K/N runs only the seeds and runs i (counted over the cells in\n"
	"  order) with i mod N = K - 1 (K from 1); --report writes the campaign\n"
	"  report, every detection with its replay line, for residctl merge,\n"
	"  which judges the real-kernel cells (at least one run) over all shards.\n"
	"  --no-shrink: no seed's failure is shrunk or replayed (the schedules\n"
	"  to detect only; shrinking a failure with many faults takes minutes).\n";

struct cell {
	int expected, runs, ran, detected;
	uint64_t sched[MAX_SEEDS];
	double secs[MAX_SEEDS];
	char oracle[64], why[400];
	uint64_t raw_preemptions, preemptions;
	int replays, replays_same;
	char *replay;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median and worst over the runs that detected (the rest count as not). */
static void figures(struct cell *c, uint64_t *med, uint64_t *worst,
		    double *smed)
{
	qsort(c->sched, (size_t)c->detected, sizeof(uint64_t), cmp_u64);
	qsort(c->secs, (size_t)c->detected, sizeof(double), cmp_dbl);
	*med = c->detected ? c->sched[(c->detected - 1) / 2] : 0;
	*worst = c->detected ? c->sched[c->detected - 1] : 0;
	*smed = c->detected ? c->secs[(c->detected - 1) / 2] : 0;
}

/* One run as a finding of the cell's row: a detection with its line (a
 * failure in the clean row), or an expected scheduler hunt that missed or
 * did not replay. */
static void unit_row(struct campaign_row *row, int bug, enum detector det,
		     int i, const struct detection *d)
{
	int sched = det == DET_PCT || det == DET_RANDOM;
	int expected = detector_expected(bug, det);
	char what[600];

	row_ran(row, 1);
	row_count(row, "not_run", !d->ran);
	row_count(row, "detected", d->detected != 0);
	if (!d->ran)
		return;
	if (d->detected) {
		row_sample(row, d->schedules);
		snprintf(what, sizeof(what), "detected after %llu %s: %s: %s",
			 (unsigned long long)d->schedules,
			 sched ? "schedules" : "runs", d->oracle, d->why);
		row_finding(row, (uint64_t)i,
			    !bug || (sched && expected &&
				     d->replays_same != d->replays),
			    what, d->replay);
	} else if (bug && sched && expected) {
		snprintf(what, sizeof(what), "not detected: %s", d->why);
		row_finding(row, (uint64_t)i, 1, what, NULL);
	}
}

/* unit: the campaign's index of the cell's first run, moved past it. */
static void run_cell(int bug, enum detector det, int runs,
		     const struct repro_opts *base, const struct shard *sh,
		     uint64_t *unit, struct campaign_row *row, struct cell *c)
{
	memset(c, 0, sizeof(*c));
	c->expected = detector_expected(bug, det);
	for (int i = 0; i < runs; i++) {
		struct repro_opts o = *base;
		struct detection d;

		if (!shard_owns(sh, (*unit)++))
			continue;
		o.seed = base->seed + (uint64_t)i;
		/* The first seed's failure is shrunk, unless --no-shrink. */
		o.shrink = i == 0 && base->shrink;
		repro_run(bug, det, &o, &d);
		if (row)
			unit_row(row, bug, det, i, &d);
		c->runs++;
		c->ran += d.ran;
		if (d.detected) {
			c->sched[c->detected] = d.schedules;
			c->secs[c->detected] = d.seconds;
			c->detected++;
		}
		if (d.detected && !c->oracle[0]) {
			snprintf(c->oracle, sizeof(c->oracle), "%s", d.oracle);
			snprintf(c->why, sizeof(c->why), "%s", d.why);
			c->raw_preemptions = d.raw_preemptions;
			c->preemptions = d.preemptions;
			c->replays = d.replays;
			c->replays_same = d.replays_same;
			c->replay = d.replay;
			d.replay = NULL;
		} else if (!d.ran && !c->why[0]) {
			snprintf(c->why, sizeof(c->why), "%s", d.why);
		}
		detection_free(&d);
	}
}

/* The scheduler must catch its bug every time and replay it exactly; a
 * real-kernel detector in at least one run (its rate is the figure; in a
 * shard, merge judges it over every run). */
static int cell_ok(int bug, enum detector det, const struct cell *c,
		   const struct shard *sh)
{
	int sched = det == DET_PCT || det == DET_RANDOM;

	if (!bug)
		return c->detected == 0;
	if (!c->expected)
		return 1;
	if (!sched)
		return c->detected > 0 || shard_split(sh);
	return c->detected == c->runs && c->replays_same == c->replays;
}

static const char *const det_key[NDETECTORS] = {
	"sched_pct",
	"sched_random",
	"storm",
	"tsan",
};

/* What decides the matrix's runs: size counts every seed and run. */
static struct campaign *new_campaign(const struct repro_opts *o, uint64_t seeds,
				     uint64_t runs, int real,
				     const struct shard *sh)
{
	char id[160];
	uint64_t size = 0;

	for (int b = 0; b <= NBUGS; b++)
		for (int det = 0; det < NDETECTORS; det++)
			size += det == DET_PCT || det == DET_RANDOM ? seeds :
				real                                ? runs :
								      0;
	snprintf(id, sizeof(id), "seeds=%llu runs=%llu schedules=%llu%s",
		 (unsigned long long)seeds, (unsigned long long)runs,
		 (unsigned long long)o->max_schedules, real ? "" : " no-real");
	return campaign_new("matrix", id, o->seed, size, "runs", sh);
}

static void write_json(FILE *f, struct cell cells[][NDETECTORS], int seeds,
		       int runs)
{
	fprintf(f, "{\n  \"seeds\": %d,\n  \"runs\": %d,\n  \"bugs\": [\n",
		seeds, runs);
	for (int b = 0; b <= NBUGS; b++) {
		fprintf(f, "    {\"bug\": %d, \"title\": ", b);
		json_str(f, b ? bug_table[b].title : "all switches off");
		for (int det = 0; det < NDETECTORS; det++) {
			struct cell *c = &cells[b][det];
			uint64_t med, worst;
			double smed;

			figures(c, &med, &worst, &smed);
			fprintf(f,
				",\n      \"%s\": {\"expected\": %s, \"runs\": "
				"%d, \"ran\": %d, \"detected\": %d, "
				"\"schedules_median\": %" PRIu64 ", "
				"\"schedules_worst\": %" PRIu64 ", "
				"\"seconds_median\": %.3f, \"oracle\": ",
				det_key[det], c->expected ? "true" : "false",
				c->runs, c->ran, c->detected, med, worst, smed);
			json_str(f, c->oracle);
			fprintf(f, ", \"why\": ");
			json_str(f, c->why);
			fprintf(f,
				", \"preemptions_raw\": %" PRIu64
				", \"preemptions_shrunk\": %" PRIu64
				", \"replays\": %d, \"replays_same\": %d, "
				"\"replay\": ",
				c->raw_preemptions, c->preemptions, c->replays,
				c->replays_same);
			json_str(f, c->replay);
			fputc('}', f);
		}
		fprintf(f, "}%s\n", b < NBUGS ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
}

static void write_md(FILE *f, struct cell cells[][NDETECTORS], int seeds,
		     int runs)
{
	fprintf(f, "| bug | detector | expected | detected | schedules to "
		   "detect (median / worst) | s to detect (median) | oracle | "
		   "preemptions (raw -> shrunk) | replay |\n"
		   "|---|---|---|---|---|---|---|---|---|\n");
	for (int b = 0; b <= NBUGS; b++)
		for (int det = 0; det < NDETECTORS; det++) {
			struct cell *c = &cells[b][det];
			int sched = det == DET_PCT || det == DET_RANDOM;
			uint64_t med, worst;
			double smed;

			figures(c, &med, &worst, &smed);
			fprintf(f, "| %d %s | %s | %s | ", b,
				b ? bug_table[b].title : "(all off)",
				detector_name(det), c->expected ? "yes" : "no");
			if (c->ran < c->runs)
				fprintf(f, "not run: %s | | | | | |\n", c->why);
			else if (sched)
				fprintf(f,
					"%d/%d | %" PRIu64 " / %" PRIu64
					" | %.3f | %s | %" PRIu64 " -> %" PRIu64
					" | %d/%d |\n",
					c->detected, c->runs, med, worst, smed,
					c->oracle, c->raw_preemptions,
					c->preemptions, c->replays_same,
					c->replays);
			else
				fprintf(f,
					"%d/%d | | %.1f | %s | | rerun "
					"command |\n",
					c->detected, c->runs, smed, c->oracle);
		}
	fprintf(f,
		"\nScheduler: %d seeds per cell, each hunt stops at its "
		"first failure. Real kernel and TSan: %d runs per cell. The "
		"clean row (bug 0) must detect nothing.\n",
		seeds, runs);
}

static int write_file(const char *path,
		      void (*fn)(FILE *, struct cell[][NDETECTORS], int, int),
		      struct cell cells[][NDETECTORS], int seeds, int runs)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return -1;
	}
	fn(f, cells, seeds, runs);
	return fclose(f);
}

/* What the matrix runs, as the options say. */
struct matrix {
	struct repro_opts o;
	const char *md, *json, *report;
	uint64_t seeds, runs, unit;
	struct shard shard;
	struct campaign *camp;
	int real;
};

static int parse(struct matrix *m, int argc, char **argv)
{
	struct cli_opt opts[] = {
		{ "seeds", CLI_U64, &m->seeds, .arg = "N", .min = 1,
		  .max = MAX_SEEDS, .what = "seed count",
		  .help = "scheduler seeds per cell (default 20)" },
		{ "runs", CLI_U64, &m->runs, .arg = "R", .min = 1,
		  .max = MAX_SEEDS, .what = "run count",
		  .help = "real-kernel "
			  "and TSan runs per cell (default 3)" },
		CLI_SCHEDULES(&m->o.max_schedules, "cap each hunt (default "
						   "20000)"),
		{ "md", CLI_TEXT, &m->md, .arg = "FILE",
		  .help = "write the matrix as markdown" },
		CLI_JSON(&m->json, "write the matrix"),
		{ "no-real", CLI_UNFLAG, &m->real,
		  .help = "skip the real-kernel detectors" },
		CLI_SHARD(&m->shard),
		CLI_REPORT(&m->report),
		{ "no-shrink", CLI_UNFLAG, &m->o.shrink,
		  .help = "neither shrink "
			  "nor replay a failure (the schedules to detect only)" },
		{ 0 },
	};
	const struct cli_spec spec = { .cmd = "matrix",
				       .about = about,
				       .opts = opts };

	*m = (struct matrix){ .seeds = 20,
			      .runs = 3,
			      .real = 1,
			      .o = { .seed = 1,
				     .max_schedules = 20000,
				     .replays = 10,
				     .shrink = 1 } };
	return cli_parse(&spec, argc, argv);
}

/* Runs every cell; how many of them judged wrong. */
static int run_cells(struct matrix *m, struct cell cells[][NDETECTORS])
{
	int bad = 0;

	for (int b = 0; b <= NBUGS; b++)
		for (int det = 0; det < NDETECTORS; det++) {
			int sched = det == DET_PCT || det == DET_RANDOM;
			struct cell *c = &cells[b][det];
			struct campaign_row *row = NULL;
			char name[64];

			snprintf(name, sizeof(name), "bug %d %s", b,
				 det_key[det]);
			if (m->camp && (sched || m->real))
				row = campaign_row(m->camp, name,
						   sched ? m->seeds : m->runs);
			if (row && !sched && detector_expected(b, det))
				row_require(row, "detected");

			fprintf(stderr, "matrix: bug %d, %s ...\n", b,
				detector_name(det));
			if (!sched && !m->real) {
				memset(c, 0, sizeof(*c));
				c->expected = detector_expected(b, det);
				c->runs = 1;
				snprintf(c->why, sizeof(c->why), "--no-real");
				continue;
			}
			run_cell(b, det, (int)(sched ? m->seeds : m->runs),
				 &m->o, &m->shard, &m->unit, row, c);
			bad += (c->ran == c->runs || b == 0) &&
			       !cell_ok(b, det, c, &m->shard);
		}
	return bad;
}

/* One matrix, its cells fresh for this call; frees the cells' replay
 * lines and the campaign whatever the outcome. */
static int matrix_run(struct matrix *m, struct cell cells[][NDETECTORS])
{
	char self[4096];
	int bad, rc = 0;
	double t0;

	if (repro_self_path(self, sizeof(self)) < 0) {
		fprintf(stderr, "residctl matrix: cannot find this program's "
				"path in /proc/self/exe\n");
		return 2;
	}
	m->o.self = self;
	if (m->report && !(m->camp = new_campaign(&m->o, m->seeds, m->runs,
						  m->real, &m->shard))) {
		fprintf(stderr, "residctl matrix: out of memory\n");
		return 2;
	}
	t0 = mono_now();
	bad = run_cells(m, cells);
	write_md(stdout, cells, (int)m->seeds, (int)m->runs);
	if ((m->md &&
	     write_file(m->md, write_md, cells, (int)m->seeds, (int)m->runs)) ||
	    (m->json && write_file(m->json, write_json, cells, (int)m->seeds,
				   (int)m->runs)))
		rc = 2;
	for (int b = 0; b <= NBUGS; b++)
		for (int det = 0; det < NDETECTORS; det++)
			free(cells[b][det].replay);
	if (m->camp) {
		if (!rc && campaign_write(m->camp, m->report, mono_now() - t0))
			rc = 2;
		campaign_free(m->camp);
	}
	return rc ? rc : bad ? 1 : 0;
}

int cmd_matrix(int argc, char **argv)
{
	/* Per call, the cells on the heap (each keeps its runs' times): a
	 * second call in one process starts from nothing of the first. */
	struct cell(*cells)[NDETECTORS] = calloc(NBUGS + 1, sizeof(*cells));
	struct matrix m;
	int rc;

	if (!cells) {
		fprintf(stderr, "residctl matrix: out of memory\n");
		return 2;
	}
	rc = parse(&m, argc, argv);
	if (rc == CLI_RUN)
		rc = matrix_run(&m, cells);
	free(cells);
	return rc;
}
