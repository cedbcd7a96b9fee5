/* Measures the memory the pager needs beyond its budget (design.md §9): in a
 * memory cgroup of its own (v1, given as argv[1]), the peak of the cgroup's
 * usage while a synthetic region is read twice, less the usage before
 * resid_open, less the most bytes ever resident. Prints one line with that
 * and resid_headroom() for the same configuration. With a 7th argument it
 * first sets the cgroup's limit to its usage + budget (+ resid_headroom()
 * + 512 KiB with "headroom"): the limit check. Exit 3 when resid_open refuses. Public
 * API only: built against the installed library by scripts/headroom.sh. */
#include <resid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long cg_read(const char *dir, const char *file)
{
	char path[512];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &v) != 1) {
		fprintf(stderr, "headroom: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	return v;
}

static void cg_write(const char *dir, const char *file, const char *v)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (!f || fputs(v, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "headroom: cannot write %s\n", path);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct resid_config cfg;
	struct resid_stats s;
	char err[RESID_ERRLEN];
	volatile unsigned sum = 0;

	if (argc != 6 && argc != 7) {
		fprintf(stderr,
			"usage: headroom CGROUP_DIR REGION CHUNK BUDGET "
			"WORKERS [budget|headroom] (bytes, bytes, bytes, "
			"count, the limit to set)\n");
		return 2;
	}
	resid_config_init(&cfg);
	cfg.backing = RESID_BACKING_SYNTHETIC;
	cfg.region_len = strtoull(argv[2], NULL, 0);
	cfg.chunk_size = strtoull(argv[3], NULL, 0);
	cfg.budget_bytes = strtoull(argv[4], NULL, 0);
	cfg.fetch_workers = (uint32_t)strtoul(argv[5], NULL, 0);
	unsigned long long u0 = cg_read(argv[1], "memory.usage_in_bytes");

	if (argc == 7) {
		/* 512 KiB for what resid_open itself charges before its
		 * check reads the usage again. */
		unsigned long long lim = u0 + cfg.budget_bytes +
					 (strcmp(argv[6], "headroom") ?
						  0 :
						  resid_headroom(&cfg) +
							  (512 << 10));
		char v[32];

		snprintf(v, sizeof(v), "%llu", (lim + 4095) / 4096 * 4096);
		cg_write(argv[1], "memory.limit_in_bytes", v);
	}

	cg_write(argv[1], "memory.max_usage_in_bytes", "0");
	struct resid_region *r = resid_open(&cfg, err);

	if (!r) {
		printf("refused: %s\n", err);
		return 3;
	}
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t c = 0; c < resid_nchunks(r); c++) {
			uint64_t off, len;

			if (resid_chunk_range(r, c, &off, &len) < 0 ||
			    resid_notify_access(r, c) < 0)
				return 2;
			for (uint64_t i = 0; i < len; i += 4096)
				sum += resid_base(r)[off + i];
		}
	resid_get_stats(r, &s);
	unsigned long long peak = cg_read(argv[1], "memory.max_usage_in_bytes");

	resid_close(r);
	printf("region %s chunk %s budget %s workers %s: usage before open "
	       "%llu, peak %llu, resident max %llu, overhead %lld, "
	       "resid_headroom %llu\n",
	       argv[2], argv[3], argv[4], argv[5], u0, peak,
	       (unsigned long long)s.resident_max,
	       (long long)(peak - u0 - cfg.budget_bytes),
	       (unsigned long long)resid_headroom(&cfg));
	return 0;
}
