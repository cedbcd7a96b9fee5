/* residctl belady TRACE --capacity BYTES: the offline references over a
 * reference trace the workload wrote (design.md §2.5, §8): furthest-next-use,
 * the lower bound, and the exact optimum of small traces. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/belady.h"
#include "analysis/trace.h"
#include "base/cli.h"

static const char about[] =
	"  Over a reference trace the workload wrote (format: harness/analysis/trace.h),\n"
	"  at a capacity of BYTES (K, M or G suffix, x1024; at least the largest\n"
	"  chunk), prints misses and bytes missed of:\n"
	"    fnu    furthest-next-use (Belady's rule): the optimum when chunks\n"
	"           are equal, a heuristic when they are not (a pager can read\n"
	"           fewer bytes)\n"
	"    bound  a true lower bound on the bytes missed by any schedule (the\n"
	"           same rule where a chunk may stay partly resident)\n"
	"    exact  the optimum by search, for traces of at most 12 chunks\n"
	"           (the line says when the trace is too large)\n"
	"  A fault trace is refused: it is the pager's own output, and a bound\n"
	"  computed from it is circular.\n";

static int equal_sizes(const struct trace *t)
{
	for (uint32_t c = 1; c < t->nchunks; c++)
		if (t->sizes[c] != t->sizes[0])
			return 0;
	return 1;
}

static void print_result(const char *name, const struct belady_result *r)
{
	printf("%s misses %" PRIu64 " hits %" PRIu64 " bytes_missed %" PRIu64
	       "\n",
	       name, r->misses, r->hits, r->bytes_missed);
}

int cmd_belady(int argc, char **argv)
{
	const char *path = NULL;
	struct belady_result r, lb, ex;
	struct trace t;
	uint64_t cap = 0;
	char err[512];
	struct cli_opt opts[] = {
		{ "capacity", CLI_BYTES, &cap, .arg = "BYTES", .min = 1,
		  .what = "capacity",
		  .fix = "give bytes with an optional K, M or G, e.g. 64M",
		  .help = "the cache's capacity, at least the largest chunk" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "belady",
		.synopsis = "TRACE",
		.about = about,
		.opts = opts,
		.operands = 1,
		.required = 1,
		.operand = { .type = CLI_TEXT, .dst = &path },
	};
	int rc = cli_parse(&spec, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	if (!cap) {
		fprintf(stderr, "residctl belady: no --capacity given; e.g. "
				"--capacity 64M\n");
		return 2;
	}
	if (trace_read(path, &t, err, sizeof(err))) {
		fprintf(stderr, "residctl belady: %s\n", err);
		return 2;
	}
	if (belady(&t, cap, &r, err, sizeof(err)) ||
	    belady_bound(&t, cap, &lb, err, sizeof(err))) {
		fprintf(stderr, "residctl belady: %s: %s\n", path, err);
		trace_free(&t);
		return 2;
	}
	printf("trace %s\ncapacity %" PRIu64 "\naccesses %" PRIu64
	       "\nchunks %" PRIu32 " (%s)\n",
	       path, cap, r.accesses, t.nchunks,
	       equal_sizes(&t) ? "equal: fnu is the optimum" :
				 "unequal: fnu is a heuristic");
	print_result("fnu", &r);
	print_result("bound", &lb);
	if (t.nchunks > BELADY_EXACT_MAX_CHUNKS)
		printf("exact not computed: %" PRIu32
		       " chunks, the search takes at most %d\n",
		       t.nchunks, BELADY_EXACT_MAX_CHUNKS);
	else if (belady_exact(&t, cap, &ex, err, sizeof(err)))
		printf("exact not computed: %s\n", err);
	else
		print_result("exact", &ex);
	trace_free(&t);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr,
			"residctl belady: cannot write the result: %s\n",
			strerror(errno));
		return 1;
	}
	return 0;
}
