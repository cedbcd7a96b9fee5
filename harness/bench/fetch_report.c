/* The fetch benchmark's tables (markdown on stdout), from each mode's
 * median run, and every run as CSV. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/fetch.h"

/* Milliseconds per fetch of a phase counter. */
static double per_fetch(const struct fres *r, uint64_t ns)
{
	return r->d.fetches ? (double)ns / (double)r->d.fetches / 1e6 : 0;
}

/* For the tables, each mode's median rep by throughput: a noisy moment on
 * a shared machine moves one rep, not the median. */
static void pick_medians(const struct fetch_opts *o, struct fres *all,
			 struct fres (*t)[NMODES])
{
	for (int i = 0; i < o->nsizes; i++)
		for (int k = 0; k < NMODES; k++) {
			double v[100];
			uint64_t below, reps = o->reps;

			for (uint64_t r = 0; r < reps; r++)
				v[r] = mibps(fetch_run_of(all, o, i, k, r),
					     o->size[i], k == M_PREFETCH);
			for (uint64_t r = 0; r < reps; r++) {
				below = 0;
				for (uint64_t q = 0; q < reps; q++)
					below += v[q] < v[r] ||
						 (v[q] == v[r] && q < r);
				if (below == reps / 2)
					t[i][k] = *fetch_run_of(all, o, i, k,
								r);
			}
		}
}

/* The read's part of the application's wait: what a plain read pays of
 * it, independent of how fast the disk was in that run. */
static double read_share(const struct fres *r)
{
	return mean_ms(r) > 0 ? per_fetch(r, r->d.read_ns) / mean_ms(r) : 0;
}

/* Each chunk size's fetch against the plain O_DIRECT read. */
static void print_limit(const struct fetch_opts *o, struct fres (*t)[NMODES])
{
	printf("### Fetch path against the platform limit\n\n"
	       "Per chunk, the mean over a run of the median of %" PRIu64
	       " runs "
	       "(by throughput) of a %" PRIu64 " MiB file read in order (the "
	       "first %d chunks of a run fill the budget and are not timed). "
	       "plain: O_DIRECT pread into a memfd punched before every read "
	       "(the platform limit); warm: into populated "
	       "pages; pager: a fault's fetch as the application sees it "
	       "(budget 2 chunks, a punch on the fault's path); ahead: the "
	       "same with evict ahead of need; prefetch: depth %" PRIu64
	       ", %" PRIu64
	       " workers, MiB/s over the scan. Read share: the pager's "
	       "read phase over the application's wait (does not depend on the "
	       "disk's speed in that run, unlike a ratio of two runs). Reads at "
	       "once: the most "
	       "backing reads in flight together in the prefetch run, and its "
	       "summed read time over the time any read ran (a wrapper of "
	       "the Linux seam's backing read). Threads: %s.\n\n",
	       o->reps, o->total / MiB, WARMUP, o->prefetch, o->workers,
	       o->pin ? "the application on one CPU, the pager's threads on "
			"the others (where there are 2 or more)" :
			"not pinned");
	printf("| chunk MiB | plain ms | plain MiB/s | warm MiB/s | pager ms | "
	       "pager / plain | ahead ms | ahead / plain | ahead gain | "
	       "read share: pager / ahead | prefetch MiB/s | prefetch / plain "
	       "| reads at once: max / mean |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nsizes; i++) {
		uint64_t s = o->size[i];
		const struct fres *m = t[i];
		double plain = mibps(&m[M_PLAIN], s, 0);
		double pf = mibps(&m[M_PREFETCH], s, 1);

		printf("| %" PRIu64 " | %.2f | %.0f | %.0f | %.2f | %.1f %% | "
		       "%.2f | %.1f %% | %.1f %% | %.0f %% / %.0f %% | %.0f | "
		       "%.1f %% | %" PRIu64 " / %.2f |\n",
		       s / MiB, mean_ms(&m[M_PLAIN]), plain,
		       mibps(&m[M_WARM], s, 0), mean_ms(&m[M_PAGER]),
		       100 * mibps(&m[M_PAGER], s, 0) / plain,
		       mean_ms(&m[M_AHEAD]),
		       100 * mibps(&m[M_AHEAD], s, 0) / plain,
		       100 * (1 - mean_ms(&m[M_AHEAD]) / mean_ms(&m[M_PAGER])),
		       100 * read_share(&m[M_PAGER]),
		       100 * read_share(&m[M_AHEAD]), pf, 100 * pf / plain,
		       m[M_PREFETCH].reads_max,
		       m[M_PREFETCH].read_busy_ns ?
			       (double)m[M_PREFETCH].read_sum_ns /
				       (double)m[M_PREFETCH].read_busy_ns :
			       0);
	}
}

