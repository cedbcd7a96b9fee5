/* residctl verify: reads a file (or the synthetic source) through the pager
 * under a budget and checks every byte against pread of the file (or the
 * content function). The same region options a user of libresid sets. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget_share.h"
#include "cli.h"
#include "commands.h"
#include "layout.h"
#include "read_check.h"
#include "resid_harness.h"

static const char usage[] =
	"usage: residctl verify (FILE | --synthetic BYTES) [--chunk BYTES]\n"
	"                       [--budget BYTES] [--policy lru|learned|declared]\n"
	"                       [--passes N] [--prefetch N] [--workers N] [--seed N]\n"
	"                       [--region BYTES] [--table LAYOUT]\n"
	"  Reads the region through the pager, chunk by chunk in order, for N\n"
	"  passes (default 2), and compares every byte with pread of FILE (or the\n"
	"  synthetic content). BYTES take K, M or G. --region maps that many\n"
	"  bytes (default: the whole file). Defaults: --chunk 2M,\n"
	"  --budget a quarter of the region (at least the largest chunk).\n"
	"  --table reads layer by layer instead: LAYOUT is a text file of\n"
	"  'offset length' lines (one layer each, in file order, decimal or 0x\n"
	"  hex, '#' comments) or a safetensors file (tensors grouped into layers\n"
	"  by their model.layers.<n>. prefix; FILE itself, for a model). Chunks\n"
	"  start at the page floor of each layer's first byte (chunk 0 at 0);\n"
	"  the region ends with the last layer. Each layer's own chunk is\n"
	"  announced before the layer is read, and every byte of the region is\n"
	"  checked (those before the next layer go with the layer).\n"
	"  Exit 0 with 0 mismatches, 1 otherwise, 2 on bad input or when the\n"
	"  oracle's own read of FILE fails (said as such, not as mismatches).\n";

static int bad(const char *what, const char *v, const char *fix)
{
	fprintf(stderr, "residctl verify: bad %s '%s'; %s\n", what, v, fix);
	return 2;
}

/* The chunks of lay in place of equal ones: the region is the layout's,
 * which the backing must cover. 0, or 2 after one line. */
static int use_table(struct resid_config *cfg, const struct layout *lay,
		     const char *table)
{
	if (lay->region_len > cfg->region_len) {
		fprintf(stderr, "residctl verify: the layout %s ends at byte %"
			PRIu64 ", past the %" PRIu64 " bytes of the backing; "
			"give the file the table describes\n", table,
			lay->region_len, cfg->region_len);
		return 2;
	}
	cfg->region_len = lay->region_len;
	cfg->chunk_size = 0;
	cfg->table = lay->chunks;
	cfg->table_len = lay->nchunks;
	return 0;
}

/* Unit u of a pass: chunk u, or with a layout layer u with the bytes up to
 * the next layer (the first also those before it). Its chunk to announce. */
static uint32_t unit(struct resid_region *r, const struct layout *lay,
		     uint32_t u, uint64_t region_len, uint64_t *off,
		     uint64_t *len)
{
	if (!lay) {
		resid_chunk_range(r, u, off, len);
		if (*off + *len > region_len)
			*len = region_len - *off;
		return u;
	}
	*off = u ? lay->layers[u].off : 0;
	*len = (u + 1 < lay->nlayers ? lay->layers[u + 1].off : region_len) -
		*off;
	return lay->layers[u].chunk;
}

