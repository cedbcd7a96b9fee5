/* The arms' tables (markdown on stdout) and every run as CSV. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/belady.h"
#include "bench/arms.h"

static double device_mbps(const struct arms_opts *o,
			  const struct arm_result *r);

/* The columns every row starts and ends with. */
static void row_head(FILE *f, const struct arms_opts *o, double ratio,
		     uint64_t budget, const char *name)
{
	fprintf(f,
		"%" PRIu64 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%.3f,%" PRIu64
		",%s,",
		o->table ? 0 : o->chunk, o->lay.nchunks, o->passes, o->threads,
		ratio, budget, name);
}

/* The class and the device alone's median rate at this ratio, MB/s
 * (empty when the arm "device" did not run): every row ends with them. */
static void row_class(FILE *f, const struct arms_opts *o, double mbps)
{
	fprintf(f, ",%s,", devclass_label(&o->cls.dc));
	if (mbps > 0)
		fprintf(f, "%.1f", mbps);
	fputc('\n', f);
}

static void row_tail(FILE *f, const struct arms_opts *o)
{
	const char *base = o->table ? strrchr(o->table, '/') : NULL;

	fprintf(f, "%s,%" PRIu32 ",",
		!o->table ? "equal" :
		base      ? base + 1 :
			    o->table,
		o->lay.nlayers);
}

static void csv_row(FILE *f, const struct arms_opts *o, double ratio,
		    uint64_t budget, const struct arm *arm,
		    const struct arm_result *r, double dev_mbps)
{
	int pager = arm_is_pager(arm);

	row_head(f, o, ratio, budget, arm->name);
	fprintf(f, "%" PRIu64 ",%" PRIu64 ",", r->io_bytes, r->io_first);
	if (pager)
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",", r->st.fetch_bytes,
			r->st.fetches);
	else
		fputs(",,", f);
	fprintf(f, "%" PRIu64 ",%" PRIu64 ",", r->fnu_bytes, r->bound_bytes);
	if (r->have_exact)
		fprintf(f, "%" PRIu64, r->exact_bytes);
	fprintf(f,
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%s,",
		r->accesses, r->faults, r->evicted_bytes, r->seconds,
		r->mismatches, r->violations,
		pager ? budget + PAGER_SLACK : budget + o->margin, r->drop);
	row_tail(f, o);
	if (pager)
		fprintf(f, "%" PRIu64 ",%" PRIu64, r->st.fetch_ns,
			r->st.read_ns);
	else
		fputs(",", f);
	for (uint64_t k = 0; k < o->reps; k++)
		fprintf(f, "%s%.3f", k ? " " : ",", r->secs[k]);
	fprintf(f, ",%.1f,%s,%.3f,", o->dev.best, o->name, r->first_s);
	for (uint64_t k = 0; k < o->reps && r->mibps[0] > 0; k++)
		fprintf(f, "%s%.1f", k ? " " : "", r->mibps[k]);
	row_class(f, o, dev_mbps);
}

/* A reference's row: its bytes in bytes_read, the rest empty. */
static void ref_row(FILE *f, const struct arms_opts *o, double ratio,
		    uint64_t budget, const char *name, uint64_t bytes,
		    uint64_t accesses, double dev_mbps)
{
	row_head(f, o, ratio, budget, name);
	fprintf(f, "%" PRIu64 ",,,,,,,%" PRIu64 ",,,,,,,,", bytes, accesses);
	row_tail(f, o);
	fprintf(f, ",,,%.1f,%s,,", o->dev.best, o->name);
	row_class(f, o, dev_mbps);
}

