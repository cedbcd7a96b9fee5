/* residctl bench: the benchmarks of SPEC §8 (arms, fetch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "commands.h"

static const char usage[] =
	"usage: residctl bench arms|decode|fetch|mkmodel [OPTIONS]\n"
	"  arms   bytes read from the disk by the kernel's mmap (A), the pager\n"
	"         with lru (C), with the declared order (D), with prefetch (E),\n"
	"         against Belady (OPT), on a cyclic layer scan, budgets swept\n"
	"  decode tokens/s of the same arms on a decode-shaped workload: each\n"
	"         layer's f32 weights multiplied into a vector, a pass a token\n"
	"  fetch  per-chunk fetch latency and throughput of the pager against\n"
	"         a plain O_DIRECT pread, with a breakdown of each fetch\n"
	"  mkmodel  writes a synthetic safetensors model (a layout for\n"
	"         'bench arms --table' and 'verify --table')\n"
	"  Benchmarks, not tests: they need root (memory cgroups), write a\n"
	"  backing file on a disk and remove it. 'residctl bench arms --help'.\n";

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int bench_bad(const char *cmd, const char *what, const char *v,
	      const char *fix)
{
	fprintf(stderr, "residctl bench %s: bad %s '%s'; %s\n", cmd, what, v,
		fix);
	return 2;
}

int bench_sizes(const char *s, uint64_t *out, int max)
{
	char buf[256], *save = NULL;
	int k = 0;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save))
		if (k == max || cli_bytes(t, &out[k++]))
			return -1;
	return k ? k : -1;
}

int cmd_bench(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "residctl bench: name a benchmark, arms, decode, "
			"fetch or mkmodel; see residctl bench --help\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "arms"))
		return bench_arms(argc - 1, argv + 1);
	if (!strcmp(argv[1], "decode"))
		return bench_decode(argc - 1, argv + 1);
	if (!strcmp(argv[1], "fetch"))
		return bench_fetch(argc - 1, argv + 1);
	if (!strcmp(argv[1], "mkmodel"))
		return bench_mkmodel(argc - 1, argv + 1);
	fprintf(stderr, "residctl bench: '%s' is not a benchmark; use arms, "
		"decode, fetch or mkmodel\n", argv[1]);
	return 2;
}