int cmd_verify(int argc, char **argv)
{
	struct resid_config cfg;
	static const struct option opts[] = {
		CLI_HELP_OPTION,
		CLI_VALUE("synthetic", 'S'),
		CLI_VALUE("region", 'r'),
		CLI_VALUE("chunk", 'c'),
		CLI_VALUE("budget", 'b'),
		CLI_VALUE("policy", 'p'),
		CLI_VALUE("passes", 'P'),
		CLI_VALUE("prefetch", 'f'),
		CLI_VALUE("workers", 'w'),
		CLI_VALUE("seed", 's'),
		CLI_VALUE("table", 'T'),
		{ 0 },
	};
	struct cli c = { .cmd = "verify", .usage = usage, .argc = argc,
			 .argv = argv, .opts = opts, .operands = 1 };
	uint64_t passes = 2, v64, synthetic = 0, region = 0;
	const char *path = NULL, *v, *table = NULL, *chunked = NULL;
	char err[RESID_ERRLEN];
	int opt;
	resid_config_init(&cfg);
	cfg.chunk_size = 2 << 20;
	while ((opt = cli_next(&c)) != CLI_END) {
		v = c.arg;
		switch (opt) {
		case CLI_EXIT:
			return c.status;
		case CLI_OPERAND:
			path = v;
			break;
		case 'S':
			if (cli_bytes(v, &synthetic) || !synthetic)
				return bad("size", v, "give bytes, e.g. 64M");
			break;
		case 'r':
			chunked = "--region";
			if (cli_bytes(v, &region) || !region)
				return bad("region size", v, "give bytes, e.g. 64M");
			break;
		case 'c':
			chunked = "--chunk";
			if (cli_bytes(v, &cfg.chunk_size))
				return bad("chunk size", v, "give bytes, e.g. 2M");
			break;
		case 'b':
			if (cli_bytes(v, &cfg.budget_bytes))
				return bad("budget", v, "give bytes, e.g. 8M");
			if (!cfg.budget_bytes)
				return bad("budget", v, "give at least one chunk");
			break;
		case 'p':
			if (resid_policy_parse(v, &cfg.policy))
				return bad("policy", v, "use lru, learned or declared");
			break;
		case 'P':
			if (cli_u64(v, &passes) || !passes)
				return bad("pass count", v, "give a number >= 1");
			break;
		case 'f':
			if (cli_u64(v, &v64) || v64 > 64)
				return bad("prefetch depth", v, "give 0..64");
			cfg.prefetch_depth = (uint32_t)v64;
			break;
		case 'w':
			if (cli_u64(v, &v64) || !v64 || v64 > 256)
				return bad("worker count", v, "give 1..256");
			cfg.fetch_workers = (uint32_t)v64;
			break;
		case 's':
			if (cli_u64(v, &cfg.seed))
				return bad("seed", v, "give a decimal number");
			break;
		case 'T':
			table = v;
			break;
		}
	}
	if (!path == !synthetic) {
		fprintf(stderr, "residctl verify: give a FILE or --synthetic "
			"BYTES (one of them)\n");
		return 2;
	}
	struct layout lay = { 0 };
	char lerr[1024]; /* a path, a tensor's name and the fix */

	if (table && chunked)
		return bad("option with --table", chunked, "the table gives the chunks and the region; drop it");
	if (table && layout_read(table, &lay, lerr, sizeof(lerr))) {
		fprintf(stderr, "residctl verify: %s\n", lerr);
		return 2;
	}
	int fd = -1;

	if (path) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "residctl verify: cannot open %s: %s; "
				"give a readable file\n", path, strerror(errno));
			layout_free(&lay);
			return 2;
		}
		struct stat st;

		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
			close(fd);
			fprintf(stderr, "residctl verify: %s is not a non-empty "
				"regular file; give one\n", path);
			layout_free(&lay);
			return 2;
		}
		cfg.backing = RESID_BACKING_FILE;
		cfg.path = path;
		cfg.region_len = region ? region : (uint64_t)st.st_size;
	} else {
		cfg.backing = RESID_BACKING_SYNTHETIC;
		cfg.region_len = region ? region : synthetic;
	}
	if (table && use_table(&cfg, &lay, table)) {
		if (fd >= 0)
			close(fd);
		layout_free(&lay);
		return 2;
	}
	if (!cfg.budget_bytes)
		cfg.budget_bytes = budget_share(cfg.region_len, 0.25, table ?
						layout_largest_chunk(&lay) :
						cfg.chunk_size);
	struct resid_region *r = resid_open(&cfg, err);

	if (!r) {
		fprintf(stderr, "residctl verify: %s\n", err);
		if (fd >= 0)
			close(fd);
		layout_free(&lay);
		return 2;
	}
	const struct expected want = { .seed = cfg.seed, .fd = fd };
	uint64_t checked = 0, mismatches = 0;
	char manifest[2048];

	if (resid_manifest_json(r, manifest, sizeof(manifest)) == 0)
		printf("manifest: %s\n", manifest);

	int oracle = 0;

	for (uint64_t p = 0; !oracle && p < passes; p++) {
		for (uint32_t u = 0; !oracle && u < (table ? lay.nlayers :
						  resid_nchunks(r)); u++) {
			uint64_t off, len;

			if (resid_notify_access(r, unit(r, table ? &lay : NULL,
							u, cfg.region_len, &off,
							&len)) < 0)
				break;
			if (fd < 0) {
				read_check(&want, resid_base(r) + off, off,
					   len, &checked, &mismatches);
				continue;
			}
			oracle = read_check_file(fd, resid_base(r) + off, off,
						 len, &mismatches, NULL);
			if (oracle < 0)
				fprintf(stderr, "residctl verify: the oracle's "
					"own read of %s in [%" PRIu64 ", +%"
					PRIu64 ") failed: %s; not a pager "
					"mismatch: check the file and its "
					"disk\n", path, off, len,
					strerror(-oracle));
			else
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
	if (fd >= 0)
		close(fd);
	layout_free(&lay);
	if (oracle < 0)
		return 2;
	return mismatches == 0 && checked ? 0 : 1;
}