int arms_write_csv(const struct arms_opts *o, struct arm_result (*res)[NARMS])
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", o->csv);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "residctl bench %s: cannot write %s: %s\n",
			o->name, o->csv, strerror(errno));
		return -1;
	}
	fputs("chunk_bytes,chunks,passes,threads,ratio,budget_bytes,arm,"
	      "bytes_read,bytes_first_pass,pager_fetch_bytes,pager_fetches,"
	      "fnu_bytes,bound_bytes,exact_bytes,accesses,"
	      "faults,evicted_bytes,wall_s,mismatches,violations,"
	      "cgroup_limit,cache_drop,layout,layers,fetch_ns,read_ns,"
	      "wall_s_each,device_mibps,workload,first_pass_s,mibps_each,"
	      "device_class,device_mbps\n",
	      f);
	for (int i = 0; i < o->nratios; i++) {
		uint64_t budget = arms_budget(o, o->ratio[i]);
		struct arm_result ref = { 0 };
		double dev = device_mbps(o, res[i]);

		for (int a = 0; a < NARMS; a++) {
			if (!o->use[a] || !res[i][a].ok)
				continue;
			csv_row(f, o, o->ratio[i], budget, &arms[a], &res[i][a],
				dev);
			if (!arms[a].reader)
				ref = res[i][a];
		}
		if (!ref.ok)
			continue;
		ref_row(f, o, o->ratio[i], budget, "bound", ref.bound_bytes,
			ref.accesses, dev);
		ref_row(f, o, o->ratio[i], budget, "FNU", ref.fnu_bytes,
			ref.accesses, dev);
		if (ref.have_exact)
			ref_row(f, o, o->ratio[i], budget, "exact",
				ref.exact_bytes, ref.accesses, dev);
	}
	if (fclose(f) || rename(tmp, o->csv)) {
		fprintf(stderr, "residctl bench %s: cannot write %s\n", o->name,
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

/* The arm-A variant that read the fewest bytes (or took the least wall
 * time), or NULL. */
static const struct arm_result *best_a(const struct arm_result *r, int *which,
				       int by_time)
{
	const struct arm_result *best = NULL;

	for (int a = 0; a < NARMS; a++)
		if (arms[a].advice >= 0 && r[a].ok &&
		    (!best || (by_time ? r[a].seconds < best->seconds :
					 r[a].io_bytes < best->io_bytes))) {
			best = &r[a];
			*which = a;
		}
	return best;
}

/* Any run's references (every run of a ratio scanned the same trace). */
static const struct arm_result *any_run(const struct arm_result *r)
{
	for (int a = 0; a < NARMS; a++)
		if (r[a].ok && !arms[a].reader)
			return &r[a];
	return NULL;
}

static void summary_row(const struct arms_opts *o, int i,
			const struct arm_result *r)
{
	const struct arm_result *ref = any_run(r), *c = &r[ARM_C],
				*d = &r[ARM_D];
	const struct arm_result *e = &r[ARM_E];
	int which = 0;
	const struct arm_result *a = best_a(r, &which, 0);
	uint64_t bound = ref ? ref->bound_bytes : 0,
		 fnu = ref ? ref->fnu_bytes : 0;
	char q[8][16];

	printf("| %.3f | %.1f | ", o->ratio[i],
	       mib(arms_budget(o, o->ratio[i])));
	if (ref)
		printf("%.1f | %.1f | ", mib(bound), mib(fnu));
	else
		printf("- | - | ");
	if (ref && ref->have_exact)
		printf("%.1f | ", mib(ref->exact_bytes));
	else
		printf("- | ");
	if (a)
		printf("%.1f (%s) | ", mib(a->io_bytes), arms[which].name + 2);
	else
		printf("- | ");
	for (int k = ARM_C; k <= ARM_E; k++)
		if (r[k].ok)
			printf("%.1f | ", mib(r[k].io_bytes));
		else
			printf("- | ");
	printf("%s | %s | %s | %s | %s | %s | ",
	       quot(q[1], 16, d, d->io_bytes, ref, bound),
	       quot(q[2], 16, d, d->io_bytes, ref, fnu),
	       quot(q[3], 16, e, e->io_bytes, ref, bound),
	       quot(q[4], 16, c, c->io_bytes, ref, bound),
	       quot(q[5], 16, a, a ? a->io_bytes : 0, d, d->io_bytes),
	       quot(q[6], 16, a, a ? a->io_bytes - a->io_first : 0, d,
		    d->io_bytes - d->io_first));
	if (c->ok && c->accesses)
		printf("%.1f %% | ",
		       100.0 * (double)c->st.fetches / (double)c->accesses);
	else
		printf("- | ");
	printf("%s | ", devclass_label(&o->cls.dc));
	if (device_mbps(o, r) > 0)
		printf("%.1f |\n", device_mbps(o, r));
	else
		printf("- |\n");
}

/* The heading: what was scanned. */
static void title(const struct arms_opts *o)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (uint32_t c = 0; c < o->lay.nchunks; c++) {
		uint64_t len = o->lay.chunks[c].len;

		lo = len < lo ? len : lo;
		hi = len > hi ? len : hi;
	}
	if (o->table) {
		uint32_t straddle = 0;

		for (uint32_t l = 0; l < o->lay.nlayers; l++)
			straddle += layout_last_chunk(&o->lay, l) !=
				    o->lay.layers[l].chunk;
		printf("### Layout %s: %" PRIu32 " layers in %" PRIu32
		       " chunks of %.2f..%.2f MiB (%" PRIu32 " layers run on "
		       "into the next chunk), %" PRIu64 " passes, %" PRIu64
		       " application thread%s\n\n",
		       o->table, o->lay.nlayers, o->lay.nchunks, mib(lo),
		       mib(hi), straddle, o->passes, o->threads,
		       o->threads > 1 ? "s" : "");
	} else {
		printf("### %" PRIu32 " chunks of %" PRIu64 " MiB, %" PRIu64
		       " passes, %" PRIu64 " application thread%s\n\n",
		       o->lay.nchunks, o->chunk / MiB, o->passes, o->threads,
		       o->threads > 1 ? "s" : "");
	}
}

/* MiB/s of the pager's fetches: bytes over the time from the reserve to
 * the last CONTINUE (whole), or inside the backing reads only (reads). */
static double fetch_rate(const struct arm_result *r, int whole)
{
	uint64_t ns = whole ? r->st.fetch_ns : r->st.read_ns;

	return ns ? mib(r->st.fetch_bytes) / ((double)ns / 1e9) : 0;
}

/* An arm with a workload that ran in this sweep, beyond A. */
static int shown(const struct arms_opts *o, int a)
{
	return o->use[a] && !arms[a].reader;
}

/* A heading cell per arm shown ("name suffix"), or with named 0 its
 * separator cell. */
static void arm_columns(const struct arms_opts *o, const char *suffix,
			int named)
{
	for (int a = ARM_C; a < NARMS; a++)
		if (shown(o, a) && named)
			printf(" %s%s |", arms[a].name, suffix);
		else if (shown(o, a))
			printf("---|");
}

/* The median, least and most of n values (n >= 1). */
static double med3(const double *v, uint64_t n, double *lo, double *hi)
{
	double s[MAX_REPS];

	memcpy(s, v, n * sizeof(*v));
	for (uint64_t i = 1; i < n; i++)
		for (uint64_t k = i; k && s[k - 1] > s[k]; k--) {
			double t = s[k];

			s[k] = s[k - 1];
			s[k - 1] = t;
		}
	*lo = s[0];
	*hi = s[n - 1];
	return s[n / 2];
}

/* The device's run by run read rate at ratio i ("device" arm), MiB/s, or
 * 0 when it did not run. */
static double device_run(const struct arms_opts *o, const struct arm_result *r,
			 double *lo, double *hi)
{
	if (!o->use[ARM_DEVICE] || !r[ARM_DEVICE].ok)
		return 0;
	return med3(r[ARM_DEVICE].mibps, o->reps, lo, hi);
}

/* The device alone's median rate at a ratio, MB/s; 0 when not run. */
static double device_mbps(const struct arms_opts *o, const struct arm_result *r)
{
	double lo, hi;

	return device_run(o, r, &lo, &hi) * (double)MiB / 1e6;
}

/* Wall time of the scan per arm, and against the fastest A. */
static void print_wall(const struct arms_opts *o,
		       struct arm_result (*res)[NARMS])
{
	printf("Wall time of the scan, s (median of %" PRIu64 " run%s per arm, "
	       "the arms interleaved run by run); pager arm / A = against the "
	       "A variant that took least time:\n\n| ratio | A (fastest) |",
	       o->reps, o->reps > 1 ? "s" : "");
	arm_columns(o, "", 1);
	arm_columns(o, " / A", 1);
	printf("\n|---|---|");
	arm_columns(o, "", 0);
	arm_columns(o, "", 0);
	printf("\n");
	for (int i = 0; i < o->nratios; i++) {
		int which = 0;
		const struct arm_result *a = best_a(res[i], &which, 1);

		printf("| %.3f | ", o->ratio[i]);
		if (a)
			printf("%.2f (%s) |", a->seconds, arms[which].name + 2);
		else
			printf("- |");
		for (int k = ARM_C; k < NARMS; k++)
			if (shown(o, k))
				printf(res[i][k].ok ? " %.2f |" : " - |",
				       res[i][k].seconds);
		for (int k = ARM_C; k < NARMS; k++)
			if (shown(o, k) && a && res[i][k].ok)
				printf(" %.3f |",
				       res[i][k].seconds / a->seconds);
			else if (shown(o, k))
				printf(" - |");
		printf("\n");
	}
}

/* The pager's fetch rate per arm against the device: fio's best, and the
 * device arm run by run. */
static void print_fetch_rates(const struct arms_opts *o,
			      struct arm_result (*res)[NARMS])
{
	printf("\nThe pager's fetch rate, MiB/s: its fetch_bytes over the "
	       "fetches' own time (from the reserve to the last CONTINUE), "
	       "and over the time inside its backing reads");
	if (o->dev.best > 0)
		printf("; against the device's limit, %.0f MiB/s (fio, "
		       "O_DIRECT, %" PRIu64 " KiB blocks, queue depth %" PRIu64
		       ", the best of every block size and depth before and "
		       "after the sweep)",
		       o->dev.best, o->dev.best_bs >> 10, o->dev.best_qd);
	if (o->use[ARM_DEVICE])
		printf("; against the device run by run (arm 'device', the file "
		       "read once with O_DIRECT in the arms' rotation): median "
		       "of the fetch rates over the median of the device's, "
		       "each with its least and most");
	printf(":\n\n| ratio | arm | fetch MiB/s | read MiB/s | fetch / "
	       "device | read / device | device run by run, MiB/s | fetch, "
	       "run by run | fetch / device run by run |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nratios; i++)
		for (int a = ARM_C; a < NARMS; a++) {
			const struct arm_result *r = &res[i][a];
			double f = fetch_rate(r, 1), d = fetch_rate(r, 0);
			double dlo, dhi, flo, fhi, dv, fv;

			if (!r->ok || !shown(o, a))
				continue;
			printf("| %.3f | %s | %.0f | %.0f | ", o->ratio[i],
			       arms[a].name, f, d);
			if (o->dev.best > 0)
				printf("%.1f %% | %.1f %% | ",
				       100 * f / o->dev.best,
				       100 * d / o->dev.best);
			else
				printf("- | - | ");
			dv = device_run(o, res[i], &dlo, &dhi);
			fv = med3(r->mibps, o->reps, &flo, &fhi);
			if (dv > 0 && fv > 0)
				printf("%.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | "
				       "%.1f %% |\n",
				       dv, dlo, dhi, fv, flo, fhi,
				       100 * fv / dv);
			else
				printf("- | - | - |\n");
		}
}

/* fio's grid of rates, when --device measured it. */
static void print_fio(const struct arms_opts *o)
{
	if (o->dev.best > 0) {
		printf("\nfio, MiB/s by block size and queue depth:\n\n"
		       "| block | qd 1 | qd 2 | qd 4 | qd 8 | qd 16 |\n"
		       "|---|---|---|---|---|---|\n");
		for (int b = 0; b < DEVICE_BS; b++) {
			if (!o->dev.bs[b])
				continue;
			printf("| %" PRIu64 " KiB |", o->dev.bs[b] >> 10);
			for (int q = 0; q < DEVICE_QDS; q++)
				printf(o->dev.mibps[b][q] > 0 ? " %.0f |" :
								" - |",
				       o->dev.mibps[b][q]);
			printf("\n");
		}
	}
}

/* Wall time against A, and the pager's fetch rate against the device. */
static void print_time(const struct arms_opts *o,
		       struct arm_result (*res)[NARMS])
{
	print_wall(o, res);
	print_fetch_rates(o, res);
	print_fio(o);
	printf("\n");
}

/* Decode: tokens/s of every arm, median of the runs and their spread, and
 * the best pager arm over the fastest A. */
static void print_tokens(const struct arms_opts *o,
			 struct arm_result (*res)[NARMS])
{
	printf("Tokens/s (a token = one pass over every layer, y = W x of "
	       "its f32 weights by %" PRIu64 " thread%s; %" PRIu64 " tokens a "
	       "run): the median of %" PRIu64 " run%s, the arms interleaved "
	       "run by run, the least and most in brackets; A = the madvise "
	       "that was fastest:\n\n| ratio | A |",
	       o->threads, o->threads > 1 ? "s" : "", o->passes, o->reps,
	       o->reps > 1 ? "s" : "");
	arm_columns(o, "", 1);
	printf(" best pager / A |\n|---|---|");
	arm_columns(o, "", 0);
	printf("---|\n");
	for (int i = 0; i < o->nratios; i++) {
		double best = 0, fa = 0, t[MAX_REPS], lo, hi;
		int which = 0;
		const struct arm_result *a = best_a(res[i], &which, 1);

		printf("| %.3f |", o->ratio[i]);
		for (int k = -1; k < NARMS; k++) {
			const struct arm_result *r = k < 0 ? a : &res[i][k];

			if (k >= 0 && (k < ARM_C || !shown(o, k)))
				continue;
			if (!r || !r->ok) {
				printf(" - |");
				continue;
			}
			for (uint64_t n = 0; n < o->reps; n++)
				t[n] = (double)o->passes / r->secs[n];
			double m = med3(t, o->reps, &lo, &hi);

			printf(" %.3f (%.3f-%.3f)%s%s |", m, lo, hi,
			       k < 0 ? " " : "",
			       k < 0 ? arms[which].name + 2 : "");
			if (k < 0)
				fa = m;
			else if (arm_is_pager(&arms[k]) && m > best)
				best = m;
		}
		if (fa > 0 && best > 0)
			printf(" %.2f x |\n", best / fa);
		else
			printf(" - |\n");
	}
	printf("\n");
}

void arms_print(const struct arms_opts *o, struct arm_result (*res)[NARMS],
		const char *drops)
{
	char q[3][16];

	title(o);
	printf("Bytes read from the disk by the arm's process (/proc/self/io "
	       "read_bytes, delta around the scan), MiB. Budget = ratio x "
	       "%.1f MiB file; arm A's cgroup limit is the budget + %" PRIu64
	       " MiB; the pager arms' cgroups get budget + %" PRIu64
	       " MiB (the "
	       "pager's budget binds). Page cache emptied before every run "
	       "(%s; mincore: 0 pages cached). Over the scan's own reference "
	       "trace: bound = a true lower bound on any pager's bytes (the "
	       "fractional optimum); FNU = furthest-next-use, Belady's optimum "
	       "on equal chunks but a heuristic on unequal ones (a pager can "
	       "read less); exact = the optimum by search (layouts of at most "
	       "%d chunks). E prefetches %" PRIu64 " chunk%s ahead. A/D after "
	       "pass 1 leaves out the cold first pass.\n\n",
	       mib(o->region), o->margin / MiB, PAGER_SLACK / MiB, drops,
	       BELADY_EXACT_MAX_CHUNKS, o->prefetch,
	       o->prefetch > 1 ? "s" : "");
	printf("| ratio | budget MiB | bound | FNU | exact | A (best) | C | D | "
	       "E | D/bound | D/FNU | E/bound | C/bound | A/D | "
	       "A/D after pass 1 | C misses | device class | device MB/s |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	       "---|---|\n");
	for (int i = 0; i < o->nratios; i++)
		summary_row(o, i, res[i]);
	printf("\n");
	if (o->decode)
		print_tokens(o, res);
	print_time(o, res);
	printf("Every run (pager MiB: the pager's own fetch_bytes, the "
	       "cross-check; faults: the pager's fault messages, or the "
	       "process's major + minor faults for A; evicted: punched by "
	       "the pager, or for A read minus still cached at the end):\n\n"
	       "| ratio | arm | MiB read | x bound | x FNU | x exact | "
	       "pager MiB | faults | evicted MiB | wall s | bad %s |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|\n",
	       o->decode ? "outputs" : "words");
	for (int i = 0; i < o->nratios; i++)
		for (int a = 0; a < NARMS; a++) {
			const struct arm_result *r = &res[i][a];

			if (!r->ok)
				continue;
			printf("| %.3f | %s | %.1f | %s | %s | %s | ",
			       o->ratio[i], arms[a].name, mib(r->io_bytes),
			       quot(q[0], 16, r, r->io_bytes, r,
				    r->bound_bytes),
			       quot(q[1], 16, r, r->io_bytes, r, r->fnu_bytes),
			       r->have_exact ? quot(q[2], 16, r, r->io_bytes, r,
						    r->exact_bytes) :
					       "-");
			if (arm_is_pager(&arms[a]))
				printf("%.1f | ", mib(r->st.fetch_bytes));
			else
				printf("- | ");
			printf("%" PRIu64 " | %.1f | %.2f | %" PRIu64 " |\n",
			       r->faults, mib(r->evicted_bytes), r->seconds,
			       r->mismatches);
		}
	printf("\n");
}
