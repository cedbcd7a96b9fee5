/* The arms' tables (markdown on stdout) and every run as CSV. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arms.h"

static void csv_row(FILE *f, const struct arms_opts *o, double ratio,
		    uint64_t budget, const struct arm *arm,
		    const struct arm_result *r)
{
	int pager = arm->advice < 0;

	fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%"
		PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",", o->chunk, o->nchunks,
		o->passes, o->threads, ratio, budget, arm->name, r->io_bytes,
		r->io_first);
	if (pager)
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",", r->st.fetch_bytes,
			r->st.fetches);
	else
		fputs(",,", f);
	fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%"
		PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n", r->opt_bytes,
		r->accesses, r->faults, r->evicted_bytes, r->seconds,
		r->mismatches, r->violations,
		pager ? budget + PAGER_SLACK : budget + o->margin, r->drop);
}

int arms_write_csv(const struct arms_opts *o,
		   struct arm_result (*res)[NARMS])
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", o->csv);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "residctl bench arms: cannot write %s: %s\n",
			o->csv, strerror(errno));
		return -1;
	}
	fputs("chunk_bytes,chunks,passes,threads,ratio,budget_bytes,arm,"
	      "bytes_read,bytes_first_pass,pager_fetch_bytes,pager_fetches,"
	      "opt_bytes,accesses,"
	      "faults,evicted_bytes,wall_s,mismatches,violations,"
	      "cgroup_limit,cache_drop\n", f);
	for (int i = 0; i < o->nratios; i++) {
		uint64_t budget = arms_budget(o, o->ratio[i]);
		struct arm_result opt = { 0 };

		for (int a = 0; a < NARMS; a++) {
			if (!o->use[a] || !res[i][a].ok)
				continue;
			csv_row(f, o, o->ratio[i], budget, &arms[a],
				&res[i][a]);
			opt = res[i][a];
		}
		if (opt.ok)
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%.3f,%" PRIu64 ",OPT,%" PRIu64 ",,,,%" PRIu64
				",%" PRIu64 ",,,,,,,\n", o->chunk, o->nchunks,
				o->passes, o->threads, o->ratio[i], budget,
				opt.opt_bytes, opt.opt_bytes, opt.accesses);
	}
	if (fclose(f) || rename(tmp, o->csv)) {
		fprintf(stderr, "residctl bench arms: cannot write %s\n",
			o->csv);
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* a / b as "x.xxx", or "-" when either is missing. */
static const char *quot(char *buf, size_t n, const struct arm_result *a,
			uint64_t av, const struct arm_result *b, uint64_t bv)
{
	if (!a || !b || !a->ok || !b->ok || !bv)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.3f", (double)av / (double)bv);
	return buf;
}

/* The arm-A variant that read the fewest bytes, or NULL. */
static const struct arm_result *best_a(const struct arm_result *r, int *which)
{
	const struct arm_result *best = NULL;

	for (int a = 0; a < NARMS; a++)
		if (arms[a].advice >= 0 && r[a].ok &&
		    (!best || r[a].io_bytes < best->io_bytes)) {
			best = &r[a];
			*which = a;
		}
	return best;
}

/* Any run's OPT (every run of a ratio scanned the same trace). */
static const struct arm_result *any_run(const struct arm_result *r)
{
	for (int a = 0; a < NARMS; a++)
		if (r[a].ok)
			return &r[a];
	return NULL;
}

static void summary_row(const struct arms_opts *o, int i,
			const struct arm_result *r)
{
	const struct arm_result *opt = any_run(r), *c = &r[ARM_C], *d = &r[ARM_D];
	const struct arm_result *e = &r[ARM_E];
	int which = 0;
	const struct arm_result *a = best_a(r, &which);
	char q[7][16];

	printf("| %.3f | %.0f | %s | ", o->ratio[i],
	       mib(arms_budget(o, o->ratio[i])),
	       opt ? (snprintf(q[0], 16, "%.0f", mib(opt->opt_bytes)), q[0]) :
	       "-");
	if (a)
		printf("%.0f (%s) | ", mib(a->io_bytes), arms[which].name + 2);
	else
		printf("- | ");
	for (int k = ARM_C; k <= ARM_E; k++)
		if (r[k].ok)
			printf("%.0f | ", mib(r[k].io_bytes));
		else
			printf("- | ");
	printf("%s | %s | %s | %s | %s | ",
	       quot(q[1], 16, d, d->io_bytes, opt, opt ? opt->opt_bytes : 0),
	       quot(q[2], 16, e, e->io_bytes, opt, opt ? opt->opt_bytes : 0),
	       quot(q[3], 16, c, c->io_bytes, opt, opt ? opt->opt_bytes : 0),
	       quot(q[4], 16, a, a ? a->io_bytes : 0, d, d->io_bytes),
	       quot(q[5], 16, a, a ? a->io_bytes - a->io_first : 0, d,
		    d->io_bytes - d->io_first));
	if (c->ok && c->accesses)
		printf("%.1f %% |\n", 100.0 * (double)c->st.fetches /
		       (double)c->accesses);
	else
		printf("- |\n");
}

void arms_print(const struct arms_opts *o, struct arm_result (*res)[NARMS],
		const char *drops)
{
	char q[16];

	printf("### %" PRIu64 " chunks of %" PRIu64 " MiB, %" PRIu64
	       " passes, %" PRIu64 " application thread%s\n\n", o->nchunks,
	       o->chunk / MiB, o->passes, o->threads, o->threads > 1 ? "s" : "");
	printf("Bytes read from the disk by the arm's process (/proc/self/io "
	       "read_bytes, delta around the scan), MiB. Budget = ratio x "
	       "%.0f MiB file; arm A's cgroup limit is the budget + %" PRIu64
	       " MiB; the pager arms' cgroups get budget + %" PRIu64 " MiB (the "
	       "pager's budget binds). Page cache emptied before every run "
	       "(%s; mincore: 0 pages cached). OPT: Belady over the scan's "
	       "own reference trace. E prefetches %" PRIu64 " chunk%s ahead. "
	       "A/D after pass 1 leaves out the cold first pass.\n\n",
	       mib(o->chunk * o->nchunks), o->margin / MiB, PAGER_SLACK / MiB,
	       drops, o->prefetch, o->prefetch > 1 ? "s" : "");
	printf("| ratio | budget MiB | OPT | A (best) | C | D | E | D/OPT | "
	       "E/OPT | C/OPT | A/D | A/D after pass 1 | C misses |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nratios; i++)
		summary_row(o, i, res[i]);
	printf("\nEvery run (pager MiB: the pager's own fetch_bytes, the "
	       "cross-check; faults: the pager's fault messages, or the "
	       "process's major + minor faults for A; evicted: punched by "
	       "the pager, or for A read minus still cached at the end):\n\n"
	       "| ratio | arm | MiB read | x OPT | pager MiB | faults | "
	       "evicted MiB | wall s | bad words |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nratios; i++)
		for (int a = 0; a < NARMS; a++) {
			const struct arm_result *r = &res[i][a];

			if (!r->ok)
				continue;
			printf("| %.3f | %s | %.1f | %s | ", o->ratio[i],
			       arms[a].name, mib(r->io_bytes),
			       quot(q, sizeof(q), r, r->io_bytes, r,
				    r->opt_bytes));
			if (arms[a].advice < 0)
				printf("%.1f | ", mib(r->st.fetch_bytes));
			else
				printf("- | ");
			printf("%" PRIu64 " | %.1f | %.2f | %" PRIu64 " |\n",
			       r->faults, mib(r->evicted_bytes), r->seconds,
			       r->mismatches);
		}
	printf("\n");
}
