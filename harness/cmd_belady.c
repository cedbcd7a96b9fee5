/* residctl belady TRACE --capacity BYTES: the offline optimum over a
 * reference trace the workload wrote (SPEC §2.5). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belady.h"
#include "cli.h"
#include "commands.h"
#include "trace.h"

static const char usage[] =
	"usage: residctl belady TRACE --capacity BYTES\n"
	"  Belady's optimum (evict the furthest next use) over a reference trace\n"
	"  the workload wrote (format: harness/trace.h). BYTES takes a K, M or G\n"
	"  suffix (x1024), e.g. 64M, and must hold the largest chunk. Prints\n"
	"  accesses, hits, misses and bytes missed. A fault trace is refused: it\n"
	"  is the pager's own output, and a bound computed from it is circular.\n";

int cmd_belady(int argc, char **argv)
{
	const char *path = NULL, *capstr = NULL;
	struct belady_result r;
	struct trace t;
	uint64_t cap;
	static const struct option opts[] = {
		CLI_HELP_OPTION,
		CLI_VALUE("capacity", 'c'),
		{ 0 },
	};
	struct cli c = { .cmd = "belady", .usage = usage, .argc = argc,
			 .argv = argv, .opts = opts, .operands = 1 };
	char err[512];
	int opt;

	while ((opt = cli_next(&c)) != CLI_END) {
		if (opt == CLI_EXIT)
			return c.status;
		if (opt == 'c')
			capstr = c.arg;
		else
			path = c.arg;
	}
	if (!path) {
		fprintf(stderr, "residctl belady: no TRACE given; usage: residctl belady TRACE --capacity BYTES\n");
		return 2;
	}
	if (!capstr) {
		fprintf(stderr, "residctl belady: no --capacity given; e.g. --capacity 64M\n");
		return 2;
	}
	if (cli_bytes(capstr, &cap)) {
		fprintf(stderr, "residctl belady: bad capacity '%s'; give bytes with an optional K, M or G, e.g. 64M\n", capstr);
		return 2;
	}
	if (trace_read(path, &t, err, sizeof(err))) {
		fprintf(stderr, "residctl belady: %s\n", err);
		return 2;
	}
	if (belady(&t, cap, &r, err, sizeof(err))) {
		fprintf(stderr, "residctl belady: %s: %s\n", path, err);
		trace_free(&t);
		return 2;
	}
	trace_free(&t);
	printf("trace %s\ncapacity %" PRIu64 "\naccesses %" PRIu64 "\nhits %" PRIu64
	       "\nmisses %" PRIu64 "\nbytes_missed %" PRIu64 "\n",
	       path, cap, r.accesses, r.hits, r.misses, r.bytes_missed);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "residctl belady: cannot write the result: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