/* The fault's wait on a predicted chunk against the read itself. */
static void print_wait(const struct fetch_opts *o, struct fres (*t)[NMODES])
{
	printf("\nThe fault's wait on a predicted chunk (ahead: room made "
	       "before the fault) against the read itself, ms per chunk: the "
	       "plain O_DIRECT read of the same bytes, and the pager's own read "
	       "phase; first byte: the wait before the application can start "
	       "(the chunk is mapped %s):\n\n"
	       "| chunk MiB | plain read | ahead: whole chunk | ahead: first byte "
	       "| pager's read phase | wait / plain read | wait / read phase "
	       "|\n|---|---|---|---|---|---|---|\n",
	       o->piece ? "piece by "
			  "piece as it is read" :
			  "whole");
	for (int i = 0; i < o->nsizes; i++) {
		const struct fres *a = &t[i][M_AHEAD], *p = &t[i][M_PLAIN];
		double rd = per_fetch(a, a->d.read_ns);

		printf("| %" PRIu64
		       " | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f "
		       "|\n",
		       o->size[i] / MiB, mean_ms(p), mean_ms(a),
		       a->samples ?
			       (double)a->first_ns / (double)a->samples / 1e6 :
			       0,
		       rd, mean_ms(p) > 0 ? mean_ms(a) / mean_ms(p) : 0,
		       rd > 0 ? mean_ms(a) / rd : 0);
	}
}

/* One fetch broken down by the pager's phase timers. */
static void print_phases(const struct fetch_opts *o, struct fres (*t)[NMODES])
{
	printf("\nOne fetch broken down, ms (pager phase timers): reserve "
	       "includes the punch of the victim when the fetch had to make "
	       "room; the rest of the fault path is the application's wait "
	       "minus reserve, read and CONTINUE (fault delivery, dispatcher, "
	       "queue, worker wake-up); it comes out below 0 when the faulter, "
	       "woken by CONTINUE, takes the worker's CPU before the worker "
	       "reads its clock (the CONTINUE timer then runs on past the "
	       "wake; prefetches, with no faulter, show CONTINUE alone). After "
	       "CONTINUE: commit, policy, stats, the prefetch top-up, off the "
	       "faulter's path. Punch per page: plain punches a populated "
	       "memfd between reads.\n\n"
	       "| chunk MiB | mode | app wait | reserve | read | CONTINUE | "
	       "rest of fault path | after CONTINUE | CONTINUE ns/page | "
	       "punch us/page |\n|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < o->nsizes; i++) {
		uint64_t s = o->size[i], pages = s / RESID_PAGE;
		const struct fres *p = &t[i][M_PLAIN];

		printf("| %" PRIu64
		       " | plain | %.2f | - | %.2f | - | - | - | - "
		       "| %.3f |\n",
		       s / MiB, mean_ms(p), mean_ms(p),
		       p->punched ?
			       (double)p->punch_ns / (double)p->punched / 1e3 :
			       0);
		for (int k = M_PAGER; k <= M_PREFETCH; k++) {
			const struct fres *r = &t[i][k];
			double res_ = per_fetch(r, r->d.reserve_ns);
			double rd = per_fetch(r, r->d.read_ns);
			double co = per_fetch(r, r->d.continue_ns);
			uint64_t evp = r->d.evicted_bytes / RESID_PAGE;
			char wait[16] = "-", rest[16] = "-";

			/* A prefetch mostly has no faulter waiting for it. */
			if (k != M_PREFETCH) {
				snprintf(wait, sizeof(wait), "%.2f",
					 mean_ms(r));
				snprintf(rest, sizeof(rest), "%.3f",
					 mean_ms(r) - res_ - rd - co);
			}
			printf("| %" PRIu64 " | %s | %s | %.3f | %.2f | %.3f | "
			       "%s | %.3f | %.0f | %.3f |\n",
			       s / MiB, mode_name[k], wait, res_, rd, co, rest,
			       per_fetch(r, r->d.fetch_ns) - res_ - rd - co,
			       r->d.fetches ?
				       (double)r->d.continue_ns /
					       (double)(r->d.fetches * pages) :
				       0,
			       evp ? (double)r->d.punch_ns / (double)evp / 1e3 :
				     0);
		}
	}
	printf("\n");
}

static void print_tables(const struct fetch_opts *o, struct fres (*t)[NMODES])
{
	print_limit(o, t);
	print_wait(o, t);
	print_phases(o, t);
}

/* The device alone (mode device) at size i: the median of its runs, MB/s;
 * 0 when the mode did not run. */
static double device_mbps(const struct fetch_opts *o, struct fres *all, int i)
{
	double v[100];

	if (!(o->modes & 1u << M_DEVICE))
		return 0;
	for (uint64_t r = 0; r < o->reps; r++)
		v[r] = mibps(fetch_run_of(all, o, i, M_DEVICE, r), o->size[i],
			     0);
	qsort(v, o->reps, sizeof(v[0]), bench_cmp_double);
	return v[o->reps / 2] * (double)MiB / 1e6;
}

