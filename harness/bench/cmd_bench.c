/* residctl bench: the benchmarks of SPEC §8 (arms, fetch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "commands.h"

static const struct command benches[] = {
	{ "arms", bench_arms, "bytes read from the disk by the kernel's mmap "
	  "(A), the pager with lru (C), with the declared order (D), with "
	  "prefetch (E), against Belady (OPT), on a cyclic layer scan, budgets "
	  "swept" },
	{ "decode", bench_decode, "tokens/s of the same arms on a "
	  "decode-shaped workload: each layer's f32 weights multiplied into a "
	  "vector, a pass a token" },
	{ "fetch", bench_fetch, "per-chunk fetch latency and throughput of the "
	  "pager against a plain O_DIRECT pread, with a breakdown of each "
	  "fetch" },
	{ "mkmodel", bench_mkmodel, "writes a synthetic safetensors model (a "
	  "layout for 'bench arms --table' and 'verify --table')" },
};

#define NBENCHES (sizeof(benches) / sizeof(benches[0]))

static void usage(void)
{
	printf("usage: residctl bench BENCHMARK [OPTIONS]\n");
	command_list(stdout, benches, NBENCHES);
	printf("  Benchmarks, not tests: they need root (memory cgroups), "
	       "write a\n  backing file on a disk and remove it. 'residctl "
	       "bench arms --help'.\n");
}

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
	const struct command *b = argc < 2 ? NULL :
		command_find(benches, NBENCHES, argv[1]);

	if (argc < 2) {
		fprintf(stderr, "residctl bench: name a benchmark, arms, decode, "
			"fetch or mkmodel; see residctl bench --help\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage();
		return 0;
	}
	if (b)
		return b->fn(argc - 1, argv + 1);
	fprintf(stderr, "residctl bench: '%s' is not a benchmark; use arms, "
		"decode, fetch or mkmodel\n", argv[1]);
	return 2;
}
