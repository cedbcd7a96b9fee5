/* T-5 Belady sanity (design.md §5.3): belady() against the naive oracle on random
 * traces, strict cyclic scans against the floor W + (P-1)*max(W-K, 0), and a
 * fault trace read back from a file must be refused. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/belady.h"
#include "analysis/belady_naive.h"
#include "analysis/trace.h"
#include "base/rng.h"
#include "resid.h"
#include "scenarios/scenario.h"

/* Counts a mismatch; the first one is the failure reason. */
__attribute__((format(printf, 3, 4))) static void
mismatch(const struct run_opts *o, struct scen_result *res, const char *fmt,
	 ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (res->mismatches++ == 0)
		scen_fail(res, "%s (seed %" PRIu64 ")", msg, o->seed);
	if (o->verbose)
		fprintf(stderr, "T-5: %s\n", msg);
}

/* Solves t both ways; 0 with *fast filled when they agree. */
static int agree(const struct run_opts *o, struct scen_result *res,
		 const char *what, const struct trace *t, uint64_t cap,
		 struct belady_result *fast)
{
	struct belady_result slow;
	char e1[256], e2[256];
	int r1, r2;

	r1 = belady(t, cap, fast, e1, sizeof(e1));
	r2 = belady_naive(t, cap, &slow, e2, sizeof(e2));
	res->checks++;
	if (r1 || r2) {
		mismatch(o, res, "%s: a solver refused a valid trace: %s", what,
			 r1 ? e1 : e2);
		return -1;
	}
	if (memcmp(fast, &slow, sizeof(slow)) ||
	    fast->hits + fast->misses != fast->accesses) {
		mismatch(o, res,
			 "%s (%" PRIu32 " chunks, %" PRIu64
			 " accesses, capacity %" PRIu64 "): belady %" PRIu64
			 " misses/%" PRIu64 " bytes, naive %" PRIu64
			 "/%" PRIu64,
			 what, t->nchunks, t->n, cap, fast->misses,
			 fast->bytes_missed, slow.misses, slow.bytes_missed);
		return -1;
	}
	return 0;
}

static int random_traces(const struct run_opts *o, struct scen_result *res)
{
	uint64_t count = o->profile == PROFILE_FULL ? 10000 : 1000;
	uint64_t rng = o->seed, cap, i;
	struct belady_result r;
	struct trace t;
	char what[48];

	for (i = 0; i < count; i++) {
		memset(&t, 0, sizeof(t));
		/* One in four has unequal chunks. */
		if (belady_random_trace(&rng, 40, 2000, i % 4 == 3, &t, &cap)) {
			trace_free(&t);
			scen_fail(res,
				  "out of memory for random trace %" PRIu64, i);
			return -1;
		}
		snprintf(what, sizeof(what), "random trace %" PRIu64, i);
		(void)agree(o, res, what, &t, cap, &r); /* counted in res */
		trace_free(&t);
	}
	scen_count(res, "traces", count);
	scen_count(res, "unequal", count / 4);
	return 0;
}

static int cyclic_scans(const struct run_opts *o, struct scen_result *res)
{
	static const uint32_t ws[] = { 1, 2, 3, 5, 8, 16, 33 };
	static const uint32_t ps[] = { 1, 2, 5 };
	uint64_t floor, floors = 0;
	struct belady_result r;
	struct trace t;
	uint32_t wi, pi, ki, w, p, ks[5];
	char what[64];

	for (wi = 0; wi < sizeof(ws) / sizeof(ws[0]); wi++) {
		w = ws[wi];
		ks[0] = 1;
		ks[1] = w > 1 ? w - 1 : 1;
		ks[2] = w;
		ks[3] = w + 3;
		ks[4] = w > 1 ? w / 2 : 1;
		for (pi = 0; pi < sizeof(ps) / sizeof(ps[0]); pi++) {
			p = ps[pi];
			memset(&t, 0, sizeof(t));
			if (belady_cyclic_trace(w, p, RESID_PAGE, &t)) {
				trace_free(&t);
				scen_fail(res,
					  "out of memory for a cyclic scan of %" PRIu32,
					  w);
				return -1;
			}
			for (ki = 0; ki < 5; ki++) {
				snprintf(what, sizeof(what),
					 "cyclic W=%" PRIu32 " P=%" PRIu32
					 " K=%" PRIu32,
					 w, p, ks[ki]);
				if (agree(o, res, what, &t,
					  (uint64_t)ks[ki] * RESID_PAGE, &r))
					continue;
				floor = w +
					(uint64_t)(p - 1) *
						(ks[ki] < w ? w - ks[ki] : 0);
				res->checks++;
				floors++;
				if (r.misses < floor)
					mismatch(o, res,
						 "%s: %" PRIu64
						 " misses, below the floor %" PRIu64,
						 what, r.misses, floor);
				/* Exact where the optimum is obvious: all fits, or one slot. */
				if ((ks[ki] >= w && r.misses != w) ||
				    (ks[ki] == 1 && w > 1 &&
				     r.misses != (uint64_t)w * p))
					mismatch(o, res,
						 "%s: %" PRIu64
						 " misses, the optimum is %" PRIu64,
						 what, r.misses,
						 ks[ki] >= w ? (uint64_t)w :
							       (uint64_t)w * p);
			}
			trace_free(&t);
		}
	}
	scen_count(res, "floors", floors);
	return 0;
}

