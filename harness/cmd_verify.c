/* residctl verify: reads a file (or the synthetic source) through the pager
 * under a budget and checks every byte against pread of the file (or the
 * content function). The same region options a user of libresid sets. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "resid_harness.h"

static const char usage[] =
	"usage: residctl verify (FILE | --synthetic BYTES) [--chunk BYTES]\n"
	"                       [--budget BYTES] [--policy lru|learned|declared]\n"
	"                       [--passes N] [--prefetch N] [--workers N] [--seed N]\n"
	"                       [--region BYTES]\n"
	"  Reads the region through the pager, chunk by chunk in order, for N\n"
	"  passes (default 2), and compares every byte with pread of FILE (or the\n"
	"  synthetic content). BYTES take K, M or G. --region maps that many\n"
	"  bytes (default: the whole file). Defaults: --chunk 2M,\n"
	"  --budget a quarter of the region (at least one chunk).\n"
	"  Exit 0 with 0 mismatches, 1 otherwise, 2 on bad input or when the\n"
	"  oracle's own read of FILE fails (said as such, not as mismatches).\n";

static int bad(const char *what, const char *v, const char *fix)
{
	fprintf(stderr, "residctl verify: bad %s '%s'; %s\n", what, v, fix);
	return 2;
}

/* Reads exactly len bytes at off: short reads go on, EINTR is retried. */
static int oracle_read(int fd, uint8_t *buf, uint64_t len, uint64_t off)
{
	for (uint64_t got = 0; got < len;) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		got += (uint64_t)n;
	}
	return 0;
}

/* In 1 MiB pieces. */
int verify_compare(int fd, const uint8_t *a, uint64_t off, uint64_t len,
		   uint8_t *buf, uint64_t *bad)
{
	for (uint64_t done = 0; done < len;) {
		uint64_t want = len - done < (1 << 20) ? len - done : (1 << 20);
		int rc = oracle_read(fd, buf, want, off + done);

		if (rc < 0)
			return rc;
		for (uint64_t i = 0; i < want; i++)
			*bad += a[off + done + i] != buf[i];
		done += want;
	}
	return 0;
}

int cmd_verify(int argc, char **argv)
{
	struct resid_config cfg;
	uint64_t passes = 2, v64, synthetic = 0, region = 0;
	const char *path = NULL, *v;
	char err[RESID_ERRLEN];

	resid_config_init(&cfg);
	cfg.chunk_size = 2 << 20;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (a[0] != '-') {
			if (path)
				return bad("second FILE", a, "give one file");
			path = a;
			continue;
		}
		if (!(v = cli_value("verify", argc, argv, &i)))
			return 2;
		if (!strncmp(a, "--synthetic", 11)) {
			if (cli_bytes(v, &synthetic) || !synthetic)
				return bad("size", v, "give bytes, e.g. 64M");
		} else if (!strncmp(a, "--region", 8)) {
			if (cli_bytes(v, &region) || !region)
				return bad("region size", v, "give bytes, e.g. 64M");
		} else if (!strncmp(a, "--chunk", 7)) {
			if (cli_bytes(v, &cfg.chunk_size))
				return bad("chunk size", v, "give bytes, e.g. 2M");
		} else if (!strncmp(a, "--budget", 8)) {
			if (cli_bytes(v, &cfg.budget_bytes))
				return bad("budget", v, "give bytes, e.g. 8M");
			if (!cfg.budget_bytes)
				return bad("budget", v, "give at least one chunk");
		} else if (!strncmp(a, "--policy", 8)) {
			if (resid_policy_parse(v, &cfg.policy))
				return bad("policy", v, "use lru, learned or declared");
		} else if (!strncmp(a, "--passes", 8)) {
			if (cli_u64(v, &passes) || !passes)
				return bad("pass count", v, "give a number >= 1");
		} else if (!strncmp(a, "--prefetch", 10)) {
			if (cli_u64(v, &v64) || v64 > 64)
				return bad("prefetch depth", v, "give 0..64");
			cfg.prefetch_depth = (uint32_t)v64;
		} else if (!strncmp(a, "--workers", 9)) {
			if (cli_u64(v, &v64) || !v64 || v64 > 256)
				return bad("worker count", v, "give 1..256");
			cfg.fetch_workers = (uint32_t)v64;
		} else if (!strncmp(a, "--seed", 6)) {
			if (cli_u64(v, &cfg.seed))
				return bad("seed", v, "give a decimal number");
		} else {
			fprintf(stderr, "residctl verify: unknown option '%s'; "
				"see residctl verify --help\n", a);
			return 2;
		}
	}
	if (!path == !synthetic) {
		fprintf(stderr, "residctl verify: give a FILE or --synthetic "
			"BYTES (one of them)\n");
		return 2;
	}
	int fd = -1;

	if (path) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "residctl verify: cannot open %s: %s; "
				"give a readable file\n", path, strerror(errno));
			return 2;
		}
		struct stat st;

		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
			close(fd);
			fprintf(stderr, "residctl verify: %s is not a non-empty "
				"regular file; give one\n", path);
			return 2;
		}
		cfg.backing = RESID_BACKING_FILE;
		cfg.path = path;
		cfg.region_len = region ? region : (uint64_t)st.st_size;
	} else {
		cfg.backing = RESID_BACKING_SYNTHETIC;
		cfg.region_len = region ? region : synthetic;
	}
	if (!cfg.budget_bytes) {
		cfg.budget_bytes = cfg.region_len / 4;
		if (cfg.budget_bytes < cfg.chunk_size)
			cfg.budget_bytes = cfg.chunk_size;
	}
	struct resid_region *r = resid_open(&cfg, err);

	if (!r) {
		fprintf(stderr, "residctl verify: %s\n", err);
		if (fd >= 0)
			close(fd);
		return 2;
	}
	uint8_t *buf = malloc(1 << 20);
	uint64_t checked = 0, mismatches = 0;
	char manifest[2048];

	if (resid_manifest_json(r, manifest, sizeof(manifest)) == 0)
		printf("manifest: %s\n", manifest);

	int oracle = 0;

	for (uint64_t p = 0; buf && !oracle && p < passes; p++) {
		for (uint32_t c = 0; !oracle && c < resid_nchunks(r); c++) {
			uint64_t off, len;

			if (resid_chunk_range(r, c, &off, &len) < 0 ||
			    resid_notify_access(r, c) < 0)
				break;
			if (off + len > cfg.region_len)
				len = cfg.region_len - off;
			if (fd >= 0) {
				oracle = verify_compare(fd, resid_base(r), off,
							len, buf, &mismatches);
				if (oracle < 0)
					fprintf(stderr, "residctl verify: the "
						"oracle's own read of %s in "
						"[%" PRIu64 ", +%" PRIu64 ") "
						"failed: %s; not a pager "
						"mismatch: check the file and "
						"its disk\n", path, off, len,
						strerror(-oracle));
			} else {
				mismatches += resid_content_mismatches(
					resid_base(r) + off, off, len, cfg.seed);
			}
			checked += len;
		}
	}
	struct resid_stats s;

	resid_get_stats(r, &s);
	printf("verify: %" PRIu64 " bytes checked, %" PRIu64 " mismatches, %"
	       PRIu64 " fetches, %" PRIu64 " evictions, resident max %" PRIu64
	       " of budget %" PRIu64 "\n", checked, mismatches, s.fetches,
	       s.evictions, s.resident_max, s.budget);
	resid_close(r);
	free(buf);
	if (fd >= 0)
		close(fd);
	if (oracle < 0)
		return 2;
	return buf && mismatches == 0 && checked ? 0 : 1;
}
