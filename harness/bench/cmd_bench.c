/* residctl bench: the benchmarks of design.md §8 (arms, decode, fetch, the
 * device alone). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cli.h"
#include "base/commands.h"
#include "bench/bench.h"

static const struct command benches[] = {
	{ "arms", bench_arms, "disk bytes of mmap (A), the pager's arms, OPT" },
	{ "decode", bench_decode, "tokens/s of the arms on a decode workload" },
	{ "device", bench_device, "the device alone under a device class" },
	{ "fetch", bench_fetch, "the pager's fetch path against O_DIRECT" },
	{ "mkmodel", bench_mkmodel, "write a synthetic safetensors model" },
	{ "mkgguf", bench_mkgguf, "write a GGUF model a real engine decodes" },
};

#define NBENCHES (sizeof(benches) / sizeof(benches[0]))

static void usage(void)
{
	printf("usage: residctl bench BENCHMARK [OPTIONS]\n\nbenchmarks:\n");
	command_list(stdout, benches, NBENCHES);
	printf("\nBenchmarks, not tests: they need root (memory cgroups), "
	       "write a backing\nfile on a disk and remove it. 'residctl bench "
	       "BENCHMARK --help' describes one.\n");
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_bad(const char *cmd, const char *what, const char *v, const char *fix)
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
					     command_find(benches, NBENCHES,
							  argv[1]);

	if (argc < 2) {
		fprintf(stderr,
			"residctl bench: name a benchmark, arms, decode, "
			"device, fetch, mkmodel or mkgguf; see residctl bench --help\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage();
		return 0;
	}
	if (b)
		return b->fn(argc - 1, argv + 1);
	fprintf(stderr,
		"residctl bench: '%s' is not a benchmark; use arms, "
		"decode, device, fetch, mkmodel or mkgguf\n",
		argv[1]);
	return 2;
}