/* Writes a fault trace, reads it back: belady() must refuse it, and accept
 * the same accesses relabelled as a reference trace. */
static int fault_refused(const struct run_opts *o, struct scen_result *res)
{
	const char *dir = getenv("TMPDIR");
	struct trace t = { 0 }, back = { 0 };
	struct belady_result r;
	char path[4096], err[256];
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/residctl-t5-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		scen_fail(res,
			  "cannot create a temp file in %s; set TMPDIR to a writable directory",
			  dir && *dir ? dir : "/tmp");
		return -1;
	}
	if (close(fd) || belady_cyclic_trace(4, 3, RESID_PAGE, &t)) {
		scen_fail(res,
			  "temp file %s or memory: cannot set up the fault trace",
			  path);
		goto out;
	}
	t.kind = TRACE_FAULT;
	if (trace_write(path, &t, err, sizeof(err)) ||
	    trace_read(path, &back, err, sizeof(err))) {
		scen_fail(res, "fault trace round trip: %s", err);
		goto out;
	}
	res->checks += 2;
	if (back.kind != TRACE_FAULT ||
	    belady(&back, 2 * RESID_PAGE, &r, err, sizeof(err)) == 0)
		mismatch(o, res,
			 "a fault trace written and read back was accepted");
	back.kind = TRACE_REFERENCE;
	if (belady(&back, 2 * RESID_PAGE, &r, err, sizeof(err)))
		mismatch(o, res,
			 "the same accesses as a reference trace were refused: %s",
			 err);
	scen_count(res, "refusals", 1);
	rc = 0;
out:
	if (unlink(path) && rc == 0) {
		scen_fail(res, "cannot remove temp file %s", path);
		rc = -1;
	}
	trace_free(&t);
	trace_free(&back);
	return rc;
}

static int t5_run(const struct run_opts *o, struct scen_result *res)
{
	uint64_t rng = o->seed ^ 0x5eed, cap, i,
		 n = o->profile == PROFILE_FULL ? 2000 : 200;
	struct belady_result fnu, lb, ex;
	struct trace t;
	char err[256];

	if (random_traces(o, res) || cyclic_scans(o, res) ||
	    fault_refused(o, res))
		return -1;
	/* The lower bound <= the exact optimum <= furthest-next-use, on small
	 * random traces, half of them with unequal chunks. */
	for (i = 0; i < n; i++) {
		memset(&t, 0, sizeof(t));
		if (belady_random_trace(&rng, BELADY_EXACT_MAX_CHUNKS - 4, 40,
					i % 2, &t, &cap)) {
			trace_free(&t);
			scen_fail(res, "out of memory for small trace %" PRIu64,
				  i);
			return -1;
		}
		res->checks++;
		if (belady(&t, cap, &fnu, err, sizeof(err)) ||
		    belady_bound(&t, cap, &lb, err, sizeof(err)) ||
		    belady_exact(&t, cap, &ex, err, sizeof(err)))
			mismatch(o, res,
				 "small trace %" PRIu64
				 ": a solver refused a valid trace: %s",
				 i, err);
		else if (lb.bytes_missed > ex.bytes_missed ||
			 ex.bytes_missed > fnu.bytes_missed)
			mismatch(o, res,
				 "small trace %" PRIu64 " (%" PRIu32
				 " chunks, capacity %" PRIu64
				 "): bound %" PRIu64 ", exact %" PRIu64
				 ", furthest-next-use %" PRIu64
				 " bytes; want bound <= exact <= furthest-next-use",
				 i, t.nchunks, cap, lb.bytes_missed,
				 ex.bytes_missed, fnu.bytes_missed);
		trace_free(&t);
	}
	scen_count(res, "bound_exact_fnu", n);
	return 0;
}

/* No kernel in it: `check --sim` runs it as it is. */
const struct scenario scenario_t5 = {
	.id = "T-5",
	.title = "Belady sanity",
	.run = t5_run,
	.no_seam = 1,
};