static void csv_row(FILE *f, uint64_t size, int k, uint64_t rep,
		    const struct fres *r)
{
	fprintf(f,
		"%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%.1f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
		size, mode_name[k], rep + 1, r->samples,
		r->samples ? r->lat_ns / r->samples : 0, r->lat_min_ns,
		mibps(r, size, k == M_PREFETCH), r->wall_ns, r->d.fetches,
		r->d.reserve_ns, r->d.read_ns, r->d.continue_ns, r->d.fetch_ns,
		r->d.punch_ns, r->d.evictions, r->d.evict_ahead, r->punched,
		r->punch_ns, r->reads_max, r->read_sum_ns, r->read_busy_ns,
		r->io_bytes, r->fetch_bytes, r->bad,
		r->samples ? r->first_ns / r->samples : 0);
}

/* Every run, not only the medians the tables show. */
int fetch_write_csv(const struct fetch_opts *o, struct fres *all)
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", o->csv);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "residctl bench fetch: cannot write %s: %s\n",
			o->csv, strerror(errno));
		return -1;
	}
	fputs("chunk_bytes,mode,rep,samples,lat_mean_ns,lat_min_ns,mib_s,"
	      "wall_ns,fetches,reserve_ns,read_ns,continue_ns,fetch_ns,"
	      "punch_ns,evictions,evict_ahead,punched_pages_plain,"
	      "punch_ns_plain,reads_max,read_sum_ns,read_busy_ns,io_bytes,"
	      "fetch_bytes,bad,first_byte_ns,device_class,device_mbps\n",
	      f);
	for (int i = 0; i < o->nsizes; i++) {
		double dev = device_mbps(o, all, i);

		for (int k = 0; k < NMODES; k++)
			for (uint64_t rep = 0;
			     rep < o->reps && o->modes & 1u << k; rep++) {
				csv_row(f, o->size[i], k, rep,
					fetch_run_of(all, o, i, k, rep));
				fprintf(f, "%s,", devclass_label(&o->cls.dc));
				if (dev > 0)
					fprintf(f, "%.1f", dev);
				fputc('\n', f);
			}
	}
	if (fclose(f) || rename(tmp, o->csv)) {
		fprintf(stderr, "residctl bench fetch: cannot write %s\n",
			o->csv);
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The huge path against the 4 KiB one and the device (the fetch target): each
 * mode's fetch rate and its share of the device's, run by run
 * interleaved; "-" for a mode not run. */
static void print_huge(const struct fetch_opts *o, struct fres (*t)[NMODES])
{
	static const int k[] = { M_PAGER, M_AHEAD, M_HUGE, M_HUGE_AHEAD };

	printf("Huge folios in B: each mode's fetch rate (median of %" PRIu64
	       " reps) and its share of the device's (O_DIRECT into one reused "
	       "huge-page buffer), the modes run alternately, rep by rep.\n\n"
	       "| chunk MiB | device MiB/s | pager (4 KiB) | ahead (4 KiB) | "
	       "huge | huge-ahead |\n|---|---|---|---|---|---|\n",
	       o->reps);
	for (int i = 0; i < o->nsizes; i++) {
		uint64_t s = o->size[i];
		double dev = mibps(&t[i][M_DEVICE], s, 0);

		printf("| %" PRIu64 " | %.0f |", s / MiB, dev);
		for (int q = 0; q < 4; q++) {
			double v = mibps(&t[i][k[q]], s, 0);

			if (o->modes & 1u << k[q])
				printf(" %.0f MiB/s, %.1f %% |", v,
				       dev > 0 ? 100 * v / dev : 0);
			else
				printf(" - |");
		}
		printf("\n");
	}
	printf("\n");
}

void fetch_print(const struct fetch_opts *o, struct fres *all)
{
	struct fres(*t)[NMODES] = calloc((size_t)o->nsizes, sizeof(*t));

	if (!t) {
		fprintf(stderr, "residctl bench fetch: no memory for the "
				"tables\n");
		return;
	}
	pick_medians(o, all, t);
	printf("Device class %s; the device alone (mode device, O_DIRECT), "
	       "median MB/s:",
	       devclass_label(&o->cls.dc));
	for (int i = 0; i < o->nsizes; i++)
		if (device_mbps(o, all, i) > 0)
			printf(" %" PRIu64 " MiB chunks %.1f;",
			       o->size[i] / MiB, device_mbps(o, all, i));
		else
			printf(" %" PRIu64 " MiB chunks -;", o->size[i] / MiB);
	printf("\n\n");
	if ((o->modes & MODES_CLASSIC) == MODES_CLASSIC)
		print_tables(o, t);
	if (o->modes & 1u << M_DEVICE)
		print_huge(o, t);
	free(t);
}
