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

#include "base/cli.h"
#include "resid_harness.h"
#include "workload/budget_share.h"
#include "workload/layout.h"
#include "workload/read_check.h"

static const char about[] =
	"  Reads the region through the pager, chunk by chunk in order, for\n"
	"  --passes passes, and compares every byte with pread of FILE (or the\n"
	"  synthetic content). BYTES take K, M or G. --table reads layer by\n"
	"  layer instead: LAYOUT is a text file of 'offset length' lines (one\n"
	"  layer each, in file order, decimal or 0x hex, '#' comments) or a\n"
	"  safetensors file (tensors grouped into layers by their\n"
	"  model.layers.<n>. prefix; FILE itself, for a model). Chunks start at\n"
	"  the page floor of each layer's first byte (chunk 0 at 0); the region\n"
	"  ends with the last layer. Each layer's own chunk is announced before\n"
	"  the layer is read, and every byte of the region is checked (those\n"
	"  before the next layer go with the layer).\n"
	"  Exit 0 with 0 mismatches, 1 otherwise, 2 on bad input or when the\n"
	"  oracle's own read of FILE fails (said as such, not as mismatches).\n";

/* The chunks of lay in place of equal ones: the region is the layout's,
 * which the backing must cover. 0, or 2 after one line. */
static int use_table(struct resid_config *cfg, const struct layout *lay,
		     const char *table)
{
	if (lay->region_len > cfg->region_len) {
		fprintf(stderr,
			"residctl verify: the layout %s ends at byte %" PRIu64
			", past the %" PRIu64 " bytes of the backing; "
			"give the file the table describes\n",
			table, lay->region_len, cfg->region_len);
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

/* What verify reads, and how. */
struct verify {
	struct resid_config cfg;
	uint64_t passes, synthetic, region, chunk, prefetch, workers;
	const char *path, *table;
	struct layout lay;
	int fd;
};

static int parse(struct verify *v, int argc, char **argv)
{
	struct resid_config *cfg = &v->cfg;
	struct cli_opt opts[] = {
		{ "synthetic", CLI_BYTES, &v->synthetic, .arg = "BYTES",
		  .min = 1, .what = "size", .fix = "give bytes, e.g. 64M",
		  .help = "read the synthetic content, not a FILE" },
		{ "region", CLI_BYTES, &v->region, .arg = "BYTES", .min = 1,
		  .what = "region size", .fix = "give bytes, e.g. 64M",
		  .help = "map that many bytes (default: the whole file)" },
		{ "chunk", CLI_BYTES, &v->chunk, .arg = "BYTES", .min = 1,
		  .what = "chunk size", .fix = "give bytes, e.g. 2M",
		  .help = "the chunk size (default 2M)" },
		{ "budget", CLI_BYTES, &cfg->budget_bytes, .arg = "BYTES",
		  .min = 1, .what = "budget",
		  .fix = "give bytes, at least one chunk, e.g. 8M",
		  .help = "default: a quarter of the region, at least the "
			  "largest chunk" },
		{ "policy", CLI_CALL, &cfg->policy, .parse = cli_policy,
		  .arg = "lru|learned|declared",
		  .help = "the eviction policy" },
		{ "passes", CLI_U64, &v->passes, .arg = "N", .min = 1,
		  .what = "pass count",
		  .help = "passes over the region "
			  "(default 2)" },
		{ "prefetch", CLI_U64, &v->prefetch, .arg = "N", .max = 64,
		  .what = "prefetch depth", .help = "chunks fetched ahead" },
		{ "workers", CLI_U64, &v->workers, .arg = "N", .min = 1,
		  .max = 256, .what = "worker count", .help = "fetch workers" },
		CLI_SEED(&cfg->seed, "the synthetic content's seed"),
		{ "table", CLI_TEXT, &v->table, .arg = "LAYOUT",
		  .help = "read layer by layer, the chunks from LAYOUT" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "verify",
		.synopsis = "(FILE | --synthetic BYTES)",
		.about = about,
		.opts = opts,
		.operands = 1,
		.operand = { .type = CLI_TEXT, .dst = &v->path },
	};

	resid_config_init(cfg);
	v->passes = 2;
	v->fd = -1;
	v->prefetch = cfg->prefetch_depth;
	v->workers = cfg->fetch_workers;
	return cli_parse(&spec, argc, argv);
}

/* The region: FILE or the synthetic content, cut by the table or the
 * chunk size. 0, or 2 after one line. */
static int region(struct verify *v)
{
	struct resid_config *cfg = &v->cfg;
	char lerr[1024]; /* a path, a tensor's name and the fix */

	if (!v->path == !v->synthetic) {
		fprintf(stderr, "residctl verify: give a FILE or --synthetic "
				"BYTES (one of them)\n");
		return 2;
	}
	if (v->table && (v->chunk || v->region)) {
		fprintf(stderr,
			"residctl verify: bad option with --table '%s'; "
			"the table gives the chunks and the region; drop it\n",
			v->chunk ? "--chunk" : "--region");
		return 2;
	}
	if (v->table && layout_read(v->table, &v->lay, lerr, sizeof(lerr))) {
		fprintf(stderr, "residctl verify: %s\n", lerr);
		return 2;
	}
	cfg->chunk_size = v->chunk ? v->chunk : 2 << 20;
	cfg->prefetch_depth = (uint32_t)v->prefetch;
	cfg->fetch_workers = (uint32_t)v->workers;
	if (v->path) {
		struct stat st;

		v->fd = open(v->path, O_RDONLY | O_CLOEXEC);
		if (v->fd < 0) {
			fprintf(stderr,
				"residctl verify: cannot open %s: %s; "
				"give a readable file\n",
				v->path, strerror(errno));
			return 2;
		}
		if (fstat(v->fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
			fprintf(stderr,
				"residctl verify: %s is not a non-empty "
				"regular file; give one\n",
				v->path);
			return 2;
		}
		cfg->backing = RESID_BACKING_FILE;
		cfg->path = v->path;
		cfg->region_len = v->region ? v->region : (uint64_t)st.st_size;
	} else {
		cfg->backing = RESID_BACKING_SYNTHETIC;
		cfg->region_len = v->region ? v->region : v->synthetic;
	}
	if (v->table && use_table(cfg, &v->lay, v->table))
		return 2;
	if (!cfg->budget_bytes)
		cfg->budget_bytes =
			budget_share(cfg->region_len, 0.25,
				     v->table ? layout_largest_chunk(&v->lay) :
						cfg->chunk_size);
	return 0;
}

/* Reads every unit of every pass; 0, or the oracle's own read error. */
static int read_all(struct verify *v, struct resid_region *r, uint64_t *checked,
		    uint64_t *mismatches)
{
	const struct expected want = { .seed = v->cfg.seed, .fd = v->fd };
	const struct layout *lay = v->table ? &v->lay : NULL;
	uint32_t units = lay ? lay->nlayers : resid_nchunks(r);
	int oracle = 0;

	for (uint64_t p = 0; !oracle && p < v->passes; p++) {
		for (uint32_t u = 0; !oracle && u < units; u++) {
			uint64_t off, len;

			if (resid_notify_access(r, unit(r, lay, u,
							v->cfg.region_len, &off,
							&len)) < 0)
				break;
			if (v->fd < 0) {
				read_check(&want, resid_base(r) + off, off, len,
					   checked, mismatches);
				continue;
			}
			oracle = read_check_file(v->fd, resid_base(r) + off,
						 off, len, mismatches, NULL);
			if (oracle < 0)
				fprintf(stderr,
					"residctl verify: the oracle's "
					"own read of %s in [%" PRIu64
					", +%" PRIu64
					") failed: %s; not a pager "
					"mismatch: check the file and its "
					"disk\n",
					v->path, off, len, strerror(-oracle));
			else
				*checked += len;
		}
	}
	return oracle;
}

/* Opens the region, reads it, prints what it found. */
static int verify(struct verify *v)
{
	uint64_t checked = 0, mismatches = 0;
	char err[RESID_ERRLEN], manifest[2048];
	struct resid_region *r = resid_open(&v->cfg, err);
	struct resid_stats s;
	int oracle;

	if (!r) {
		fprintf(stderr, "residctl verify: %s\n", err);
		return 2;
	}
	if (resid_manifest_json(r, manifest, sizeof(manifest)) == 0)
		printf("manifest: %s\n", manifest);
	oracle = read_all(v, r, &checked, &mismatches);
	resid_get_stats(r, &s);
	printf("verify: %" PRIu64 " bytes checked, %" PRIu64
	       " mismatches, %" PRIu64 " fetches, %" PRIu64
	       " evictions, resident max %" PRIu64 " of budget %" PRIu64 "\n",
	       checked, mismatches, s.fetches, s.evictions, s.resident_max,
	       s.budget);
	resid_close(r);
	if (oracle < 0)
		return 2;
	return mismatches == 0 && checked ? 0 : 1;
}

int cmd_verify(int argc, char **argv)
{
	struct verify v = { 0 };
	int rc = parse(&v, argc, argv);

	if (rc != CLI_RUN)
		return rc;
	rc = region(&v);
	if (!rc)
		rc = verify(&v);
	if (v.fd >= 0)
		close(v.fd);
	layout_free(&v.lay);
	return rc;
}
